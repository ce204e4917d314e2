/* Test the rseq time slice extension interface of <sys/rseq.h>.
   Copyright (C) 2026 Free Software Foundation, Inc.

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

/* Linux 7.0 and later can extend the time slice of a thread that asks
   for it in the slice_ctrl field of its rseq area, when the kernel is
   built with the extension and the registration covers that field.
   Where the thread cannot have it, rseq_slice_extension_set fails with
   ENOSYS, and the inline functions do nothing (rseq_slice_request and
   rseq_slice_release return -1 when the area has no slice_ctrl).  Where
   it can, the extension is enabled and disabled per thread, and
   requests and releases, with the CPU given back after a granted
   extension, work any number of times.  */

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/rseq.h>
#include <time.h>
#include <unistd.h>
#include <support/check.h>
#include <support/xthread.h>

/* Check that EXPR fails with errno ERR.  */
#define CHECK_FAILURE(expr, err)					\
  do									\
    {									\
      errno = 0;							\
      int check_ret = (expr);						\
      int check_errno = errno;						\
      if (check_ret != -1 || check_errno != (err))			\
	FAIL ("%s: returned %d, errno %d (%s), expected -1 with %s",	\
	      #expr, check_ret, check_errno, strerrorname_np (check_errno), \
	      #err);							\
    }									\
  while (0)

/* slice_ctrl is the 32-bit field at offset 28 of the rseq area.  */
#define SLICE_CTRL_OFFSET 28

static bool
area_has_slice_ctrl (void)
{
  return __rseq_size >= SLICE_CTRL_OFFSET + 4;
}

/* The request byte of slice_ctrl, or of what lies there.  */
static unsigned char
request_byte (void)
{
  char *area = (char *) rseq_area_pointer ();
  TEST_VERIFY_EXIT (area != NULL);
  return *(volatile unsigned char *) (area + SLICE_CTRL_OFFSET);
}

/* The thread cannot have the extension.  */
static void
test_unavailable (void)
{
  CHECK_FAILURE (rseq_slice_extension_set (0), ENOSYS);

  /* Nothing to yield: 0 from Linux 7.0 on, ENOSYS before.  */
  errno = 0;
  int ret = rseq_slice_yield ();
  int err = errno;
  if (ret != 0 && !(ret == -1 && err == ENOSYS))
    FAIL ("rseq_slice_yield: returned %d, errno %d (%s), expected 0 or "
	  "-1 with ENOSYS", ret, err, strerrorname_np (err));
  bool kernel_knows_extension = ret == 0;

  /* ENOSYS: the thread cannot have the extension, whatever the reason
     (no interface, disabled at boot, a registration without
     slice_ctrl), exactly as rseq_slice_extension_set says.  */
  bool registered = rseq_area_pointer () != NULL;
  errno = 0;
  ret = rseq_slice_extension_get ();
  err = errno;
  if (!(ret == -1 && err == ENOSYS))
    FAIL ("rseq_slice_extension_get: returned %d, errno %d (%s), expected "
	  "-1 with ENOSYS", ret, err, strerrorname_np (err));
  printf ("info: rseq_slice_extension_get returned %d (errno %s), "
	  "rseq_slice_yield %s\n", ret,
	  ret < 0 ? strerrorname_np (err) : "not set",
	  kernel_knows_extension ? "exists" : "does not exist");

  /* Requests do nothing.  */
  unsigned char before = registered ? request_byte () : 0;
  if (area_has_slice_ctrl ())
    {
      TEST_COMPARE (rseq_slice_request (), 0);
      TEST_COMPARE (rseq_slice_granted (), 0);
      TEST_COMPARE (rseq_slice_release (), 0);
      TEST_COMPARE (request_byte (), 0);
    }
  else
    {
      TEST_COMPARE (rseq_slice_request (), -1);
      TEST_COMPARE (rseq_slice_granted (), 0);
      TEST_COMPARE (rseq_slice_release (), -1);
      if (registered)
	TEST_COMPARE (request_byte (), before);
    }
}

/* A new thread starts with the extension disabled.  */
static void *
fresh_thread (void *closure)
{
  (void) closure;
  return (void *) (intptr_t) rseq_slice_extension_get ();
}

/* Threads that keep the CPUs busy, so that the kernel has a reason to
   preempt the main thread while it holds a request.  */
static volatile bool stop_spinning;

static void *
spinner (void *closure)
{
  (void) closure;
  while (!stop_spinning)
    continue;
  return NULL;
}

/* Requests and releases.  Between them the thread makes no system
   call: it spins, watching for a grant, as a lock holder would end its
   critical section early once it got one.  */
enum { ROUNDS = 2000, SPIN = 20000 };

static void
test_requests (void)
{
  long int ncpus = sysconf (_SC_NPROCESSORS_ONLN);
  if (ncpus < 1)
    ncpus = 1;
  pthread_t threads[ncpus];
  for (long int i = 0; i < ncpus; i++)
    threads[i] = xpthread_create (NULL, spinner, NULL);

  int grants = 0, yields = 0;
  struct timespec start, now;
  TEST_COMPARE (clock_gettime (CLOCK_MONOTONIC, &start), 0);
  int round;
  for (round = 0; round < ROUNDS; round++)
    {
      TEST_COMPARE (rseq_slice_request (), 0);
      int granted = 0;
      for (int i = 0; i < SPIN && !granted; i++)
	granted = rseq_slice_granted ();
      int ret = rseq_slice_release ();
      if (ret != 0 && ret != 1)
	FAIL_EXIT1 ("rseq_slice_release: %d in round %d", ret, round);
      grants += granted;
      yields += ret;
      TEST_COMPARE (request_byte (), 0);
      /* At most about half a second, clock reads outside requests.  */
      TEST_COMPARE (clock_gettime (CLOCK_MONOTONIC, &now), 0);
      if (now.tv_sec - start.tv_sec > 1
	  || (now.tv_sec - start.tv_sec) * 1000000000L
	     + now.tv_nsec - start.tv_nsec > 500000000L)
	break;
    }

  stop_spinning = true;
  for (long int i = 0; i < ncpus; i++)
    xpthread_join (threads[i]);
  printf ("info: %d requests with %ld spinning threads: %d granted, "
	  "%d yields\n", round, ncpus, grants, yields);
  /* A release yields only after a grant.  */
  TEST_VERIFY (yields <= grants);
}

/* The thread can have the extension: rseq_slice_extension_set (1) has
   enabled it.  */
static void
test_available (void)
{
  /* The kernel offers it to full-size registrations only.  */
  TEST_VERIFY (area_has_slice_ctrl ());
  TEST_COMPARE (rseq_slice_extension_get (), 1);
  TEST_COMPARE (rseq_slice_extension_set (1), 0);
  TEST_COMPARE (rseq_slice_extension_get (), 1);
  CHECK_FAILURE (rseq_slice_extension_set (2), EINVAL);
  TEST_COMPARE (rseq_slice_extension_get (), 1);

  pthread_t thread = xpthread_create (NULL, fresh_thread, NULL);
  TEST_COMPARE ((intptr_t) xpthread_join (thread), 0);

  /* No extension was granted: nothing to end.  */
  TEST_COMPARE (rseq_slice_yield (), 0);

  test_requests ();
  TEST_COMPARE (rseq_slice_yield (), 0);

  TEST_COMPARE (rseq_slice_extension_set (0), 0);
  TEST_COMPARE (rseq_slice_extension_get (), 0);
  /* Disabled, requests are never granted.  */
  for (int i = 0; i < 100; i++)
    {
      TEST_COMPARE (rseq_slice_request (), 0);
      TEST_COMPARE (rseq_slice_release (), 0);
    }
  TEST_COMPARE (rseq_slice_extension_get (), 0);
}

static int
do_test (void)
{
  /* Checked before anything else, on every kernel.  */
  CHECK_FAILURE (rseq_slice_extension_set (2), EINVAL);
  CHECK_FAILURE (rseq_slice_extension_set (-1), EINVAL);
  CHECK_FAILURE (rseq_slice_extension_set (INT_MAX), EINVAL);

  printf ("info: __rseq_size %u\n", __rseq_size);
  errno = 0;
  int ret = rseq_slice_extension_set (1);
  int err = errno;
  if (ret == 0)
    {
      test_available ();
      return 0;
    }
  if (ret != -1 || err != ENOSYS)
    FAIL_EXIT1 ("rseq_slice_extension_set (1): returned %d, errno %d (%s)",
		ret, err, strerrorname_np (err));
  test_unavailable ();
  FAIL_UNSUPPORTED ("no time slice extension for this thread");
}

#include <support/test-driver.c>
