/* The area is registered and current inside signal handlers: on the
   normal stack, on an alternate stack, in the main thread and in other
   threads, for signals sent by the thread itself and by others.  */
#include "rseq-test.h"
#include <pthread.h>
#include <signal.h>

static volatile sig_atomic_t handled;

static void
handler (int sig)
{
  (void) sig;
  /* check_thread_registered uses only async-signal-safe calls unless
     it fails, and then the test ends anyway.  */
  check_thread_registered ("signal handler");
  handled++;
}

static void
exercise_current_thread (const char *where)
{
  handled = 0;
  CHECK (raise (SIGUSR1) == 0);
  CHECK (pthread_kill (pthread_self (), SIGUSR2) == 0);
  if (handled != 2)
    FAIL ("%s: %d handlers ran", where, (int) handled);
}

static void *
worker (void *arg)
{
  (void) arg;
  exercise_current_thread ("thread");

  /* Now on an alternate signal stack.  */
  static char stack[1 << 16];
  stack_t ss = { .ss_sp = stack, .ss_size = sizeof stack };
  CHECK (sigaltstack (&ss, NULL) == 0);
  exercise_current_thread ("thread, alternate stack");
  return NULL;
}

static void *
sleeper (void *arg)
{
  /* Woken by signals from the main thread; each handler checks.  */
  for (int i = 0; i < 100; i++)
    usleep (100);
  return arg;
}

int
main (void)
{
  require_kernel_rseq ();

  struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_ONSTACK };
  sigemptyset (&sa.sa_mask);
  CHECK (sigaction (SIGUSR1, &sa, NULL) == 0);
  CHECK (sigaction (SIGUSR2, &sa, NULL) == 0);

  exercise_current_thread ("main");

  pthread_t t;
  CHECK (pthread_create (&t, NULL, worker, NULL) == 0);
  CHECK (pthread_join (t, NULL) == 0);

  /* Signals delivered asynchronously to a thread that is sleeping.  */
  handled = 0;
  CHECK (pthread_create (&t, NULL, sleeper, NULL) == 0);
  for (int i = 0; i < 50; i++)
    {
      pthread_kill (t, SIGUSR1);
      usleep (50);
    }
  CHECK (pthread_join (t, NULL) == 0);
  if (handled == 0)
    FAIL ("no asynchronous signal was handled");
  return 0;
}
