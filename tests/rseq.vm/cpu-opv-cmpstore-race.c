/* Two threads call cpu_opv_cmpstore (x, 0, their id, CPU 0) together on
   a fresh page that has only been read (the zero page is mapped there).
   The helper is one vector "if (*x == 0) *x = new" run atomically on
   CPU 0, so in every round exactly one thread succeeds and x holds its
   value.  A kernel that compares against the page pinned before the
   other thread's store replaced it lets both succeed.

     cpu-opv-cmpstore-race [ROUNDS]

   Exit: 0 pass, 1 fail, 77 unsupported (no cpu_opv).  */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/cpu_opv.h>
#include <sys/mman.h>
#include <unistd.h>

#define TARGET_CPU 0

struct race
{
  pthread_barrier_t start, done;
  intptr_t *volatile x;
  int result[2];
  int error[2];
  int stop;
};

struct racer_arg
{
  struct race *race;
  int me;
};

static void *
racer (void *arg)
{
  struct race *race = ((struct racer_arg *) arg)->race;
  int me = ((struct racer_arg *) arg)->me;

  for (;;)
    {
      pthread_barrier_wait (&race->start);
      if (race->stop)
        return NULL;
      race->result[me] = cpu_opv_cmpstore (race->x, 0, me + 1, TARGET_CPU);
      race->error[me] = errno;
      pthread_barrier_wait (&race->done);
    }
}

/* Count the threads that succeeded in this round and check *X.  */
static int
check_round (struct race *race, int round, int *errors)
{
  int successes = 0, winner = 0;

  for (int i = 0; i < 2; i++)
    {
      if (race->result[i] < 0)
        {
          if ((*errors)++ < 3)
            printf ("round %d: cpu_opv_cmpstore: %s\n", round,
                    strerror (race->error[i]));
        }
      else if (race->result[i] == 0)
        {
          successes++;
          winner = i + 1;
        }
    }
  if (successes == 1 && *race->x != winner)
    return -1;
  return successes;
}

int
main (int argc, char **argv)
{
  int rounds = argc > 1 ? atoi (argv[1]) : 500;
  long page = sysconf (_SC_PAGESIZE);
  struct race race = { .stop = 0 };
  struct racer_arg args[2] = { { &race, 0 }, { &race, 1 } };
  pthread_t threads[2];
  int both = 0, wrong = 0, errors = 0;

  setvbuf (stdout, NULL, _IOLBF, 0);
  if (cpu_opv (NULL, 0, 0, 0) == -1 && errno == ENOSYS)
    {
      printf ("this kernel has no cpu_opv\n");
      return 77;
    }
  pthread_barrier_init (&race.start, NULL, 3);
  pthread_barrier_init (&race.done, NULL, 3);
  for (int i = 0; i < 2; i++)
    pthread_create (&threads[i], NULL, racer, &args[i]);
  for (int round = 0; round < rounds; round++)
    {
      void *map = mmap (NULL, page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (map == MAP_FAILED)
        {
          perror ("mmap");
          return 1;
        }
      race.x = (intptr_t *) map + 4;
      (void) *(volatile intptr_t *) race.x;     /* map the zero page */
      pthread_barrier_wait (&race.start);
      pthread_barrier_wait (&race.done);
      int successes = check_round (&race, round, &errors);
      both += successes == 2;
      wrong += successes != 1 && successes != 2;
      munmap (map, page);
    }
  race.stop = 1;
  pthread_barrier_wait (&race.start);
  for (int i = 0; i < 2; i++)
    pthread_join (threads[i], NULL);
  printf ("cpu_opv_cmpstore on a fresh page: %d rounds: both succeeded in %d,"
          " none or wrong value in %d, errors %d\n",
          rounds, both, wrong, errors);
  return both || wrong || errors ? 1 : 0;
}
