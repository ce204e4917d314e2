/* Stress test of malloc's per-CPU cache (glibc.malloc.percpu).
   Copyright (C) 2026 Free Software Foundation, Inc.
   This file is part of the GNU C Library.

   The GNU C Library is free software; you can redistribute it and/or
   modify it under the terms of the GNU Lesser General Public
   License as published by the Free Software Foundation; either
   version 2.1 of the License, or (at your option) any later version.

   The GNU C Library is distributed in the hope that it will be useful,
   but WITHOUT ANY WARRANTY; without even the implied warranty of
   MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
   Lesser General Public License for more details.

   You should have received a copy of the GNU Lesser General Public
   License along with the GNU C Library; if not, see
   <https://www.gnu.org/licenses/>.  */

/* Producers allocate blocks and hand them to consumers on other
   threads, which check and free them: every block crosses threads, so
   that it goes through the per-CPU caches, their flushes and refills.
   Each block is filled with a pattern of its serial number, checked
   whole before it is freed, and every serial must be freed exactly
   once: a chunk handed out twice, or lost, fails the test.  Meanwhile
   signals interrupt the threads (their handlers allocate), a thread
   moves the workers between CPUs, the process forks (the child uses
   and trims the caches it inherited), and malloc_trim empties the
   caches under load.  At the end the caches must be empty after
   malloc_trim, and a double free of a cached chunk must be caught.

   Run with GLIBC_TUNABLES=glibc.malloc.percpu=MODE (the test's ENV);
   PERCPU_MODE is the mode malloc_info must report (mm_cid falls back to
   cpu_id on kernels without it).  */

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/wait.h>
#include <unistd.h>
#include <support/capture_subprocess.h>
#include <support/check.h>
#include <support/support.h>
#include <support/xmemstream.h>
#include <support/xthread.h>
#include <support/xunistd.h>

#include "tst-malloc-percpu-info.h"

#ifndef PERCPU_MODE
# define PERCPU_MODE "mm_cid"
#endif

enum
{
  producers = 4,
  consumers = 4,
  blocks_per_producer = 250000,
  total_blocks = producers * blocks_per_producer,
  ring_size = 512,
  forks = 4
};

/* Block sizes: several size classes of the thread cache.  */
static const size_t sizes[] = { 16, 24, 40, 64, 100, 200, 512, 1000 };
#define NSIZES (sizeof sizes / sizeof sizes[0])

struct block
{
  uint32_t serial;
  uint32_t size;
  unsigned char fill[];
};

/* The queue from producers to consumers.  */
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ring_nonempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t ring_nonfull = PTHREAD_COND_INITIALIZER;
static struct block *ring[ring_size];
static size_t ring_head, ring_count;

static _Atomic unsigned char freed[total_blocks];
static atomic_bool workers_done;
static pthread_t worker_threads[producers + consumers];

/* The workers wait at WORK_DONE when they have finished and at
   MAY_EXIT until the disturber has stopped: it signals them with
   pthread_kill, which needs them alive.  */
static pthread_barrier_t work_done, may_exit;

static void
worker_finish (void)
{
  xpthread_barrier_wait (&work_done);
  xpthread_barrier_wait (&may_exit);
}

static unsigned char
pattern (uint32_t serial, size_t i)
{
  return (unsigned char) (serial * 31 + i * 7 + 1);
}

static void
ring_push (struct block *b)
{
  xpthread_mutex_lock (&ring_lock);
  while (ring_count == ring_size)
    xpthread_cond_wait (&ring_nonfull, &ring_lock);
  ring[(ring_head + ring_count++) % ring_size] = b;
  xpthread_cond_signal (&ring_nonempty);
  xpthread_mutex_unlock (&ring_lock);
}

/* NULL once all blocks have been consumed.  */
static struct block *
ring_pop (void)
{
  static unsigned int popped;
  struct block *b = NULL;
  xpthread_mutex_lock (&ring_lock);
  while (ring_count == 0 && popped < total_blocks)
    xpthread_cond_wait (&ring_nonempty, &ring_lock);
  if (ring_count > 0)
    {
      b = ring[ring_head];
      ring_head = (ring_head + 1) % ring_size;
      ring_count--;
      if (++popped == total_blocks)
	pthread_cond_broadcast (&ring_nonempty);
      xpthread_cond_signal (&ring_nonfull);
    }
  xpthread_mutex_unlock (&ring_lock);
  return b;
}

/* Set while a worker is inside malloc or free: its signal handler then
   does not allocate (malloc is not async-signal-safe).  The signal
   still interrupts the per-CPU operations in there.  */
static __thread volatile sig_atomic_t in_malloc;

static void *
guarded_malloc (size_t n)
{
  in_malloc = 1;
  void *p = malloc (n);
  in_malloc = 0;
  return p;
}

static void
guarded_free (void *p)
{
  in_malloc = 1;
  free (p);
  in_malloc = 0;
}

static atomic_uint handler_allocations;

static void
handler (int sig)
{
  if (in_malloc)
    return;
  int saved = errno;
  void *p = malloc (sizes[handler_allocations % NSIZES]);
  if (p != NULL)
    {
      memset (p, 0xa5, sizes[handler_allocations % NSIZES]);
      free (p);
      atomic_fetch_add (&handler_allocations, 1);
    }
  errno = saved;
}

static void *
producer (void *arg)
{
  uint32_t first = (uintptr_t) arg * blocks_per_producer;
  for (uint32_t i = 0; i < blocks_per_producer; i++)
    {
      uint32_t serial = first + i;
      size_t size = sizes[serial % NSIZES];
      struct block *b = guarded_malloc (size);
      TEST_VERIFY_EXIT (b != NULL);
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
  struct block *b;
  while ((b = ring_pop ()) != NULL)
    {
      uint32_t serial = b->serial;
      TEST_VERIFY_EXIT (serial < total_blocks);
      TEST_COMPARE (b->size, sizes[serial % NSIZES]);
      for (size_t j = 0; j < b->size - sizeof *b; j++)
	if (b->fill[j] != pattern (serial, j))
	  FAIL_EXIT1 ("block %u overwritten at byte %zu: handed out twice",
		      serial, j);
      if (atomic_exchange (&freed[serial], 1) != 0)
	FAIL_EXIT1 ("block %u consumed twice", serial);
      guarded_free (b);
    }
  worker_finish ();
  return NULL;
}

/* Interrupts the workers with signals and moves them between CPUs.  */
static void *
disturber (void *arg)
{
  long int ncpus = sysconf (_SC_NPROCESSORS_ONLN);
  unsigned int round = 0;
  while (!atomic_load (&workers_done))
    {
      pthread_t t = worker_threads[round % (producers + consumers)];
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
      round++;
      usleep (100);
    }
  return NULL;
}

/* The child of a fork under load: it inherited the caches, uses them
   and empties them.  */
static void
child_work (void)
{
  void *p[1000];
  for (int round = 0; round < 10; round++)
    {
      for (int i = 0; i < 1000; i++)
	{
	  p[i] = malloc (sizes[i % NSIZES]);
	  TEST_VERIFY_EXIT (p[i] != NULL);
	  memset (p[i], i, sizes[i % NSIZES]);
	}
      for (int i = 0; i < 1000; i++)
	free (p[i]);
    }
  malloc_trim (0);
  TEST_COMPARE (percpu_cached_chunks (), 0);
  _exit (support_record_failure_is_failed () ? 1 : 0);
}

static void
fork_under_load (void)
{
  for (int i = 0; i < forks; i++)
    {
      usleep (20000);
      pid_t pid = xfork ();
      if (pid == 0)
	child_work ();
      int status;
      xwaitpid (pid, &status, 0);
      TEST_VERIFY (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    }
}

/* Free a chunk that the per-CPU cache holds: malloc must abort.  */
static void
double_free (void *closure)
{
  enum { fill = 64 };
  void *keep[fill + 1];
  /* Chunks of another thread's arena, which the per-CPU cache takes.  */
  percpu_foreign_chunks (keep, fill + 1, 40);
  /* volatile: the compiler may drop a free it can prove is a double
     free.  */
  void *volatile victim = keep[fill];
  /* The thread cache takes the first few; the rest, and VICTIM, go to
     the per-CPU cache.  */
  for (int i = 0; i < fill; i++)
    free (keep[i]);
  free (victim);
  free (victim);
  _exit (0);
}

static int
do_test (void)
{
  if (__rseq_size == 0)
    FAIL_UNSUPPORTED ("rseq is not registered");

  /* The caches are set up by the first free that the thread cache has
     no room for of a chunk of another thread's arena.  */
  {
    void *p[100];
    percpu_foreign_chunks (p, 100, 32);
    for (int i = 0; i < 100; i++)
      free (p[i]);
  }
  char *info = percpu_info ();
  if (info == NULL)
    FAIL_UNSUPPORTED ("the kernel cannot run the per-CPU cache"
		      " (membarrier without MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ)");
  printf ("info: %s\n", info);
  char *mode = strstr (info, "mode=\"");
  TEST_VERIFY_EXIT (mode != NULL);
  mode += strlen ("mode=\"");
  if (strncmp (mode, "cpu_id\"", 7) == 0 && strcmp (PERCPU_MODE, "mm_cid") == 0)
    printf ("info: the kernel has no mm_cid; the cache uses cpu_id\n");
  else
    TEST_VERIFY (strncmp (mode, PERCPU_MODE "\"",
			  strlen (PERCPU_MODE) + 1) == 0);
  free (info);

  struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
  sigemptyset (&sa.sa_mask);
  TEST_COMPARE (sigaction (SIGUSR1, &sa, NULL), 0);

  xpthread_barrier_init (&work_done, NULL, producers + consumers + 1);
  xpthread_barrier_init (&may_exit, NULL, producers + consumers + 1);
  for (uintptr_t i = 0; i < producers; i++)
    worker_threads[i] = xpthread_create (NULL, producer, (void *) i);
  for (int i = 0; i < consumers; i++)
    worker_threads[producers + i] = xpthread_create (NULL, consumer, NULL);
  pthread_t disturb = xpthread_create (NULL, disturber, NULL);

  fork_under_load ();

  xpthread_barrier_wait (&work_done);
  atomic_store (&workers_done, true);
  xpthread_join (disturb);
  xpthread_barrier_wait (&may_exit);
  for (int i = 0; i < producers + consumers; i++)
    xpthread_join (worker_threads[i]);

  for (size_t i = 0; i < total_blocks; i++)
    if (freed[i] != 1)
      FAIL ("block %zu was never consumed", i);
  printf ("info: %u allocations in signal handlers\n",
	  atomic_load (&handler_allocations));

  /* The producers' caches ran empty and the consumers' full: chunks
     went through the transfer cache.  */
  size_t refills = percpu_cache_sum ("refills");
  size_t flushes = percpu_cache_sum ("flushes");
  printf ("info: %zu refills, %zu flushes, %zu misses, %zu overflows\n",
	  refills, flushes, percpu_cache_sum ("misses"),
	  percpu_cache_sum ("overflows"));
  TEST_VERIFY (refills > 0);
  TEST_VERIFY (flushes > 0);

  /* malloc_trim empties the per-CPU caches (each one that holds chunks
     counts a drain) and the transfer cache (no drain).  */
  size_t before = percpu_cached_chunks ();
  size_t in_caches = percpu_cache_sum ("count");
  size_t drains = percpu_cache_sum ("drains");
  printf ("info: %zu chunks cached before malloc_trim, %zu of them in"
	  " per-CPU caches\n", before, in_caches);
  malloc_trim (0);
  TEST_COMPARE (percpu_cached_chunks (), 0);
  TEST_COMPARE (percpu_cache_sum ("count"), 0);
  if (in_caches > 0)
    TEST_VERIFY (percpu_cache_sum ("drains") > drains);

  struct support_capture_subprocess result
    = support_capture_subprocess (double_free, NULL);
  TEST_VERIFY (WIFSIGNALED (result.status)
	       && WTERMSIG (result.status) == SIGABRT);
  TEST_VERIFY (strstr (result.err.buffer,
		       "double free detected in per-CPU cache") != NULL);
  support_capture_subprocess_free (&result);
  return 0;
}

#include <support/test-driver.c>
