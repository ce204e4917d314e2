/* With glibc's registration off (tunable), per-CPU operations cannot
   run: rseq_percpu_current_cpu says so (-1, ENOSYS from libc), every
   operation reports an abort without writing, and the library fails
   with ENOSYS instead of spinning.  */
#include "rseq-test.h"
#include "percpu.h"

static int (*volatile ool_current_cpu) (int) = rseq_percpu_current_cpu;

static void
check_unusable (void)
{
  CHECK_EQ (rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID), -1);
  errno = 0;
  CHECK_EQ (ool_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID), -1);
  CHECK_EQ (errno, ENOSYS);
  intptr_t v = 3;
  CHECK (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &v, 1, 0) < 0);
  CHECK (rseq_percpu_cmpeqv_storev (RSEQ_PERCPU_INDEX_CPU_ID, &v, 3, 4, 0) < 0);
  CHECK_EQ (v, 3);

  struct percpu_counter c;
  CHECK_EQ (percpu_counter_init (&c, RSEQ_PERCPU_INDEX_CPU_ID), 0);
  errno = 0;
  CHECK_EQ (percpu_counter_add (&c, 1), -1);
  CHECK_EQ (errno, ENOSYS);
  CHECK_EQ (percpu_counter_sum (&c), 0);
  percpu_counter_destroy (&c);
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "--child") == 0)
    {
      check_unusable ();
      return 0;
    }
  require_kernel_rseq ();
  run_self_with_rseq_off (argv[0], "--child");
  return 0;
}
