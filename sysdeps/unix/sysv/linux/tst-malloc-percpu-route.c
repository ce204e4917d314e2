/* Which chunks malloc's per-CPU cache takes.
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

/* A free that the thread cache has no room for sends a chunk of another
   thread's arena to the per-CPU cache, and a chunk of the freeing
   thread's own arena back to that arena, unless
   glibc.malloc.percpu_local=1 (tst-malloc-percpu-route-local, which
   defines PERCPU_LOCAL) sends both to the cache.  Each case frees
   CHUNKS chunks of a size class of its own, so one whose chunks go to
   the caches adds between CHUNKS - TCACHE_MAX (what the thread cache
   may keep) and CHUNKS chunks to them, and one whose chunks go to their
   arena adds none.  The glibc that sent every chunk to the caches ran
   glibc's bench-malloc-thread, whose threads free only their own chunks,
   a third slower with 8 threads on 2 CPUs.

   A thread that frees as much as it allocates takes few chunks from
   the caches (the glibc that let it trade its frees for chunks of other
   arenas ran a larson-style server, whose threads both free and
   allocate, 0.73x as fast on 2 CPUs).  The test runs on one CPU, so
   that the caches the threads see are the ones the main thread
   filled.  */

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/rseq.h>
#include <support/check.h>
#include <support/xthread.h>

#include "tst-malloc-percpu-info.h"

#ifndef PERCPU_LOCAL
# define PERCPU_LOCAL 0
#endif

enum
{
  chunks = 100,
  /* At most the thread cache's default count of a class (16 in 2.43).  */
  tcache_max = 16
};

/* The chunks the caches hold, 0 before they are set up.  */
static size_t
cached (void)
{
  char *info = percpu_info ();
  if (info == NULL)
    return 0;
  size_t n = percpu_attr (info, "count");
  free (info);
  return n;
}

/* Free the CHUNKS chunks of P; return how many reached the caches.  */
static size_t
free_all (void **p, const char *what)
{
  size_t before = cached ();
  for (int i = 0; i < chunks; i++)
    free (p[i]);
  size_t added = cached () - before;
  printf ("info: %s: %zu chunks to the per-CPU caches\n", what, added);
  return added;
}

static void
check_added (size_t added, bool to_caches)
{
  if (to_caches)
    TEST_VERIFY (added >= chunks - tcache_max && added <= chunks);
  else
    TEST_COMPARE (added, 0);
}

static void *
own_chunks_in_thread (void *closure)
{
  void *p[chunks];
  for (int i = 0; i < chunks; i++)
    p[i] = xmalloc (80);
  check_added (free_all (p, "a thread's own arena, freed by it"),
	       PERCPU_LOCAL);
  return NULL;
}

/* A thread that frees as much as it allocates, like a server's: it
   allocates a chunk and frees one of its own arena that its thread
   cache has no room for, over and over.  First with chunks of a class
   the caches do not hold, until its counts of frees and mallocs
   reflect only that (its first mallocs counted it as allocating); then
   with the class of the chunks the main thread put into the caches
   (CHUNKS - TCACHE_MAX of them), which the glibc without the rule took
   all of.  With glibc.malloc.percpu_local=1 the thread's own chunks go
   to the caches too, and nothing is checked.  */
static void *
free_and_allocate (void *closure)
{
  enum { settle = 2 * chunks, rounds = settle + chunks };
  void **own = xmalloc (rounds * sizeof *own);
  void **kept = xmalloc (rounds * sizeof *kept);
  void *fill[tcache_max];
  for (int i = 0; i < rounds; i++)
    own[i] = xmalloc (128);
  for (int i = 0; i < tcache_max; i++)
    fill[i] = xmalloc (128);
  for (int i = 0; i < tcache_max; i++)
    free (fill[i]);
  long int before = 0;
  for (int i = 0; i < rounds; i++)
    {
      if (i == settle)
	before = cached ();
      kept[i] = xmalloc (i < settle ? 200 : 64);
      free (own[i]);
    }
  long int taken = before - (long int) cached ();
  printf ("info: a thread that allocated %d chunks and freed as many:"
	  " %ld chunks from the per-CPU caches\n", chunks, taken);
  if (!PERCPU_LOCAL)
    TEST_VERIFY (taken >= 0 && taken <= chunks / 4);
  for (int i = 0; i < rounds; i++)
    free (kept[i]);
  free (kept);
  free (own);
  return NULL;
}

static void *
free_in_thread (void *closure)
{
  check_added (free_all (closure, "the main arena, freed by a thread"),
	       true);
  return NULL;
}

static int
do_test (void)
{
  if (__rseq_size == 0)
    FAIL_UNSUPPORTED ("rseq is not registered");
  int cpu = sched_getcpu ();
  cpu_set_t one;
  CPU_ZERO (&one);
  CPU_SET (cpu, &one);
  if (cpu < 0 || sched_setaffinity (0, sizeof one, &one) != 0)
    FAIL_UNSUPPORTED ("cannot run the test on one CPU: %m");

  /* The main thread's own chunks: with the default, they do not even
     set the caches up.  */
  void *p[chunks];
  for (int i = 0; i < chunks; i++)
    p[i] = xmalloc (48);
  size_t own = free_all (p, "the main thread's own arena");
  char *info = percpu_info ();
  TEST_VERIFY (PERCPU_LOCAL || info == NULL);
  free (info);

  /* Another thread's arena, freed by the main thread.  */
  percpu_foreign_chunks (p, chunks, 64);
  size_t foreign = free_all (p, "another thread's arena");
  info = percpu_info ();
  if (info == NULL)
    FAIL_UNSUPPORTED ("the per-CPU cache is not set up (no rseq?)");
  free (info);
  check_added (foreign, true);
  check_added (own, PERCPU_LOCAL);

  /* A thread that allocates chunks of the class the caches now hold,
     and frees as many.  */
  xpthread_join (xpthread_create (NULL, free_and_allocate, NULL));

  /* A thread that frees chunks of its own arena: the arena of the
     thread of percpu_foreign_chunks, which has exited.  */
  xpthread_join (xpthread_create (NULL, own_chunks_in_thread, NULL));

  /* A thread that frees chunks of the main thread's arena.  */
  for (int i = 0; i < chunks; i++)
    p[i] = xmalloc (96);
  xpthread_join (xpthread_create (NULL, free_in_thread, p));
  return 0;
}

#include <support/test-driver.c>
