/* Delay loop of the PERCPU_INJECT stress hooks for x86_64 (see
   percpu.h): counts in a register no critical section uses.  */
#define __RSEQ_PERCPU_INJECT_ASM(n)					\
  "movl " PERCPU_INJECT_SLOT (n) "(%%rip), %%r11d\n\t"			\
  "testl %%r11d, %%r11d\n\t"						\
  "jz 7f\n"								\
  "6:\n\t"								\
  "decl %%r11d\n\t"							\
  "jnz 6b\n"								\
  "7:\n\t"
#define __RSEQ_PERCPU_INJECT_CLOBBER , "r11"
