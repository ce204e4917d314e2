/* A per-CPU operation must never kill a process that a plain retry
   loop would have kept alive.  Under SECCOMP_MODE_STRICT (read, write,
   exit and sigreturn only), an operation that needs its cpu_opv
   fallback (forced here with RSEQ_PERCPU_FALLBACK_ALWAYS) must find out
   without a system call that a kernel without cpu_opv has none, and
   fail with ENOSYS.  On a kernel with cpu_opv the fallback is the
   cpu_opv system call itself, which strict mode forbids like any
   other, so the test is unsupported there.  */
/* rseq-test: host-only: every cross VM's kernel has cpu_opv, where this
   test is unsupported by design */
#include "rseq-test.h"
#include <linux/seccomp.h>
#include <sys/cpu_opv.h>
#include <sys/prctl.h>
#include <sys/rseq-percpu.h>
#include <sys/wait.h>

static int (*volatile libc_addv) (int, intptr_t *, intptr_t, int)
  = rseq_percpu_addv;

/* In strict mode: no exit_group (what _exit uses), only exit.  */
static void
strict_exit (int status)
{
  syscall (SYS_exit, status);
  for (;;)
    ;
}

static void
strict_child (void)
{
  int cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
  intptr_t v = 0;
  cpu_set_t set;

  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  if (sched_setaffinity (0, sizeof set, &set) != 0)
    strict_exit (2);
  rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_ALWAYS);
  if (prctl (PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0)
    strict_exit (3);

  errno = 0;
  int inline_ret = rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &v, 1, cpu);
  int inline_errno = errno;
  errno = 0;
  int libc_ret = libc_addv (RSEQ_PERCPU_INDEX_CPU_ID, &v, 1, cpu);
  int libc_errno = errno;
  /* The inline attempt may commit before falling back; libc's goes
     straight to the fallback.  */
  int ok = (inline_ret == 0 || (inline_ret < 0 && inline_errno == ENOSYS))
	   && libc_ret < 0 && libc_errno == ENOSYS
	   && v == (inline_ret == 0);
  strict_exit (ok ? 0 : 1);
}

int
main (void)
{
  require_kernel_rseq ();
  if (rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID) < 0)
    UNSUPPORTED ("per-CPU operations cannot run (__rseq_size %u)",
		 __rseq_size);
  if (getauxval (AT_CPU_OPV) != 0)
    UNSUPPORTED ("the kernel has cpu_opv: its fallback is a system call");

  pid_t pid = fork ();
  CHECK (pid >= 0);
  if (pid == 0)
    strict_child ();
  int status;
  CHECK (waitpid (pid, &status, 0) == pid);
  if (WIFSIGNALED (status))
    FAIL ("the child was killed by signal %d: the operation made a system"
	  " call that strict mode forbids", WTERMSIG (status));
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    FAIL ("the child exited with status %d", WEXITSTATUS (status));
  return 0;
}
