/* Cross-thread free benchmark: half the threads malloc, half free.

     malloc-xfree THREADS BLOCKS

   THREADS (even, 2..4096) threads: THREADS/2 producers malloc blocks
   and pass them, in batches of BATCH (256) pointers, through one bounded
   queue (a ring of QUEUE_BATCHES batches under a mutex and two condition
   variables) to THREADS/2 consumers, which free them.  So every block is
   freed by a thread other than the one that allocated it, which is the
   case a per-thread cache cannot serve from its own list.  BLOCKS blocks
   in all are allocated (split evenly between the producers), with sizes
   from 16 to 1024 bytes drawn by a fixed generator (the same sequence on
   every run).

   Accounting is exact: each producer writes a tag into every block (its
   serial number, a check word derived from the serial and the size, and
   a check byte at the last byte), each consumer verifies the tag before
   freeing and poisons it, and at the end the number of blocks freed and
   the sum of their serial numbers must equal those allocated.  A
   mismatch or a bad tag is reported and the exit status is 1.

   Output, one line (key=value, for bench/malloc_bench.py):
     malloc-xfree threads=T blocks=N seconds=S mblocks_per_s=R vmhwm_kb=K
   seconds is the wall time from the first thread's start (after the
   barrier that releases them all) to the last thread's end, each stamped
   by the thread itself; vmhwm_kb is the process's peak
   resident set (VmHWM of /proc/self/status) at the end.

   With MALLOC_XFREE_SAMPLE=FILE in the environment (glibc only), a
   sampler thread writes a line "@ SECONDS" and malloc_info's output to
   FILE every MALLOC_XFREE_SAMPLE_MS milliseconds (20) while the workers
   run, and once after, and calls malloc_trim every
   MALLOC_XFREE_SAMPLE_TRIM samples if that is set: the per-CPU malloc
   cache experiment (bindings/python/examples/malloc_cache.py) plots
   what they show.  */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NAME "malloc-xfree"
#include "malloc-bench-util.h"

#define BATCH 256
#define QUEUE_BATCHES 64
#define MAX_THREADS 4096
#define MAX_BLOCKS (UINT64_C (1) << 40)

static const unsigned int sizes[] =
  { 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024 };
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MIN_SIZE 16

struct batch
{
  unsigned int n;
  void *ptr[BATCH];
};

/* The bounded queue: a ring of whole batches, copied in and out under
   the lock (a 2 KB copy per 256 blocks).  */
static struct
{
  pthread_mutex_t lock;
  pthread_cond_t not_empty, not_full;
  unsigned int head, count;
  unsigned int producers_left;
  struct batch ring[QUEUE_BATCHES];
} queue = {
  .lock = PTHREAD_MUTEX_INITIALIZER,
  .not_empty = PTHREAD_COND_INITIALIZER,
  .not_full = PTHREAD_COND_INITIALIZER,
};

struct worker
{
  pthread_t thread;
  unsigned int id;
  uint64_t blocks;              /* producer: how many to allocate */
  uint64_t count, serial_sum;   /* allocated (producer) or freed (consumer) */
  uint64_t bad_tags;
  double start, end;            /* CLOCK_MONOTONIC, seconds */
  int failed;                   /* malloc returned NULL */
} __attribute__ ((aligned (64)));

static pthread_barrier_t start_barrier;

static uint64_t
mix (uint64_t x)
{
  x ^= x >> 33;
  x *= UINT64_C (0xff51afd7ed558ccd);
  x ^= x >> 33;
  x *= UINT64_C (0xc4ceb9fe1a85ec53);
  x ^= x >> 33;
  return x;
}

/* Tag layout: word 0 the serial, word 1 mix (serial) ^ size, and in
   blocks longer than the two words the last byte, the low byte of
   mix (serial) ^ 0x5a.  Every size is at least 16.  */
static void
tag_block (unsigned char *p, uint64_t serial, unsigned int size)
{
  uint64_t w[2] = { serial, mix (serial) ^ size };
  memcpy (p, w, sizeof w);
  if (size > sizeof w)
    p[size - 1] = (unsigned char) (mix (serial) ^ 0x5a);
}

/* Returns the serial, or UINT64_MAX for a bad tag.  Poisons the tag.  */
static uint64_t
untag_block (unsigned char *p)
{
  uint64_t w[2];
  memcpy (w, p, sizeof w);
  uint64_t m = mix (w[0]);
  uint64_t size = w[1] ^ m;
  if (size < MIN_SIZE || size > 1024
      || (size > sizeof w && p[size - 1] != (unsigned char) (m ^ 0x5a)))
    return UINT64_MAX;
  w[1] = ~w[1];
  memcpy (p, w, sizeof w);
  return w[0];
}

static void
queue_put (const struct batch *b)
{
  pthread_mutex_lock (&queue.lock);
  while (queue.count == QUEUE_BATCHES)
    pthread_cond_wait (&queue.not_full, &queue.lock);
  struct batch *slot = &queue.ring[(queue.head + queue.count) % QUEUE_BATCHES];
  slot->n = b->n;
  memcpy (slot->ptr, b->ptr, b->n * sizeof b->ptr[0]);
  queue.count++;
  pthread_cond_signal (&queue.not_empty);
  pthread_mutex_unlock (&queue.lock);
}

/* 1 with a batch in *B, 0 when the queue is empty and every producer
   has finished.  */
static int
queue_get (struct batch *b)
{
  pthread_mutex_lock (&queue.lock);
  while (queue.count == 0 && queue.producers_left > 0)
    pthread_cond_wait (&queue.not_empty, &queue.lock);
  if (queue.count == 0)
    {
      pthread_mutex_unlock (&queue.lock);
      return 0;
    }
  struct batch *slot = &queue.ring[queue.head];
  b->n = slot->n;
  memcpy (b->ptr, slot->ptr, slot->n * sizeof slot->ptr[0]);
  queue.head = (queue.head + 1) % QUEUE_BATCHES;
  queue.count--;
  pthread_cond_signal (&queue.not_full);
  pthread_mutex_unlock (&queue.lock);
  return 1;
}

static void *
producer (void *arg)
{
  struct worker *w = arg;
  struct batch b = { .n = 0 };
  /* A fixed generator per producer: the same sizes on every run.  */
  uint64_t rng = mix (w->id + 1);

  pthread_barrier_wait (&start_barrier);
  w->start = now ();
  for (uint64_t i = 0; i < w->blocks; i++)
    {
      rng = rng * UINT64_C (6364136223846793005) + UINT64_C (1442695040888963407);
      unsigned int size = sizes[(rng >> 33) % NSIZES];
      unsigned char *p = malloc (size);
      if (p == NULL)
        {
          w->failed = 1;
          break;
        }
      /* Serials are unique across producers: id in the top bits.  */
      uint64_t serial = ((uint64_t) w->id << 44) | i;
      tag_block (p, serial, size);
      w->count++;
      w->serial_sum += serial;
      b.ptr[b.n++] = p;
      if (b.n == BATCH)
        {
          queue_put (&b);
          b.n = 0;
        }
    }
  if (b.n > 0)
    queue_put (&b);

  pthread_mutex_lock (&queue.lock);
  if (--queue.producers_left == 0)
    pthread_cond_broadcast (&queue.not_empty);
  pthread_mutex_unlock (&queue.lock);
  w->end = now ();
  return NULL;
}

static void *
consumer (void *arg)
{
  struct worker *w = arg;
  struct batch b;

  pthread_barrier_wait (&start_barrier);
  w->start = now ();
  while (queue_get (&b))
    for (unsigned int i = 0; i < b.n; i++)
      {
        uint64_t serial = untag_block (b.ptr[i]);
        if (serial == UINT64_MAX)
          w->bad_tags++;
        else
          w->serial_sum += serial;
        w->count++;
        free (b.ptr[i]);
      }
  w->end = now ();
  return NULL;
}

/* A decimal integer in [MIN, MAX], or exit with a message naming WHAT.  */
/* The malloc_info sampler (MALLOC_XFREE_SAMPLE).  */
static struct
{
  FILE *out;
  long interval_ms;
  long trim_every;
  double start;
  volatile int stop;
  pthread_t thread;
} sampler;

static void
sample (void)
{
  fprintf (sampler.out, "@ %.6f\n", now () - sampler.start);
  malloc_info (0, sampler.out);
}

static void *
sampler_main (void *arg)
{
  struct timespec pause = { sampler.interval_ms / 1000,
                            sampler.interval_ms % 1000 * 1000000 };
  for (long n = 1; !sampler.stop; n++)
    {
      sample ();
      if (sampler.trim_every > 0 && n % sampler.trim_every == 0)
        malloc_trim (0);
      nanosleep (&pause, NULL);
    }
  return NULL;
}

static void
sampler_start (void)
{
  const char *path = getenv ("MALLOC_XFREE_SAMPLE");
  if (path == NULL)
    return;
  sampler.out = fopen (path, "w");
  if (sampler.out == NULL)
    die ("cannot write %s", path);
  const char *ms = getenv ("MALLOC_XFREE_SAMPLE_MS");
  const char *trim = getenv ("MALLOC_XFREE_SAMPLE_TRIM");
  sampler.interval_ms = ms != NULL ? parse_count (ms, "MALLOC_XFREE_SAMPLE_MS", 1, 60000) : 20;
  sampler.trim_every = trim != NULL ? parse_count (trim, "MALLOC_XFREE_SAMPLE_TRIM", 1, 1000000) : 0;
  sampler.start = now ();
  check (pthread_create (&sampler.thread, NULL, sampler_main, NULL),
         "pthread_create");
}

static void
sampler_finish (void)
{
  if (sampler.out == NULL)
    return;
  sampler.stop = 1;
  check (pthread_join (sampler.thread, NULL), "pthread_join");
  sample ();
  if (fclose (sampler.out) != 0)
    die ("cannot write %s", getenv ("MALLOC_XFREE_SAMPLE"));
}

int
main (int argc, char **argv)
{
  if (argc != 3)
    {
      fprintf (stderr,
               "usage: malloc-xfree THREADS BLOCKS\n"
               "  THREADS  even number of threads, 2 to %d: half malloc, half free\n"
               "  BLOCKS   blocks to allocate and free in all, 1 to %" PRIu64 "\n",
               MAX_THREADS, MAX_BLOCKS);
      return 2;
    }
  unsigned int threads = parse_count (argv[1], "THREADS", 2, MAX_THREADS);
  if (threads % 2 != 0)
    die ("THREADS must be even (half malloc, half free), not %s", argv[1]);
  uint64_t blocks = parse_count (argv[2], "BLOCKS", 1, MAX_BLOCKS);

  unsigned int nprod = threads / 2;
  struct worker *w = aligned_alloc (64, threads * sizeof *w);
  if (w == NULL)
    die ("cannot allocate %s thread descriptors", argv[1]);
  memset (w, 0, threads * sizeof *w);
  queue.producers_left = nprod;
  check (pthread_barrier_init (&start_barrier, NULL, threads + 1),
         "pthread_barrier_init");

  for (unsigned int i = 0; i < threads; i++)
    {
      w[i].id = i;
      if (i < nprod)
        w[i].blocks = blocks / nprod + (i < blocks % nprod);
      check (pthread_create (&w[i].thread, NULL,
                             i < nprod ? producer : consumer, &w[i]),
             "pthread_create");
    }

  sampler_start ();
  pthread_barrier_wait (&start_barrier);
  for (unsigned int i = 0; i < threads; i++)
    check (pthread_join (w[i].thread, NULL), "pthread_join");
  long hwm = vmhwm_kb ();
  sampler_finish ();
  double first = w[0].start, last = w[0].end;
  for (unsigned int i = 1; i < threads; i++)
    {
      if (w[i].start < first)
        first = w[i].start;
      if (w[i].end > last)
        last = w[i].end;
    }
  double seconds = last - first;

  uint64_t malloced = 0, freed = 0, sum_in = 0, sum_out = 0, bad = 0;
  int failed = 0;
  for (unsigned int i = 0; i < threads; i++)
    if (i < nprod)
      {
        malloced += w[i].count;
        sum_in += w[i].serial_sum;
        failed |= w[i].failed;
      }
    else
      {
        freed += w[i].count;
        sum_out += w[i].serial_sum;
        bad += w[i].bad_tags;
      }

  int status = 0;
  if (failed)
    {
      fprintf (stderr, "malloc-xfree: malloc returned NULL\n");
      status = 1;
    }
  if (malloced != blocks && !failed)
    {
      fprintf (stderr, "malloc-xfree: %" PRIu64 " blocks allocated, expected %"
               PRIu64 "\n", malloced, blocks);
      status = 1;
    }
  if (freed != malloced || sum_out != sum_in || bad != 0)
    {
      fprintf (stderr, "malloc-xfree: accounting mismatch: %" PRIu64
               " allocated, %" PRIu64 " freed, %" PRIu64 " bad tags, "
               "serial sums %" PRIu64 " / %" PRIu64 "\n",
               malloced, freed, bad, sum_in, sum_out);
      status = 1;
    }
  if (status != 0)
    return status;

  printf ("malloc-xfree threads=%u blocks=%" PRIu64 " seconds=%.6f "
          "mblocks_per_s=%.3f vmhwm_kb=%ld\n",
          threads, blocks, seconds, blocks / seconds / 1e6, hwm);
  return 0;
}
