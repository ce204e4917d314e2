/* Delay loop of the PERCPU_INJECT stress hooks for powerpc64 (see
   percpu.h): counts in a register no critical section uses.  The TOC
   pointer r2 is valid: the function reads globals itself.  */
#define __RSEQ_PERCPU_INJECT_ASM(n)					\
  "addis %%r20, %%r2, (" PERCPU_INJECT_SLOT (n) ")@toc@ha\n\t"		\
  "lwz %%r20, (" PERCPU_INJECT_SLOT (n) ")@toc@l(%%r20)\n\t"		\
  "cmpwi %%cr6, %%r20, 0\n\t"						\
  "beq %%cr6, 7f\n"							\
  "6:\n\t"								\
  "addi %%r20, %%r20, -1\n\t"						\
  "cmpwi %%cr6, %%r20, 0\n\t"						\
  "bne %%cr6, 6b\n"							\
  "7:\n\t"
#define __RSEQ_PERCPU_INJECT_CLOBBER , "r20", "cr6"
