/* GLIBC_TUNABLES=glibc.pthread.rseq=0: no registration, __rseq_size 0,
   cpu_id RSEQ_CPU_ID_REGISTRATION_FAILED, threads start, and the CPU
   and node lookups are still right.  */
#include "no-rseq.h"
#include <sys/wait.h>

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "--child") == 0)
    {
      check_process_unregistered ();
      return 0;
    }

  require_kernel_rseq ();
  pid_t pid = fork ();
  CHECK (pid >= 0);
  if (pid == 0)
    {
      setenv ("GLIBC_TUNABLES", "glibc.pthread.rseq=0", 1);
      execl (self_exe (), self_path, "--child", NULL);
      FAIL ("execl: %s", strerror (errno));
    }
  int status;
  CHECK (waitpid (pid, &status, 0) == pid);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    FAIL ("child with the tunable off failed, status %#x", status);
  return 0;
}
