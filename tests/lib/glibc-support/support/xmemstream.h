/* A stand-in for glibc's <support/xmemstream.h> (see check.h): a
   memory stream whose failures end the test with status 1.  */
#ifndef SUPPORT_XMEMSTREAM_H
#define SUPPORT_XMEMSTREAM_H

#include <stdio.h>
#include <support/check.h>

/* OUT writes to BUFFER (LENGTH bytes), which the caller frees once
   xfclose_memstream has closed OUT.  */
struct xmemstream
{
  FILE *out;
  char *buffer;
  size_t length;
};

/* Out of line, as in glibc: inlined into a caller that returns BUFFER,
   GCC 12 takes the buffer open_memstream set for a dangling pointer
   (tests/rseq.malloc/malloc-test.h met the same).  */
static __attribute__ ((noinline, unused)) void
xopen_memstream (struct xmemstream *stream)
{
  int saved_errno = errno;
  *stream = (struct xmemstream) { NULL, NULL, 0 };
  stream->out = open_memstream (&stream->buffer, &stream->length);
  if (stream->out == NULL)
    FAIL_EXIT1 ("open_memstream: %m");
  errno = saved_errno;
}

static __attribute__ ((noinline, unused)) void
xfclose_memstream (struct xmemstream *stream)
{
  if (fclose (stream->out) != 0)
    FAIL_EXIT1 ("fclose of a memory stream: %m");
  stream->out = NULL;
}

#endif /* support/xmemstream.h */
