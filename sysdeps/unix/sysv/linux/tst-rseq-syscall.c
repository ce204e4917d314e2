/* Test the rseq system call wrapper.
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

/* rseq from <sys/rseq-syscall.h> is the system call, returning 0 or -1
   with errno set.  The kernel's answers checked here have not changed
   since Linux 4.18: with an area registered, the same area, length and
   signature give EBUSY, another signature EPERM, another area or
   length EINVAL; unregistration needs the registered area and length
   (EINVAL) and signature (EPERM); unknown flags give EINVAL.

   If glibc registered the thread's area, the test checks these answers
   for it, and in a second thread also unregisters it and registers it
   again.  If it did not (the glibc.pthread.rseq tunable is 0), a second
   thread registers an area of its own and does the same.  */

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <support/check.h>
#include <support/xthread.h>
#include <sys/rseq-syscall.h>
#include <sys/rseq.h>
#include <thread_pointer.h>

/* A flag the kernel does not know.  */
#define INVALID_FLAG (1 << 30)

/* The original size of the rseq area, which every kernel accepts.  */
#define ORIG_RSEQ_SIZE 32

/* The signature for an area of the test's own.  */
#ifdef RSEQ_SIG
# define TEST_SIG RSEQ_SIG
#else
# define TEST_SIG 0x53053053
#endif

/* Check that CALL returns -1 with errno set to ERRNO_VALUE.  */
#define CHECK_ERROR(call, errno_value)		\
  do						\
    {						\
      errno = 0;				\
      TEST_COMPARE ((call), -1);		\
      TEST_COMPARE (errno, (errno_value));	\
    }						\
  while (0)

/* An area the tunable case registers, and one that is never
   registered.  */
static struct rseq own_area __attribute__ ((aligned (32)));
static struct rseq other_area __attribute__ ((aligned (32)));

/* The area glibc registered for the calling thread.  */
static struct rseq *
glibc_area (void)
{
  return (struct rseq *) ((char *) __thread_pointer () + __rseq_offset);
}

/* The length glibc registers: the active feature size, and at least the
   original 32 bytes (33 on Linux 7.0 and later).  */
static uint32_t
glibc_area_length (void)
{
  return __rseq_size < ORIG_RSEQ_SIZE ? ORIG_RSEQ_SIZE : __rseq_size;
}

static int
cpu_id (struct rseq *area)
{
  return *(volatile int *) &area->cpu_id;
}

/* AREA of LEN bytes is registered for the calling thread with SIG.
   Check the errors of calls that must leave it registered.  */
static void
check_registered (struct rseq *area, uint32_t len, uint32_t sig)
{
  CHECK_ERROR (rseq (area, len, 0, sig), EBUSY);
  CHECK_ERROR (rseq (area, len, 0, ~sig), EPERM);
  CHECK_ERROR (rseq (area, len + 32, 0, sig), EINVAL);
  CHECK_ERROR (rseq (&other_area, ORIG_RSEQ_SIZE, 0, sig), EINVAL);

  CHECK_ERROR (rseq (area, len, RSEQ_FLAG_UNREGISTER, ~sig), EPERM);
  CHECK_ERROR (rseq (area, len + 32, RSEQ_FLAG_UNREGISTER, sig), EINVAL);
  CHECK_ERROR (rseq (&other_area, ORIG_RSEQ_SIZE, RSEQ_FLAG_UNREGISTER,
		     sig), EINVAL);

  CHECK_ERROR (rseq (area, len, INVALID_FLAG, sig), EINVAL);
  CHECK_ERROR (rseq (area, len, RSEQ_FLAG_UNREGISTER | INVALID_FLAG, sig),
	       EINVAL);

  /* Still registered, and updated by the kernel.  */
  CHECK_ERROR (rseq (area, len, 0, sig), EBUSY);
  TEST_VERIFY (cpu_id (area) >= 0);
}

/* Unregister AREA of LEN bytes registered with SIG, check the errors
   of an unregistered thread, and register AREA again.  */
static void
check_unregister_register (struct rseq *area, uint32_t len, uint32_t sig)
{
  TEST_COMPARE (rseq (area, len, RSEQ_FLAG_UNREGISTER, sig), 0);
  TEST_COMPARE (cpu_id (area), RSEQ_CPU_ID_UNINITIALIZED);
  CHECK_ERROR (rseq (area, len, RSEQ_FLAG_UNREGISTER, sig), EINVAL);
  /* sched_getcpu asks the kernel when the area is not registered.  */
  TEST_VERIFY (sched_getcpu () >= 0);

  /* Misaligned, or too short.  */
  CHECK_ERROR (rseq ((struct rseq *) ((char *) area + 4), ORIG_RSEQ_SIZE,
		     0, sig), EINVAL);
  CHECK_ERROR (rseq (area, ORIG_RSEQ_SIZE / 2, 0, sig), EINVAL);

  TEST_COMPARE (rseq (area, len, 0, sig), 0);
  TEST_VERIFY (cpu_id (area) >= 0);
  check_registered (area, len, sig);
}

#ifdef RSEQ_SIG
static void *
glibc_area_thread (void *closure __attribute__ ((unused)))
{
  check_registered (glibc_area (), glibc_area_length (), RSEQ_SIG);
  check_unregister_register (glibc_area (), glibc_area_length (),
			     RSEQ_SIG);
  return NULL;
}
#endif

static void *
own_area_thread (void *closure __attribute__ ((unused)))
{
  TEST_COMPARE (rseq (&own_area, ORIG_RSEQ_SIZE, 0, TEST_SIG), 0);
  TEST_VERIFY (cpu_id (&own_area) >= 0);
  check_registered (&own_area, ORIG_RSEQ_SIZE, TEST_SIG);
  check_unregister_register (&own_area, ORIG_RSEQ_SIZE, TEST_SIG);
  TEST_COMPARE (rseq (&own_area, ORIG_RSEQ_SIZE, RSEQ_FLAG_UNREGISTER,
		      TEST_SIG), 0);
  return NULL;
}

static int
do_test (void)
{
  printf ("info: __rseq_size: %u, registered length: %u\n", __rseq_size,
	  __rseq_size > 0 ? glibc_area_length () : 0);

  /* A null area is never valid: EINVAL, unless the kernel lacks rseq
     or a filter refuses the system call.  */
  errno = 0;
  TEST_COMPARE (rseq (NULL, 0, 0, 0), -1);
  if (__rseq_size == 0 && errno != EINVAL)
    FAIL_UNSUPPORTED ("rseq system call not available: %m");
  TEST_COMPARE (errno, EINVAL);

  CHECK_ERROR (rseq (NULL, 0, INVALID_FLAG, 0), EINVAL);
  CHECK_ERROR (rseq (NULL, 0, RSEQ_FLAG_UNREGISTER | INVALID_FLAG, 0),
	       EINVAL);

  /* glibc registers an area only where it defines RSEQ_SIG.  */
#ifdef RSEQ_SIG
  if (__rseq_size > 0)
    {
      check_registered (glibc_area (), glibc_area_length (), RSEQ_SIG);
      xpthread_join (xpthread_create (NULL, glibc_area_thread, NULL));
      check_registered (glibc_area (), glibc_area_length (), RSEQ_SIG);
      return 0;
    }
#endif

  puts ("info: glibc did not register rseq, using an area of the test");
  xpthread_join (xpthread_create (NULL, own_area_thread, NULL));

  return 0;
}

#include <support/test-driver.c>
