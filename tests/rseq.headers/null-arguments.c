/* Every pointer argument of the per-CPU operations is declared
   nonnull: each call below passes a null pointer and must draw a
   -Wnonnull diagnostic (headers.exp compiles this with -Werror=nonnull
   and expects a diagnostic on every line with the marker comment),
   inline (-O2) and as a libc call (-O0).  */
/* rseq-test: host-only: compiled only, by headers.exp, which expects
   its -Wnonnull diagnostics (it has no main) */
#include <stddef.h>
#include <sys/rseq-percpu.h>

int
null_arguments (int cpu)
{
  intptr_t v = 0, load;
  char buf[8];
  int r = 0;
  r |= rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, NULL, 1, cpu); /* NULL-ARGUMENT */
  r |= rseq_percpu_cmpeqv_storev (RSEQ_PERCPU_INDEX_CPU_ID, NULL, 0, 1, cpu); /* NULL-ARGUMENT */
  r |= rseq_percpu_cmpnev_storeoffp_load (RSEQ_PERCPU_INDEX_CPU_ID, &v, 0, 0, NULL, cpu); /* NULL-ARGUMENT */
  r |= rseq_percpu_cmpeqv_cmpeqv_storev (RSEQ_PERCPU_INDEX_CPU_ID, &v, 0, NULL, 0, 1, cpu); /* NULL-ARGUMENT */
  r |= rseq_percpu_cmpeqv_trystorev_storev (RSEQ_PERCPU_INDEX_CPU_ID, &v, 0, NULL, 1, 1, cpu); /* NULL-ARGUMENT */
  r |= rseq_percpu_cmpeqv_trymemcpy_storev_release (RSEQ_PERCPU_INDEX_CPU_ID, &v, 0, buf, NULL, 8, 1, cpu); /* NULL-ARGUMENT */
  (void) load;
  return r;
}
