/* The time slice extension interface (Linux 7.0 and later): the prctl
   wrappers, rseq_slice_yield and the inline request/grant/release on
   slice_ctrl.  What must happen depends on the kernel, which says so
   itself: the extension is available to a thread whose registration
   covers slice_ctrl (__rseq_size >= 32) when the kernel set
   RSEQ_CS_FLAG_SLICE_EXT_AVAILABLE in the area's flags at registration.
   Where it is available, threads that oversubscribe the CPUs and hold
   requests must see the kernel grant extensions, and release must give
   the CPU back with rseq_slice_yield.  Elsewhere every function must
   fail with ENOSYS (EINVAL for a bad argument) and the inline ones must
   do nothing.  A vfork child, which has no registration, cannot enable
   it either.  */
#include "rseq-test.h"
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>

#define SLICE_EXT_AVAILABLE (1u << 4)	/* RSEQ_CS_FLAG_SLICE_EXT_*.  */
#define SLICE_EXT_ENABLED (1u << 5)

static int
kernel_offers_extension (void)
{
  return __rseq_size >= RSEQ_AREA_SLICE_CTRL_OFFSET + 4
	 && (raw_area_word (RSEQ_AREA_FLAGS_OFFSET) & SLICE_EXT_AVAILABLE);
}

static unsigned char
request_byte (void)
{
  return ((volatile unsigned char *) rseq_area_pointer ())
    [RSEQ_AREA_SLICE_CTRL_OFFSET];
}

static void
check_unavailable (void)
{
  CHECK_ERRNO (rseq_slice_extension_set (1), ENOSYS);
  CHECK_ERRNO (rseq_slice_extension_get (), ENOSYS);
  CHECK_ERRNO (rseq_slice_extension_set (0), ENOSYS);
  if (__rseq_size < RSEQ_AREA_SLICE_CTRL_OFFSET + 4)
    {
      /* No slice_ctrl: the inline functions must not touch the area
	 past the registration.  */
      CHECK_EQ (rseq_slice_request (), -1);
      CHECK_EQ (rseq_slice_granted (), 0);
      CHECK_EQ (rseq_slice_release (), -1);
    }
  else
    {
      /* The field exists but the kernel ignores requests.  */
      CHECK_EQ (rseq_slice_request (), 0);
      CHECK_EQ (rseq_slice_release (), 0);
      CHECK_EQ (request_byte (), 0);
    }
}

/* Per-thread: a new thread starts disabled whatever its creator did.  */
static void *
fresh_thread (void *arg)
{
  (void) arg;
  return (void *) (intptr_t) rseq_slice_extension_get ();
}

/* A spinning thread that keeps a request up for SPIN_NS at a time and
   counts the grants it sees and the yields that ended one.  */
struct spinner
{
  pthread_t thread;
  volatile int *stop;
  long spin_iterations;
  long grants, yields, rounds;
  int setup_error;
};

static long long
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#define SPIN_NS 200000

/* How many grant checks take about SPIN_NS, measured outside any
   request: inside one the spinner must not read the clock.  Where the
   vDSO cannot read the clocksource (the HPET under QEMU TCG),
   clock_gettime is a system call, and a system call ends a grant
   before the spinner can see it.  */
static long
spin_iterations (void)
{
  const long n = 1000000;
  long long start = now_ns ();
  for (long i = 0; i < n; i++)
    (void) rseq_slice_granted ();
  long long elapsed = now_ns () - start;
  long iterations = elapsed > 0 ? (long) ((double) n * SPIN_NS / elapsed) : n;
  return iterations < 1000 ? 1000 : iterations;
}

static void *
spin (void *arg)
{
  struct spinner *s = arg;
  if (rseq_slice_extension_set (1) != 0)
    {
      s->setup_error = errno;
      return NULL;
    }
  while (!*s->stop)
    {
      CHECK_EQ (rseq_slice_request (), 0);
      int granted = 0;
      /* Until the kernel grants an extension, which only lasts some
	 microseconds: then end the section at once, as a lock holder
	 would.  No system call in between.  */
      for (long i = 0; i < s->spin_iterations && !granted; i++)
	granted = rseq_slice_granted ();
      s->grants += granted;
      int ret = rseq_slice_release ();
      CHECK (ret == 0 || ret == 1);
      s->yields += ret;
      s->rounds++;
    }
  return NULL;
}

static void
check_grants (void)
{
  int nthreads = 3 * (int) sysconf (_SC_NPROCESSORS_ONLN);
  struct spinner *s = calloc (nthreads, sizeof *s);
  volatile int stop = 0;
  long grants = 0, yields = 0, rounds = 0;
  long iterations = spin_iterations ();

  CHECK (s != NULL);
  for (int i = 0; i < nthreads; i++)
    {
      s[i].stop = &stop;
      s[i].spin_iterations = iterations;
      CHECK_EQ (pthread_create (&s[i].thread, NULL, spin, &s[i]), 0);
    }
  /* Until some grant has been seen and yielded, at most 5 s.  */
  for (int t = 0; t < 50; t++)
    {
      usleep (100000);
      grants = yields = 0;
      for (int i = 0; i < nthreads; i++)
	{
	  grants += s[i].grants;
	  yields += s[i].yields;
	}
      if (t >= 10 && grants > 0 && yields > 0)
	break;
    }
  stop = 1;
  for (int i = 0; i < nthreads; i++)
    {
      CHECK_EQ (pthread_join (s[i].thread, NULL), 0);
      CHECK_EQ (s[i].setup_error, 0);
      rounds += s[i].rounds;
    }
  grants = yields = 0;
  for (int i = 0; i < nthreads; i++)
    {
      grants += s[i].grants;
      yields += s[i].yields;
    }
  printf ("%d threads: %ld requests, %ld granted, %ld yields\n", nthreads,
	  rounds, grants, yields);
  CHECK (yields <= grants);
  free (s);
  /* A kernel with the extension that never grants one to threads
     that keep requesting it while oversubscribed: not something this
     test can call a failure of the library (the kernel may deny grants
     for reasons of its own), but not a pass either.  */
  if (grants == 0)
    UNSUPPORTED ("the kernel granted no extension to %d oversubscribed "
		 "threads in %ld requests", nthreads, rounds);
}

static void
check_available (void)
{
  CHECK_ERRNO (rseq_slice_extension_set (2), EINVAL);
  CHECK_ERRNO (rseq_slice_extension_set (-1), EINVAL);
  CHECK_EQ (rseq_slice_extension_set (1), 0);
  CHECK_EQ (rseq_slice_extension_get (), 1);
  CHECK (raw_area_word (RSEQ_AREA_FLAGS_OFFSET) & SLICE_EXT_ENABLED);

  pthread_t t;
  void *ret;
  CHECK_EQ (pthread_create (&t, NULL, fresh_thread, NULL), 0);
  CHECK_EQ (pthread_join (t, &ret), 0);
  CHECK_EQ ((intptr_t) ret, 0);

  CHECK_EQ (rseq_slice_request (), 0);
  CHECK (request_byte () == 1 || rseq_slice_granted ());
  CHECK (rseq_slice_release () >= 0);
  CHECK_EQ (request_byte (), 0);
  /* Without a grant the system call has nothing to end.  */
  CHECK_EQ (rseq_slice_yield (), 0);

  CHECK_EQ (rseq_slice_extension_set (0), 0);
  CHECK_EQ (rseq_slice_extension_get (), 0);
  CHECK (!(raw_area_word (RSEQ_AREA_FLAGS_OFFSET) & SLICE_EXT_ENABLED));
  check_grants ();
}

/* A vfork child has no registration: it must be told ENOSYS, and its
   calls must leave the parent's thread as it was.  */
static void
check_vfork_child (int parent_enabled)
{
  volatile int set_ret = 0, set_errno = 0, get_ret = 0;
  pid_t pid = vfork ();
  if (pid == 0)
    {
      errno = 0;
      set_ret = rseq_slice_extension_set (1);
      set_errno = errno;
      get_ret = rseq_slice_extension_get ();
      _exit (0);
    }
  CHECK (pid > 0);
  int status;
  CHECK (waitpid (pid, &status, 0) == pid);
  CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  CHECK_EQ (set_ret, -1);
  CHECK_EQ (set_errno, ENOSYS);
  CHECK_EQ (get_ret, -1);
  if (kernel_offers_extension ())
    CHECK_EQ (rseq_slice_extension_get (), parent_enabled);
}

int
main (void)
{
  require_kernel_rseq ();
  if (!rseq_area_registered ())
    UNSUPPORTED ("glibc did not register rseq (__rseq_size %u)", __rseq_size);

  errno = 0;
  int yield = rseq_slice_yield ();
  /* Saved at once: printf may set errno (stdio's first output asks
     whether stdout is a terminal).  */
  int yield_errno = errno;
  int available = kernel_offers_extension ();
  printf ("__rseq_size %u, AT_RSEQ_FEATURE_SIZE %lu, flags %#x, "
	  "rseq_slice_yield %d (errno %d): extension %savailable\n",
	  __rseq_size, getauxval (AT_RSEQ_FEATURE_SIZE),
	  raw_area_word (RSEQ_AREA_FLAGS_OFFSET), yield, yield_errno,
	  available ? "" : "not ");
  /* The system call exists from Linux 7.0 on, as does the feature size
     that covers slice_ctrl.  */
  if (getauxval (AT_RSEQ_FEATURE_SIZE) > RSEQ_AREA_SLICE_CTRL_OFFSET)
    CHECK_EQ (yield, 0);
  else
    CHECK (yield == -1 && yield_errno == ENOSYS);

  check_vfork_child (0);
  if (available)
    check_available ();
  else
    check_unavailable ();
  return 0;
}
