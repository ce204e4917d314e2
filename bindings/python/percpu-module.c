/* percpu/percpu.c as compiled into rseq._percpu: the one
   implementation of the per-CPU list and buffer, shared with the C
   tests and benchmarks.

   RSEQ_PERCPU_NO_INLINE: every operation is a call to the patched
   glibc's out-of-line function, so that PerCpuList and PerCpuBuffer
   run libc's critical sections, which count aborts and fallbacks per
   thread and go to cpu_opv as the thread's fallback mode says (the
   counters, by contrast, inline theirs: an experiment running both
   sees both kinds).

   The module must import under a stock glibc too, which has none of
   these functions: the references are weak, NULL there, and
   structures.c checks for the patched glibc before calling into
   percpu.c.  */
#define RSEQ_PERCPU_NO_INLINE 1

#pragma weak rseq_percpu_current_cpu
#pragma weak rseq_percpu_addv
#pragma weak rseq_percpu_cmpeqv_storev
#pragma weak rseq_percpu_cmpnev_storeoffp_load
#pragma weak rseq_percpu_cmpeqv_cmpeqv_storev
#pragma weak rseq_percpu_cmpeqv_trystorev_storev_release
#pragma weak rseq_percpu_cmpeqv_trymemcpy_storev
#pragma weak rseq_percpu_cmpeqv_trymemcpy_storev_release

#include "percpu.c"
