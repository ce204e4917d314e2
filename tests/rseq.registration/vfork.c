/* A vfork child, and a clone child with CLONE_VM | CLONE_VFORK and no
   CLONE_SETTLS, runs on its parent's rseq area without a registration
   of its own.  After the child moves to another CPU, getcpu,
   sched_getcpu, rseq_area_cpu and the per-CPU operations must not
   report or commit on the parent's CPU; and when the parent resumes,
   its registration, its cpu_id and its per-CPU operations must be
   intact.  Repeated so that the parent resumes both after sleeping and
   without having been scheduled out.

   Neither process may write the fields the kernel owns (cpu_id_start,
   cpu_id, node_id, mm_cid): Linux 6.19 and later kill a task whose
   fields changed (always for registrations over 32 bytes, for all of
   them with CONFIG_DEBUG_RSEQ).  The child's calls tell it apart through
   glibc's own word before the area instead, so the fields must read in
   the child exactly as the pinned parent left them.  Every few rounds
   the child vforks a grandchild first (nested vfork): the child's view
   must survive its own child.  Last, a process made by clone without
   CLONE_VM vforks, and must use its own area again afterwards.  */
#include "rseq-test.h"
#include <sys/rseq-percpu.h>
#include <signal.h>
#include <sys/wait.h>

#define ROUNDS 200

/* What the child saw; the child shares the parent's memory.  */
struct child_view
{
  int moved;
  int getcpu_cpu;
  int sched_cpu;
  int syscall_cpu;
  int area_cpu;
  int percpu_cpu;
  int percpu_errno;
  int addv_ret;
  uint32_t vfork_word;		/* glibc's word in the child.  */
  uint32_t vfork_word_after_grandchild;
  int grandchild_status;
  struct kernel_fields fields_start, fields_end;
};

static volatile struct child_view view;
static intptr_t counter;

static void
pin (int cpu)
{
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  if (sched_setaffinity (0, sizeof set, &set) != 0)
    FAIL ("sched_setaffinity (%d): %s", cpu, strerror (errno));
}

/* Pin to CPU and wait until the area says the thread runs there.  */
static void
move_to (int cpu)
{
  pin (cpu);
  while (sched_getcpu () != cpu)
    sched_yield ();
}

/* Runs in the vfork child: move to OTHER, then look.  Only stores to
   memory and calls that return; leaves with _exit.  */
static void
child (int home, int other, int nested)
{
  unsigned int cpu = 0;
  cpu_set_t set;

  view.fields_start = raw_kernel_fields ();
  view.vfork_word = raw_area_word (RSEQ_AREA_VFORK_OFFSET);
  view.grandchild_status = -1;
  if (nested)
    {
      /* The grandchild looks up its CPU too, then leaves; the child
	 resumes as a vfork child still.  */
      pid_t pid = vfork ();
      if (pid == 0)
	_exit (sched_getcpu () >= 0 && rseq_area_cpu () >= 0 ? 0 : 1);
      int status = -1;
      if (pid > 0 && waitpid (pid, &status, 0) != pid)
	status = -1;
      view.grandchild_status = status;
      view.vfork_word_after_grandchild
	= raw_area_word (RSEQ_AREA_VFORK_OFFSET);
    }

  CPU_ZERO (&set);
  CPU_SET (other, &set);
  view.moved = sched_setaffinity (0, sizeof set, &set) == 0;
  view.syscall_cpu = syscall_getcpu (&cpu, NULL) == 0 ? (int) cpu : -1;
  view.getcpu_cpu = getcpu (&cpu, NULL) == 0 ? (int) cpu : -1;
  view.sched_cpu = sched_getcpu ();
  view.area_cpu = rseq_area_cpu ();
  errno = 0;
  view.percpu_cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
  view.percpu_errno = errno;
  /* The parent's CPU, as a caller holding a stale CPU number would
     pass it: must not commit here.  */
  view.addv_ret = rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &counter, 1,
				    home);
  view.fields_end = raw_kernel_fields ();
  _exit (0);
}

struct clone_args_pair
{
  int home, other, nested;
};

static int
clone_child (void *arg)
{
  struct clone_args_pair *p = arg;
  child (p->home, p->other, p->nested);
  return 0;
}

/* The child's stack for clone.  */
static char clone_stack[256 * 1024] __attribute__ ((aligned (16)));

/* Start a child that shares the caller's memory and thread descriptor
   while the caller waits: vfork, or clone (USE_CLONE).  */
static pid_t
start_child (int use_clone, int home, int other, int nested)
{
  if (use_clone)
    {
      struct clone_args_pair p = { home, other, nested };
      return clone (clone_child, clone_stack + sizeof clone_stack,
		    CLONE_VM | CLONE_VFORK | SIGCHLD, &p);
    }
  pid_t pid = vfork ();
  if (pid == 0)
    child (home, other, nested);
  return pid;
}

static void
check_fields_equal (const char *what, struct kernel_fields a,
		    struct kernel_fields b)
{
  if (memcmp (&a, &b, sizeof a) != 0)
    FAIL ("%s: kernel-owned fields changed: cpu_id_start %u -> %u, "
	  "cpu_id %d -> %d, node_id %u -> %u, mm_cid %u -> %u", what,
	  a.cpu_id_start, b.cpu_id_start, (int) a.cpu_id, (int) b.cpu_id,
	  a.node_id, b.node_id, a.mm_cid, b.mm_cid);
}

static void
check_child (int other, int nested, struct kernel_fields before)
{
  /* The parent stayed pinned, single-threaded, on its CPU: the kernel
     rewrote nothing that differs, and the unregistered child cannot
     have the kernel write its area.  */
  check_fields_equal ("parent before vfork / child at start", before,
		      view.fields_start);
  check_fields_equal ("child at start / child at end", view.fields_start,
		      view.fields_end);
  CHECK (view.vfork_word != 0);
  if (nested)
    {
      CHECK (WIFEXITED (view.grandchild_status)
	     && WEXITSTATUS (view.grandchild_status) == 0);
      CHECK (view.vfork_word_after_grandchild != 0);
    }
  CHECK_EQ (view.moved, 1);
  CHECK_EQ (view.syscall_cpu, other);
  CHECK_EQ (view.getcpu_cpu, other);
  CHECK_EQ (view.sched_cpu, other);
  CHECK_EQ (view.area_cpu, other);
  CHECK_EQ (view.percpu_cpu, -1);
  CHECK_EQ (view.percpu_errno, ENOSYS);
  CHECK (view.addv_ret < 0);
  CHECK_EQ (counter, 0);
}

static void
check_parent (int home)
{
  unsigned int cpu;
  CHECK (syscall_getcpu (&cpu, NULL) == 0);
  CHECK_EQ (cpu, home);
  CHECK_EQ (raw_area_cpu_id (), home);
  CHECK_EQ (raw_area_word (RSEQ_AREA_VFORK_OFFSET), 0);
  CHECK_EQ (sched_getcpu (), home);
  CHECK (getcpu (&cpu, NULL) == 0);
  CHECK_EQ (cpu, home);
  CHECK_EQ (rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID), home);
  int ret;
  do
    ret = rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &counter, 1, home);
  while (ret < 0 && errno == EAGAIN);
  CHECK_EQ (ret, 0);
  CHECK_EQ (counter, 1);
  counter = 0;
}

/* A clone child with CLONE_VFORK but its own copy of memory: its area
   is its own and registered, like a fork child's.  Exits 0 if so.  */
static int
own_memory_child (void *arg)
{
  unsigned int cpu;
  (void) arg;
  if (syscall_getcpu (&cpu, NULL) != 0)
    return 2;
  return raw_area_cpu_id () == (int) cpu ? 0 : 1;
}

/* A process made by clone without CLONE_VM (fork-like, without glibc's
   bookkeeping: its descriptor is a copy of its creator's, with the
   creator's cached thread ID) vforks: after its child exits, its own
   area must be in use again.  Exits 0 if so.  */
static int
forklike_vfork_child (void *arg)
{
  (void) arg;
  if (raw_area_word (RSEQ_AREA_VFORK_OFFSET) != 0)
    return 1;
  pid_t pid = vfork ();
  if (pid == 0)
    _exit (raw_area_word (RSEQ_AREA_VFORK_OFFSET) != 0 ? 0 : 2);
  int status;
  if (pid < 0 || waitpid (pid, &status, 0) != pid || !WIFEXITED (status)
      || WEXITSTATUS (status) != 0)
    return 3;
  if (raw_area_word (RSEQ_AREA_VFORK_OFFSET) != 0)
    return 4;
  return rseq_area_pointer () != NULL ? 0 : 5;
}

/* clone with CLONE_VFORK where the child does not share the thread
   descriptor: the parent's hook must leave the area and the result
   alone, on failure as on success.  */
static void
check_clone_without_shared_area (int home)
{
  move_to (home);

  /* CLONE_SIGHAND without CLONE_VM: EINVAL, with CLONE_VFORK set.  */
  errno = 0;
  pid_t pid = clone (own_memory_child, clone_stack + sizeof clone_stack,
		     CLONE_VFORK | CLONE_SIGHAND | SIGCHLD, NULL);
  CHECK_EQ (pid, -1);
  CHECK_EQ (errno, EINVAL);
  check_parent (home);

  pid = clone (own_memory_child, clone_stack + sizeof clone_stack,
	       CLONE_VFORK | SIGCHLD, NULL);
  CHECK (pid > 0);
  int status;
  CHECK (waitpid (pid, &status, 0) == pid);
  CHECK (WIFEXITED (status));
  CHECK_EQ (WEXITSTATUS (status), 0);
  check_parent (home);
  check_thread_registered ("parent after clone (CLONE_VFORK)");
}

int
main (void)
{
  require_kernel_rseq ();
  if (!rseq_area_registered ())
    UNSUPPORTED ("glibc did not register rseq (__rseq_size %u)", __rseq_size);

  cpu_set_t allowed;
  CHECK (sched_getaffinity (0, sizeof allowed, &allowed) == 0);
  int cpus[2], n = 0;
  for (int i = 0; i < CPU_SETSIZE && n < 2; i++)
    if (CPU_ISSET (i, &allowed))
      cpus[n++] = i;
  if (n < 2)
    UNSUPPORTED ("needs two CPUs in the affinity mask, has %d", n);

  for (int round = 0; round < ROUNDS; round++)
    {
      int home = cpus[round % 2], other = cpus[1 - round % 2];
      move_to (home);
      memset ((void *) &view, 0, sizeof view);
      int nested = round % 8 >= 4;
      struct kernel_fields before = raw_kernel_fields ();
      pid_t pid = start_child (round % 4 >= 2, home, other, nested);
      CHECK (pid > 0);
      int status;
      CHECK (waitpid (pid, &status, 0) == pid);
      CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0);
      check_child (other, nested, before);
      check_parent (home);
      check_thread_registered ("parent after vfork");
    }
  check_clone_without_shared_area (cpus[0]);

  /* 4: the vfork word stayed set in the fork-like process.  */
  pid_t pid = clone (forklike_vfork_child, clone_stack + sizeof clone_stack,
		     SIGCHLD, NULL);
  CHECK (pid > 0);
  int status;
  CHECK (waitpid (pid, &status, 0) == pid);
  CHECK (WIFEXITED (status));
  CHECK_EQ (WEXITSTATUS (status), 0);
  return 0;
}
