/* Test the per-CPU operations of <sys/rseq-percpu.h>.
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

/* Every operation is run twice: as compiled in this file (inline, when
   compiled with optimization on an architecture with rseq critical
   sections), and through pointers to libc's functions, which no
   compiler can inline.  Both must give the results the header
   documents: 0 when the final store was committed, a positive value
   when a compare failed (and nothing was written), and a negative value
   with errno EAGAIN (or ENOSYS when the cpu_opv fallback was needed on
   a kernel without it) when the caller must read its CPU again and
   retry.  Threads incrementing per-CPU counters, interrupted by
   signals, must not lose an update; their rseq_percpu_aborts and
   rseq_percpu_fallbacks counters start at 0 and never decrease, and
   the fallback makes no cpu_opv call on a kernel without it.  With
   rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_ALWAYS) the libc
   functions go through cpu_opv, which is exercised when the kernel has
   it; otherwise they must fail with ENOSYS without writing anything.
   The same again by mm_cid (RSEQ_PERCPU_INDEX_MM_CID) where the kernel
   provides it; those operations never fall back.  */

#include <array_length.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq-percpu.h>
#include <sys/time.h>
#include <unistd.h>
#include <support/check.h>
#include <support/support.h>
#include <support/xsignal.h>
#include <support/xthread.h>
#include <support/xunistd.h>

/* Attempts of one operation before the test gives up.  */
#define MAX_ATTEMPTS 100000

/* Threads and increments per thread of the counter test.  */
#define THREADS 8
#define ITERATIONS 100000
/* The same through cpu_opv, which is a system call per increment.  */
#define OPV_ITERATIONS 300

/* Nodes per CPU of the list test.  */
#define NODES 16

/* The operations of one flavour: as inlined here, or libc's.  */
struct ops
{
  const char *name;
  /* Whether the critical sections are in this program (inline).  */
  bool inline_sections;
  int (*current_cpu) (int);
  int (*cmpeqv_storev) (int, intptr_t *, intptr_t, intptr_t, int);
  int (*addv) (int, intptr_t *, intptr_t, int);
  int (*cmpnev_storeoffp_load) (int, intptr_t *, intptr_t, long int,
				intptr_t *, int);
  int (*cmpeqv_cmpeqv_storev) (int, intptr_t *, intptr_t, intptr_t *,
			       intptr_t, intptr_t, int);
  int (*cmpeqv_trystorev_storev) (int, intptr_t *, intptr_t, intptr_t *,
				  intptr_t, intptr_t, int);
  int (*cmpeqv_trystorev_storev_release) (int, intptr_t *, intptr_t,
					  intptr_t *, intptr_t, intptr_t,
					  int);
  int (*cmpeqv_trymemcpy_storev) (int, intptr_t *, intptr_t, void *,
				  const void *, size_t, intptr_t, int);
  int (*cmpeqv_trymemcpy_storev_release) (int, intptr_t *, intptr_t,
					  void *, const void *, size_t,
					  intptr_t, int);
};

/* The inline flavour: each function has the critical section of the
   header's inline definition in its body.  */

static int
inline_current_cpu (int field)
{
  return rseq_percpu_current_cpu (field);
}

static int
inline_cmpeqv_storev (int field, intptr_t *v, intptr_t expect,
		      intptr_t newv, int cpu)
{
  return rseq_percpu_cmpeqv_storev (field, v, expect, newv, cpu);
}

static int
inline_addv (int field, intptr_t *v, intptr_t count, int cpu)
{
  return rseq_percpu_addv (field, v, count, cpu);
}

static int
inline_cmpnev_storeoffp_load (int field, intptr_t *v, intptr_t expectnot,
			      long int voffp, intptr_t *load, int cpu)
{
  return rseq_percpu_cmpnev_storeoffp_load (field, v, expectnot, voffp,
					    load, cpu);
}

static int
inline_cmpeqv_cmpeqv_storev (int field, intptr_t *v, intptr_t expect,
			     intptr_t *v2, intptr_t expect2, intptr_t newv,
			     int cpu)
{
  return rseq_percpu_cmpeqv_cmpeqv_storev (field, v, expect, v2, expect2,
					   newv, cpu);
}

static int
inline_cmpeqv_trystorev_storev (int field, intptr_t *v, intptr_t expect,
				intptr_t *v2, intptr_t newv2, intptr_t newv,
				int cpu)
{
  return rseq_percpu_cmpeqv_trystorev_storev (field, v, expect, v2, newv2,
					      newv, cpu);
}

static int
inline_cmpeqv_trystorev_storev_release (int field, intptr_t *v,
					intptr_t expect, intptr_t *v2,
					intptr_t newv2, intptr_t newv,
					int cpu)
{
  return rseq_percpu_cmpeqv_trystorev_storev_release (field, v, expect, v2,
						      newv2, newv, cpu);
}

static int
inline_cmpeqv_trymemcpy_storev (int field, intptr_t *v, intptr_t expect,
				void *dst, const void *src, size_t len,
				intptr_t newv, int cpu)
{
  return rseq_percpu_cmpeqv_trymemcpy_storev (field, v, expect, dst, src,
					      len, newv, cpu);
}

static int
inline_cmpeqv_trymemcpy_storev_release (int field, intptr_t *v,
					intptr_t expect, void *dst,
					const void *src, size_t len,
					intptr_t newv, int cpu)
{
  return rseq_percpu_cmpeqv_trymemcpy_storev_release (field, v, expect, dst,
						      src, len, newv, cpu);
}

static const struct ops inline_ops =
  {
    .name = "inline",
#if defined __OPTIMIZE__ && !defined __NO_INLINE__
    .inline_sections = true,
#else
    .inline_sections = false,
#endif
    .current_cpu = inline_current_cpu,
    .cmpeqv_storev = inline_cmpeqv_storev,
    .addv = inline_addv,
    .cmpnev_storeoffp_load = inline_cmpnev_storeoffp_load,
    .cmpeqv_cmpeqv_storev = inline_cmpeqv_cmpeqv_storev,
    .cmpeqv_trystorev_storev = inline_cmpeqv_trystorev_storev,
    .cmpeqv_trystorev_storev_release
      = inline_cmpeqv_trystorev_storev_release,
    .cmpeqv_trymemcpy_storev = inline_cmpeqv_trymemcpy_storev,
    .cmpeqv_trymemcpy_storev_release
      = inline_cmpeqv_trymemcpy_storev_release,
  };

/* The libc flavour: the address of an extern inline function is that
   of the function in libc.  */
static const struct ops libc_ops =
  {
    .name = "libc",
    .inline_sections = false,
    .current_cpu = rseq_percpu_current_cpu,
    .cmpeqv_storev = rseq_percpu_cmpeqv_storev,
    .addv = rseq_percpu_addv,
    .cmpnev_storeoffp_load = rseq_percpu_cmpnev_storeoffp_load,
    .cmpeqv_cmpeqv_storev = rseq_percpu_cmpeqv_cmpeqv_storev,
    .cmpeqv_trystorev_storev = rseq_percpu_cmpeqv_trystorev_storev,
    .cmpeqv_trystorev_storev_release
      = rseq_percpu_cmpeqv_trystorev_storev_release,
    .cmpeqv_trymemcpy_storev = rseq_percpu_cmpeqv_trymemcpy_storev,
    .cmpeqv_trymemcpy_storev_release
      = rseq_percpu_cmpeqv_trymemcpy_storev_release,
  };

/* Read through volatile pointers, so that the compiler cannot turn the
   calls through libc_ops into direct calls and inline them.  */
static const struct ops *volatile inline_flavour = &inline_ops;
static const struct ops *volatile libc_flavour = &libc_ops;

static const char *
field_name (int field)
{
  return field == RSEQ_PERCPU_INDEX_CPU_ID ? "cpu_id" : "mm_cid";
}

/* One slot per configured CPU, each in its own cache line.  */
struct slot
{
  intptr_t value;
} __attribute__ ((aligned (64)));

static struct slot *slots;
static int nslots;

static void
clear_slots (void)
{
  memset (slots, 0, nslots * sizeof *slots);
}

static intptr_t
sum_slots (void)
{
  intptr_t sum = 0;
  for (int i = 0; i < nslots; i++)
    sum += slots[i].value;
  return sum;
}

/* Whether the caller of an operation that returned RET should read its
   CPU again and retry: RET < 0 with errno EAGAIN, or ENOSYS when the
   fallback was needed but the kernel has no cpu_opv.  Any other errno
   is a failure, and so is an operation that never completes.  */
static bool
retry (int ret, const char *what, int *attempts)
{
  if (ret >= 0)
    return false;
  int err = errno;
  if (err != EAGAIN && err != ENOSYS)
    FAIL_EXIT1 ("%s: returned %d with errno %d (%s)", what, ret, err,
		strerrorname_np (err));
  if (++*attempts >= MAX_ATTEMPTS)
    FAIL_EXIT1 ("%s: not done after %d attempts (errno %s)", what,
		*attempts, strerrorname_np (err));
  return true;
}

/* The CPU number for FIELD, which must index the slots.  */
static int
current_cpu (const struct ops *ops, int field)
{
  int cpu = ops->current_cpu (field);
  if (cpu < 0 || cpu >= nslots)
    FAIL_EXIT1 ("%s rseq_percpu_current_cpu (%s): %d (errno %s), "
		"expected 0 to %d", ops->name, field_name (field), cpu,
		strerrorname_np (errno), nslots - 1);
  return cpu;
}

/* Bad arguments: EINVAL for an unknown field, and nothing written.  */
static void
test_invalid_field (const struct ops *ops)
{
  intptr_t v = 1, v2 = 2;
  char buf[4] = "abc";

  errno = 0;
  TEST_COMPARE (ops->current_cpu (2), -1);
  TEST_COMPARE (errno, EINVAL);
  errno = 0;
  TEST_COMPARE (ops->current_cpu (-1), -1);
  TEST_COMPARE (errno, EINVAL);
  errno = 0;
  TEST_COMPARE (ops->addv (2, &v, 1, 0), -1);
  TEST_COMPARE (errno, EINVAL);
  errno = 0;
  TEST_COMPARE (ops->cmpeqv_storev (2, &v, 1, 5, 0), -1);
  TEST_COMPARE (errno, EINVAL);
  errno = 0;
  TEST_COMPARE (ops->cmpeqv_trystorev_storev (2, &v, 1, &v2, 3, 5, 0), -1);
  TEST_COMPARE (errno, EINVAL);
  errno = 0;
  TEST_COMPARE (ops->cmpeqv_trymemcpy_storev (2, &v, 1, buf, "xyz", 3, 5,
					      0), -1);
  TEST_COMPARE (errno, EINVAL);
  TEST_COMPARE (v, 1);
  TEST_COMPARE (v2, 2);
  TEST_COMPARE_STRING (buf, "abc");
}

/* The compare-and-store operations, with matching and mismatching
   values, on the slot of the CPU they run on.  */
static void
test_compare_store (const struct ops *ops, int field)
{
  int cpu, ret, attempts = 0;

  /* Match: exactly the slot of the CPU it ran on is written.  */
  clear_slots ();
  do
    {
      cpu = current_cpu (ops, field);
      ret = ops->cmpeqv_storev (field, &slots[cpu].value, 0, 42, cpu);
    }
  while (retry (ret, "cmpeqv_storev", &attempts));
  TEST_COMPARE (ret, 0);
  TEST_COMPARE (slots[cpu].value, 42);
  TEST_COMPARE (sum_slots (), 42);

  /* Mismatch: a positive result, nothing written.  */
  do
    {
      cpu = current_cpu (ops, field);
      ret = ops->cmpeqv_storev (field, &slots[cpu].value,
				slots[cpu].value + 1, 7, cpu);
    }
  while (retry (ret, "cmpeqv_storev", &attempts));
  TEST_VERIFY (ret > 0);
  TEST_COMPARE (sum_slots (), 42);

  /* Two compares: both must match.  */
  intptr_t other = 5;
  clear_slots ();
  do
    {
      cpu = current_cpu (ops, field);
      ret = ops->cmpeqv_cmpeqv_storev (field, &slots[cpu].value, 0, &other,
				       6, 9, cpu);
    }
  while (retry (ret, "cmpeqv_cmpeqv_storev", &attempts));
  TEST_VERIFY (ret > 0);
  TEST_COMPARE (sum_slots (), 0);
  do
    {
      cpu = current_cpu (ops, field);
      ret = ops->cmpeqv_cmpeqv_storev (field, &slots[cpu].value, 0, &other,
				       5, 9, cpu);
    }
  while (retry (ret, "cmpeqv_cmpeqv_storev", &attempts));
  TEST_COMPARE (ret, 0);
  TEST_COMPARE (slots[cpu].value, 9);
  TEST_COMPARE (sum_slots (), 9);
  TEST_COMPARE (other, 5);

  /* Try store, then commit; both variants.  */
  for (int release = 0; release < 2; release++)
    {
      intptr_t tried = 0;
      int (*op) (int, intptr_t *, intptr_t, intptr_t *, intptr_t, intptr_t,
		 int) = (release ? ops->cmpeqv_trystorev_storev_release
			 : ops->cmpeqv_trystorev_storev);
      clear_slots ();
      do
	{
	  cpu = current_cpu (ops, field);
	  ret = op (field, &slots[cpu].value, 1, &tried, 11, 12, cpu);
	}
      while (retry (ret, "cmpeqv_trystorev_storev", &attempts));
      TEST_VERIFY (ret > 0);
      TEST_COMPARE (tried, 0);
      TEST_COMPARE (sum_slots (), 0);
      do
	{
	  cpu = current_cpu (ops, field);
	  ret = op (field, &slots[cpu].value, 0, &tried, 11, 12, cpu);
	}
      while (retry (ret, "cmpeqv_trystorev_storev", &attempts));
      TEST_COMPARE (ret, 0);
      TEST_COMPARE (tried, 11);
      TEST_COMPARE (slots[cpu].value, 12);
      TEST_COMPARE (sum_slots (), 12);
    }

  /* Copy, then commit; both variants.  */
  static const char src[] = "per-CPU data copied before the commit";
  for (int release = 0; release < 2; release++)
    {
      char dst[sizeof src];
      int (*op) (int, intptr_t *, intptr_t, void *, const void *, size_t,
		 intptr_t, int) = (release
				   ? ops->cmpeqv_trymemcpy_storev_release
				   : ops->cmpeqv_trymemcpy_storev);
      memset (dst, 'x', sizeof dst);
      clear_slots ();
      do
	{
	  cpu = current_cpu (ops, field);
	  ret = op (field, &slots[cpu].value, 1, dst, src, sizeof src, 13,
		    cpu);
	}
      while (retry (ret, "cmpeqv_trymemcpy_storev", &attempts));
      TEST_VERIFY (ret > 0);
      TEST_COMPARE (dst[0], 'x');
      TEST_COMPARE (dst[sizeof dst - 1], 'x');
      TEST_COMPARE (sum_slots (), 0);
      do
	{
	  cpu = current_cpu (ops, field);
	  ret = op (field, &slots[cpu].value, 0, dst, src, sizeof src, 13,
		    cpu);
	}
      while (retry (ret, "cmpeqv_trymemcpy_storev", &attempts));
      TEST_COMPARE (ret, 0);
      TEST_COMPARE_STRING (dst, src);
      TEST_COMPARE (slots[cpu].value, 13);
      TEST_COMPARE (sum_slots (), 13);
    }
}

/* A per-CPU stack: a list of NODES nodes per CPU, popped with
   cmpnev_storeoffp_load from the list of the CPU the pop runs on until
   that list is empty.  Every pop must return the top node of its list;
   the lists of the other CPUs must stay intact.  */
struct node
{
  intptr_t next;
  int cpu;
  int index;
};

static void
test_stack_pop (const struct ops *ops, int field)
{
  struct node *nodes = xcalloc (nslots * NODES, sizeof *nodes);
  int *popped = xcalloc (nslots, sizeof *popped);

  for (int cpu = 0; cpu < nslots; cpu++)
    {
      for (int i = 0; i < NODES; i++)
	{
	  struct node *n = &nodes[cpu * NODES + i];
	  n->cpu = cpu;
	  n->index = i;
	  n->next = i > 0 ? (intptr_t) (n - 1) : 0;
	}
      slots[cpu].value = (intptr_t) &nodes[cpu * NODES + NODES - 1];
    }

  int cpu, ret, attempts = 0;
  for (;;)
    {
      intptr_t load = 0;
      do
	{
	  cpu = current_cpu (ops, field);
	  ret = ops->cmpnev_storeoffp_load (field, &slots[cpu].value, 0,
					    offsetof (struct node, next),
					    &load, cpu);
	}
      while (retry (ret, "cmpnev_storeoffp_load", &attempts));
      if (ret > 0)
	{
	  /* The list of this CPU is empty.  */
	  TEST_COMPARE (popped[cpu], NODES);
	  TEST_COMPARE (slots[cpu].value, 0);
	  break;
	}
      TEST_COMPARE (ret, 0);
      struct node *n = (struct node *) load;
      if (n == NULL || n->cpu != cpu || n->index != NODES - 1 - popped[cpu])
	FAIL_EXIT1 ("pop from the list of CPU %d (%s): got node %d of CPU "
		    "%d, expected node %d", cpu, ops->name,
		    n != NULL ? n->index : -1, n != NULL ? n->cpu : -1,
		    NODES - 1 - popped[cpu]);
      popped[cpu]++;
    }

  /* The remaining lists are intact.  */
  for (int c = 0; c < nslots; c++)
    {
      int expected = NODES - 1 - popped[c];
      for (intptr_t p = slots[c].value; p != 0;
	   p = ((struct node *) p)->next, expected--)
	{
	  struct node *n = (struct node *) p;
	  TEST_COMPARE (n->cpu, c);
	  TEST_COMPARE (n->index, expected);
	}
      TEST_COMPARE (expected, -1);
    }

  free (popped);
  free (nodes);
  clear_slots ();
}

/* The calling thread's rseq_cs: an operation arms it with the address
   of its descriptor, which is in the object holding its critical
   section, and nothing but a preemption or a signal clears it.  The
   critical sections of the inline flavour must be in this program, and
   those of the libc flavour elsewhere.  */
static void
test_section_location (const struct ops *ops, int field)
{
  struct rseq *area = rseq_area_pointer ();
  TEST_VERIFY_EXIT (area != NULL);
  volatile uint64_t *rseq_cs
    = (volatile uint64_t *) ((char *) area + offsetof (struct rseq, rseq_cs));
  Dl_info self, info;
  TEST_VERIFY_EXIT (dladdr (test_section_location, &self) != 0);

  for (int i = 0; i < 1000; i++)
    {
      int cpu = current_cpu (ops, field);
      *rseq_cs = 0;
      intptr_t v = 0;
      if (ops->addv (field, &v, 1, cpu) != 0)
	continue;
      uintptr_t cs = *rseq_cs;
      if (cs == 0)
	continue;
      TEST_VERIFY_EXIT (dladdr ((void *) cs, &info) != 0);
      if (ops->inline_sections)
	TEST_VERIFY (info.dli_fbase == self.dli_fbase);
      else
	TEST_VERIFY (info.dli_fbase != self.dli_fbase);
      printf ("info: %s operations run the critical sections of %s\n",
	      ops->name, info.dli_fbase == self.dli_fbase
	      ? "this program" : info.dli_fname);
      return;
    }
  printf ("info: rseq_cs was always clear after the %s operations\n",
	  ops->name);
}

/* Threads incrementing the counters of their CPUs.  */
struct worker
{
  const struct ops *ops;
  int field;
  int mode;
  int iterations;
  unsigned long int aborts;
  unsigned long int fallbacks;
};

static pthread_barrier_t barrier;

/* Signals delivered while the threads run abort some of their
   sequences.  */
static void
on_alarm (int sig)
{
  (void) sig;
}

static void
set_alarm_interval (long int usec)
{
  struct itimerval it =
    {
      .it_interval = { .tv_sec = 0, .tv_usec = usec },
      .it_value = { .tv_sec = 0, .tv_usec = usec },
    };
  TEST_COMPARE (setitimer (ITIMER_REAL, &it, NULL), 0);
}

static void *
worker_thread (void *closure)
{
  struct worker *w = closure;

  /* The counters and the fallback mode are the thread's own.  */
  TEST_COMPARE (rseq_percpu_aborts (), 0u);
  TEST_COMPARE (rseq_percpu_fallbacks (), 0u);
  TEST_COMPARE (rseq_percpu_set_fallback (w->mode),
		RSEQ_PERCPU_FALLBACK_AUTO);

  xpthread_barrier_wait (&barrier);
  unsigned long int aborts = 0, fallbacks = 0;
  int attempts = 0;
  for (int i = 0; i < w->iterations; i++)
    {
      int cpu, ret;
      do
	{
	  cpu = current_cpu (w->ops, w->field);
	  ret = w->ops->addv (w->field, &slots[cpu].value, 1, cpu);
	}
      while (retry (ret, "addv", &attempts));
      TEST_COMPARE (ret, 0);
      unsigned long int now = rseq_percpu_aborts ();
      TEST_VERIFY (now >= aborts);
      aborts = now;
      now = rseq_percpu_fallbacks ();
      TEST_VERIFY (now >= fallbacks);
      fallbacks = now;
    }
  w->aborts = aborts;
  w->fallbacks = fallbacks;
  return NULL;
}

/* Run the counter test; return the total of the threads' fallbacks.
   Also checks the total of their aborts against EXPECT_NO_ABORTS.  */
static unsigned long int
test_counter (const struct ops *ops, int field, int mode, int iterations,
	      bool expect_no_aborts)
{
  struct worker workers[THREADS];
  pthread_t threads[THREADS];

  clear_slots ();
  set_alarm_interval (100);
  xpthread_barrier_init (&barrier, NULL, THREADS);
  for (int i = 0; i < THREADS; i++)
    {
      workers[i] = (struct worker) { .ops = ops, .field = field,
				     .mode = mode,
				     .iterations = iterations };
      threads[i] = xpthread_create (NULL, worker_thread, &workers[i]);
    }
  /* The process-directed SIGALRM goes to a thread that does not block
     it: one of the workers, which were created with it unblocked.  */
  sigset_t alarm_set;
  sigemptyset (&alarm_set);
  sigaddset (&alarm_set, SIGALRM);
  xpthread_sigmask (SIG_BLOCK, &alarm_set, NULL);
  unsigned long int aborts = 0, fallbacks = 0;
  for (int i = 0; i < THREADS; i++)
    {
      xpthread_join (threads[i]);
      aborts += workers[i].aborts;
      fallbacks += workers[i].fallbacks;
    }
  xpthread_barrier_destroy (&barrier);
  set_alarm_interval (0);
  xpthread_sigmask (SIG_UNBLOCK, &alarm_set, NULL);

  intptr_t total = sum_slots ();
  if (total != (intptr_t) THREADS * iterations)
    FAIL ("%s %s counter: total %td, expected %d", ops->name,
	  field_name (field), total, THREADS * iterations);
  if (expect_no_aborts)
    TEST_COMPARE (aborts, 0u);
  printf ("info: %s %s counter%s: %d threads, %d increments each, "
	  "%lu aborts, %lu fallbacks\n", ops->name, field_name (field),
	  mode == RSEQ_PERCPU_FALLBACK_ALWAYS ? " (fallback always)" : "",
	  THREADS, iterations, aborts, fallbacks);
  clear_slots ();
  return fallbacks;
}

/* A new thread starts in the default mode whatever its creator set.  */
static void *
fresh_thread (void *closure)
{
  (void) closure;
  return (void *) (intptr_t) rseq_percpu_set_fallback
    (RSEQ_PERCPU_FALLBACK_AUTO);
}

static void
test_fallback_modes (void)
{
  errno = 0;
  TEST_COMPARE (rseq_percpu_set_fallback (3), -1);
  TEST_COMPARE (errno, EINVAL);
  errno = 0;
  TEST_COMPARE (rseq_percpu_set_fallback (-1), -1);
  TEST_COMPARE (errno, EINVAL);
  TEST_COMPARE (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_NEVER),
		RSEQ_PERCPU_FALLBACK_AUTO);
  TEST_COMPARE (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_ALWAYS),
		RSEQ_PERCPU_FALLBACK_NEVER);
  pthread_t thread = xpthread_create (NULL, fresh_thread, NULL);
  TEST_COMPARE ((intptr_t) xpthread_join (thread),
		RSEQ_PERCPU_FALLBACK_AUTO);
  TEST_COMPARE (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_AUTO),
		RSEQ_PERCPU_FALLBACK_ALWAYS);
  TEST_COMPARE (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_AUTO),
		RSEQ_PERCPU_FALLBACK_AUTO);
}

/* Whether the kernel has cpu_opv, as the libc operations see it when
   told to use it at once: 0 from the operation, or -1 with ENOSYS
   (nothing written, no system call counted).  */
static bool
probe_cpu_opv (void)
{
  const struct ops *ops = libc_flavour;
  int cpu, ret, attempts = 0;

  clear_slots ();
  TEST_COMPARE (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_ALWAYS),
		RSEQ_PERCPU_FALLBACK_AUTO);
  unsigned long int aborts = rseq_percpu_aborts ();
  unsigned long int fallbacks = rseq_percpu_fallbacks ();
  do
    {
      cpu = current_cpu (ops, RSEQ_PERCPU_INDEX_CPU_ID);
      errno = 0;
      ret = ops->addv (RSEQ_PERCPU_INDEX_CPU_ID, &slots[cpu].value, 1, cpu);
    }
  while (ret < 0 && errno == EAGAIN && ++attempts < MAX_ATTEMPTS);
  int err = errno;
  TEST_COMPARE (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_AUTO),
		RSEQ_PERCPU_FALLBACK_ALWAYS);
  /* The libc functions make no attempt in this mode.  */
  TEST_COMPARE (rseq_percpu_aborts (), aborts);

  if (ret < 0)
    {
      if (err != ENOSYS)
	FAIL_EXIT1 ("addv through cpu_opv: errno %d (%s), expected ENOSYS "
		    "if anything", err, strerrorname_np (err));
      TEST_COMPARE (sum_slots (), 0);
      TEST_COMPARE (rseq_percpu_fallbacks (), fallbacks);
      return false;
    }
  TEST_COMPARE (ret, 0);
  TEST_COMPARE (sum_slots (), 1);
  TEST_VERIFY (rseq_percpu_fallbacks () > fallbacks);
  clear_slots ();
  return true;
}

/* Everything for one CPU numbering.  */
static void
test_field (int field, bool have_cpu_opv)
{
  const struct ops *flavours[] = { inline_flavour, libc_flavour };

  for (size_t i = 0; i < array_length (flavours); i++)
    {
      const struct ops *ops = flavours[i];
      test_compare_store (ops, field);
      test_stack_pop (ops, field);
      unsigned long int fallbacks
	= test_counter (ops, field, RSEQ_PERCPU_FALLBACK_AUTO, ITERATIONS,
			false);
      /* Without cpu_opv, the fallback makes no system call.  */
      if (!have_cpu_opv)
	TEST_COMPARE (fallbacks, 0u);
      /* Without a fallback, an abort is reported as EAGAIN and the
	 operations still complete.  */
      TEST_COMPARE (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_NEVER),
		    RSEQ_PERCPU_FALLBACK_AUTO);
      test_compare_store (ops, field);
      test_stack_pop (ops, field);
      TEST_COMPARE (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_AUTO),
		    RSEQ_PERCPU_FALLBACK_NEVER);
    }

  const struct ops *ops = libc_flavour;
  if (field == RSEQ_PERCPU_INDEX_MM_CID)
    {
      /* Operations by concurrency ID never fall back, so they complete
	 by rseq alone in every mode, and make no cpu_opv call.  */
      TEST_COMPARE (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_ALWAYS),
		    RSEQ_PERCPU_FALLBACK_AUTO);
      unsigned long int fallbacks = rseq_percpu_fallbacks ();
      test_compare_store (ops, field);
      test_stack_pop (ops, field);
      TEST_COMPARE (rseq_percpu_fallbacks (), fallbacks);
      TEST_COMPARE (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_AUTO),
		    RSEQ_PERCPU_FALLBACK_ALWAYS);
      TEST_COMPARE (test_counter (ops, field, RSEQ_PERCPU_FALLBACK_ALWAYS,
				  ITERATIONS, false), 0u);
    }
  else if (have_cpu_opv)
    {
      /* The libc functions through cpu_opv: the same results, one or
	 more cpu_opv calls per operation, and no attempt.  */
      TEST_COMPARE (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_ALWAYS),
		    RSEQ_PERCPU_FALLBACK_AUTO);
      unsigned long int aborts = rseq_percpu_aborts ();
      unsigned long int fallbacks = rseq_percpu_fallbacks ();
      test_compare_store (ops, field);
      test_stack_pop (ops, field);
      TEST_COMPARE (rseq_percpu_aborts (), aborts);
      TEST_VERIFY (rseq_percpu_fallbacks () > fallbacks);
      TEST_COMPARE (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_AUTO),
		    RSEQ_PERCPU_FALLBACK_ALWAYS);
      fallbacks = test_counter (ops, field, RSEQ_PERCPU_FALLBACK_ALWAYS,
				OPV_ITERATIONS, true);
      TEST_VERIFY (fallbacks >= (unsigned long int) THREADS * OPV_ITERATIONS);
    }
}

static int
do_test (void)
{
  struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
  sigemptyset (&sa.sa_mask);
  TEST_COMPARE (sigaction (SIGALRM, &sa, NULL), 0);

  nslots = xsysconf (_SC_NPROCESSORS_CONF);
  TEST_VERIFY_EXIT (nslots > 0);
  slots = xcalloc (nslots, sizeof *slots);

  /* Checked by libc whether or not operations can run.  */
  test_invalid_field (inline_flavour);
  test_invalid_field (libc_flavour);
  test_fallback_modes ();

  errno = 0;
  int cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
  int err = errno;
  printf ("info: __rseq_size %u, rseq_percpu_current_cpu %d, "
	  "inline sections %s\n", __rseq_size, cpu,
	  inline_ops.inline_sections ? "yes" : "no");
  if (cpu < 0)
    {
      TEST_COMPARE (cpu, -1);
      TEST_COMPARE (err, ENOSYS);
      /* Every operation refuses to run, and writes nothing.  */
      intptr_t v = 1;
      errno = 0;
      TEST_COMPARE (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &v, 1, 0),
		    -1);
      TEST_COMPARE (errno, ENOSYS);
      errno = 0;
      TEST_COMPARE (libc_flavour->cmpeqv_storev (RSEQ_PERCPU_INDEX_CPU_ID,
						 &v, 1, 2, 0), -1);
      TEST_COMPARE (errno, ENOSYS);
      TEST_COMPARE (v, 1);
      errno = 0;
      TEST_COMPARE (rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_MM_CID), -1);
      TEST_COMPARE (errno, ENOSYS);
      if (__rseq_size == 0)
	FAIL_UNSUPPORTED ("rseq is not registered (no kernel support, or "
			  "disabled by the glibc.pthread.rseq tunable)");
      FAIL_UNSUPPORTED ("per-CPU operations cannot run: the architecture "
			"has no rseq critical sections");
    }
  TEST_VERIFY (cpu < nslots);

  test_section_location (inline_flavour, RSEQ_PERCPU_INDEX_CPU_ID);
  test_section_location (libc_flavour, RSEQ_PERCPU_INDEX_CPU_ID);

  bool have_cpu_opv = probe_cpu_opv ();
  if (!have_cpu_opv)
    puts ("info: the kernel has no cpu_opv: forced fallbacks fail with "
	  "ENOSYS (checked); the cpu_opv path is not tested");
  test_field (RSEQ_PERCPU_INDEX_CPU_ID, have_cpu_opv);

  /* mm_cid, the 32-bit field at offset 24 of the area, is there when
     the active feature size covers it.  */
  errno = 0;
  int cid = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_MM_CID);
  err = errno;
  if (__rseq_size >= 28)
    {
      TEST_VERIFY (cid >= 0 && cid < nslots);
      test_field (RSEQ_PERCPU_INDEX_MM_CID, have_cpu_opv);
    }
  else
    {
      TEST_COMPARE (cid, -1);
      TEST_COMPARE (err, ENOSYS);
      puts ("info: the kernel provides no mm_cid: RSEQ_PERCPU_INDEX_MM_CID "
	    "not tested");
    }

  free (slots);
  return 0;
}

#include <support/test-driver.c>
