/* A sequence whose CPU changed never commits.  (a) The thread moves to
   another CPU between reading its CPU and the sequence: the CPU check
   aborts it.  (b) The thread is moved while it is inside the sequence
   (held there by an injected delay after the CPU check): the kernel
   aborts it on the way back to user space.  Nothing is written.  On
   this host kernel, without cpu_opv, the operations' fallback cannot
   run either, so (a) also holds for the whole operation.  */
#include "rseq-test.h"
#include "percpu.h"
#include <pthread.h>

static int cpu_a = -1, cpu_b = -1;
static volatile pid_t victim_tid;
static volatile int in_sequence;

static void
pin (pid_t tid, int cpu)
{
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  if (sched_setaffinity (tid, sizeof set, &set) != 0)
    FAIL ("sched_setaffinity %d to CPU %d: %s", tid, cpu, strerror (errno));
}

static void
check_moved_before_sequence (int field)
{
  pin (0, cpu_a);
  int cpu = rseq_percpu_current_cpu (field);
  CHECK (cpu >= 0);
  pin (0, cpu_b);
  intptr_t v = 1, v2 = 0;
  char dst[8] = "", src[8] = "abc";
  if (field == RSEQ_PERCPU_INDEX_CPU_ID)
    {
      CHECK (rseq_percpu_addv (field, &v, 1, cpu) < 0);
      CHECK (rseq_percpu_cmpeqv_storev (field, &v, 1, 2, cpu) < 0);
      CHECK (rseq_percpu_cmpeqv_trystorev_storev (field, &v, 1, &v2, 3, 2,
						   cpu) < 0);
      CHECK (rseq_percpu_cmpeqv_trymemcpy_storev (field, &v, 1, dst, src, 4,
						   2, cpu) < 0);
      CHECK_EQ (v, 1);
    }
  else
    /* mm_cid follows the thread, not the CPU: a single thread keeps
       mm_cid 0 after moving, and the sequence commits.  */
    CHECK_EQ (rseq_percpu_addv (field, &v, 1, cpu), 0);
}

static void *
mover (void *arg)
{
  (void) arg;
  while (!in_sequence)
    usleep (1000);
  usleep (20000);
  pin (victim_tid, cpu_b);
  return NULL;
}

static void
check_moved_inside_sequence (void)
{
  pin (0, cpu_a);
  victim_tid = gettid ();
  pthread_t t;
  CHECK (pthread_create (&t, NULL, mover, NULL) == 0);

  intptr_t v = 1;
  int cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
  CHECK_EQ (cpu, cpu_a);
  /* Point 2 is after the CPU check, before the commit: spin there long
     enough for the mover to act (hundreds of milliseconds).  */
  percpu_inject_loops[2] = 400 * 1000 * 1000;
  percpu_inject_refill ();
  in_sequence = 1;
  /* One sequence alone: rseq_percpu_addv would retry after the abort
     (and may commit if the abort was a plain preemption on CPU A).  */
  int ret = __rseq_percpu_try_addv (RSEQ_PERCPU_INDEX_CPU_ID, &v, 1, cpu);
  percpu_inject_loops[2] = 0;
  CHECK (pthread_join (t, NULL) == 0);
  if (ret >= 0)
    FAIL ("sequence committed (ret %d, v %ld) after moving to CPU %d",
	  ret, (long) v, sched_getcpu ());
  CHECK_EQ (v, 1);
  CHECK_EQ (sched_getcpu (), cpu_b);
}

int
main (void)
{
  require_kernel_rseq ();
  cpu_set_t allowed;
  CHECK (sched_getaffinity (0, sizeof allowed, &allowed) == 0);
  for (int i = 0; i < CPU_SETSIZE; i++)
    if (CPU_ISSET (i, &allowed))
      {
	if (cpu_a < 0)
	  cpu_a = i;
	else if (cpu_b < 0)
	  cpu_b = i;
      }
  if (cpu_b < 0)
    UNSUPPORTED ("needs two CPUs in the affinity mask");

  check_moved_before_sequence (RSEQ_PERCPU_INDEX_CPU_ID);
  if (__rseq_size >= 28)
    check_moved_before_sequence (RSEQ_PERCPU_INDEX_MM_CID);
  check_moved_inside_sequence ();
  CHECK (sched_setaffinity (0, sizeof allowed, &allowed) == 0);
  return 0;
}
