/* Checks of the chunks that malloc.s per-CPU cache hands out and returns.
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

/* - A slot of a per-CPU cache overwritten with a misaligned pointer, or
     with a chunk of another size, makes malloc abort with a message
     instead of returning it (as tcache_get checks its chunks).
   - malloc_trim returns the chunks it takes from the caches to their
     arenas, not to the calling thread's cache: mallinfo2's bytes in use
     fall by exactly the bytes the caches held.

   Run with GLIBC_TUNABLES=glibc.malloc.percpu=mm_cid,
   glibc.malloc.percpu_local=1 (the caches take the thread's own chunks)
   and glibc.malloc.tcache_count=7 (the test's ENV): the thread cache holds
   7 chunks of a class, so the 8th free of a class goes to the per-CPU
   cache, and the 8th malloc comes from there.  */

#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/rseq.h>
#include <sys/wait.h>
#include <support/capture_subprocess.h>
#include <support/check.h>
#include <support/xstdio.h>
#include <support/xthread.h>

#include "tst-malloc-percpu-info.h"

/* SMALL is a size nothing else in the test allocates: its chunk
   pointers are found only where the test put them.  */
enum { tcache_count = 7, small = 424, large = 200 };

/* The slot that holds VALUE as the only chunk of its class: the one word
   of an anonymous writable mapping (the per-CPU caches are one) that
   holds VALUE right after a count of 1.  */
static uintptr_t *
find_slot (uintptr_t value)
{
  FILE *maps = xfopen ("/proc/self/maps", "r");
  uintptr_t *found = NULL;
  int hits = 0;
  char *line = NULL;
  size_t length = 0;
  while (xgetline (&line, &length, maps) > 0)
    {
      uintptr_t start, end;
      char perms[5];
      unsigned long int inode;
      int path = 0;
      if (sscanf (line, "%" SCNxPTR "-%" SCNxPTR " %4s %*s %*s %lu %n",
		  &start, &end, perms, &inode, &path) < 4
	  || inode != 0 || line[path] != '\0' || strcmp (perms, "rw-p") != 0)
	continue;
      for (uintptr_t *w = (uintptr_t *) start + 1; w < (uintptr_t *) end; w++)
	if (*w == value && w[-1] == 1)
	  {
	    found = w;
	    hits++;
	  }
    }
  free (line);
  xfclose (maps);
  TEST_COMPARE (hits, 1);
  return found;
}

/* Free TCACHE_COUNT + 1 chunks of SMALL bytes, the last of which goes
   to the per-CPU cache; make its slot hold BAD (REPLACE_WITH_LARGE: a
   live chunk of LARGE bytes instead), and malloc them back.  */
static void
corrupt_slot (bool replace_with_large)
{
  void *p[tcache_count + 1];
  for (int i = 0; i <= tcache_count; i++)
    p[i] = xmalloc (small);
  void *other = xmalloc (large);
  for (int i = 0; i <= tcache_count; i++)
    free (p[i]);
  TEST_COMPARE (percpu_cached_chunks (), 1);
  uintptr_t *slot = find_slot ((uintptr_t) p[tcache_count]);
  *slot = replace_with_large ? (uintptr_t) other : *slot + 1;
  for (int i = 0; i <= tcache_count; i++)
    p[i] = malloc (small);
  printf ("malloc returned %p\n", p[tcache_count]);
}

static void
misaligned (void *closure)
{
  percpu_start ();
  malloc_trim (0);
  corrupt_slot (false);
}

static void
wrong_size (void *closure)
{
  percpu_start ();
  malloc_trim (0);
  corrupt_slot (true);
}

static void
expect_abort (void (*function) (void *), const char *message)
{
  struct support_capture_subprocess result
    = support_capture_subprocess (function, NULL);
  fputs (result.out.buffer, stdout);
  fputs (result.err.buffer, stdout);
  TEST_VERIFY (WIFSIGNALED (result.status)
	       && WTERMSIG (result.status) == SIGABRT);
  TEST_VERIFY (strstr (result.err.buffer, message) != NULL);
  support_capture_subprocess_free (&result);
}

static pthread_barrier_t filled, may_exit;

static void *
fill_and_wait (void *arg)
{
  void *p[100];
  for (int i = 0; i < 100; i++)
    p[i] = xmalloc (large);
  for (int i = 0; i < 100; i++)
    free (p[i]);
  xpthread_barrier_wait (&filled);
  xpthread_barrier_wait (&may_exit);
  return NULL;
}

/* malloc_info writes into a buffer set up beforehand: nothing is
   allocated or freed between reading the caches and mallinfo2.  */
static void
trim_frees_to_arenas (void)
{
  static char buffer[1 << 16];
  FILE *out = fmemopen (buffer, sizeof buffer - 1, "w");
  TEST_VERIFY_EXIT (out != NULL);
  TEST_VERIFY_EXIT (fputs ("start\n", out) >= 0 && fflush (out) == 0);

  xpthread_barrier_init (&filled, NULL, 2);
  xpthread_barrier_init (&may_exit, NULL, 2);
  pthread_t t = xpthread_create (NULL, fill_and_wait, NULL);
  xpthread_barrier_wait (&filled);

  TEST_COMPARE (malloc_info (0, out), 0);
  TEST_COMPARE (fflush (out), 0);
  size_t in_use = mallinfo2 ().uordblks;
  malloc_trim (0);
  size_t in_use_after = mallinfo2 ().uordblks;

  char *percpu = strstr (buffer, "<percpu ");
  TEST_VERIFY_EXIT (percpu != NULL);
  *strchr (percpu, '\n') = '\0';
  size_t cached = percpu_attr (percpu, "size");
  printf ("info: %zu bytes cached, in use %zu before malloc_trim, %zu"
	  " after\n", cached, in_use, in_use_after);
  TEST_VERIFY (cached >= (100 - tcache_count) * (large + 8));
  TEST_COMPARE (in_use - in_use_after, cached);
  TEST_COMPARE (percpu_cached_chunks (), 0);

  xpthread_barrier_wait (&may_exit);
  xpthread_join (t);
  xfclose (out);
}

static int
do_test (void)
{
  if (__rseq_size == 0)
    FAIL_UNSUPPORTED ("rseq is not registered");
  percpu_start ();
  expect_abort (misaligned,
		"malloc(): unaligned per-CPU cache chunk detected");
  expect_abort (wrong_size,
		"malloc(): mismatching size of per-CPU cache chunk");
  trim_frees_to_arenas ();
  return 0;
}

#include <support/test-driver.c>
