/* Delay loop of the PERCPU_INJECT stress hooks for arm (see
   percpu.h): counts in a register no critical section uses.  */
#define __RSEQ_PERCPU_INJECT_ASM(n)					\
  "movw r10, #:lower16:" PERCPU_INJECT_SLOT (n) "\n\t"			\
  "movt r10, #:upper16:" PERCPU_INJECT_SLOT (n) "\n\t"			\
  "ldr r10, [r10]\n\t"							\
  "cmp r10, #0\n\t"							\
  "beq 7f\n"								\
  "6:\n\t"								\
  "subs r10, r10, #1\n\t"						\
  "bne 6b\n"								\
  "7:\n\t"
#define __RSEQ_PERCPU_INJECT_CLOBBER , "r10"
