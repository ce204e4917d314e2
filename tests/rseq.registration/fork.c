/* A forked child inherits the registration (the kernel copies it), and
   threads the child creates register their own areas.  */
#include "rseq-test.h"
#include <pthread.h>
#include <sys/wait.h>

static void *
child_thread (void *arg)
{
  check_thread_registered ("thread in forked child");
  return arg;
}

static int
child (void)
{
  check_thread_registered ("forked child");
  pthread_t t;
  CHECK (pthread_create (&t, NULL, child_thread, NULL) == 0);
  CHECK (pthread_join (t, NULL) == 0);
  return 0;
}

static void *
fork_from_thread (void *arg)
{
  (void) arg;
  pid_t pid = fork ();
  CHECK (pid >= 0);
  if (pid == 0)
    _exit (child ());
  int status;
  CHECK (waitpid (pid, &status, 0) == pid);
  CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  return NULL;
}

int
main (void)
{
  require_kernel_rseq ();
  check_thread_registered ("parent");

  /* Fork from the main thread, then from a second thread.  */
  fork_from_thread (NULL);
  pthread_t t;
  CHECK (pthread_create (&t, NULL, fork_from_thread, NULL) == 0);
  CHECK (pthread_join (t, NULL) == 0);

  check_thread_registered ("parent after fork");
  return 0;
}
