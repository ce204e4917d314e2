/* param_test-style stress of the per-CPU structures: 6 x nproc threads
   each do REPS rounds on a per-CPU counter (by cpu_id and by mm_cid), a
   per-CPU spinlock guarding plain counters, a LIFO list, a pointer
   buffer and a record buffer, while
     - delays are injected at numbered points inside the sequences,
     - a signal thread hits random workers at a high rate, and the
       handlers themselves run per-CPU operations,
     - workers yield and move themselves between CPUs.
   Afterwards every total must be exact: no count lost or doubled, no
   node, pointer or record lost, duplicated or torn; and aborts must
   have happened (workers go on past REPS until one has, up to ten times
   as many rounds).  --long runs ten times as many rounds, --reps N
   runs N.

   --fallback-half puts every other worker in RSEQ_PERCPU_FALLBACK_ALWAYS
   mode, so the cpu_opv fallback and the rseq sequences work on the same
   structures at once.  Built with RSEQ_PERCPU_NO_INLINE, every operation
   of those workers goes through cpu_opv; the mode needs a kernel with
   cpu_opv (77 otherwise).  */
#include "rseq-test.h"
#include "percpu.h"
#include <pthread.h>
#include <signal.h>
#include <sys/cpu_opv.h>
#include <sys/sysinfo.h>

#define ITEMS 512

/* A record long enough that its copy is a good part of a round: the
   signals and preemptions that land inside it abort a sequence even
   when the sequences run in libc, where no delay is injected.  */
#define RECORD_WORDS 32

struct record
{
  intptr_t id;
  intptr_t words[RECORD_WORDS];	/* words[k] == ~id * (k + 1) */
};

static void
record_fill (struct record *r, intptr_t id)
{
  r->id = id;
  for (int k = 0; k < RECORD_WORDS; k++)
    r->words[k] = ~id * (k + 1);
}

/* Nonzero if R is one whole record as record_fill wrote it.  */
static int
record_whole (const struct record *r)
{
  if (r->id < 0 || r->id >= ITEMS)
    return 0;
  for (int k = 0; k < RECORD_WORDS; k++)
    if (r->words[k] != ~r->id * (k + 1))
      return 0;
  return 1;
}

static long reps = 2000000;
static int nthreads;
static int have_mm_cid;
static int fallback_half;
static unsigned long total_fallbacks;

static struct percpu_counter count_cpu, count_mm, count_sig;
static struct percpu_lock lock;
static intptr_t *locked_counts;	/* One per slot, guarded by LOCK.  */
static struct percpu_list list;
static struct percpu_node nodes[ITEMS];
static struct percpu_buffer pointers, records;
static intptr_t pointer_items[ITEMS];

static pthread_t *workers;
static volatile int running = 1;
static unsigned long signals_handled;
static unsigned long total_aborts;
static long total_rounds;
static int abort_seen;
static int workers_done;
/* Workers start when the chaos thread runs: with few rounds (--reps)
   under emulation they could otherwise all finish before it is first
   scheduled, and no signal would ever hit them.  */
static int chaos_running;
static cpu_set_t allowed;

static unsigned int
next_random (unsigned int *state)
{
  *state = *state * 1103515245u + 12345u;
  return *state >> 8;
}

static void
list_cycle (void)
{
  struct percpu_node *node = percpu_list_pop (&list);
  if (node != NULL && percpu_list_push (&list, node) < 0)
    FAIL ("list push: %s", strerror (errno));
}

static void
on_signal (int sig)
{
  (void) sig;
  int saved = errno;
  if (percpu_counter_add (&count_sig, 1) != 0)
    FAIL ("counter add in handler: %s", strerror (errno));
  __atomic_fetch_add (&signals_handled, 1, __ATOMIC_RELAXED);
  list_cycle ();
  errno = saved;
}

static void
move_somewhere (unsigned int *seed)
{
  cpu_set_t set;
  int n = CPU_COUNT (&allowed), pick = next_random (seed) % (n + 1);
  if (pick == n)
    set = allowed;		/* Sometimes let the scheduler choose.  */
  else
    {
      CPU_ZERO (&set);
      for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++)
	if (CPU_ISSET (cpu, &allowed) && seen++ == pick)
	  CPU_SET (cpu, &set);
    }
  if (sched_setaffinity (0, sizeof set, &set) != 0)
    FAIL ("sched_setaffinity: %s", strerror (errno));
}

static void
one_round (void)
{
  if (percpu_counter_add (&count_cpu, 1) != 0)
    FAIL ("counter add: %s", strerror (errno));
  if (have_mm_cid && percpu_counter_add (&count_mm, 1) != 0)
    FAIL ("mm_cid counter add: %s", strerror (errno));

  int cpu = percpu_lock_acquire (&lock);
  if (cpu < 0)
    FAIL ("lock: %s", strerror (errno));
  locked_counts[cpu]++;		/* Plain increment: the lock protects it.  */
  percpu_lock_release (&lock, cpu);

  list_cycle ();

  void *p;
  int ret = percpu_buffer_pop (&pointers, &p);
  if (ret < 0)
    FAIL ("buffer pop: %s", strerror (errno));
  if (ret == 0 && percpu_buffer_push (&pointers, p) != 0)
    FAIL ("buffer push failed");

  struct record r;
  ret = percpu_buffer_pop_record (&records, &r);
  if (ret < 0)
    FAIL ("record pop: %s", strerror (errno));
  if (ret == 0)
    {
      if (!record_whole (&r))
	FAIL ("torn record: id %ld", (long) r.id);
      if (percpu_buffer_push_record (&records, &r) != 0)
	FAIL ("record push failed");
    }
}

/* Through libc a sequence is a few instructions between calls, and no
   delay can be injected into it: under emulation REPS rounds can pass
   without a signal or preemption landing inside one.  So a worker goes
   on past REPS, up to EXTRA_ROUNDS_FACTOR times as many rounds, until
   some worker has seen an abort; the totals count the rounds run.  */
#define EXTRA_ROUNDS_FACTOR 10

static void
note_aborts (void)
{
  if (percpu_aborts + rseq_percpu_aborts () > 0)
    __atomic_store_n (&abort_seen, 1, __ATOMIC_RELAXED);
}

static int
keep_going_for_an_abort (long done)
{
  if (fallback_half || done >= reps * EXTRA_ROUNDS_FACTOR)
    return 0;
  note_aborts ();
  return !__atomic_load_n (&abort_seen, __ATOMIC_RELAXED);
}

static void *
worker (void *arg)
{
  unsigned int seed = (unsigned int) (uintptr_t) arg * 7919u + 1;
  int forced = fallback_half && (uintptr_t) arg % 2 == 1;
  if (forced
      && rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_ALWAYS) < 0)
    FAIL ("rseq_percpu_set_fallback: %s", strerror (errno));
  while (!__atomic_load_n (&chaos_running, __ATOMIC_ACQUIRE))
    sched_yield ();
  long i;
  for (i = 0; i < reps || keep_going_for_an_abort (i); i++)
    {
      one_round ();
      if (i % 64 == 0)
	{
	  note_aborts ();
	  sched_yield ();
	}
      if (i % 512 == 0)
	move_somewhere (&seed);
    }
  note_aborts ();
#ifdef RSEQ_PERCPU_NO_INLINE
  /* Every operation of a forced worker went through cpu_opv.  */
  if (forced && rseq_percpu_fallbacks () < (unsigned long) reps)
    FAIL ("forced worker: only %lu operations through cpu_opv",
	  rseq_percpu_fallbacks ());
#endif
  __atomic_fetch_add (&total_rounds, i, __ATOMIC_RELAXED);
  __atomic_fetch_add (&total_aborts, percpu_aborts + rseq_percpu_aborts (),
		      __ATOMIC_RELAXED);
  __atomic_fetch_add (&total_fallbacks, rseq_percpu_fallbacks (),
		      __ATOMIC_RELAXED);
  __atomic_fetch_add (&workers_done, 1, __ATOMIC_RELEASE);
  return NULL;
}

/* Signals to random workers, and new delays now and then.  */
static void *
chaos (void *arg)
{
  unsigned int seed = 42;
  (void) arg;
  /* The first signal is pending before any worker starts its rounds.  */
  pthread_kill (workers[0], SIGUSR1);
  __atomic_store_n (&chaos_running, 1, __ATOMIC_RELEASE);
  for (unsigned long n = 0; running; n++)
    {
      pthread_kill (workers[next_random (&seed) % nthreads], SIGUSR1);
      if (n % 1024 == 0)
	for (int point = 1; point <= 6; point++)
	  percpu_inject_loops[point] = next_random (&seed) % 4 == 0
				       ? next_random (&seed) % 2000 : 0;
      usleep (50);
    }
  return NULL;
}

static void
setup (void)
{
  CHECK (percpu_counter_init (&count_cpu, RSEQ_PERCPU_INDEX_CPU_ID) == 0);
  CHECK (percpu_counter_init (&count_mm, RSEQ_PERCPU_INDEX_MM_CID) == 0);
  CHECK (percpu_counter_init (&count_sig, RSEQ_PERCPU_INDEX_CPU_ID) == 0);
  CHECK (percpu_lock_init (&lock, RSEQ_PERCPU_INDEX_CPU_ID) == 0);
  locked_counts = calloc (lock.nr_slots, sizeof *locked_counts);
  CHECK (locked_counts != NULL);
  CHECK (percpu_list_init (&list, RSEQ_PERCPU_INDEX_CPU_ID) == 0);
  CHECK (percpu_buffer_init (&pointers, RSEQ_PERCPU_INDEX_CPU_ID, ITEMS, 0) == 0);
  CHECK (percpu_buffer_init (&records, RSEQ_PERCPU_INDEX_CPU_ID, ITEMS,
			     sizeof (struct record)) == 0);
  for (int i = 0; i < ITEMS; i++)
    {
      nodes[i].data = i;
      CHECK (percpu_list_push (&list, &nodes[i]) >= 0);
      pointer_items[i] = i;
      CHECK (percpu_buffer_push (&pointers, &pointer_items[i]) == 0);
      struct record r;
      record_fill (&r, i);
      CHECK (percpu_buffer_push_record (&records, &r) == 0);
    }
}

/* Drain every CPU's list and buffers: each item exactly once.  */
static void
check_items (void)
{
  unsigned char seen[ITEMS];
  int count;

  memset (seen, 0, sizeof seen);
  count = 0;
  for (int cpu = 0; cpu < list.nr_slots; cpu++)
    for (struct percpu_node *n; (n = percpu_list_pop_slot (&list, cpu)); )
      {
	CHECK (n >= nodes && n < nodes + ITEMS && n->data == n - nodes);
	if (seen[n->data]++)
	  FAIL ("list node %ld twice", (long) n->data);
	count++;
      }
  CHECK_EQ (count, ITEMS);

  memset (seen, 0, sizeof seen);
  count = 0;
  for (int cpu = 0; cpu < pointers.nr_slots; cpu++)
    for (intptr_t *p; percpu_buffer_pop_slot (&pointers, cpu, &p) == 0; )
      {
	CHECK (p >= pointer_items && p < pointer_items + ITEMS);
	if (seen[*p]++)
	  FAIL ("buffer pointer %ld twice", (long) *p);
	count++;
      }
  CHECK_EQ (count, ITEMS);

  memset (seen, 0, sizeof seen);
  count = 0;
  struct record r;
  for (int cpu = 0; cpu < records.nr_slots; cpu++)
    while (percpu_buffer_pop_slot (&records, cpu, &r) == 0)
      {
	CHECK (record_whole (&r));
	if (seen[r.id]++)
	  FAIL ("record %ld twice", (long) r.id);
	count++;
      }
  CHECK_EQ (count, ITEMS);
}

int
main (int argc, char **argv)
{
  require_kernel_rseq ();
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--long") == 0)
      reps *= 10;
    else if (strcmp (argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atol (argv[++i]);
    else if (strcmp (argv[i], "--fallback-half") == 0)
      fallback_half = 1;
    else
      FAIL ("usage: stress [--long] [--reps N] [--fallback-half]");
  if (fallback_half && !(cpu_opv (NULL, 0, 0, 0) < 0 && errno == EINVAL))
    UNSUPPORTED ("--fallback-half: the kernel has no cpu_opv");
  CHECK (sched_getaffinity (0, sizeof allowed, &allowed) == 0);
  nthreads = 6 * get_nprocs ();
  have_mm_cid = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_MM_CID) >= 0;
  setup ();

  struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
  sigemptyset (&sa.sa_mask);
  CHECK (sigaction (SIGUSR1, &sa, NULL) == 0);

  workers = calloc (nthreads, sizeof *workers);
  CHECK (workers != NULL);
  /* The chaos thread needs the worker IDs: block SIGUSR1 in main and
     chaos, start the workers, then chaos.  */
  sigset_t block;
  sigemptyset (&block);
  sigaddset (&block, SIGUSR1);
  pthread_sigmask (SIG_BLOCK, &block, NULL);
  for (long i = 0; i < nthreads; i++)
    {
      pthread_sigmask (SIG_UNBLOCK, &block, NULL);
      CHECK (pthread_create (&workers[i], NULL, worker, (void *) i) == 0);
      pthread_sigmask (SIG_BLOCK, &block, NULL);
    }
  pthread_t chaos_thread;
  CHECK (pthread_create (&chaos_thread, NULL, chaos, NULL) == 0);
  /* Stop the signals before any worker is joined: signalling a joined
     thread is undefined, an exited but unjoined one is harmless.  */
  while (__atomic_load_n (&workers_done, __ATOMIC_ACQUIRE) < nthreads)
    usleep (10000);
  running = 0;
  CHECK (pthread_join (chaos_thread, NULL) == 0);
  for (int i = 0; i < nthreads; i++)
    CHECK (pthread_join (workers[i], NULL) == 0);

  long expected = total_rounds;
  if (expected < (long) nthreads * reps)
    FAIL ("%ld rounds run, expected at least %ld", expected,
	  (long) nthreads * reps);
  CHECK_EQ (percpu_counter_sum (&count_cpu), expected);
  if (have_mm_cid)
    CHECK_EQ (percpu_counter_sum (&count_mm), expected);
  long locked = 0;
  for (int i = 0; i < lock.nr_slots; i++)
    locked += locked_counts[i];
  CHECK_EQ (locked, expected);
  CHECK_EQ (percpu_counter_sum (&count_sig), (long) signals_handled);
  check_items ();
  if (signals_handled == 0)
    FAIL ("no signal was handled");
  if (total_aborts == 0 && !fallback_half)
    FAIL ("no sequence aborted under %lu signals", signals_handled);
  if (fallback_half && total_fallbacks == 0)
    FAIL ("no operation went through cpu_opv");

  long extra = total_rounds - (long) nthreads * reps;
  if (extra > 0)
    printf ("%ld rounds past --reps before an abort\n", extra);
  printf ("%d threads x %ld rounds: exact totals; %lu signals handled, "
	  "%lu aborts, %lu operations through cpu_opv%s\n", nthreads, reps,
	  signals_handled, total_aborts, total_fallbacks,
	  have_mm_cid ? "" : " (no mm_cid on this kernel)");
  return 0;
}
