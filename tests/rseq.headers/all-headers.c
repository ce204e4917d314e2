/* Every header of the rseq toolchain, for the strict-mode builds of
   headers.exp (each C standard with -pedantic-errors, at every -O
   level, so that both the inline and the libc versions are seen).  */
/* rseq-test: host-only: a compile check of headers.exp (each C standard,
   -pedantic-errors), not run: that it compiles is the test */
#include <sys/rseq.h>
#include <sys/rseq-syscall.h>
#include <sys/rseq-percpu.h>
#include <sys/cpu_opv.h>

int
main (void)
{
  intptr_t v = 0;
  int cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
  if (cpu >= 0)
    rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &v, 1, cpu);
  return (int) v > 1;
}
