/* malloc's per-CPU cache when a sandbox denies or kills on membarrier,
   on every ABI: emptying another CPU's cache needs a fence (membarrier
   with MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ).  Each case runs in a new
   process of this program with glibc.malloc.percpu=mm_cid,
   glibc.malloc.percpu_local=1 and no thread cache (every free and
   malloc reaches the per-CPU cache, own chunks included), so
   the caches have not started when it installs its seccomp filter (on
   every thread):

     deny-before   ENOSYS for every membarrier, before the caches start
     deny-after    EPERM for the fence command, after a fence succeeded
     kill-single   killed, in a process with one thread
     kill-fork     killed, in a child forked after the caches were used
     kill-threads  killed, in a process with threads: malloc_trim dies
                   of SIGSYS, as documented

   In the deny cases a thread on one CPU allocates and frees in bursts,
   each block marked while allocated with a word bound to its address,
   while the main thread calls malloc_trim in a loop: no block may be
   handed out while allocated and nothing may abort; afterwards the
   caches take no new chunks and, once one thread is left, malloc_trim
   empties them.  In the kill cases with one thread, malloc_trim empties
   every cache without calling membarrier.

     fence [CASE]

   Without a case the program runs each one and checks how it ended.
   77 without seccomp filters or without the per-CPU cache.  */
#include "malloc-test.h"
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <time.h>

#define TUNABLES \
  "glibc.malloc.percpu=mm_cid:glibc.malloc.percpu_local=1:glibc.malloc.tcache_count=0"
#define FENCE_CMD (1 << 7)	/* MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ */
#define ANY_CMD (-1)
#define BURST 64	/* 12 or 13 blocks of each size: more than the
			   thread cache holds.  */
/* Long enough for the glibc without the fix to corrupt its heap (it did
   within 0.5 s on 2 CPUs).  */
#define STRESS_MS 1000

/* The low 32 bits of the first system call argument.  */
#define ARG0_LOW (offsetof (struct seccomp_data, args[0])		\
		  + (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0))

static const size_t sizes[] = { 24, 40, 64, 100, 200 };
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Make membarrier with command CMD (ANY_CMD: every command) return
   ACTION, in every thread.  */
static void
filter_membarrier (int cmd, unsigned int action)
{
  struct sock_filter insns[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 3),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, ARG0_LOW),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (unsigned int) cmd, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, action),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  if (cmd == ANY_CMD)
    insns[3] = (struct sock_filter) BPF_STMT (BPF_JMP | BPF_JA, 0);
  struct sock_fprog prog = {
    .len = sizeof insns / sizeof insns[0], .filter = insns
  };
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    UNSUPPORTED ("PR_SET_NO_NEW_PRIVS: %s", strerror (errno));
  if (syscall (__NR_seccomp, SECCOMP_SET_MODE_FILTER,
	       SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
    UNSUPPORTED ("seccomp filters: %s", strerror (errno));
}

static void
pin (int cpu)
{
  long n = sysconf (_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu % (n > 0 ? n : 1), &set);
  /* Harmless if not allowed.  */
  sched_setaffinity (0, sizeof set, &set);
}

/* An allocated block's last word, bound to its address.  Volatile: the
   compiler drops a store right before free.  */
static volatile uintptr_t *
marker (void *p, size_t size)
{
  return (volatile uintptr_t *) p + size / sizeof (uintptr_t) - 1;
}

static uintptr_t
live (void *p)
{
  return (uintptr_t) p ^ (uintptr_t) 0x5ca1ab1e0ddba11ULL;
}

static void
bursts (int rounds)
{
  void *p[BURST];
  for (int r = 0; r < rounds; r++)
    {
      for (int i = 0; i < BURST; i++)
	{
	  size_t size = sizes[i % NSIZES];
	  CHECK ((p[i] = malloc (size)) != NULL);
	  if (*marker (p[i], size) == live (p[i]))
	    FAIL ("block %p handed out while it is allocated", p[i]);
	  *marker (p[i], size) = live (p[i]);
	}
      for (int i = 0; i < BURST; i++)
	{
	  size_t size = sizes[i % NSIZES];
	  if (*marker (p[i], size) != live (p[i]))
	    FAIL ("block %p changed while it was allocated", p[i]);
	  *marker (p[i], size) = 0;
	  free (p[i]);
	}
    }
}

/* The percpu element of malloc_info, or NULL.  */
static char *
percpu_element (void)
{
  return malloc_info_line ("<percpu ");
}

/* Attribute ATTR of the percpu element, as a number.  */
static long
percpu_attr (const char *attr)
{
  char *element = percpu_element ();
  CHECK (element != NULL);
  long n = malloc_info_attr (element, attr);
  free (element);
  return n;
}

static void
expect_fence (const char *state)
{
  char *element = percpu_element ();
  CHECK (element != NULL);
  char want[32];
  snprintf (want, sizeof want, " fence=\"%s\"", state);
  if (strstr (element, want) == NULL)
    FAIL ("expected%s in %s", want, element);
  printf ("%s\n", element);
  free (element);
}

/* Set up the caches (the 8th free of a class passes the thread cache);
   77 if malloc has none.  */
static void
start_caches (void)
{
  /* Volatile: the compiler may drop a malloc and free that nothing
     uses.  */
  void *volatile p[16];
  for (int i = 0; i < 16; i++)
    CHECK ((p[i] = malloc (32)) != NULL);
  for (int i = 0; i < 16; i++)
    free (p[i]);
  char *element = percpu_element ();
  if (element == NULL)
    UNSUPPORTED ("malloc_info shows no per-CPU cache with " TUNABLES);
  free (element);
}

static atomic_bool stop;

static void *
burst_thread (void *arg)
{
  (void) arg;
  pin (1);
  uintptr_t rounds = 0;
  while (!atomic_load_explicit (&stop, memory_order_relaxed))
    {
      bursts (1);
      rounds++;
    }
  return (void *) rounds;
}

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Bursts on one CPU against malloc_trim in a loop on another.  */
static void
stress (int ms)
{
  pin (0);
  atomic_store (&stop, false);
  pthread_t t;
  CHECK_EQ (pthread_create (&t, NULL, burst_thread, NULL), 0);
  unsigned long trims = 0;
  for (double end = now () + ms / 1e3; now () < end; trims++)
    malloc_trim (0);
  atomic_store (&stop, true);
  void *rounds;
  CHECK_EQ (pthread_join (t, &rounds), 0);
  printf ("%lu bursts, %lu calls of malloc_trim\n",
	  (unsigned long) (uintptr_t) rounds, trims);
  CHECK ((uintptr_t) rounds > 0);
}

/* After the fence failed: no new chunks; one thread empties them all.  */
static void
check_after_failure (void)
{
  expect_fence ("failed");
  long held = percpu_attr ("count");
  bursts (100);
  CHECK (percpu_attr ("count") <= held);
  malloc_trim (0);
  CHECK_EQ (percpu_attr ("count"), 0);
}

static int
deny_before (void)
{
  filter_membarrier (ANY_CMD, SECCOMP_RET_ERRNO | ENOSYS);
  /* Nothing was freed yet (malloc_info reads before it frees).  */
  CHECK (percpu_element () == NULL);
  start_caches ();
  stress (STRESS_MS);
  check_after_failure ();
  return 0;
}

static int
deny_after (void)
{
  start_caches ();
  stress (STRESS_MS / 3);
  expect_fence ("ok");
  filter_membarrier (FENCE_CMD, SECCOMP_RET_ERRNO | EPERM);
  stress (STRESS_MS);
  check_after_failure ();
  return 0;
}

static int
kill_single (void)
{
  filter_membarrier (ANY_CMD, SECCOMP_RET_KILL_PROCESS);
  start_caches ();
  bursts (100);
  CHECK (percpu_attr ("count") > 0);
  malloc_trim (0);
  CHECK_EQ (percpu_attr ("count"), 0);
  expect_fence ("ok");
  return 0;
}

static int
kill_fork (void)
{
  start_caches ();
  stress (STRESS_MS / 3);
  bursts (10);
  pid_t pid = fork ();
  CHECK (pid >= 0);
  if (pid == 0)
    exit (kill_single ());
  int status;
  CHECK_EQ (waitpid (pid, &status, 0), pid);
  CHECK_EQ (status, 0);
  return 0;
}

static pthread_barrier_t filled, may_exit;

static void *
fill_and_wait (void *arg)
{
  (void) arg;
  bursts (1);
  pthread_barrier_wait (&filled);
  pthread_barrier_wait (&may_exit);
  return NULL;
}

static int
kill_threads (void)
{
  start_caches ();
  CHECK_EQ (pthread_barrier_init (&filled, NULL, 2), 0);
  CHECK_EQ (pthread_barrier_init (&may_exit, NULL, 2), 0);
  pthread_t t;
  CHECK_EQ (pthread_create (&t, NULL, fill_and_wait, NULL), 0);
  pthread_barrier_wait (&filled);
  CHECK (percpu_attr ("count") > 0);
  filter_membarrier (ANY_CMD, SECCOMP_RET_KILL_PROCESS);
  printf ("malloc_trim\n");
  malloc_trim (0);
  printf ("malloc_trim returned\n");
  pthread_barrier_wait (&may_exit);
  CHECK_EQ (pthread_join (t, NULL), 0);
  return 0;
}

static const struct malloc_test_case cases[] = {
  { "deny-before", deny_before, 0, NULL },
  { "deny-after", deny_after, 0, NULL },
  { "kill-single", kill_single, 0, NULL },
  { "kill-fork", kill_fork, 0, NULL },
  { "kill-threads", kill_threads, SIGSYS, NULL },
};

int
main (int argc, char **argv)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  reexec_with_tunables (argv, TUNABLES);
  return malloc_test_main (argc, argv, "fence [deny-before|deny-after|"
			   "kill-single|kill-fork|kill-threads]",
			   cases, sizeof cases / sizeof cases[0]);
}
