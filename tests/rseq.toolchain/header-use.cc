// The installed headers work from C++: the per-CPU operations inline
// with optimization and resolve to libc's RSEQ_1.0 functions without.
#include <sys/rseq-percpu.h>
#include <cstdio>

int
main ()
{
  intptr_t v = 0;
  for (int i = 0; i < 1000; i++)
    for (;;)
      {
	int cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
	if (cpu < 0)
	  return 77;
	if (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &v, 1, cpu) == 0)
	  break;
      }
  std::printf ("%ld\n", (long) v);
  return v == 1000 ? 0 : 1;
}
