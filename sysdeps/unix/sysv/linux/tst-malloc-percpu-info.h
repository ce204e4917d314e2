/* malloc_info of the per-CPU cache, for its tests.
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

#ifndef TST_MALLOC_PERCPU_INFO_H
#define TST_MALLOC_PERCPU_INFO_H

#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <support/check.h>
#include <support/support.h>
#include <support/xmemstream.h>
#include <support/xthread.h>

/* Each test of the cache uses some of these helpers; the rest must not
   trip -Werror=unused-function.  */

/* What malloc_info prints.  */
static __attribute_maybe_unused__ char *
percpu_malloc_info (void)
{
  struct xmemstream out;
  xopen_memstream (&out);
  TEST_COMPARE (malloc_info (0, out.out), 0);
  xfclose_memstream (&out);
  return out.buffer;
}

/* The line of malloc_info that starts with START (for example
   "<percpu " or "<cache index=\"3\" "), or NULL.  */
static __attribute_maybe_unused__ char *
percpu_info_line (const char *start)
{
  char *info = percpu_malloc_info ();
  char *line = strstr (info, start);
  char *result = NULL;
  if (line != NULL)
    result = xstrndup (line, strcspn (line, "\n"));
  free (info);
  return result;
}

/* The malloc_info element of the per-CPU cache, or NULL.  */
static __attribute_maybe_unused__ char *
percpu_info (void)
{
  return percpu_info_line ("<percpu ");
}

/* The value of attribute ATTR in LINE, a line of malloc_info.  */
static __attribute_maybe_unused__ size_t
percpu_attr (const char *line, const char *attr)
{
  char *key = xasprintf (" %s=\"", attr);
  const char *v = strstr (line, key);
  if (v == NULL)
    FAIL_EXIT1 ("no attribute %s in %s", attr, line);
  size_t value = strtoul (v + strlen (key), NULL, 10);
  free (key);
  return value;
}

/* Whether attribute ATTR of LINE is the string VALUE.  */
static __attribute_maybe_unused__ bool
percpu_attr_is (const char *line, const char *attr, const char *value)
{
  char *expected = xasprintf (" %s=\"%s\"", attr, value);
  bool result = strstr (line, expected) != NULL;
  free (expected);
  return result;
}

/* Attribute ATTR of the cache element of cache INDEX, 0 if malloc_info
   has no element for it (a cache with no chunks and no statistics).  */
static __attribute_maybe_unused__ size_t
percpu_cache_attr (unsigned int index, const char *attr)
{
  char *start = xasprintf ("<cache index=\"%u\" ", index);
  char *line = percpu_info_line (start);
  size_t value = line != NULL ? percpu_attr (line, attr) : 0;
  free (line);
  free (start);
  return value;
}

/* The sum of attribute ATTR over the cache elements of malloc_info.  */
static __attribute_maybe_unused__ size_t
percpu_cache_sum (const char *attr)
{
  char *info = percpu_malloc_info ();
  size_t sum = 0;
  for (char *p = info; (p = strstr (p, "<cache ")) != NULL; p++)
    {
      char *line = xstrndup (p, strcspn (p, "\n"));
      sum += percpu_attr (line, attr);
      free (line);
    }
  free (info);
  return sum;
}

/* The chunks held in the per-CPU and transfer caches.  */
static __attribute_maybe_unused__ size_t
percpu_cached_chunks (void)
{
  char *info = percpu_info ();
  TEST_VERIFY_EXIT (info != NULL);
  size_t n = percpu_attr (info, "count");
  free (info);
  return n;
}

struct percpu_foreign_request
{
  void **chunks;
  int n;
  size_t size;
};

static void *
percpu_foreign_thread (void *closure)
{
  struct percpu_foreign_request *r = closure;
  for (int i = 0; i < r->n; i++)
    r->chunks[i] = xmalloc (r->size);
  return NULL;
}

/* N chunks of SIZE bytes from the arena of a new thread, which has
   exited on return.  The per-CPU caches take the chunks of other
   threads' arenas (and with glibc.malloc.percpu_local=1 the freeing
   thread's own too), so the caller's frees of these reach the caches
   once its thread cache is full.  The arena passes to the next thread
   the program creates, for which they are its own.  */
static __attribute_maybe_unused__ void
percpu_foreign_chunks (void **chunks, int n, size_t size)
{
  struct percpu_foreign_request r = { chunks, n, size };
  xpthread_join (xpthread_create (NULL, percpu_foreign_thread, &r));
}

/* Free N chunks of 32 bytes from P; whether the caches are set up.  */
static bool
percpu_free_and_look (void **p, int n)
{
  for (int i = 0; i < n; i++)
    free (p[i]);
  char *info = percpu_info ();
  if (info != NULL)
    printf ("info: %s\n", info);
  free (info);
  return info != NULL;
}

/* Free chunks that the thread cache has no room for, which sets up the
   caches; exit as unsupported if the system cannot run them.  The
   thread's own chunks first, which reach the caches with
   glibc.malloc.percpu_local=1 and need no new thread (a thread's stack
   has a guard page that scanning memory must not touch); else another
   thread's.  */
static __attribute_maybe_unused__ void
percpu_start (void)
{
  enum { n = 100 };
  void *p[n];
  for (int i = 0; i < n; i++)
    p[i] = xmalloc (32);
  if (percpu_free_and_look (p, n))
    return;
  percpu_foreign_chunks (p, n, 32);
  if (!percpu_free_and_look (p, n))
    FAIL_UNSUPPORTED ("the per-CPU cache is not set up (no rseq?)");
}

#endif /* tst-malloc-percpu-info.h */
