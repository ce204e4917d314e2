/* After execve the kernel drops the registration; the new image's glibc
   must register again, from the main thread and from a thread that
   calls exec.  */
#include "rseq-test.h"
#include <pthread.h>
#include <sys/wait.h>

static char self[4096];

static void *
exec_from_thread (void *arg)
{
  (void) arg;
  execl (self, self, "--after-exec", NULL);
  FAIL ("execl: %s", strerror (errno));
}

static void
run_child (int from_thread)
{
  pid_t pid = fork ();
  CHECK (pid >= 0);
  if (pid == 0)
    {
      if (from_thread)
	{
	  pthread_t t;
	  CHECK (pthread_create (&t, NULL, exec_from_thread, NULL) == 0);
	  pause ();
	}
      execl (self, self, "--after-exec", NULL);
      FAIL ("execl: %s", strerror (errno));
    }
  int status;
  CHECK (waitpid (pid, &status, 0) == pid);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    FAIL ("exec'd child (from %s) failed, status %#x",
	  from_thread ? "thread" : "main thread", status);
}

int
main (int argc, char **argv)
{
  require_kernel_rseq ();
  if (argc > 1 && strcmp (argv[1], "--after-exec") == 0)
    {
      CHECK_EQ (__rseq_size, expected_rseq_size ());
      check_thread_registered ("after exec");
      return 0;
    }

  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  CHECK (n > 0);
  self[n] = '\0';
  run_child (0);
  run_child (1);
  return 0;
}
