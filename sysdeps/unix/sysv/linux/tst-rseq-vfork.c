/* Test that the rseq area tells the truth in vfork and clone children.
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

/* A child of vfork, or of clone with CLONE_VM and CLONE_VFORK but
   without CLONE_SETTLS, runs on its parent's thread descriptor and so
   reads its parent's rseq area, which the kernel does not update for
   it.  The child moves to another CPU and checks that sched_getcpu and
   getcpu report the CPU the kernel reports, not the parent's CPU that
   the area still shows.  glibc must not write the fields the kernel
   owns to achieve this: it sets a word of its own right before the
   area in the child, and clears it when the parent resumes.  */

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <support/check.h>
#include <support/support.h>
#include <support/xsched.h>
#include <support/xunistd.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread_pointer.h>
#include <unistd.h>

/* The ports whose vfork and clone mark their children (see
   rseq-vfork.c); the others do not yet.  */
#if defined __x86_64__ || defined __i386__ || defined __aarch64__ \
  || defined __arm__ || defined __powerpc64__
# define VFORK_MARKS_CHILD 1
#else
# define VFORK_MARKS_CHILD 0
#endif

/* glibc's word, nonzero in a vfork child, at this offset from the rseq
   area.  */
#define VFORK_WORD_OFFSET (-4)

/* Byte offsets of node_id and mm_cid (Linux 6.3 and later), which the
   struct rseq of older kernel headers lacks.  */
#define NODE_ID_OFFSET 20
#define MM_CID_OFFSET 24

/* Number of children of each kind.  */
#define ROUNDS 20

/* The calling thread's rseq area.  */
static inline volatile struct rseq *
rseq_area (void)
{
  return (volatile struct rseq *) ((char *) __thread_pointer () + __rseq_offset);
}

/* glibc's vfork word of the area the calling thread runs on.  */
static inline unsigned int
vfork_word (void)
{
  return *(volatile uint32_t *) ((char *) __thread_pointer () + __rseq_offset
				 + VFORK_WORD_OFFSET);
}

/* The fields of the area that the kernel owns.  node_id and mm_cid
   are 0 where __rseq_size does not cover them.  */
struct kernel_fields
{
  int cpu_id_start;
  int cpu_id;
  int node_id;
  int mm_cid;
};

static void
read_kernel_fields (volatile struct kernel_fields *fields)
{
  volatile struct rseq *area = rseq_area ();
  fields->cpu_id_start = area->cpu_id_start;
  fields->cpu_id = area->cpu_id;
  fields->node_id = 0;
  fields->mm_cid = 0;
  if (__rseq_size >= NODE_ID_OFFSET + 4)
    fields->node_id = *(volatile int *) ((volatile char *) area
					 + NODE_ID_OFFSET);
  if (__rseq_size >= MM_CID_OFFSET + 4)
    fields->mm_cid = *(volatile int *) ((volatile char *) area
					+ MM_CID_OFFSET);
}

/* What the child saw.  The child shares the parent's memory; volatile
   because the compiler does not know that the child's stores reach the
   parent.  */
struct child_view
{
  unsigned int vfork_word;
  struct kernel_fields start;
  struct kernel_fields end;
  int moved;
  long int kernel_ret;
  int kernel_cpu;
  int kernel_node;
  int sched_cpu;
  int getcpu_ret;
  int getcpu_cpu;
  int getcpu_node;
  int grandchild_status;
  unsigned int vfork_word_after_grandchild;
};

static volatile struct child_view view;

static void
pin (int cpu)
{
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  if (sched_setaffinity (0, sizeof (set), &set) != 0)
    FAIL_EXIT1 ("sched_setaffinity (%d): %m", cpu);
}

/* The body of the child, which runs on its parent's descriptor.  Moves
   to OTHER unless it is negative, runs a vfork child of its own if
   NESTED, and records what the area and the lookups say.  Only stores
   to VIEW; the caller exits with _exit.  */
static void
child_body (int other, int nested)
{
  unsigned int cpu = -1;
  unsigned int node = -1;

  read_kernel_fields (&view.start);
  view.vfork_word = vfork_word ();

  if (other >= 0)
    {
      cpu_set_t set;
      CPU_ZERO (&set);
      CPU_SET (other, &set);
      view.moved = sched_setaffinity (0, sizeof (set), &set) == 0;
    }

  if (nested)
    {
      /* The grandchild leaves at once.  When the child resumes, it is
	 still a vfork child: its word must stay set, and its lookups
	 below must still ask the kernel.  */
      pid_t pid = vfork ();
      if (pid == 0)
	_exit (vfork_word () != 0 ? 0 : 1);
      int status = -1;
      if (pid < 0 || waitpid (pid, &status, 0) != pid)
	status = -1;
      view.grandchild_status = status;
      view.vfork_word_after_grandchild = vfork_word ();
    }

  view.sched_cpu = sched_getcpu ();
  view.getcpu_ret = getcpu (&cpu, &node);
  view.getcpu_cpu = cpu;
  view.getcpu_node = node;
  cpu = -1;
  node = -1;
  view.kernel_ret = syscall (SYS_getcpu, &cpu, &node, NULL);
  view.kernel_cpu = cpu;
  view.kernel_node = node;

  read_kernel_fields (&view.end);
}

struct clone_arg
{
  int other;
  int nested;
};

static int
clone_child (void *closure)
{
  struct clone_arg *arg = closure;
  child_body (arg->other, arg->nested);
  return 0;
}

/* Run one child on the parent's descriptor, through clone if USE_CLONE
   and vfork otherwise, with the parent pinned to HOME and the child
   moving to OTHER (negative if there is only one CPU).  */
static void
do_round (struct support_stack *stack, int use_clone, int home, int other,
	  int nested)
{
  unsigned int cpu;
  unsigned int node;

  pin (home);
  TEST_COMPARE (sched_getcpu (), home);

  struct kernel_fields before;
  read_kernel_fields (&before);
  TEST_COMPARE (before.cpu_id_start, home);
  TEST_COMPARE (before.cpu_id, home);
  TEST_COMPARE (vfork_word (), 0U);

  view = (struct child_view) { .moved = -1, .grandchild_status = -1 };

  pid_t pid;
  if (use_clone)
    {
      struct clone_arg arg = { other, nested };
      pid = xclone (clone_child, &arg, stack->stack, stack->size,
		    CLONE_VM | CLONE_VFORK | SIGCHLD);
    }
  else
    {
      pid = vfork ();
      if (pid == 0)
	{
	  child_body (other, nested);
	  _exit (0);
	}
      if (pid < 0)
	FAIL_EXIT1 ("vfork: %m");
    }

  /* The parent resumed: its word is clear again.  */
  TEST_COMPARE (vfork_word (), 0U);

  int status;
  xwaitpid (pid, &status, 0);
  TEST_VERIFY (WIFEXITED (status));
  TEST_COMPARE (WEXITSTATUS (status), 0);

  /* The child was told that the area is not registered for it.  */
  TEST_VERIFY (view.vfork_word != 0);
  if (nested)
    {
      TEST_VERIFY (WIFEXITED (view.grandchild_status));
      TEST_COMPARE (WEXITSTATUS (view.grandchild_status), 0);
      TEST_VERIFY (view.vfork_word_after_grandchild != 0);
    }

  /* The child saw the area exactly as the pinned parent left it, and
     nobody wrote the fields the kernel owns while the child ran: the
     parent waited in the kernel, and the child is not registered.  */
  TEST_COMPARE (view.start.cpu_id_start, home);
  TEST_COMPARE (view.start.cpu_id, home);
  TEST_COMPARE (view.start.node_id, before.node_id);
  TEST_COMPARE (view.end.cpu_id_start, view.start.cpu_id_start);
  TEST_COMPARE (view.end.cpu_id, view.start.cpu_id);
  TEST_COMPARE (view.end.node_id, view.start.node_id);
  TEST_COMPARE (view.end.mm_cid, view.start.mm_cid);

  /* The lookups in the child agree with the kernel.  When the child
     moved, the area still says HOME, so this fails if they read it.  */
  TEST_COMPARE (view.kernel_ret, 0);
  if (other >= 0)
    {
      TEST_COMPARE (view.moved, 1);
      TEST_COMPARE (view.kernel_cpu, other);
    }
  TEST_COMPARE (view.sched_cpu, view.kernel_cpu);
  TEST_COMPARE (view.getcpu_ret, 0);
  TEST_COMPARE (view.getcpu_cpu, view.kernel_cpu);
  TEST_COMPARE (view.getcpu_node, view.kernel_node);

  /* The parent's area is intact and its lookups use it again.  */
  read_kernel_fields (&before);
  TEST_COMPARE (before.cpu_id_start, home);
  TEST_COMPARE (before.cpu_id, home);
  TEST_COMPARE (sched_getcpu (), home);
  TEST_COMPARE (getcpu (&cpu, &node), 0);
  TEST_COMPARE (cpu, (unsigned int) home);
  TEST_COMPARE (vfork_word (), 0U);
}

/* A process that clone made without CLONE_VM, like fork but without
   glibc's bookkeeping: its thread descriptor is a copy of its parent's,
   with the parent's thread ID.  Its own vfork child sets the word; the
   process must find it clear again when it resumes.  Returns 0 if so.  */
static int
forklike_child (void *closure)
{
  (void) closure;
  if (vfork_word () != 0)
    return 1;
  pid_t pid = vfork ();
  if (pid == 0)
    _exit (vfork_word () != 0 ? 0 : 2);
  if (pid < 0)
    return 3;
  int status;
  if (waitpid (pid, &status, 0) != pid || !WIFEXITED (status)
      || WEXITSTATUS (status) != 0)
    return 4;
  if (vfork_word () != 0)
    return 5;
  return 0;
}

/* vfork in a process made by clone without CLONE_VM.  */
static void
do_forklike_clone (struct support_stack *stack)
{
  pid_t pid = xclone (forklike_child, NULL, stack->stack, stack->size,
		      SIGCHLD);
  int status;
  xwaitpid (pid, &status, 0);
  TEST_VERIFY (WIFEXITED (status));
  /* 5: the vfork word stayed set in the process after its vfork child
     exited, so it no longer used its own area.  */
  TEST_COMPARE (WEXITSTATUS (status), 0);
}

static int
do_test (void)
{
  if (__rseq_size == 0)
    FAIL_UNSUPPORTED ("glibc did not register rseq (kernel support or"
		      " glibc.pthread.rseq tunable)");
  if (!VFORK_MARKS_CHILD)
    FAIL_UNSUPPORTED ("the vfork and clone of this port do not mark their"
		      " children yet");
  printf ("info: __rseq_size: %u, __rseq_offset: %td\n",
	  __rseq_size, __rseq_offset);

  cpu_set_t allowed;
  if (sched_getaffinity (0, sizeof (allowed), &allowed) != 0)
    FAIL_EXIT1 ("sched_getaffinity: %m");
  int cpus[2];
  int ncpus = 0;
  for (int i = 0; i < CPU_SETSIZE && ncpus < 2; i++)
    if (CPU_ISSET (i, &allowed))
      cpus[ncpus++] = i;
  TEST_VERIFY_EXIT (ncpus > 0);
  if (ncpus < 2)
    puts ("info: one CPU in the affinity mask, the children do not move");

  struct support_stack stack = support_stack_alloc (64 * 1024);

  for (int round = 0; round < 2 * ROUNDS; round++)
    {
      int use_clone = round % 2;
      int nested = round % 8 >= 4;
      int home = cpus[(round / 2) % ncpus];
      int other = ncpus < 2 ? -1 : cpus[1 - (round / 2) % 2];
      do_round (&stack, use_clone, home, other, nested);
    }

  do_forklike_clone (&stack);

  support_stack_free (&stack);
  return 0;
}

#include <support/test-driver.c>
