/* The search for idle caches of malloc.s per-CPU cache.
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

/* A cache is emptied as idle when no operation used it between two
   looks (one look per 1024 refills and flushes of a cache, at least
   0.2 s after the last).  A thread on CPU 0 frees and allocates one
   block at a time with eight blocks cached, so its array never fills or
   empties: pushes and pops only, no refill or flush.  A thread on CPU 1
   fills and empties its arrays, and its refills and flushes drive the
   looks.  While the first thread works (2 s, and at least 16 times 1024
   refills and flushes on CPU 1) its cache must never be emptied; once
   it stops, with chunks left in the cache, the cache must be emptied
   (within 30 s).  The glibc that counted only refills and flushes as
   use emptied the busy cache at the second look.

   Run with GLIBC_TUNABLES=glibc.malloc.percpu=cpu_id,
   glibc.malloc.percpu_local=1 (the caches take the thread's own chunks)
   and a thread cache of 0 chunks (the test's ENV): every free and malloc
   reaches the per-CPU cache, and cache N is CPU N's.  */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/rseq.h>
#include <unistd.h>
#include <support/check.h>
#include <support/xthread.h>

#include "tst-malloc-percpu-info.h"

enum
{
  /* Looks are made once in this many refills and flushes.  */
  scan_interval = 1024,
  busy_ms = 2000,
  busy_looks = 16,
  held = 8,
  steady_size = 48,
  fill_blocks = 600,
  fill_size = 100,
};

static atomic_bool steady_stop, fill_stop;
static atomic_ulong steady_ops;
static pthread_barrier_t steady_stopped, may_exit;

static bool
pin (int cpu)
{
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  return sched_setaffinity (0, sizeof set, &set) == 0
	 && sched_getcpu () == cpu;
}

/* Pushes and pops on CPU 0's cache, which holds HELD chunks
   throughout.  */
static void *
steady (void *arg)
{
  TEST_VERIFY_EXIT (pin (0));
  void *p[2 * held];
  for (int i = 0; i < 2 * held; i++)
    p[i] = xmalloc (steady_size);
  for (int i = held; i < 2 * held; i++)
    free (p[i]);
  for (unsigned long int n = 0; !atomic_load (&steady_stop); n++)
    {
      free (p[n % held]);
      p[n % held] = xmalloc (steady_size);
      atomic_store_explicit (&steady_ops, n + 1, memory_order_relaxed);
    }
  xpthread_barrier_wait (&steady_stopped);
  xpthread_barrier_wait (&may_exit);
  for (int i = 0; i < held; i++)
    free (p[i]);
  return NULL;
}

/* Refills and flushes on CPU 1's cache.  */
static void *
fill (void *arg)
{
  TEST_VERIFY_EXIT (pin (1));
  void *p[fill_blocks];
  while (!atomic_load (&fill_stop))
    {
      for (int i = 0; i < fill_blocks; i++)
	p[i] = xmalloc (fill_size);
      for (int i = 0; i < fill_blocks; i++)
	free (p[i]);
    }
  return NULL;
}

/* Refills and flushes of cache 1 over SCAN_INTERVAL: the looks it could
   have made, but for the time between them.  */
static size_t
look_chances (void)
{
  return (percpu_cache_attr (1, "refills") + percpu_cache_attr (1, "flushes"))
	 / scan_interval;
}

static int
do_test (void)
{
  if (__rseq_size == 0)
    FAIL_UNSUPPORTED ("rseq is not registered");
  /* This thread allocates (malloc_info) on CPU 1 only.  */
  if (!pin (1))
    FAIL_UNSUPPORTED ("cannot run on CPUs 0 and 1");
  percpu_start ();
  char *info = percpu_info ();
  TEST_VERIFY (percpu_attr_is (info, "mode", "cpu_id"));
  free (info);

  xpthread_barrier_init (&steady_stopped, NULL, 2);
  xpthread_barrier_init (&may_exit, NULL, 2);
  pthread_t steady_thread = xpthread_create (NULL, steady, NULL);
  while (atomic_load (&steady_ops) == 0)
    usleep (1000);
  pthread_t fill_thread = xpthread_create (NULL, fill, NULL);

  /* Busy: never emptied, however many looks.  */
  size_t chances = look_chances ();
  int ms = 0;
  for (; ms < 60000; ms += 10)
    {
      if (ms >= busy_ms && look_chances () >= chances + busy_looks)
	break;
      usleep (10000);
    }
  printf ("info: %lu operations on CPU 0 in %d ms, %zu chances to look\n",
	  atomic_load (&steady_ops), ms, look_chances () - chances);
  TEST_VERIFY_EXIT (look_chances () >= chances + busy_looks);
  TEST_COMPARE (percpu_cache_attr (0, "drains"), 0);
  TEST_VERIFY (percpu_cache_attr (0, "count") > 0);
  TEST_COMPARE (percpu_cache_attr (0, "refills")
		+ percpu_cache_attr (0, "flushes"), 0);

  /* Idle, with chunks: emptied.  */
  atomic_store (&steady_stop, true);
  xpthread_barrier_wait (&steady_stopped);
  TEST_VERIFY (percpu_cache_attr (0, "count") > 0);
  for (ms = 0; ms < 30000 && percpu_cache_attr (0, "drains") == 0; ms += 10)
    usleep (10000);
  printf ("info: cache 0 emptied after %d ms\n", ms);
  TEST_COMPARE (percpu_cache_attr (0, "drains"), 1);
  TEST_COMPARE (percpu_cache_attr (0, "count"), 0);

  atomic_store (&fill_stop, true);
  xpthread_join (fill_thread);
  xpthread_barrier_wait (&may_exit);
  xpthread_join (steady_thread);
  return 0;
}

/* Waits of up to 60 and 30 s under emulation.  */
#define TIMEOUT 120
#include <support/test-driver.c>
