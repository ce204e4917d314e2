/* Every failing per-CPU operation returns <0 with errno set, and inline
   and out-of-line calls agree (the harness builds this at -O0, where
   calls go to libc, and at -O2 and -Os, where they are inline; the
   function pointers below always reach libc):
     EAGAIN  CPU is not the thread's CPU (it "migrated" before the call),
	     which is not an abort,
	     with or without the cpu_opv fallback, and nothing is written;
     EINVAL  an invalid field, a CPU that no CPU can have (negative, or
	     not below get_nprocs_conf), or a commit target V not aligned
	     to intptr_t, and nothing is written, nothing counted as an
	     abort or a fallback;
     ENOSYS  rseq not registered (glibc.pthread.rseq=0).  */
#include "rseq-test.h"
#include <sys/rseq-percpu.h>
#include <limits.h>
#include <sys/sysinfo.h>

static int (*volatile libc_current_cpu) (int) = rseq_percpu_current_cpu;
static int (*volatile libc_addv) (int, intptr_t *, intptr_t, int)
  = rseq_percpu_addv;
static int (*volatile libc_cmpeqv_storev) (int, intptr_t *, intptr_t,
					   intptr_t, int)
  = rseq_percpu_cmpeqv_storev;

/* Expect CALL to return <0 with errno ERR.  */
#define CHECK_FAILS(call, err)						\
  do {									\
    errno = 0;								\
    int _r = (call);							\
    int _e = errno;							\
    if (_r >= 0 || _e != (err))						\
      FAIL ("%s returned %d errno %d (%s), expected <0 errno %d (%s)",	\
	    #call, _r, _e, strerror (_e), (err), strerror (err));	\
  } while (0)

/* Expect each operation, inline and through libc, to fail on CPU with
   errno ERR (the compare-and-store compares against EXPECT).  */
static void
check_ops_fail (int field, intptr_t *v, intptr_t expect, int cpu, int err)
{
  CHECK_FAILS (rseq_percpu_addv (field, v, 1, cpu), err);
  CHECK_FAILS (libc_addv (field, v, 1, cpu), err);
  CHECK_FAILS (rseq_percpu_cmpeqv_storev (field, v, expect, 6, cpu), err);
  CHECK_FAILS (libc_cmpeqv_storev (field, v, expect, 6, cpu), err);
}

static void
pin_here (void)
{
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (sched_getcpu (), &set);
  CHECK (sched_setaffinity (0, sizeof set, &set) == 0);
}

static void
check_stale_cpu (int field, int mode)
{
  int cpu = rseq_percpu_current_cpu (field);
  if (cpu < 0 || get_nprocs_conf () < 2)
    return;
  /* Another CPU this machine has (a CPU it cannot have is EINVAL).  */
  int stale = (cpu + 1) % get_nprocs_conf ();
  intptr_t v = 5;
  unsigned long aborts = rseq_percpu_aborts ();
  unsigned long fallbacks = rseq_percpu_fallbacks ();

  CHECK (rseq_percpu_set_fallback (mode) >= 0);
  check_ops_fail (field, &v, 5, stale, EAGAIN);
  CHECK_EQ (v, 5);
  /* A stale CPU is not run there through cpu_opv.  */
  CHECK_EQ (rseq_percpu_fallbacks (), fallbacks);
  /* Nor is it an abort: the kernel restarted nothing (the counts must
     match the kernel's rseq_ip_fixup events).  */
  CHECK_EQ (rseq_percpu_aborts (), aborts);
  if (field == RSEQ_PERCPU_INDEX_CPU_ID)
    CHECK_EQ (__rseq_percpu_try_addv (field, &v, 1, stale),
	      __RSEQ_PERCPU_CPU_CHANGED);
  CHECK (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_AUTO) >= 0);

  /* The thread's own CPU still works.  */
  CHECK_EQ (rseq_percpu_addv (field, &v, 1, cpu), 0);
  CHECK_EQ (libc_addv (field, &v, 1, cpu), 0);
  CHECK_EQ (v, 7);
}

/* CPUs no thread can have, for either field, in every fallback mode:
   EINVAL (not EAGAIN, which tells the caller to read its CPU and
   retry, as if it had migrated).  */
static void
check_impossible_cpus (int field, int mode)
{
  if (rseq_percpu_current_cpu (field) < 0)
    return;
  const int impossible[] = { -1, -2, INT_MIN, get_nprocs_conf (),
			     get_nprocs_conf () + 1, 100000, INT_MAX };
  intptr_t v = 5;
  unsigned long aborts = rseq_percpu_aborts ();
  unsigned long fallbacks = rseq_percpu_fallbacks ();

  CHECK (rseq_percpu_set_fallback (mode) >= 0);
  for (size_t i = 0; i < sizeof impossible / sizeof impossible[0]; i++)
    check_ops_fail (field, &v, 5, impossible[i], EINVAL);
  CHECK_EQ (v, 5);
  CHECK_EQ (rseq_percpu_fallbacks (), fallbacks);
  CHECK_EQ (rseq_percpu_aborts (), aborts);
  CHECK (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_AUTO) >= 0);
}

/* A commit target not aligned to intptr_t: EINVAL before anything runs,
   on the thread's own CPU, inline and in libc, and the bytes stay as
   they were.  */
static void
check_misaligned (int field, int mode)
{
  int cpu = rseq_percpu_current_cpu (field);
  if (cpu < 0)
    return;
  _Alignas (intptr_t) unsigned char bytes[2 * sizeof (intptr_t)];
  memset (bytes, 0x5a, sizeof bytes);
  /* Hidden from the compiler, which could otherwise prove the
     misalignment and fold the inline check (that would pass too).  */
  volatile uintptr_t address = (uintptr_t) bytes + 1;
  intptr_t *v = (intptr_t *) address;
  intptr_t expect;
  memcpy (&expect, bytes + 1, sizeof expect);
  unsigned long aborts = rseq_percpu_aborts ();
  unsigned long fallbacks = rseq_percpu_fallbacks ();

  CHECK (rseq_percpu_set_fallback (mode) >= 0);
  check_ops_fail (field, v, expect, cpu, EINVAL);
  for (size_t i = 0; i < sizeof bytes; i++)
    CHECK_EQ (bytes[i], 0x5a);
  CHECK_EQ (rseq_percpu_fallbacks (), fallbacks);
  CHECK_EQ (rseq_percpu_aborts (), aborts);
  CHECK (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_AUTO) >= 0);
}

static void
check_registered (void)
{
  pin_here ();
  check_stale_cpu (RSEQ_PERCPU_INDEX_CPU_ID, RSEQ_PERCPU_FALLBACK_AUTO);
  check_stale_cpu (RSEQ_PERCPU_INDEX_CPU_ID, RSEQ_PERCPU_FALLBACK_NEVER);
  check_stale_cpu (RSEQ_PERCPU_INDEX_CPU_ID, RSEQ_PERCPU_FALLBACK_ALWAYS);
  check_stale_cpu (RSEQ_PERCPU_INDEX_MM_CID, RSEQ_PERCPU_FALLBACK_AUTO);
  static const int modes[] = { RSEQ_PERCPU_FALLBACK_AUTO,
			       RSEQ_PERCPU_FALLBACK_NEVER,
			       RSEQ_PERCPU_FALLBACK_ALWAYS };
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
    {
      check_impossible_cpus (RSEQ_PERCPU_INDEX_CPU_ID, modes[i]);
      check_misaligned (RSEQ_PERCPU_INDEX_CPU_ID, modes[i]);
    }
  check_impossible_cpus (RSEQ_PERCPU_INDEX_MM_CID, RSEQ_PERCPU_FALLBACK_AUTO);
  check_misaligned (RSEQ_PERCPU_INDEX_MM_CID, RSEQ_PERCPU_FALLBACK_AUTO);

  intptr_t v = 0;
  CHECK_FAILS (rseq_percpu_current_cpu (7), EINVAL);
  CHECK_FAILS (libc_current_cpu (7), EINVAL);
  CHECK_FAILS (rseq_percpu_addv (7, &v, 1, 0), EINVAL);
  CHECK_FAILS (libc_addv (7, &v, 1, 0), EINVAL);
  CHECK_EQ (v, 0);
}

static void
check_unregistered (void)
{
  intptr_t v = 0;
  CHECK_FAILS (rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID), ENOSYS);
  CHECK_FAILS (libc_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID), ENOSYS);
  CHECK_FAILS (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &v, 1, 0), ENOSYS);
  CHECK_FAILS (libc_addv (RSEQ_PERCPU_INDEX_CPU_ID, &v, 1, 0), ENOSYS);
  CHECK_FAILS (rseq_percpu_addv (RSEQ_PERCPU_INDEX_MM_CID, &v, 1, 0), ENOSYS);
  CHECK_EQ (v, 0);
  /* Nothing ran, so nothing aborted.  */
  CHECK_EQ (rseq_percpu_aborts (), 0);
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "--unregistered") == 0)
    {
      check_unregistered ();
      return 0;
    }
  require_kernel_rseq ();
  if (!rseq_area_registered ())
    UNSUPPORTED ("glibc did not register rseq (__rseq_size %u)", __rseq_size);
  check_registered ();

  run_self_with_rseq_off (argv[0], "--unregistered");
  return 0;
}
