/* Delay loop of the PERCPU_INJECT stress hooks for aarch64 (see
   percpu.h): counts in a register no critical section uses.  */
#define __RSEQ_PERCPU_INJECT_ASM(n)					\
  "adrp x12, " PERCPU_INJECT_SLOT (n) "\n\t"				\
  "ldr w12, [x12, #:lo12:" PERCPU_INJECT_SLOT (n) "]\n\t"		\
  "cbz w12, 7f\n"							\
  "6:\n\t"								\
  "subs w12, w12, #1\n\t"						\
  "b.ne 6b\n"								\
  "7:\n\t"
#define __RSEQ_PERCPU_INJECT_CLOBBER , "x12"
