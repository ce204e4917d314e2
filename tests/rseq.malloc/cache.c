/* malloc's per-CPU cache (glibc.malloc.percpu) as a program sees it,
   on every ABI: producer threads allocate blocks of several size
   classes and pass them through a queue to consumer threads, which
   check and free them, so every block crosses threads and goes through
   the per-CPU and transfer caches; a disturber thread meanwhile signals
   the workers (their handlers allocate when they did not interrupt
   malloc), moves them between CPUs and calls malloc_trim.  Every block
   is filled with a pattern of its serial number and checked whole
   before it is freed, and every serial must be freed exactly once: a
   chunk handed out twice, or lost, fails.  At the end malloc_trim must
   leave the caches empty.

     cache [mm_cid|cpu_id] [--blocks N]

   Without a mode the program runs itself once per mode.  A run sets
   GLIBC_TUNABLES=glibc.malloc.percpu=MODE and executes itself again if
   it is not set, since glibc reads tunables at startup.  77 if
   malloc_info shows no per-CPU cache (a kernel without rseq or without
   membarrier's MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ).  */
#include "malloc-test.h"
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>

#define PRODUCERS 2
#define CONSUMERS 2
#define RING 256

static const size_t sizes[] = { 16, 24, 40, 64, 100, 200, 512, 1000 };
#define NSIZES (sizeof sizes / sizeof sizes[0])

struct block
{
  uint32_t serial;
  uint32_t size;
  unsigned char fill[];
};

static unsigned int total_blocks = 200000;
static _Atomic unsigned char *freed;

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ring_changed = PTHREAD_COND_INITIALIZER;
static struct block *ring[RING];
static unsigned int ring_head, ring_count, popped;

static atomic_bool stop_disturbing;
static pthread_t workers[PRODUCERS + CONSUMERS];
/* Workers wait here after their work until the disturber has stopped:
   pthread_kill needs them alive.  */
static pthread_barrier_t done, may_exit;

static unsigned char
pattern (uint32_t serial, size_t i)
{
  return (unsigned char) (serial * 31 + i * 7 + 1);
}

/* Set around the worker's own malloc and free calls: its signal handler
   allocates only outside them (malloc is not async-signal-safe).  */
static __thread volatile sig_atomic_t in_malloc;
static atomic_uint handler_allocations;

static void
handler (int sig)
{
  (void) sig;
  if (in_malloc)
    return;
  int saved = errno;
  size_t n = sizes[atomic_load (&handler_allocations) % NSIZES];
  void *p = malloc (n);
  if (p != NULL)
    {
      memset (p, 0xa5, n);
      free (p);
      atomic_fetch_add (&handler_allocations, 1);
    }
  errno = saved;
}

static void
ring_push (struct block *b)
{
  pthread_mutex_lock (&ring_lock);
  while (ring_count == RING)
    pthread_cond_wait (&ring_changed, &ring_lock);
  ring[(ring_head + ring_count++) % RING] = b;
  pthread_cond_broadcast (&ring_changed);
  pthread_mutex_unlock (&ring_lock);
}

/* NULL once every block has been taken.  */
static struct block *
ring_pop (void)
{
  struct block *b = NULL;
  pthread_mutex_lock (&ring_lock);
  while (ring_count == 0 && popped < total_blocks)
    pthread_cond_wait (&ring_changed, &ring_lock);
  if (ring_count > 0)
    {
      b = ring[ring_head];
      ring_head = (ring_head + 1) % RING;
      ring_count--;
      popped++;
    }
  pthread_cond_broadcast (&ring_changed);
  pthread_mutex_unlock (&ring_lock);
  return b;
}

static void
worker_finish (void)
{
  pthread_barrier_wait (&done);
  pthread_barrier_wait (&may_exit);
}

static void *
producer (void *arg)
{
  unsigned int id = (uintptr_t) arg;
  for (uint32_t serial = id; serial < total_blocks; serial += PRODUCERS)
    {
      size_t size = sizes[serial % NSIZES];
      in_malloc = 1;
      struct block *b = malloc (size);
      in_malloc = 0;
      if (b == NULL)
	FAIL ("malloc (%zu) returned NULL", size);
      b->serial = serial;
      b->size = size;
      for (size_t j = 0; j < size - sizeof *b; j++)
	b->fill[j] = pattern (serial, j);
      ring_push (b);
    }
  worker_finish ();
  return NULL;
}

static void *
consumer (void *arg)
{
  (void) arg;
  struct block *b;
  while ((b = ring_pop ()) != NULL)
    {
      uint32_t serial = b->serial;
      if (serial >= total_blocks || b->size != sizes[serial % NSIZES])
	FAIL ("block at %p has a bad header: handed out twice?", (void *) b);
      for (size_t j = 0; j < b->size - sizeof *b; j++)
	if (b->fill[j] != pattern (serial, j))
	  FAIL ("block %u overwritten at byte %zu: handed out twice",
		(unsigned int) serial, j);
      if (atomic_exchange (&freed[serial], 1) != 0)
	FAIL ("block %u consumed twice", (unsigned int) serial);
      in_malloc = 1;
      free (b);
      in_malloc = 0;
    }
  worker_finish ();
  return NULL;
}

static void *
disturber (void *arg)
{
  (void) arg;
  long ncpus = sysconf (_SC_NPROCESSORS_ONLN);
  for (unsigned int round = 0; !atomic_load (&stop_disturbing); round++)
    {
      pthread_t t = workers[round % (PRODUCERS + CONSUMERS)];
      pthread_kill (t, SIGUSR1);
      if (ncpus > 1 && round % 8 == 0)
	{
	  cpu_set_t set;
	  CPU_ZERO (&set);
	  CPU_SET ((round / 8) % ncpus, &set);
	  /* Fails harmlessly if that CPU is not allowed.  */
	  pthread_setaffinity_np (t, sizeof set, &set);
	}
      if (round % 200 == 199)
	malloc_trim (0);
      usleep (200);
    }
  return NULL;
}

/* The count attribute of the percpu element, or -1 without one.  */
static long
cached_chunks (void)
{
  char *element = malloc_info_line ("<percpu ");
  long n = element != NULL ? malloc_info_attr (element, "count") : -1;
  free (element);
  return n;
}

static int
run_mode (const char *mode)
{
  /* The caches are set up by the first free the thread cache has no
     room for of a chunk of another thread's arena.  */
  void *warm[64];
  malloc_foreign_chunks (warm, 64, 32);
  for (int i = 0; i < 64; i++)
    free (warm[i]);
  char *info = malloc_info_text ();
  char *element = strstr (info, "<percpu ");
  if (element == NULL)
    UNSUPPORTED ("malloc_info shows no per-CPU cache with glibc.malloc.percpu=%s"
		 " (a glibc without the cache, no rseq, or a kernel without"
		 " MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ)", mode);
  printf ("%.*s\n", (int) strcspn (element, "\n"), element);
  free (info);

  freed = calloc (total_blocks, 1);
  CHECK (freed != NULL);
  struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
  sigemptyset (&sa.sa_mask);
  CHECK_EQ (sigaction (SIGUSR1, &sa, NULL), 0);
  CHECK_EQ (pthread_barrier_init (&done, NULL, PRODUCERS + CONSUMERS + 1), 0);
  CHECK_EQ (pthread_barrier_init (&may_exit, NULL, PRODUCERS + CONSUMERS + 1), 0);
  for (uintptr_t i = 0; i < PRODUCERS; i++)
    CHECK_EQ (pthread_create (&workers[i], NULL, producer, (void *) i), 0);
  for (int i = 0; i < CONSUMERS; i++)
    CHECK_EQ (pthread_create (&workers[PRODUCERS + i], NULL, consumer, NULL), 0);
  pthread_t disturb;
  CHECK_EQ (pthread_create (&disturb, NULL, disturber, NULL), 0);

  pthread_barrier_wait (&done);
  atomic_store (&stop_disturbing, true);
  CHECK_EQ (pthread_join (disturb, NULL), 0);
  pthread_barrier_wait (&may_exit);
  for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
    CHECK_EQ (pthread_join (workers[i], NULL), 0);

  for (unsigned int i = 0; i < total_blocks; i++)
    if (freed[i] != 1)
      FAIL ("block %u was never consumed", i);
  printf ("%s: %u blocks, %u allocations in signal handlers, %ld chunks"
	  " cached before malloc_trim\n", mode, total_blocks,
	  atomic_load (&handler_allocations), cached_chunks ());
  malloc_trim (0);
  CHECK_EQ (cached_chunks (), 0);
  free (freed);
  return 0;
}

/* Run this program with MODE in a child; its exit status.  */
static int
run_child (char **argv, const char *mode)
{
  pid_t pid = fork ();
  CHECK (pid >= 0);
  if (pid == 0)
    {
      char *args[] = { argv[0], (char *) mode, argv[1], argv[2], NULL };
      execv ("/proc/self/exe", args);
      FAIL ("execv /proc/self/exe: %s", strerror (errno));
    }
  int status;
  CHECK_EQ (waitpid (pid, &status, 0), pid);
  CHECK (WIFEXITED (status));
  return WEXITSTATUS (status);
}

int
main (int argc, char **argv)
{
  int arg = 1;
  const char *mode = NULL;
  if (arg < argc && argv[arg][0] != '-')
    mode = argv[arg++];
  if (arg + 1 < argc && strcmp (argv[arg], "--blocks") == 0)
    {
      total_blocks = strtoul (argv[arg + 1], NULL, 10);
      arg += 2;
    }
  if (arg != argc || total_blocks == 0
      || (mode != NULL && strcmp (mode, "mm_cid") != 0
	  && strcmp (mode, "cpu_id") != 0))
    {
      fprintf (stderr, "usage: cache [mm_cid|cpu_id] [--blocks N]\n");
      return 2;
    }
  setvbuf (stdout, NULL, _IOLBF, 0);

  if (mode == NULL)
    {
      /* argv[1] and argv[2] are the --blocks option, if any.  */
      char *rest[] = { argv[0], argc == 3 ? argv[1] : NULL,
		       argc == 3 ? argv[2] : NULL };
      int mm_cid = run_child (rest, "mm_cid");
      int cpu_id = run_child (rest, "cpu_id");
      printf ("mm_cid: exit %d, cpu_id: exit %d\n", mm_cid, cpu_id);
      if (mm_cid == 0 && cpu_id == 0)
	return 0;
      if ((mm_cid == 0 || mm_cid == 77) && (cpu_id == 0 || cpu_id == 77))
	return 77;
      return 1;
    }

  char want[64];
  snprintf (want, sizeof want, "glibc.malloc.percpu=%s", mode);
  const char *tunables = getenv ("GLIBC_TUNABLES");
  if (tunables == NULL || strcmp (tunables, want) != 0)
    {
      CHECK_EQ (setenv ("GLIBC_TUNABLES", want, 1), 0);
      execv ("/proc/self/exe", argv);
      FAIL ("execv /proc/self/exe: %s", strerror (errno));
    }
  return run_mode (mode);
}
