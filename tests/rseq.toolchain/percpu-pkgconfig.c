/* A user of the installed per-CPU library: built with
   PREFIX/bin/rseq-gcc and `pkg-config --cflags --libs rseq-percpu`
   (install-check.sh).  Threads add to a per-CPU counter and pass nodes
   through a per-CPU list; the sum and the node count must come out
   exact.  Exits 77 when per-CPU operations cannot run here.  */
/* rseq-test: host-only: built by install-check.sh against an installed
   tree, with the host's pkg-config */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <percpu.h>

#define THREADS 4
#define ADDS 100000
#define NODES 64

static struct percpu_counter counter;
static struct percpu_list list;
static struct percpu_node nodes[NODES];

/* Each thread adds ADDS and moves a node from list to list ADDS / 10
   times; an add or a pop that cannot run is an error.  */
static void *
worker (void *arg)
{
  (void) arg;
  for (int i = 0; i < ADDS; i++)
    {
      if (percpu_counter_add (&counter, 1) != 0)
	return (void *) 1;
      if (i % 10 == 0)
	{
	  struct percpu_node *n = percpu_list_pop (&list);
	  if (n == NULL && errno != 0)
	    return (void *) 1;
	  if (n != NULL && percpu_list_push (&list, n) < 0)
	    return (void *) 1;
	}
    }
  return NULL;
}

/* The nodes left on every CPU's list, taken off one by one.  */
static int
count_nodes (void)
{
  int count = 0;
  for (int cpu = 0; cpu < list.nr_slots; cpu++)
    while (percpu_list_pop_slot (&list, cpu) != NULL)
      count++;
  return count;
}

int
main (void)
{
  pthread_t threads[THREADS];
  int failed = 0;

  if (percpu_counter_init (&counter, RSEQ_PERCPU_INDEX_CPU_ID) != 0
      || percpu_list_init (&list, RSEQ_PERCPU_INDEX_CPU_ID) != 0)
    {
      perror ("percpu init");
      return errno == ENOSYS ? 77 : 1;
    }
  for (int i = 0; i < NODES; i++)
    percpu_list_push_slot (&list, i % list.nr_slots, &nodes[i]);
  for (int i = 0; i < THREADS; i++)
    pthread_create (&threads[i], NULL, worker, NULL);
  for (int i = 0; i < THREADS; i++)
    {
      void *ret;
      pthread_join (threads[i], &ret);
      failed |= ret != NULL;
    }
  long sum = (long) percpu_counter_sum (&counter);
  int left = count_nodes ();
  printf ("sum=%ld nodes=%d\n", sum, left);
  return failed || sum != (long) THREADS * ADDS || left != NODES;
}
