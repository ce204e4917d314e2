/* A seccomp filter installed before exec makes rseq fail with ENOSYS
   (an emulator or old kernel) or EPERM (a container policy): glibc's
   registration fails cleanly, threads start, lookups stay right, and
   the rseq() wrapper reports the filter's errno.  */
#include "no-rseq.h"
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/wait.h>

/* The filter denies rseq to this ABI's system calls only (their numbers
   mean other calls under another AUDIT_ARCH).  */
#if defined __x86_64__
# define THIS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined __i386__
# define THIS_AUDIT_ARCH AUDIT_ARCH_I386
#elif defined __aarch64__ && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define THIS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined __arm__ && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define THIS_AUDIT_ARCH AUDIT_ARCH_ARM
#elif defined __powerpc64__ && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define THIS_AUDIT_ARCH AUDIT_ARCH_PPC64LE
#else
# error "seccomp.c: no AUDIT_ARCH for this ABI"
#endif

static void
deny_rseq (int err)
{
  struct sock_filter filter[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, THIS_AUDIT_ARCH, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_rseq, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {
    .len = sizeof filter / sizeof filter[0], .filter = filter
  };
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    FAIL ("PR_SET_NO_NEW_PRIVS: %s", strerror (errno));
  if (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
    {
      if (errno == EINVAL)
	exit (EXIT_UNSUPPORTED);
      FAIL ("PR_SET_SECCOMP: %s", strerror (errno));
    }
}

static void
run_denied (int err, const char *name)
{
  pid_t pid = fork ();
  CHECK (pid >= 0);
  if (pid == 0)
    {
      deny_rseq (err);
      char arg[16];
      snprintf (arg, sizeof arg, "%d", err);
      execl (self_path, self_path, "--child", arg, NULL);
      FAIL ("execl: %s", strerror (errno));
    }
  int status;
  CHECK (waitpid (pid, &status, 0) == pid);
  if (WIFEXITED (status) && WEXITSTATUS (status) == EXIT_UNSUPPORTED)
    UNSUPPORTED ("seccomp filters are not available");
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    FAIL ("child with rseq denied by %s failed, status %#x", name, status);
}

int
main (int argc, char **argv)
{
  if (argc > 2 && strcmp (argv[1], "--child") == 0)
    {
      int err = atoi (argv[2]);
      check_process_unregistered ();
      static struct rseq area __attribute__ ((aligned (32)));
      CHECK_ERRNO (rseq (&area, RSEQ_ORIGINAL_SIZE, 0, RSEQ_SIG), err);
      return 0;
    }

  require_kernel_rseq ();
  self_exe ();
  run_denied (ENOSYS, "ENOSYS");
  run_denied (EPERM, "EPERM");
  return 0;
}
