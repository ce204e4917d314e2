/* Test that dlclose clears rseq_cs pointing into the object it unmaps.
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

/* An inline per-CPU operation leaves the thread's rseq_cs pointing at
   its struct rseq_cs descriptor, in the object that contains the
   operation, until the kernel clears it at the thread's next preemption
   or signal.  If the object has been unmapped by then, the kernel's
   read of the descriptor fails and the thread is killed.  So dlclose
   must clear, in every thread, an rseq_cs that points into the object
   it unmaps, and leave every other rseq_cs alone.

   The kernel itself clears rseq_cs only on the owning thread's way back
   to user space, so the rseq_cs of a thread blocked in a system call
   cannot change but for dlclose.  Two threads are blocked in read while
   the main thread calls dlclose: one whose rseq_cs points at the
   module's descriptor, one whose rseq_cs points at a descriptor of this
   program.  The main thread's own rseq_cs points into the module too,
   although a preemption right before dlclose may clear it early.

   The module must be built with optimization (see Makefile): the
   operation is then inline, and its descriptor in the module.

   Makefile (sysdeps/unix/sysv/linux/Makefile, ifeq ($(subdir),misc)):

     tests += tst-rseq-dlclose
     modules-names += tst-rseq-dlclose-mod
     modules-names-tests += tst-rseq-dlclose-mod
     extra-test-objs += tst-rseq-dlclose-mod.os
     CFLAGS-tst-rseq-dlclose-mod.c += -O2
     $(objpfx)tst-rseq-dlclose.out: $(objpfx)tst-rseq-dlclose-mod.so

   No LDLIBS are needed: dlopen and the thread functions are in libc.  */

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <time.h>
#include <unistd.h>
#include <support/check.h>
#include <support/xdlfcn.h>
#include <support/xthread.h>
#include <support/xunistd.h>

#ifdef RSEQ_SIG

/* A descriptor of this program, of an empty critical section: the
   kernel finds every instruction outside it and clears rseq_cs, once
   it has checked that abort_ip follows the signature.  */
static const uint32_t main_signature[2] = { RSEQ_SIG, 0 };
static struct rseq_cs main_cs;

/* The address range of the module's loaded segments.  */
static uintptr_t mod_start, mod_end;

static bool
in_module (uint64_t addr)
{
  return addr >= mod_start && addr < mod_end;
}

/* The rseq_cs field of the calling thread's rseq area, which glibc
   registered at the thread pointer plus __rseq_offset.  */
static volatile uint64_t *
own_rseq_cs (void)
{
  struct rseq *area = rseq_area_pointer ();
  TEST_VERIFY_EXIT (area != NULL);
  return (volatile uint64_t *) ((char *) area
				+ offsetof (struct rseq, rseq_cs));
}

/* Find the loaded segments of the object that contains ADDR.  */
struct find_object
{
  uintptr_t addr;
  uintptr_t start;
  uintptr_t end;
  bool found;
};

static int
find_object_callback (struct dl_phdr_info *info, size_t size, void *closure)
{
  struct find_object *f = closure;
  uintptr_t start = UINTPTR_MAX, end = 0;
  (void) size;

  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_LOAD)
      {
	uintptr_t s = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	uintptr_t e = s + info->dlpi_phdr[i].p_memsz;
	if (s < start)
	  start = s;
	if (e > end)
	  end = e;
      }
  if (f->addr >= start && f->addr < end)
    {
      f->start = start;
      f->end = end;
      f->found = true;
      return 1;
    }
  return 0;
}

static bool
find_object (void *addr, uintptr_t *start, uintptr_t *end)
{
  struct find_object f = { .addr = (uintptr_t) addr };
  dl_iterate_phdr (find_object_callback, &f);
  *start = f.start;
  *end = f.end;
  return f.found;
}

/* A thread that blocks in read until the main thread writes to its
   pipe, with its rseq_cs as set before and by the main thread.  */
struct blocked
{
  int (*op) (void);		/* Run first, if not NULL.  */
  int op_ret;
  int op_errno;
  int pipe[2];
  pid_t tid;
  volatile uint64_t *rseq_cs;
  pthread_t thread;
};

static pthread_barrier_t barrier;

static void *
blocked_thread (void *closure)
{
  struct blocked *b = closure;
  b->tid = gettid ();
  b->rseq_cs = own_rseq_cs ();
  xpthread_barrier_wait (&barrier);
  /* Without a system call in between: the operation's rseq_cs stays
     until the thread blocks, and then until it wakes up.  */
  if (b->op != NULL)
    {
      b->op_ret = b->op ();
      b->op_errno = errno;
    }
  char c;
  TEST_COMPARE (read (b->pipe[0], &c, 1), 1);
  return NULL;
}

/* Wait until thread TID sleeps, as it does in read.  */
static void
wait_until_blocked (pid_t tid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/task/%d/stat", (int) tid);
  for (int i = 0; i < 10000; i++)
    {
      FILE *f = fopen (path, "r");
      if (f == NULL)
	FAIL_UNSUPPORTED ("cannot read %s: %m", path);
      char buf[512];
      size_t n = fread (buf, 1, sizeof buf - 1, f);
      fclose (f);
      buf[n] = '\0';
      /* The state follows the command name, in parentheses.  */
      char *p = strrchr (buf, ')');
      TEST_VERIFY_EXIT (p != NULL && p[1] == ' ');
      if (p[2] == 'S')
	return;
      usleep (1000);
    }
  FAIL_EXIT1 ("thread %d never blocked", (int) tid);
}

static void
start_blocked (struct blocked *b, int (*op) (void))
{
  b->op = op;
  xpipe (b->pipe);
  b->thread = xpthread_create (NULL, blocked_thread, b);
}

static void
stop_blocked (struct blocked *b)
{
  xwrite (b->pipe[1], "x", 1);
  xpthread_join (b->thread);
  xclose (b->pipe[0]);
  xclose (b->pipe[1]);
}

static int
do_test (void)
{
  if (__rseq_size == 0)
    FAIL_UNSUPPORTED ("rseq is not registered");
  main_cs.start_ip = (uintptr_t) &main_signature[1];
  main_cs.abort_ip = (uintptr_t) &main_signature[1];

  void *handle = xdlopen ("$ORIGIN/tst-rseq-dlclose-mod.so", RTLD_NOW);
  int (*mod_add) (void) = xdlsym (handle, "mod_add");
  struct rseq_cs *(*mod_empty_cs) (void) = xdlsym (handle, "mod_empty_cs");
  bool mod_inline = *(int *) xdlsym (handle, "mod_inline_sections");
  TEST_VERIFY_EXIT (find_object (mod_add, &mod_start, &mod_end));
  TEST_VERIFY (in_module ((uintptr_t) mod_empty_cs ()));
  TEST_VERIFY (!in_module ((uintptr_t) &main_cs));

  /* Bind read now, so that the threads do not block elsewhere on their
     way to it.  */
  int fds[2];
  char c;
  xpipe (fds);
  TEST_COMPARE (read (fds[0], &c, 0), 0);
  xclose (fds[0]);
  xclose (fds[1]);

  struct blocked holder, other;
  xpthread_barrier_init (&barrier, NULL, 3);
  start_blocked (&holder, mod_add);
  start_blocked (&other, NULL);
  xpthread_barrier_wait (&barrier);
  xpthread_barrier_destroy (&barrier);

  /* The descriptor of the module's operation, as the main thread's
     rseq_cs shows it after the operation, unless a preemption cleared
     it first.  */
  volatile uint64_t *main_rseq_cs = own_rseq_cs ();
  uint64_t mod_cs = 0;
  bool can_run = true;
  for (int i = 0; i < 1000 && mod_cs == 0; i++)
    {
      if (mod_add () != 0)
	{
	  /* Only if per-CPU operations cannot run at all.  */
	  TEST_COMPARE (errno, ENOSYS);
	  can_run = false;
	  break;
	}
      uint64_t cs = *main_rseq_cs;
      if (in_module (cs))
	mod_cs = cs;
    }
  if (mod_cs == 0)
    {
      if (can_run && mod_inline)
	FAIL ("rseq_cs never pointed into the module after its inline "
	      "operation");
      printf ("info: %s: rseq_cs set by hand\n",
	      can_run ? "the module's operation is not inline"
	      : "per-CPU operations cannot run");
      mod_cs = (uintptr_t) mod_empty_cs ();
    }
  TEST_VERIFY (in_module (mod_cs));

  /* The holder ran the module's operation before blocking.  */
  wait_until_blocked (holder.tid);
  wait_until_blocked (other.tid);
  if (holder.op_ret != 0)
    {
      TEST_COMPARE (holder.op_ret, -1);
      TEST_COMPARE (holder.op_errno, ENOSYS);
      TEST_VERIFY (!can_run);
    }
  if (*holder.rseq_cs == mod_cs)
    puts ("info: the blocked thread's rseq_cs was set by the module's "
	  "operation");
  else
    *holder.rseq_cs = mod_cs;
  *other.rseq_cs = (uintptr_t) &main_cs;

  /* Arm the main thread's rseq_cs once more right before dlclose.  */
  if (mod_add () != 0 || *main_rseq_cs != mod_cs)
    *main_rseq_cs = mod_cs;

  xdlclose (handle);
  uint64_t main_after = *main_rseq_cs;
  uint64_t holder_after = *holder.rseq_cs;
  uint64_t other_after = *other.rseq_cs;

  /* Nothing was tested if the module is still there.  */
  uintptr_t start, end;
  if (find_object ((void *) mod_start, &start, &end))
    FAIL_EXIT1 ("the module is still loaded after dlclose");

  /* A pointer left into the unmapped module would kill the thread at
     its next preemption: clear it after reporting it.  */
  if (main_after != 0)
    {
      FAIL ("main thread: rseq_cs is %#llx after dlclose, expected 0",
	    (unsigned long long int) main_after);
      *main_rseq_cs = 0;
    }
  if (holder_after != 0)
    {
      FAIL ("blocked thread: rseq_cs is %#llx after dlclose, expected 0",
	    (unsigned long long int) holder_after);
      *holder.rseq_cs = 0;
    }
  if (other_after != (uintptr_t) &main_cs)
    FAIL ("blocked thread: rseq_cs is %#llx after dlclose, expected "
	  "%p (not in the module)", (unsigned long long int) other_after,
	  &main_cs);

  stop_blocked (&holder);
  stop_blocked (&other);

  /* Sleep, so that the kernel looks at the main thread's rseq_cs
     again.  */
  struct timespec ts = { 0, 10 * 1000 * 1000 };
  nanosleep (&ts, NULL);
  return 0;
}

#else /* !RSEQ_SIG */

static int
do_test (void)
{
  FAIL_UNSUPPORTED ("no rseq on this architecture");
}

#endif /* !RSEQ_SIG */

#include <support/test-driver.c>
