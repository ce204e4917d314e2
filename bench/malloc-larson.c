/* Server-style allocation benchmark after Larson and Krishnan's: the
   working set moves from thread to thread.

     malloc-larson THREADS OPS

   THREADS (1..4096) lineages each own SLOTS (1000) blocks of 24 to 512
   bytes, all allocated by the main thread before the clock starts.  A
   lineage is a chain of GENERATIONS (8) threads: each generation
   replaces OPS / THREADS / GENERATIONS randomly chosen blocks of the
   set (frees the block in the slot, mallocs one of a random size in its
   place), then starts the next generation, hands it the set and exits.
   So most frees are of blocks another thread allocated, as in a server
   whose requests are served by short-lived or pooled threads; the
   threads come and go while the others run, and each new one starts
   with an empty thread cache.

   Accounting is exact: every block carries a tag (its serial number, a
   check word derived from the serial and the size, and a check byte at
   its last byte), each free verifies the tag first, the main thread
   frees what is left at the end, and the number of blocks and the sum
   of their serials freed must equal those allocated.  A mismatch or a
   bad tag is reported and the exit status is 1.

   Output, one line (key=value, for bench/malloc_bench.py):
     malloc-larson threads=T ops=N seconds=S mops_per_s=R vmhwm_kb=K
   seconds is the wall time from the release of the first generations
   to the end of the last one (thread creation included, as in a
   server); an op is one free and one malloc; vmhwm_kb is the process's
   peak resident set (VmHWM of /proc/self/status).  */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NAME "malloc-larson"
#include "malloc-bench-util.h"

#define SLOTS 1000
#define GENERATIONS 8
#define MIN_SIZE 24	/* The tag and its check byte.  */
#define MAX_SIZE 512
#define MAX_THREADS 4096
#define MAX_OPS (UINT64_C (1) << 40)
#define CHECK_MULTIPLIER UINT64_C (0x9e3779b97f4a7c15)

/* The header every block starts with; its last byte holds a check
   byte too.  */
struct tag
{
  uint64_t serial;
  uint64_t check;
};

struct block
{
  struct tag *p;
  size_t size;
};

/* One lineage: its blocks and what its generations did to them.  */
struct lineage
{
  struct block slots[SLOTS];
  uint64_t random;		/* xorshift64 state.  */
  uint64_t next_serial;		/* Unique across lineages (see below).  */
  uint64_t ops_per_generation;
  int generation;
  uint64_t allocated, freed;	/* Blocks.  */
  uint64_t serials_in, serials_out;
  uint64_t bad_tags;
  int failed;			/* malloc returned NULL.  */
};

static pthread_barrier_t start_barrier;
static sem_t lineages_done;

static uint64_t
next_random (struct lineage *l)
{
  uint64_t x = l->random;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return l->random = x;
}

static uint64_t
check_word (uint64_t serial, size_t size)
{
  return (serial ^ size) * CHECK_MULTIPLIER;
}

static unsigned char
check_byte (uint64_t serial)
{
  return (unsigned char) (serial * 31 + 7);
}

/* Allocate a block of a random size into SLOT and tag it.  */
static void
fill_slot (struct lineage *l, struct block *slot)
{
  size_t size = MIN_SIZE + next_random (l) % (MAX_SIZE - MIN_SIZE + 1);
  struct tag *p = malloc (size);
  if (p == NULL)
    {
      l->failed = 1;
      slot->p = NULL;
      return;
    }
  uint64_t serial = l->next_serial++;
  p->serial = serial;
  p->check = check_word (serial, size);
  ((unsigned char *) p)[size - 1] = check_byte (serial);
  slot->p = p;
  slot->size = size;
  l->allocated++;
  l->serials_in += serial;
}

/* Verify the tag of the block in SLOT, poison it and free it.  */
static void
empty_slot (struct lineage *l, struct block *slot)
{
  struct tag *p = slot->p;
  if (p == NULL)
    return;
  uint64_t serial = p->serial;
  if (p->check != check_word (serial, slot->size)
      || ((unsigned char *) p)[slot->size - 1] != check_byte (serial))
    l->bad_tags++;
  p->check = 0;
  free (p);
  slot->p = NULL;
  l->freed++;
  l->serials_out += serial;
}

static void *generation (void *closure);

/* Start the next generation of L, detached: nobody joins a thread of a
   lineage, the last one posts lineages_done.  */
static void
start_generation (struct lineage *l)
{
  pthread_attr_t attr;
  pthread_t thread;
  check (pthread_attr_init (&attr), "pthread_attr_init");
  check (pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED),
         "pthread_attr_setdetachstate");
  check (pthread_create (&thread, &attr, generation, l), "pthread_create");
  pthread_attr_destroy (&attr);
}

static void *
generation (void *closure)
{
  struct lineage *l = closure;
  if (l->generation == 0)
    pthread_barrier_wait (&start_barrier);
  for (uint64_t i = 0; i < l->ops_per_generation && !l->failed; i++)
    {
      struct block *slot = &l->slots[next_random (l) % SLOTS];
      empty_slot (l, slot);
      fill_slot (l, slot);
    }
  if (++l->generation < GENERATIONS && !l->failed)
    start_generation (l);
  else
    sem_post (&lineages_done);
  return NULL;
}

/* Sum the lineages' accounts, free what is left and report; returns
   the exit status.  */
static int
settle (struct lineage *ls, unsigned int threads, uint64_t ops)
{
  uint64_t allocated = 0, freed = 0, in = 0, out = 0, bad = 0;
  int failed = 0;
  for (unsigned int i = 0; i < threads; i++)
    {
      struct lineage *l = &ls[i];
      for (int s = 0; s < SLOTS; s++)
        empty_slot (l, &l->slots[s]);
      allocated += l->allocated;
      freed += l->freed;
      in += l->serials_in;
      out += l->serials_out;
      bad += l->bad_tags;
      failed |= l->failed;
    }
  if (failed)
    {
      fputs ("malloc-larson: malloc returned NULL\n", stderr);
      return 1;
    }
  uint64_t expected = (uint64_t) threads * SLOTS + ops;
  if (allocated != expected || freed != allocated || out != in || bad != 0)
    {
      fprintf (stderr, "malloc-larson: accounting mismatch: %" PRIu64
               " allocated (expected %" PRIu64 "), %" PRIu64 " freed, %"
               PRIu64 " bad tags, serial sums %" PRIu64 " / %" PRIu64 "\n",
               allocated, expected, freed, bad, in, out);
      return 1;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc != 3)
    die ("%s", "usage: malloc-larson THREADS OPS");
  unsigned int threads = parse_count (argv[1], "THREADS", 1, MAX_THREADS);
  uint64_t per_generation
    = parse_count (argv[2], "OPS", 1, MAX_OPS) / threads / GENERATIONS;
  if (per_generation == 0)
    die ("OPS must be at least THREADS x %s", "8 (the generations)");
  uint64_t ops = per_generation * threads * GENERATIONS;

  struct lineage *ls = calloc (threads, sizeof *ls);
  if (ls == NULL)
    die ("cannot allocate %s lineages", argv[1]);
  for (unsigned int i = 0; i < threads; i++)
    {
      struct lineage *l = &ls[i];
      l->random = UINT64_C (0x2545f4914f6cdd1d) * (i + 1);
      /* Serials of lineage I start at I << 40, so they stay unique and
         the sums cannot cancel a lost block by chance.  */
      l->next_serial = (uint64_t) i << 40;
      l->ops_per_generation = per_generation;
      for (int s = 0; s < SLOTS; s++)
        fill_slot (l, &l->slots[s]);
    }

  check (pthread_barrier_init (&start_barrier, NULL, threads + 1),
         "pthread_barrier_init");
  if (sem_init (&lineages_done, 0, 0) != 0)
    check (errno, "sem_init");
  for (unsigned int i = 0; i < threads; i++)
    start_generation (&ls[i]);
  pthread_barrier_wait (&start_barrier);
  double start = now ();
  for (unsigned int i = 0; i < threads; i++)
    while (sem_wait (&lineages_done) != 0)
      if (errno != EINTR)
        check (errno, "sem_wait");
  double seconds = now () - start;
  long hwm = vmhwm_kb ();

  int status = settle (ls, threads, ops);
  if (status == 0)
    printf ("malloc-larson threads=%u ops=%" PRIu64 " seconds=%.6f "
            "mops_per_s=%.3f vmhwm_kb=%ld\n",
            threads, ops, seconds, ops / seconds / 1e6, hwm);
  free (ls);
  return status;
}
