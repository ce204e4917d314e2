/* The x86_64-linux7 VM runs the kind of kernel it should: Linux 7's rseq
   ABI as seen from user space, and the enforcement of the read-only
   fields.

     linux7-smoke info           uname release; AT_RSEQ_FEATURE_SIZE is 33
                                 and AT_RSEQ_ALIGN 64; rseq debug mode on
                                 (debugfs); prctl PR_RSEQ_SLICE_EXTENSION
                                 and rseq_slice_yield (471) exist
     linux7-smoke enforce LEN    a child registers its own LEN-byte area
                                 (32: legacy, checked only in debug mode;
                                 64: v2, always checked), writes cpu_id and
                                 migrates: the kernel must kill it with
                                 SIGSEGV.  FAIL if it survives.
     linux7-smoke control LEN    the same without the write: the child must
                                 survive (so that enforce's SIGSEGV comes
                                 from the write); for LEN 64 the kernel
                                 must offer the time slice extension
     linux7-smoke old-mark       glibc's vfork mark before the series' vfork patch, done
                                 by hand on glibc's own registration: the
                                 vfork child stores -2 in cpu_id, the
                                 parent copies cpu_id_start back when it
                                 resumes.  The child also moves the
                                 parent to another CPU, as the scheduler
                                 may while the parent waits: the kernel
                                 then rewrites the IDs on the parent's
                                 way back and must kill it with SIGSEGV
                                 (that is why 0021 exists).  Resumed on
                                 the same CPU, the parent would escape:
                                 a syscall return rewrites nothing then.
     linux7-smoke vfork          the same vfork and move without the
                                 store: the parent survives

   The child is this program again, started with
   GLIBC_TUNABLES=glibc.pthread.rseq=0 so that glibc registers no area of
   its own (if glibc registered one all the same, the child unregisters
   it).  It needs two CPUs: a v2 area's fields are checked when the IDs
   change, which a migration guarantees.  Builds with any glibc >= 2.35
   (the host's, static, or rseq-gcc).  Exit 0 pass, 77 unsupported
   (reason on the last line), else fail.  */
/* rseq-test: host-only: checks Linux 7's rseq ABI in the x86_64-linux7
   VM (rseq.linux7); the cross VMs run Linux 6.12 */

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef AT_RSEQ_FEATURE_SIZE
# define AT_RSEQ_FEATURE_SIZE 27
#endif
#ifndef AT_RSEQ_ALIGN
# define AT_RSEQ_ALIGN 28
#endif
#ifndef PR_RSEQ_SLICE_EXTENSION
# define PR_RSEQ_SLICE_EXTENSION 79
# define PR_RSEQ_SLICE_EXTENSION_GET 1
#endif
/* x86_64 and i386 alike.  */
#define NR_rseq_slice_yield 471
#define FLAG_UNREGISTER 1
#define CS_FLAG_SLICE_EXT_AVAILABLE (1U << 4)

/* Linux 7's struct rseq (uapi/linux/rseq.h), padded to 64 bytes: a
   64-byte registration is a v2 one (longer than the original 32 bytes,
   at least AT_RSEQ_FEATURE_SIZE), 64-aligned as AT_RSEQ_ALIGN asks.  */
struct area
{
  uint32_t cpu_id_start;
  uint32_t cpu_id;
  uint64_t rseq_cs __attribute__ ((aligned (8)));
  uint32_t flags;
  uint32_t node_id;
  uint32_t mm_cid;
  uint32_t slice_ctrl;
  uint8_t reserved;
} __attribute__ ((aligned (64)));

static struct area area;

static int failures;

static void
check (int ok, const char *what)
{
  printf ("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok)
    failures++;
}

static long
sys_rseq (void *addr, unsigned int len, int flags, uint32_t sig)
{
  return syscall (SYS_rseq, addr, len, flags, sig);
}

static int
info (void)
{
  struct utsname u;
  char text[128];
  unsigned long feature = getauxval (AT_RSEQ_FEATURE_SIZE);
  unsigned long align = getauxval (AT_RSEQ_ALIGN);

  uname (&u);
  printf ("uname release: %s\n", u.release);
  printf ("AT_RSEQ_FEATURE_SIZE=%lu AT_RSEQ_ALIGN=%lu\n", feature, align);
  check (feature == 33, "AT_RSEQ_FEATURE_SIZE is 33 (slice_ctrl and the reserved byte)");
  check (align == 64, "AT_RSEQ_ALIGN is 64");

  /* Debug mode: the static key rseq_debug_enabled, on from boot
     (CONFIG_RSEQ_DEBUG_DEFAULT_ENABLE).  */
  if (mount ("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) != 0 && errno != EBUSY)
    printf ("debugfs: %s (not checked)\n", strerror (errno));
  FILE *f = fopen ("/sys/kernel/debug/rseq/debug", "r");
  if (f == NULL)
    printf ("/sys/kernel/debug/rseq/debug: %s (not checked)\n", strerror (errno));
  else
    {
      if (fgets (text, sizeof text, f) == NULL)
	text[0] = '\0';
      fclose (f);
      text[strcspn (text, "\n")] = '\0';
      printf ("rseq debug mode: %s\n", text);
      check (strcmp (text, "1") == 0, "rseq debug mode is on");
    }

  errno = 0;
  int state = prctl (PR_RSEQ_SLICE_EXTENSION, PR_RSEQ_SLICE_EXTENSION_GET, 0, 0, 0);
  printf ("prctl(PR_RSEQ_SLICE_EXTENSION, GET): %d (%s)\n", state,
	  state < 0 ? strerror (errno) : "ok");
  check (state >= 0, "prctl PR_RSEQ_SLICE_EXTENSION answers");
  errno = 0;
  long r = syscall (NR_rseq_slice_yield);
  printf ("rseq_slice_yield (471): %ld (%s)\n", r, r < 0 ? strerror (errno) : "ok");
  check (!(r < 0 && errno == ENOSYS), "rseq_slice_yield is a system call");
  return failures ? 1 : 0;
}

/* Leave the current CPU for another one of MASK.  */
static void
migrate (const cpu_set_t *mask, int from)
{
  cpu_set_t to;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (cpu != from && CPU_ISSET (cpu, mask))
      {
	CPU_ZERO (&to);
	CPU_SET (cpu, &to);
	sched_setaffinity (0, sizeof to, &to);
	return;
      }
}

/* The child: register AREA with LEN, write cpu_id if WRITE, migrate and
   sleep.  Exit 0 if it survives.  */
static int
child (unsigned int len, int write)
{
  cpu_set_t mask;
  static const unsigned int lengths[] = { 0, 32, 64, 128, 256 };

  if (sched_getaffinity (0, sizeof mask, &mask) != 0 || CPU_COUNT (&mask) < 2)
    {
      printf ("needs two CPUs\n");
      return 77;
    }
  long r = sys_rseq (&area, len, 0, RSEQ_SIG);
  if (r != 0 && errno == EINVAL && __rseq_size > 0)
    {
      /* glibc registered its area despite the tunable: unregister it,
	 trying the lengths it may have used.  */
      void *glibc_area = (char *) __builtin_thread_pointer () + __rseq_offset;
      for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
	{
	  unsigned int l = i == 0 ? __rseq_size : lengths[i];
	  if (sys_rseq (glibc_area, l, FLAG_UNREGISTER, RSEQ_SIG) == 0)
	    {
	      printf ("child: unregistered glibc's %u-byte area\n", l);
	      break;
	    }
	}
      r = sys_rseq (&area, len, 0, RSEQ_SIG);
    }
  if (r != 0)
    {
      printf ("child: rseq(%u bytes) failed: %s\n", len, strerror (errno));
      return 3;
    }
  int cpu = (int) ((volatile struct area *) &area)->cpu_id;
  printf ("child: registered %u bytes (%s), cpu_id %d, node_id %u, mm_cid %u, flags %#x\n",
	  len, len > 32 ? "v2" : "legacy", cpu, area.node_id, area.mm_cid, area.flags);
  if (cpu < 0 || (uint32_t) cpu != area.cpu_id_start)
    {
      printf ("child: the kernel did not set cpu_id/cpu_id_start\n");
      return 4;
    }
  if (len > 32 && !write && !(area.flags & CS_FLAG_SLICE_EXT_AVAILABLE))
    {
      printf ("child: no RSEQ_CS_FLAG_SLICE_EXT_AVAILABLE in a v2 area's flags\n");
      return 5;
    }
  fflush (stdout);
  if (write)
    ((volatile struct area *) &area)->cpu_id = (uint32_t) cpu + 1000;
  for (int i = 0; i < 20; i++)
    {
      struct timespec ts = { 0, 2 * 1000 * 1000 };
      migrate (&mask, sched_getcpu ());
      nanosleep (&ts, NULL);
      sched_yield ();
    }
  if (write)
    printf ("child: survived 20 migrations with cpu_id %u (cpu_id_start %u)\n",
	    area.cpu_id, area.cpu_id_start);
  return 0;
}

/* Run this program again as SELF MODE ARG1 ARG2 (ARG2 may be NULL)
   with the environment ENV (NULL: empty) in a process of its own;
   return its wait status.  */
static int
run_self (const char *self, const char *mode, const char *arg1,
	  const char *arg2, char *env)
{
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    {
      char *argv[] = { (char *) self, (char *) mode, (char *) arg1,
		       (char *) arg2, NULL };
      char *envp[] = { env, NULL };
      execve ("/proc/self/exe", argv, envp);
      execve (self, argv, envp);
      perror ("execve");
      _exit (126);
    }
  int status;
  if (pid < 0 || waitpid (pid, &status, 0) != pid)
    {
      perror ("fork/waitpid");
      exit (1);
    }
  return status;
}

/* Start the child with glibc's registration off; return its wait
   status.  */
static int
run_child (const char *self, const char *len, const char *what)
{
  return run_self (self, "child", len, what,
		   (char *) "GLIBC_TUNABLES=glibc.pthread.rseq=0");
}

/* The process of old-mark and vfork, with glibc's own registration:
   vfork a child that stores -2 (RSEQ_CPU_ID_REGISTRATION_FAILED) in the
   shared area's cpu_id if WRITE, as glibc's vfork hook did before patch
   0021; resume as the old parent did, copying cpu_id_start back over
   cpu_id; then migrate.  Exit 0 if it survives.  */
static int
vfork_child (int write)
{
  cpu_set_t mask;
  if (sched_getaffinity (0, sizeof mask, &mask) != 0 || CPU_COUNT (&mask) < 2)
    {
      printf ("needs two CPUs\n");
      return 77;
    }
  if (__rseq_size == 0)
    {
      printf ("glibc registered no rseq area\n");
      return 77;
    }
  int from = -1, to = -1;
  for (int i = 0; i < CPU_SETSIZE && to < 0; i++)
    if (CPU_ISSET (i, &mask))
      {
	if (from < 0)
	  from = i;
	else
	  to = i;
      }
  cpu_set_t from_set, to_set;
  CPU_ZERO (&from_set);
  CPU_SET (from, &from_set);
  CPU_ZERO (&to_set);
  CPU_SET (to, &to_set);
  if (sched_setaffinity (0, sizeof from_set, &from_set) != 0)
    return 3;
  volatile struct area *a
    = (volatile struct area *) ((char *) __builtin_thread_pointer () + __rseq_offset);
  printf ("vfork-child: glibc's area, %u bytes active, cpu_id %d\n",
	  __rseq_size, (int) a->cpu_id);
  fflush (stdout);
  pid_t parent = getpid ();
  pid_t pid = vfork ();
  if (pid == 0)
    {
      if (write)
	a->cpu_id = (uint32_t) -2;
      sched_setaffinity (parent, sizeof to_set, &to_set);
      _exit (0);
    }
  if (write)
    a->cpu_id = a->cpu_id_start;
  int resumed = sched_getcpu ();
  int status;
  if (pid < 0 || waitpid (pid, &status, 0) != pid)
    return 3;
  for (int i = 0; i < 20; i++)
    {
      struct timespec ts = { 0, 2 * 1000 * 1000 };
      migrate (&mask, sched_getcpu ());
      nanosleep (&ts, NULL);
    }
  printf ("vfork-child: vforked on CPU %d, resumed on %d, survived 20 migrations\n",
	  from, resumed);
  return 0;
}

/* old-mark (OLD) or vfork: run vfork_child in a process of its own,
   glibc's registration on, and check how it ended.  */
static int
check_vfork_mark (const char *self, int old)
{
  int status = run_self (self, "vfork-child", old ? "write" : "nowrite",
			 NULL, NULL);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 77)
    return 77;
  int killed = WIFSIGNALED (status) && WTERMSIG (status) == SIGSEGV;
  int survived = WIFEXITED (status) && WEXITSTATUS (status) == 0;
  if (old && killed)
    printf ("ok: the old vfork mark (the child's store to cpu_id) got the parent "
	    "killed with SIGSEGV\n");
  else if (!old && survived)
    printf ("ok: a vfork that leaves cpu_id alone keeps the parent alive\n");
  else
    {
      printf ("FAIL: %s: the process %s %d\n", old ? "old-mark" : "vfork",
	      WIFEXITED (status) ? "exited with" : "died of signal",
	      WIFEXITED (status) ? WEXITSTATUS (status) : WTERMSIG (status));
      return 1;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  if (argc == 2 && strcmp (argv[1], "info") == 0)
    return info ();
  if (argc == 4 && strcmp (argv[1], "child") == 0)
    return child (atoi (argv[2]), strcmp (argv[3], "write") == 0);
  if (argc == 3 && strcmp (argv[1], "vfork-child") == 0)
    return vfork_child (strcmp (argv[2], "write") == 0);
  if (argc == 2 && (strcmp (argv[1], "old-mark") == 0
		    || strcmp (argv[1], "vfork") == 0))
    return check_vfork_mark (argv[0], strcmp (argv[1], "old-mark") == 0);
  if (argc != 3 || (strcmp (argv[2], "32") != 0 && strcmp (argv[2], "64") != 0)
      || (strcmp (argv[1], "enforce") != 0 && strcmp (argv[1], "control") != 0))
    {
      fprintf (stderr, "usage: %s info | enforce 32|64 | control 32|64 | old-mark | vfork\n",
	       argv[0]);
      return 2;
    }

  int enforce = strcmp (argv[1], "enforce") == 0;
  int status = run_child (argv[0], argv[2], enforce ? "write" : "nowrite");
  if (WIFEXITED (status) && WEXITSTATUS (status) == 77)
    return 77;
  if (enforce)
    {
      if (WIFSIGNALED (status) && WTERMSIG (status) == SIGSEGV)
	{
	  printf ("ok: the kernel killed the child with SIGSEGV after it wrote cpu_id (%s bytes)\n",
		  argv[2]);
	  return 0;
	}
      if (WIFEXITED (status))
	printf ("FAIL: the kernel did not enforce the read-only cpu_id of a %s-byte area: "
		"the child exited with %d\n", argv[2], WEXITSTATUS (status));
      else
	printf ("FAIL: the child died of signal %d, not SIGSEGV\n", WTERMSIG (status));
      return 1;
    }
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    {
      printf ("ok: a %s-byte area left alone survives 20 migrations\n", argv[2]);
      return 0;
    }
  if (WIFEXITED (status))
    printf ("FAIL: the control child exited with %d\n", WEXITSTATUS (status));
  else
    printf ("FAIL: the control child died of signal %d\n", WTERMSIG (status));
  return 1;
}
