/* A stand-in for glibc's <support/test-driver.c> (see check.h): the
   main program of a test that defines do_test.  As glibc's driver does
   by default, it runs do_test in a child process with core dumps off,
   unbuffered standard output and malloc's M_PERTURB at 42, and makes a
   recorded failure the test's status.  glibc's timeout is left to
   DejaGnu and the VMs (emulation is slower than glibc's limit allows),
   and the child stays in the driver's process group, so that a
   timeout's kill reaches it.  Only do_test is supported: a test that
   needs more of glibc's driver does not build.  */
#if defined TEST_FUNCTION || defined TEST_FUNCTION_ARGV || defined PREPARE \
  || defined CLEANUP_HANDLER || defined EXPECTED_STATUS \
  || defined EXPECTED_SIGNAL || defined TIMEOUT || defined TEST_NO_MALLOPT
# error "tests/lib/glibc-support runs do_test only"
#endif

#include <malloc.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <support/check.h>
#include <support/xunistd.h>

/* The child's exit status, as the test's status: a death by a signal
   is a failure.  */
static int
support_test_status (int wait_status)
{
  if (WIFEXITED (wait_status))
    return support_report_failure (WEXITSTATUS (wait_status));
  printf ("error: the test died of signal %d (%s)\n",
	  WTERMSIG (wait_status), strsignal (WTERMSIG (wait_status)));
  return 1;
}

/* No core files: tests crash on purpose (tst-malloc-percpu's double
   free), and DejaGnu runs them in out/tests.  */
static void
support_run_test (void)
{
  struct rlimit no_core = { 0, 0 };
  setrlimit (RLIMIT_CORE, &no_core);
  exit (do_test ());
}

int
main (void)
{
  support_failures_init ();
  setvbuf (stdout, NULL, _IONBF, 0);
  mallopt (M_PERTURB, 42);
  pid_t pid = xfork ();
  if (pid == 0)
    support_run_test ();
  int status;
  xwaitpid (pid, &status, 0);
  return support_test_status (status);
}
