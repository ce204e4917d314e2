/* A thread that reuses a cached stack reuses its static TLS, and with
   it the rseq area of the thread before.  The registered bytes the
   kernel does not write (past the fields of the active feature size, up
   to the registered length) must start out zero for every new
   registration, as they do for a fresh area.  */
#include "rseq-test.h"
#include <pthread.h>

#define ROUNDS 20

/* The registered bytes the kernel does not fill: from the active
   feature size (the kernel fills the fields up to mm_cid, 28 bytes, on
   Linux 6.3 and later; 28 to 31 pad the original area) to the
   registered length.  */
static unsigned int
unfilled_start (void)
{
  return __rseq_size > 28 ? __rseq_size : 28;
}

static unsigned int
unfilled_end (void)
{
  return registration_length (__rseq_size);
}

static unsigned char *
own_area (void)
{
  return (unsigned char *) test_thread_pointer () + __rseq_offset;
}

static void *
scribble (void *arg)
{
  (void) arg;
  /* What an earlier thread, or a kernel with more fields, could have
     left behind.  */
  memset (own_area () + unfilled_start (), 0xa5,
	  unfilled_end () - unfilled_start ());
  return own_area ();
}

static void *
inspect (void *arg)
{
  (void) arg;
  unsigned char *area = own_area ();
  for (unsigned int i = unfilled_start (); i < unfilled_end (); i++)
    if (area[i] != 0)
      FAIL ("byte %u of a reused rseq area is %#x, not 0", i, area[i]);
  return area;
}

static void *
run (void *(*fn) (void *))
{
  pthread_t t;
  void *ret;
  CHECK (pthread_create (&t, NULL, fn, NULL) == 0);
  CHECK (pthread_join (t, &ret) == 0);
  return ret;
}

int
main (void)
{
  require_kernel_rseq ();
  if (!rseq_area_registered ())
    UNSUPPORTED ("glibc did not register rseq (__rseq_size %u)", __rseq_size);
  if (unfilled_start () >= unfilled_end ())
    UNSUPPORTED ("the kernel fills all %u registered bytes", unfilled_end ());
  int reused = 0;
  for (int i = 0; i < ROUNDS; i++)
    {
      void *dirty = run (scribble);
      if (run (inspect) == dirty)
	reused++;
    }
  if (reused == 0)
    UNSUPPORTED ("no thread stack was reused in %d rounds", ROUNDS);
  return 0;
}
