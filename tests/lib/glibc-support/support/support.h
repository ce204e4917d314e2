/* A stand-in for glibc's <support/support.h> (see check.h): the
   allocation helpers the areas' glibc tests use, which end the test
   with status 1 when memory runs out.  */
#ifndef SUPPORT_SUPPORT_H
#define SUPPORT_SUPPORT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <support/check.h>

/* P, or the end of the test if the allocation WHAT failed.  */
static inline void *
support_allocated (void *p, const char *what)
{
  if (p == NULL)
    FAIL_EXIT1 ("%s: out of memory", what);
  return p;
}

static inline void *
xmalloc (size_t n)
{
  return support_allocated (malloc (n), "malloc");
}

static inline void *
xcalloc (size_t n, size_t size)
{
  return support_allocated (calloc (n, size), "calloc");
}

static inline char *
xstrndup (const char *s, size_t n)
{
  return support_allocated (strndup (s, n), "strndup");
}

static inline __attribute__ ((format (printf, 1, 2))) char *
xasprintf (const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  char *result;
  int length = vasprintf (&result, format, ap);
  va_end (ap);
  return support_allocated (length < 0 ? NULL : result, "asprintf");
}

#endif /* support/support.h */
