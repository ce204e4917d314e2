/* Delay loop of the PERCPU_INJECT stress hooks for i386 (see
   percpu.h): it has no register to spare, so it counts down a
   thread-local budget in memory.  */
#define __RSEQ_PERCPU_INJECT_ASM(n)					\
  "6:\n\t"								\
  "cmpl $0, %%gs:percpu_inject_budget@ntpoff+4*" #n "\n\t"		\
  "je 7f\n\t"								\
  "decl %%gs:percpu_inject_budget@ntpoff+4*" #n "\n\t"		\
  "jmp 6b\n"								\
  "7:\n\t"
#define __RSEQ_PERCPU_INJECT_CLOBBER
