/* malloc's per-CPU cache makes progress under single-stepping.
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

/* A debugger that single-steps a thread stops it after every
   instruction, and every stop aborts the restartable sequence the thread
   is in: an operation of the per-CPU cache never commits.  malloc and
   free must still finish (the chunk takes the arenas' path after a few
   attempts), within a bounded number of steps.  The tracer steps a
   child through mallocs and frees of a size whose thread cache is full,
   so that every one of them goes to the per-CPU cache first.  Run with
   GLIBC_TUNABLES=glibc.malloc.percpu=mm_cid and
   glibc.malloc.percpu_local=1: the caches take the child's own
   chunks.  */

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/rseq.h>
#include <sys/wait.h>
#include <unistd.h>
#include <support/check.h>
#include <support/support.h>
#include <support/xmemstream.h>
#include <support/xunistd.h>

enum
{
  blocks = 16,
  /* Far more than the steps the child needs (about 12,000 on x86_64), far
     fewer than an operation that retried for ever would take.  */
  step_budget = 500000
};

static bool
percpu_cache_ready (void)
{
  struct xmemstream out;
  xopen_memstream (&out);
  TEST_COMPARE (malloc_info (0, out.out), 0);
  xfclose_memstream (&out);
  bool ready = strstr (out.buffer, "<percpu ") != NULL;
  free (out.buffer);
  return ready;
}

/* Allocate and free BLOCKS chunks of 40 bytes, twice, with a full
   thread cache; exit 0 if every malloc returned memory.  */
static void
stepped_child (void)
{
  void *volatile keep[blocks];
  void *volatile p[blocks];
  /* Fill the thread cache and resolve every symbol before the tracer
     starts stepping.  */
  for (int i = 0; i < blocks; i++)
    keep[i] = malloc (40);
  for (int i = 0; i < blocks; i++)
    free (keep[i]);
  for (int i = 0; i < blocks; i++)
    keep[i] = malloc (40);

  if (ptrace (PTRACE_TRACEME, 0, NULL, NULL) != 0)
    _exit (2);
  raise (SIGSTOP);

  for (int round = 0; round < 2; round++)
    {
      for (int i = 0; i < blocks; i++)
	free (keep[i]);
      for (int i = 0; i < blocks; i++)
	if ((p[i] = malloc (40)) == NULL)
	  _exit (1);
      for (int i = 0; i < blocks; i++)
	keep[i] = p[i];
    }
  _exit (0);
}

static int
do_test (void)
{
  if (__rseq_size == 0)
    FAIL_UNSUPPORTED ("rseq is not registered");
  {
    void *p[64];
    for (int i = 0; i < 64; i++)
      p[i] = xmalloc (40);
    for (int i = 0; i < 64; i++)
      free (p[i]);
  }
  if (!percpu_cache_ready ())
    FAIL_UNSUPPORTED ("the kernel cannot run the per-CPU cache");

  pid_t pid = xfork ();
  if (pid == 0)
    stepped_child ();
  int status;
  xwaitpid (pid, &status, 0);
  TEST_VERIFY_EXIT (WIFSTOPPED (status) && WSTOPSIG (status) == SIGSTOP);

  long int steps = 0;
  for (;;)
    {
      if (ptrace (PTRACE_SINGLESTEP, pid, NULL, NULL) != 0)
	{
	  int err = errno;
	  kill (pid, SIGKILL);
	  xwaitpid (pid, &status, 0);
	  if (err == EIO && steps == 0)
	    FAIL_UNSUPPORTED ("PTRACE_SINGLESTEP is not supported");
	  FAIL_EXIT1 ("PTRACE_SINGLESTEP: %s", strerror (err));
	}
      xwaitpid (pid, &status, 0);
      if (!WIFSTOPPED (status))
	break;
      if (++steps > step_budget)
	{
	  kill (pid, SIGKILL);
	  xwaitpid (pid, &status, 0);
	  FAIL_EXIT1 ("no progress after %d steps", step_budget);
	}
    }
  printf ("info: %ld steps\n", steps);
  TEST_VERIFY (WIFEXITED (status));
  TEST_COMPARE (WEXITSTATUS (status), 0);
  return 0;
}

#include <support/test-driver.c>
