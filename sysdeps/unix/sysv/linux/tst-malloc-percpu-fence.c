/* malloc.s per-CPU cache when membarrier fails or kills.
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

/* Emptying the cache of another CPU needs a fence, membarrier with
   MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, that a sandbox may deny after
   the program has started.  Each case runs in a subprocess that
   installs a seccomp filter on membarrier:

   - denied with an error, before the first fence or after one
     succeeded (tests/rseq.malloc/fence.c also installs it before the
     caches start, in a new process): a thread on one CPU allocates and frees in bursts, with
     a marker bound to each allocated block, while another calls
     malloc_trim in a loop.  No block may be handed out while it is
     allocated, nothing may abort, and afterwards the caches take no
     new chunks and malloc_trim still empties what it can.
   - killed, in a process with one thread (from the start, or a child
     forked after the caches were used): malloc_trim empties every
     cache without calling membarrier.
   - killed, in a process with threads: malloc_trim dies of SIGSYS, as
     documented.

   Run with GLIBC_TUNABLES=glibc.malloc.percpu=mm_cid,
   glibc.malloc.percpu_local=1 (the caches take the thread's own chunks)
   and no thread cache (the test's ENV): every free and malloc reaches
   the per-CPU cache.  The glibc without the fix aborted or handed a
   block out twice within 0.5 s of the stress on 2 CPUs.  */

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <array_length.h>
#include <support/capture_subprocess.h>
#include <support/check.h>
#include <support/test-driver.h>
#include <support/timespec.h>
#include <support/xthread.h>
#include <support/xtime.h>
#include <support/xunistd.h>

#include "tst-malloc-percpu-info.h"

#ifndef MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ
# define MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ (1 << 7)
#endif

/* The low 32 bits of the first system call argument.  */
#define ARG0_LOW (offsetof (struct seccomp_data, args[0]) \
		  + (__BYTE_ORDER == __BIG_ENDIAN ? 4 : 0))

/* Make membarrier with command CMD (any command if CMD is -1) return
   ACTION in every thread of the process.  */
static void
filter_membarrier (int cmd, uint32_t action)
{
  struct sock_filter insns[] =
    {
      BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
      BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 3),
      BPF_STMT (BPF_LD | BPF_W | BPF_ABS, ARG0_LOW),
      BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, cmd, 0, 1),
      BPF_STMT (BPF_RET | BPF_K, action),
      BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
  if (cmd < 0)
    insns[3] = (struct sock_filter) BPF_STMT (BPF_JMP | BPF_JA, 0);
  struct sock_fprog prog = { .len = array_length (insns), .filter = insns };
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    FAIL_UNSUPPORTED ("PR_SET_NO_NEW_PRIVS: %m");
  if (syscall (__NR_seccomp, SECCOMP_SET_MODE_FILTER,
	       SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
    FAIL_UNSUPPORTED ("seccomp: %m");
}

/* Run the calling thread on CPU (modulo the CPUs online); harmless if
   that is not allowed.  */
static void
pin (int cpu)
{
  long int ncpus = sysconf (_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu % (ncpus > 0 ? ncpus : 1), &set);
  sched_setaffinity (0, sizeof set, &set);
}

enum { burst = 64 };
static const size_t sizes[] = { 24, 40, 64, 100, 200 };

/* The marker of an allocated block: its last word, bound to its address
   so that stale data never looks like one.  Volatile: the compiler drops
   a store right before free.  */
static volatile uintptr_t *
marker (void *p, size_t size)
{
  return (volatile uintptr_t *) p + size / sizeof (uintptr_t) - 1;
}

static uintptr_t
live (void *p)
{
  return (uintptr_t) p ^ (uintptr_t) 0x5ca1ab1e0ddba11ULL;
}

static void *
block_alloc (size_t size)
{
  void *p = xmalloc (size);
  if (*marker (p, size) == live (p))
    FAIL_EXIT1 ("block %p handed out while it is allocated", p);
  *marker (p, size) = live (p);
  return p;
}

static void
block_free (void *p, size_t size)
{
  if (*marker (p, size) != live (p))
    FAIL_EXIT1 ("block %p changed while it was allocated", p);
  *marker (p, size) = 0;
  free (p);
}

/* Bursts of allocations and frees, all through the per-CPU cache.  */
static void
bursts (int rounds)
{
  void *p[burst];
  for (int r = 0; r < rounds; r++)
    {
      for (int i = 0; i < burst; i++)
	p[i] = block_alloc (sizes[i % array_length (sizes)]);
      for (int i = 0; i < burst; i++)
	block_free (p[i], sizes[i % array_length (sizes)]);
    }
}

static atomic_bool stop;

static void *
burst_thread (void *arg)
{
  pin (1);
  uintptr_t rounds = 0;
  while (!atomic_load_explicit (&stop, memory_order_relaxed))
    {
      bursts (1);
      rounds++;
    }
  return (void *) rounds;
}

/* Bursts on one CPU against malloc_trim in a loop on another, for MS
   milliseconds.  */
static void
stress (int ms)
{
  pin (0);
  atomic_store (&stop, false);
  pthread_t t = xpthread_create (NULL, burst_thread, NULL);
  struct timespec end = timespec_add (xclock_now (CLOCK_MONOTONIC),
				      make_timespec (0, ms * 1000000L));
  unsigned long int trims = 0;
  while (timespec_sub (end, xclock_now (CLOCK_MONOTONIC)).tv_sec >= 0)
    {
      malloc_trim (0);
      trims++;
    }
  atomic_store (&stop, true);
  uintptr_t rounds = (uintptr_t) xpthread_join (t);
  printf ("info: %lu bursts of %d, %lu calls of malloc_trim\n",
	  (unsigned long int) rounds, burst, trims);
  TEST_VERIFY (rounds > 0);
}

static void
check_fence (const char *expected)
{
  char *info = percpu_info ();
  TEST_VERIFY_EXIT (info != NULL);
  printf ("info: %s\n", info);
  TEST_VERIFY (percpu_attr_is (info, "fence", expected));
  free (info);
}

/* After the fence failed: the caches take no new chunks, and with one
   thread left malloc_trim empties them all without a fence.  */
static void
check_after_failure (void)
{
  check_fence ("failed");
  size_t held = percpu_cached_chunks ();
  bursts (100);
  TEST_VERIFY (percpu_cached_chunks () <= held);
  malloc_trim (0);
  TEST_COMPARE (percpu_cached_chunks (), 0);
}

static void
deny_after_fence (void *closure)
{
  percpu_start ();
  /* The burst thread's cache holds chunks at most trims: they fence.  */
  stress (100);
  check_fence ("ok");
  TEST_VERIFY (percpu_cache_sum ("drains") > 0);
  filter_membarrier (MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
		     SECCOMP_RET_ERRNO | EPERM);
  stress (1000);
  check_after_failure ();
}

static void
deny_before_fence (void *closure)
{
  filter_membarrier (-1, SECCOMP_RET_ERRNO | ENOSYS);
  percpu_start ();
  stress (1000);
  check_after_failure ();
}

/* With one thread no fence is needed.  */
static void
kill_single_thread (void *closure)
{
  filter_membarrier (-1, SECCOMP_RET_KILL_PROCESS);
  percpu_start ();
  bursts (100);
  TEST_VERIFY (percpu_cached_chunks () > 0);
  malloc_trim (0);
  TEST_COMPARE (percpu_cached_chunks (), 0);
  TEST_VERIFY (percpu_cache_sum ("drains") > 0);
  check_fence ("ok");
}

static void
kill_in_forked_child (void *closure)
{
  percpu_start ();
  stress (100);
  TEST_VERIFY (percpu_cache_sum ("drains") > 0);
  bursts (10);
  pid_t pid = xfork ();
  if (pid == 0)
    {
      kill_single_thread (NULL);
      exit (support_record_failure_is_failed () ? 1 : 0);
    }
  int status;
  xwaitpid (pid, &status, 0);
  TEST_COMPARE (status, 0);
}

static pthread_barrier_t filled, may_exit;

static void *
fill_and_wait (void *arg)
{
  bursts (1);
  xpthread_barrier_wait (&filled);
  xpthread_barrier_wait (&may_exit);
  return NULL;
}

static void
kill_with_threads (void *closure)
{
  percpu_start ();
  xpthread_barrier_init (&filled, NULL, 2);
  xpthread_barrier_init (&may_exit, NULL, 2);
  pthread_t t = xpthread_create (NULL, fill_and_wait, NULL);
  xpthread_barrier_wait (&filled);
  TEST_VERIFY_EXIT (percpu_cached_chunks () > 0);
  filter_membarrier (-1, SECCOMP_RET_KILL_PROCESS);
  puts ("info: malloc_trim");
  fflush (stdout);
  malloc_trim (0);
  puts ("info: malloc_trim returned");
  xpthread_barrier_wait (&may_exit);
  xpthread_join (t);
}

/* Whether the system has seccomp filters and the per-CPU cache.  */
static void
probe (void *closure)
{
  filter_membarrier (-1, SECCOMP_RET_ALLOW);
  percpu_start ();
}

static void
run (const char *name, void (*function) (void *), int signal)
{
  printf ("info: %s\n", name);
  struct support_capture_subprocess result
    = support_capture_subprocess (function, NULL);
  fputs (result.out.buffer, stdout);
  fputs (result.err.buffer, stdout);
  if (signal == 0)
    TEST_COMPARE (result.status, 0);
  else
    {
      TEST_VERIFY (WIFSIGNALED (result.status)
		   && WTERMSIG (result.status) == signal);
      TEST_VERIFY (strstr (result.out.buffer, "info: malloc_trim\n") != NULL);
      TEST_VERIFY (strstr (result.out.buffer, "returned") == NULL);
    }
  support_capture_subprocess_free (&result);
}

static int
do_test (void)
{
  if (__rseq_size == 0)
    FAIL_UNSUPPORTED ("rseq is not registered");
  struct support_capture_subprocess result
    = support_capture_subprocess (probe, NULL);
  fputs (result.out.buffer, stdout);
  if (WIFEXITED (result.status) && WEXITSTATUS (result.status) == EXIT_UNSUPPORTED)
    FAIL_UNSUPPORTED ("no seccomp filters or no per-CPU cache: %s",
		      result.out.buffer);
  TEST_COMPARE (result.status, 0);
  support_capture_subprocess_free (&result);

  run ("membarrier denied after a fence", deny_after_fence, 0);
  run ("membarrier denied before the first fence", deny_before_fence, 0);
  run ("membarrier kills a process with one thread", kill_single_thread, 0);
  run ("membarrier kills a forked child", kill_in_forked_child, 0);
  run ("membarrier kills a process with threads", kill_with_threads,
       SIGSYS);
  return 0;
}

#define TIMEOUT 60
#include <support/test-driver.c>
