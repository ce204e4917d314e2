/* malloc's per-CPU cache stays off when rseq is not registered.
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

/* Run with glibc.malloc.percpu=mm_cid and glibc.pthread.rseq=0: every
   chunk takes the arenas' path, and malloc_info has no per-CPU cache.  */

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <support/check.h>
#include <support/support.h>
#include <support/xmemstream.h>
#include <support/xthread.h>

static void *
churn (void *arg)
{
  void *p[256];
  for (int round = 0; round < 200; round++)
    {
      for (int i = 0; i < 256; i++)
	p[i] = xmalloc (16 + i % 64);
      for (int i = 0; i < 256; i++)
	free (p[i]);
    }
  return NULL;
}

static int
do_test (void)
{
  TEST_COMPARE (__rseq_size, 0);
  pthread_t t[4];
  for (int i = 0; i < 4; i++)
    t[i] = xpthread_create (NULL, churn, NULL);
  churn (NULL);
  for (int i = 0; i < 4; i++)
    xpthread_join (t[i]);

  struct xmemstream out;
  xopen_memstream (&out);
  TEST_COMPARE (malloc_info (0, out.out), 0);
  xfclose_memstream (&out);
  TEST_VERIFY (strstr (out.buffer, "<percpu ") == NULL);
  free (out.buffer);
  return 0;
}

#include <support/test-driver.c>
