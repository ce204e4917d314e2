/* Per-CPU cache of malloc between the thread cache and the arenas.
   Linux version, built on the per-CPU operations of <sys/rseq-percpu.h>.
   Copyright (C) 2026 Free Software Foundation, Inc.
   This file is part of the GNU C Library.

   The GNU C Library is free software; you can redistribute it and/or
   modify it under the terms of the GNU Lesser General Public
   License as published by the Free Software Foundation; either
   version 2.1 of the License, or (at your option) any later version.

   The GNU C Library is distributed in the hope that it will be useful,
   but WITHOUT ANY WARRANTY; without even the implied warranty of
   MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
   Lesser General Public License for more details.

   You should have received a copy of the GNU Lesser General Public
   License along with the GNU C Library; if not, see
   <https://www.gnu.org/licenses/>.  */

#include <sys/rseq-percpu.h>

/* libc_malloc_debug.so compiles malloc.c too; only libc has the
   cache.  */
#if !defined __RSEQ_PERCPU_ARCH || !IS_IN (libc)
# include <sysdeps/generic/malloc-percpu.h>
#else

#ifndef _MALLOC_PERCPU_H
#define _MALLOC_PERCPU_H 1

#include <atomic.h>
#include <libc-lock.h>
#include <pthreadP.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sysdep.h>
#include <time.h>

/* With glibc.malloc.percpu set, a chunk that the thread cache has no
   room for and that belongs to an arena other than the freeing thread's
   goes to a cache of the CPU the thread runs on (or of its memory-map
   concurrency ID), and malloc takes a chunk from there when the thread
   cache is empty, before it locks an arena.  Chunks freed on one thread
   and allocated on another (a producer and a consumer) then meet in the
   cache of their CPU instead of passing one at a time through an arena
   under another thread's lock.

   A chunk of the freeing thread's own arena goes back to that arena, as
   it does without the cache.  Its lock is the thread's own and seldom
   contended, and the chunk then comes back to the thread that freed it,
   while its lines are still in that CPU's data cache.  Sent through the
   per-CPU caches, such chunks reached other threads and took their
   cache misses with them: glibc's bench-malloc-thread, where every
   thread frees only its own blocks, ran a third slower with 8 threads
   on 2 CPUs.  A program whose threads never free each other's chunks
   never sets the caches up.  glibc.malloc.percpu_local=1 sends the
   chunks of the freeing thread's own arena to the caches too, making
   them a second, larger thread cache for threads that free more chunks
   of a class than the thread cache holds before they allocate again.

   The caches carry chunks from threads that free more than they
   allocate to threads that allocate more than they free.  Each thread
   counts its recent frees that the thread cache had no room for and its
   mallocs that found it empty: it puts chunks into the caches only
   while it frees clearly more than it allocates, and takes chunks from
   them only while it allocates clearly more than it frees.  A thread
   that does both alike, as the threads of a server do, uses its arena
   as it does without the cache.  When it could trade its frees for
   chunks of other arenas, whose neighbours other threads write from
   other CPUs, a larson-style server ran 0.73x as fast as without the
   cache on 2 CPUs; when it only took fewer of them, the chunks it put
   stayed in the caches and its peak RSS grew by 75 %.

   Each cache holds, for each size class of the thread cache, a count
   and an array of that many chunk pointers (a stack).  A push writes
   the pointer above the top and then commits the count; a pop checks
   the count and the top pointer and commits the count.  Both are one
   restartable sequence of <sys/rseq-percpu.h>, so they need no atomic
   instruction, and comparing the pointer as well as the count rules out
   the ABA problem of a pop that was overtaken by a pop and a push.  A
   stack of pointers, unlike a list threaded through the chunks, never
   dereferences a chunk inside a sequence.  A chunk in a cache carries
   the thread cache's key, so that a double free finds it.

   Below the per-CPU caches, a transfer cache per size class takes half
   of a full per-CPU array at a time and gives a batch to an empty one,
   under a lock taken once per batch.  Chunks that do not fit go back to
   their own arenas.

   An operation that aborts is retried a few times and then the chunk
   takes the path it takes without the cache: a thread that aborts every
   time (single-stepped by a debugger) still makes progress, and malloc
   never calls cpu_opv.  Threads that cannot run per-CPU operations
   (rseq not registered, disabled by glibc.pthread.rseq, a vfork child)
   take that path too.

   Only threads running on a CPU may change its caches, so emptying the
   cache of another CPU (malloc_trim, a thread exit that leaves a
   concurrency ID unused, a cache with no operation between two looks
   some time apart)
   locks each count by storing PERCPU_LOCKED with an atomic
   compare-and-exchange, then makes every other thread of the process
   leave any sequence it is in (the fence: membarrier with
   MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, Linux 5.10), and checks that no
   sequence committed over the lock in between.  After that no operation
   can commit on that cache (each sees the lock and fails) until the
   count is stored back.  A process with a single thread needs no fence:
   no other sequence can be under way.

   If the fence fails (a seccomp filter denies membarrier, an old
   kernel, no memory), the counts are put back untouched, so that a
   sequence that read one before it was locked still commits correctly,
   and the caches stop taking chunks: mallocs still take the chunks they
   hold, malloc_trim empties the transfer caches and the cache of its
   own CPU inside sequences, and no cache of another CPU is emptied
   while the process has threads.

   Chunks in the caches stay allocated as far as the arenas know, like
   the chunks of the thread cache: mallinfo2 counts them as in use, and
   malloc_stats and malloc_info report them separately.  */

/* Maximum pointers of one size class in one per-CPU cache.  */
#define PERCPU_MAX_SLOTS 256
/* The transfer cache of a class holds this many per-CPU arrays: a
   transfer cache that is often full or empty sends chunks to the arenas
   one at a time.  */
#define PERCPU_TRANSFER_ARRAYS 32
/* Attempts of an operation before the chunk takes the arenas' path.  */
#define PERCPU_ATTEMPTS 4
/* The count of a cache being emptied by another CPU.  */
#define PERCPU_LOCKED ((intptr_t) -1)
/* Per-CPU budget when glibc.malloc.percpu_bytes is not set: the
   tunable's default in dl-tunables.list, whose range (64 KiB to 16 MiB)
   makes the tunables ignore any other value, 0 included.  */
#define PERCPU_DEFAULT_BYTES (1024 * 1024)
/* A cache looks for idle caches once in this many of its refills and
   flushes, and no sooner than PERCPU_IDLE_NS after the last look; one
   with no operation at all between two looks is emptied.  The time
   keeps a thread that the scheduler held off its CPU for a moment from
   losing its cache, and bounds the fences to a few a second.  */
#define PERCPU_IDLE_SCAN 1024
#define PERCPU_IDLE_NS (200 * 1000 * 1000)

#ifndef MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ
# define MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ (1 << 7)
# define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ (1 << 8)
#endif

enum percpu_mode
{
  percpu_off,
  percpu_mm_cid,
  percpu_cpu_id
};

/* In this order: a state from percpu_unfenced on has caches.  */
enum percpu_state
{
  percpu_unset,			/* Not set up yet.  */
  percpu_unavailable,		/* Off, or the kernel cannot run it.  */
  percpu_unfenced,		/* The fence failed: no new chunks.  */
  percpu_ready
};

struct percpu_transfer
{
  __libc_lock_define (, lock);
  size_t count;
  void **slots;
};

static struct
{
  enum percpu_mode mode;
  size_t bytes;
  bool local;			/* glibc.malloc.percpu_local.  */
  int state;			/* enum percpu_state.  */
  int field;			/* RSEQ_PERCPU_INDEX_*.  */
  bool fence_registered;	/* membarrier registration done.  */
  int64_t last_look_ns;		/* Of percpu_drain_idle, CLOCK_MONOTONIC.  */
  unsigned int ncaches;
  unsigned int nclasses;
  size_t stride;		/* Words of one per-CPU cache.  */
  intptr_t *base;		/* The caches, then the transfer slots.  */
  size_t map_size;
  /* Word offset in a cache of the count of each class, followed by its
     slots, and the number of slots (0: the class is not cached).  */
  unsigned int offset[TCACHE_SMALL_BINS];
  unsigned int cap[TCACHE_SMALL_BINS];
  struct percpu_transfer transfer[TCACHE_SMALL_BINS];
} percpu = { .bytes = PERCPU_DEFAULT_BYTES };

/* Serializes setting up and emptying caches and the state changes.
   Taken before an arena lock, never after.  */
__libc_lock_define_initialized (static, percpu_lock);

static void
percpu_cache_set_mode (const char *mode, size_t len)
{
  /* MODE is not terminated: it points into GLIBC_TUNABLES.  */
  if (len == strlen ("mm_cid") && memcmp (mode, "mm_cid", len) == 0)
    percpu.mode = percpu_mm_cid;
  else if (len == strlen ("cpu_id") && memcmp (mode, "cpu_id", len) == 0)
    percpu.mode = percpu_cpu_id;
  else
    percpu.mode = percpu_off;
}

static void
percpu_cache_set_bytes (size_t bytes)
{
  percpu.bytes = bytes;
}

static void
percpu_cache_set_local (bool local)
{
  percpu.local = local;
}

/* Whether glibc.malloc.percpu asks for the cache: one load, tested
   before anything else on the paths that the cache adds to.  */
static __always_inline bool
percpu_cache_enabled (void)
{
  return percpu.mode != percpu_off;
}

/* The header of a cache, before the counts and slots of its classes:
   its refills and flushes; a word that each operation sets and the
   search for idle caches clears; then statistics for malloc_info:
   refills, flushes, times another thread emptied the cache, mallocs
   that found it and the transfer cache empty, and chunks of flushes
   that went to the arenas.  Outside percpu_lock they are counted
   without atomic instructions: threads on one CPU that race may lose an
   increment.  */
enum
{
  percpu_word_slow_ops,
  percpu_word_used,
  percpu_word_refills,
  percpu_word_flushes,
  percpu_word_drains,
  percpu_word_misses,
  percpu_word_overflows,
  percpu_header_words
};

static __always_inline intptr_t *
percpu_cache_of (unsigned int cpu)
{
  return percpu.base + (size_t) cpu * percpu.stride;
}

static __always_inline void
percpu_count_event (int cpu, int word, intptr_t n)
{
  intptr_t *w = &percpu_cache_of (cpu)[word];
  atomic_store_relaxed (w, atomic_load_relaxed (w) + n);
}

/* An operation on cache CPU: it is not idle.  One store, to a line that
   the CPU's operations own.  */
static __always_inline void
percpu_mark_used (int cpu)
{
  atomic_store_relaxed (&percpu_cache_of (cpu)[percpu_word_used], 1);
}

static __always_inline intptr_t *
percpu_count (unsigned int cpu, size_t tc_idx)
{
  return percpu_cache_of (cpu) + percpu.offset[tc_idx];
}

static __always_inline void **
percpu_slots (intptr_t *count)
{
  return (void **) (count + 1);
}

/* Whether the caches are set up (the fence may have failed since).  */
static __always_inline bool
percpu_has_caches (int state)
{
  return state >= percpu_unfenced;
}

/* Size the caches from the budget: each class gets an equal share of
   it, in chunks of its size.  */
static size_t
percpu_layout (void)
{
  size_t words = percpu_header_words;
  percpu.nclasses = mp_.tcache_small_bins;
  for (unsigned int c = 0; c < percpu.nclasses; c++)
    {
      size_t csize = tidx2usize (c) + SIZE_SZ;
      size_t cap = percpu.bytes / percpu.nclasses / csize;
      if (cap > PERCPU_MAX_SLOTS)
	cap = PERCPU_MAX_SLOTS;
      if (cap < 2)
	cap = 0;
      percpu.cap[c] = cap;
      percpu.offset[c] = words;
      words += 1 + cap;
    }
  /* Whole cache lines, so that CPUs do not share one.  */
  return ALIGN_UP (words, 128 / sizeof (intptr_t));
}

/* Set up the caches on first use.  Returns false if they cannot be
   used in this process.  No system call but mmap: membarrier is called
   only when another CPU's cache is emptied (percpu_fence).  */
static bool
percpu_setup (void)
{
  /* A signal handler that frees while this thread sets up takes the
     arenas' path.  */
  if (__libc_lock_trylock (percpu_lock) != 0)
    return false;
  if (percpu.state != percpu_unset)
    goto out;
  percpu.state = percpu_unavailable;

  if (percpu.mode == percpu_off || __rseq_size == 0)
    goto out;
  percpu.field = RSEQ_PERCPU_INDEX_CPU_ID;
  /* mm_cid where the kernel has it (Linux 6.3 and later).  */
  if (percpu.mode == percpu_mm_cid
      && __rseq_area_has_field (__RSEQ_AREA_MM_CID_OFFSET))
    percpu.field = RSEQ_PERCPU_INDEX_MM_CID;

  /* Both a CPU number and a concurrency ID are below the number of
     possible CPUs.  */
  int ncpus = __get_nprocs_conf ();
  percpu.ncaches = ncpus > 0 ? ncpus : 1;
  percpu.stride = percpu_layout ();
  size_t transfer_words = 0;
  for (unsigned int c = 0; c < percpu.nclasses; c++)
    transfer_words += PERCPU_TRANSFER_ARRAYS * percpu.cap[c];
  size_t size = (percpu.ncaches * percpu.stride + transfer_words)
		* sizeof (intptr_t);
  size = ALIGN_UP (size, GLRO (dl_pagesize));
  void *map = __mmap (NULL, size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED)
    goto out;

  percpu.base = map;
  percpu.map_size = size;
  intptr_t *slots = percpu.base + percpu.ncaches * percpu.stride;
  for (unsigned int c = 0; c < percpu.nclasses; c++)
    {
      __libc_lock_init (percpu.transfer[c].lock);
      percpu.transfer[c].slots = (void **) slots;
      slots += PERCPU_TRANSFER_ARRAYS * percpu.cap[c];
    }
  atomic_store_release (&percpu.state, percpu_ready);
 out:
  __libc_lock_unlock (percpu_lock);
  return percpu.state == percpu_ready;
}

/* The cache of the calling thread's CPU, or -1.  */
static __always_inline int
percpu_current (void)
{
  int cpu = __rseq_percpu_current_cpu (percpu.field);
  if (__glibc_unlikely ((unsigned int) cpu >= percpu.ncaches))
    return -1;
  return cpu;
}

/* MEM, taken from a cache for class TC_IDX, is returned by malloc: check
   it as tcache_get checks its chunks, and its size, so that a corrupted
   slot is not handed out.  */
static __always_inline void *
percpu_checked_chunk (void *mem, size_t tc_idx)
{
  if (__glibc_unlikely (misaligned_mem (mem)))
    malloc_printerr ("malloc(): unaligned per-CPU cache chunk detected");
  if (__glibc_unlikely (csize2tidx (chunksize (mem2chunk (mem))) != tc_idx))
    malloc_printerr ("malloc(): mismatching size of per-CPU cache chunk");
  ((tcache_entry *) mem)->key = 0;
  return mem;
}

/* Return chunk MEM to its arena, outside the caches and the thread
   cache.  *LOCKED is the arena the caller holds, or NULL; MEM's arena
   is left locked in it so that a run of chunks of one arena takes its
   lock once.  */
static void
percpu_free_to_arena (void *mem, mstate *locked)
{
  mchunkptr p = mem2chunk (mem);
  mstate av = arena_for_chunk (p);
  ((tcache_entry *) mem)->key = 0;
  if (av != *locked)
    {
      if (*locked != NULL)
	__libc_lock_unlock ((*locked)->mutex);
      __libc_lock_lock (av->mutex);
      *locked = av;
    }
  _int_free_chunk (av, p, chunksize (p), 1);
}

static void
percpu_free_batch (void **batch, size_t n)
{
  mstate locked = NULL;
  for (size_t i = 0; i < n; i++)
    percpu_free_to_arena (batch[i], &locked);
  if (locked != NULL)
    __libc_lock_unlock (locked->mutex);
}

/* Put N chunks of class TC_IDX into its transfer cache; return how many
   fitted.  */
static size_t
percpu_transfer_put (size_t tc_idx, void **batch, size_t n)
{
  struct percpu_transfer *t = &percpu.transfer[tc_idx];
  size_t room;
  __libc_lock_lock (t->lock);
  room = PERCPU_TRANSFER_ARRAYS * percpu.cap[tc_idx] - t->count;
  if (n > room)
    n = room;
  memcpy (t->slots + t->count, batch, n * sizeof (void *));
  t->count += n;
  __libc_lock_unlock (t->lock);
  return n;
}

/* Take up to N chunks of class TC_IDX from its transfer cache.  */
static size_t
percpu_transfer_get (size_t tc_idx, void **batch, size_t n)
{
  struct percpu_transfer *t = &percpu.transfer[tc_idx];
  if (atomic_load_relaxed (&t->count) == 0)
    return 0;
  __libc_lock_lock (t->lock);
  if (n > t->count)
    n = t->count;
  t->count -= n;
  memcpy (batch, t->slots + t->count, n * sizeof (void *));
  __libc_lock_unlock (t->lock);
  return n;
}

static void percpu_drain_idle (void);

/* A refill or flush of cache CPU.  */
static void
percpu_touch (int cpu)
{
  intptr_t *ops = &percpu_cache_of (cpu)[percpu_word_slow_ops];
  intptr_t n = atomic_load_relaxed (ops) + 1;
  percpu_mark_used (cpu);
  atomic_store_relaxed (ops, n);
  if (__glibc_unlikely (n % PERCPU_IDLE_SCAN == 0))
    percpu_drain_idle ();
}

/* The array of class TC_IDX on CPU is full with N chunks: move its top
   half to the transfer cache, and what does not fit there to the
   arenas.  Returns false if the move did not commit.  */
static bool
percpu_flush (int cpu, size_t tc_idx, intptr_t *count, intptr_t n)
{
  void *batch[PERCPU_MAX_SLOTS];
  size_t k = (n + 1) / 2;
  void **slots = percpu_slots (count);
  if (__rseq_percpu_try_cmpeqv_trymemcpy_storev
	(percpu.field, count, n, batch, &slots[n - k], k * sizeof (void *),
	 n - k, cpu) != 0)
    return false;
  size_t moved = percpu_transfer_put (tc_idx, batch, k);
  percpu_free_batch (batch + moved, k - moved);
  percpu_count_event (cpu, percpu_word_flushes, 1);
  if (moved < k)
    percpu_count_event (cpu, percpu_word_overflows, k - moved);
  percpu_touch (cpu);
  return true;
}

/* Take every chunk of class TC_IDX from cache CPU, if the thread runs
   on it, into BATCH in one sequence.  Returns how many, or -1 if the
   sequence aborted.  */
static intptr_t
percpu_take_all (int cpu, size_t tc_idx, void **batch)
{
  intptr_t *count = percpu_count (cpu, tc_idx);
  intptr_t n = atomic_load_relaxed (count);
  if (n <= 0 || n > percpu.cap[tc_idx])
    return 0;
  if (__rseq_percpu_try_cmpeqv_trymemcpy_storev
	(percpu.field, count, n, batch, percpu_slots (count),
	 n * sizeof (void *), 0, cpu) != 0)
    return -1;
  return n;
}

/* Empty the cache of the CPU the thread runs on into the arenas, each
   class in one sequence: this needs no fence, since no other thread can
   be in a sequence on that CPU when one commits.  */
static void
percpu_drain_local (void)
{
  void *batch[PERCPU_MAX_SLOTS];
  for (unsigned int c = 0; c < percpu.nclasses; c++)
    for (int attempt = 0; attempt < PERCPU_ATTEMPTS; attempt++)
      {
	int cpu = percpu_current ();
	if (cpu < 0)
	  return;
	intptr_t n = percpu_take_all (cpu, c, batch);
	if (n >= 0)
	  {
	    percpu_free_batch (batch, n);
	    break;
	  }
      }
}

/* The array of class TC_IDX on CPU is empty: take a batch from the
   transfer cache, return one chunk of it and put the rest into the
   array of the CPU the thread runs on (one chunk only once the caches
   take no new chunks).  NULL if the transfer cache is empty.  */
static void *
percpu_refill (int cpu, size_t tc_idx, int state)
{
  void *batch[PERCPU_MAX_SLOTS];
  size_t want = state == percpu_ready ? percpu.cap[tc_idx] / 2 + 1 : 1;
  size_t n = percpu_transfer_get (tc_idx, batch, want);
  if (n == 0)
    {
      percpu_count_event (cpu, percpu_word_misses, 1);
      return NULL;
    }
  void *mem = batch[--n];
  for (int attempt = 0; n > 0 && attempt < PERCPU_ATTEMPTS; attempt++)
    {
      if (cpu < 0)
	break;
      intptr_t *count = percpu_count (cpu, tc_idx);
      intptr_t have = atomic_load_relaxed (count);
      if (have < 0 || have + n > percpu.cap[tc_idx])
	break;
      int ret = __rseq_percpu_try_cmpeqv_trymemcpy_storev
	(percpu.field, count, have, &percpu_slots (count)[have], batch,
	 n * sizeof (void *), have + n, cpu);
      if (ret == 0)
	{
	  n = 0;
	  percpu_count_event (cpu, percpu_word_refills, 1);
	  percpu_touch (cpu);
	}
      else
	cpu = percpu_current ();
    }
  if (n > 0)
    {
      size_t moved = percpu_transfer_put (tc_idx, batch, n);
      percpu_free_batch (batch + moved, n - moved);
    }
  return percpu_checked_chunk (mem, tc_idx);
}

/* Set when the calling thread has shut its thread cache down on its
   way out: from then on it neither takes chunks from the caches nor
   puts chunks into them, so that percpu_fence can leave it out once it
   no longer counts in __nptl_nthreads.  */
static __thread bool percpu_exiting;

/* The calling thread's recent frees that the thread cache had no room
   for and mallocs that found it empty (see above), both halved when one
   reaches PERCPU_FLOW_WINDOW, so that a thread that changes its role
   soon counts as its new one.  "Clearly more" leaves PERCPU_FLOW_SLACK
   to a new thread, so that a consumer that allocated a few chunks
   still puts the chunks it frees.  Not counted with
   glibc.malloc.percpu_local, whose caches serve the thread itself.  */
#define PERCPU_FLOW_WINDOW 64
#define PERCPU_FLOW_SLACK 8
static __thread struct
{
  unsigned char freed;
  unsigned char allocated;
} percpu_flow;

static __always_inline void
percpu_flow_count (unsigned char *events)
{
  if (++*events >= PERCPU_FLOW_WINDOW)
    {
      percpu_flow.freed /= 2;
      percpu_flow.allocated /= 2;
    }
}

/* Count a free beyond the thread cache; whether the thread frees clearly
   more than it allocates.  */
static __always_inline bool
percpu_flow_free (void)
{
  percpu_flow_count (&percpu_flow.freed);
  return 2 * percpu_flow.allocated <= percpu_flow.freed + PERCPU_FLOW_SLACK;
}

/* Count a malloc that found the thread cache empty; whether the thread
   allocates clearly more than it frees.  */
static __always_inline bool
percpu_flow_malloc (void)
{
  percpu_flow_count (&percpu_flow.allocated);
  return 2 * percpu_flow.freed <= percpu_flow.allocated + PERCPU_FLOW_SLACK;
}

/* A chunk of class TC_IDX from the cache of the calling thread's CPU,
   or NULL.  Not inlined, like percpu_cache_put: inlined, its registers
   made every malloc save three more.  */
static __attribute_noinline__ void *
percpu_cache_get_slow (size_t tc_idx)
{
  int state = atomic_load_acquire (&percpu.state);
  /* An exiting thread that has emptied its thread cache leaves the
     caches alone (percpu_fence counts on it).  */
  if (!percpu_has_caches (state) || percpu_exiting
      || tc_idx >= percpu.nclasses || percpu.cap[tc_idx] == 0)
    return NULL;
  if (!percpu.local && !percpu_flow_malloc ())
    return NULL;
  for (int attempt = 0; attempt < PERCPU_ATTEMPTS; attempt++)
    {
      int cpu = percpu_current ();
      if (cpu < 0)
	return NULL;
      intptr_t *count = percpu_count (cpu, tc_idx);
      intptr_t n = atomic_load_relaxed (count);
      if (n == 0)
	return percpu_refill (cpu, tc_idx, state);
      if (n < 0 || n > percpu.cap[tc_idx])
	return NULL;
      void **top = &percpu_slots (count)[n - 1];
      void *mem = atomic_load_relaxed (top);
      percpu_mark_used (cpu);
      if (__rseq_percpu_try_cmpeqv_cmpeqv_storev
	    (percpu.field, count, n, (intptr_t *) top, (intptr_t) mem, n - 1,
	     cpu) == 0)
	return percpu_checked_chunk (mem, tc_idx);
    }
  return NULL;
}

/* Inline, the tests that keep a thread from the call while the caches
   are not set up (no thread has yet freed another thread's chunk).  */
static __always_inline void *
percpu_cache_get (size_t tc_idx)
{
  if (!percpu_cache_enabled ()
      || !percpu_has_caches (atomic_load_relaxed (&percpu.state)))
    return NULL;
  return percpu_cache_get_slow (tc_idx);
}

/* Whether MEM is in a per-CPU or transfer cache.  Only called when its
   key says it may be: the caches may change while they are read, but
   not a chunk that the caller owns.  */
static bool
percpu_holds (void *mem, size_t tc_idx)
{
  for (unsigned int cpu = 0; cpu < percpu.ncaches; cpu++)
    {
      intptr_t *count = percpu_count (cpu, tc_idx);
      intptr_t n = atomic_load_relaxed (count);
      for (intptr_t i = 0; i < n && i < percpu.cap[tc_idx]; i++)
	if (atomic_load_relaxed (&percpu_slots (count)[i]) == mem)
	  return true;
    }
  struct percpu_transfer *t = &percpu.transfer[tc_idx];
  bool found = false;
  __libc_lock_lock (t->lock);
  for (size_t i = 0; i < t->count && !found; i++)
    found = t->slots[i] == mem;
  __libc_lock_unlock (t->lock);
  return found;
}

/* _int_free of chunk E of class TC_IDX, before the thread cache: a
   chunk found in a per-CPU cache is freed twice.  Its key is the thread
   cache's, so with the cache off this costs what the thread cache's own
   test costs.  */
static __always_inline void
percpu_cache_check_free (tcache_entry *e, size_t tc_idx)
{
  if (__glibc_unlikely (e->key == tcache_key)
      && percpu_has_caches (atomic_load_acquire (&percpu.state))
      && tc_idx < percpu.nclasses && percpu_holds (e, tc_idx))
    malloc_printerr ("free(): double free detected in per-CPU cache");
}

/* Put chunk P of class TC_IDX into the cache of the calling thread's
   CPU.  Returns false if the caller must free it to its arena.  Called
   only if percpu_cache_enabled, by percpu_cache_put.  */
static __attribute_noinline__ bool
percpu_cache_put_slow (mchunkptr p, size_t tc_idx)
{
  if (__glibc_unlikely (percpu_exiting))
    return false;
  if (!percpu.local && !percpu_flow_free ())
    return false;
  int state = atomic_load_acquire (&percpu.state);
  if (__glibc_unlikely (state != percpu_ready))
    {
      if (state != percpu_unset || percpu.mode == percpu_off
	  || !percpu_setup ())
	return false;
    }
  if (tc_idx >= percpu.nclasses || percpu.cap[tc_idx] == 0)
    return false;

  tcache_entry *e = (tcache_entry *) chunk2mem (p);
  e->key = tcache_key;
  for (int attempt = 0; attempt < PERCPU_ATTEMPTS; attempt++)
    {
      int cpu = percpu_current ();
      if (cpu < 0)
	break;
      intptr_t *count = percpu_count (cpu, tc_idx);
      intptr_t n = atomic_load_relaxed (count);
      if (n < 0 || n > percpu.cap[tc_idx])
	break;
      if (n == percpu.cap[tc_idx])
	{
	  percpu_flush (cpu, tc_idx, count, n);
	  continue;
	}
      percpu_mark_used (cpu);
      if (__rseq_percpu_try_cmpeqv_trystorev_storev
	    (percpu.field, count, n, (intptr_t *) &percpu_slots (count)[n],
	     (intptr_t) e, n + 1, cpu) == 0)
	return true;
    }
  e->key = 0;
  return false;
}

/* Only chunks freed away from their arena's thread (see above), unless
   glibc.malloc.percpu_local: tested inline, so that a thread that frees
   its own chunks pays one comparison and the count of its frees with the
   cache on, not a call.  */
static __always_inline bool
percpu_cache_put (mchunkptr p, size_t tc_idx)
{
  if (!percpu.local && arena_for_chunk (p) == thread_arena)
    {
      percpu_flow_free ();
      return false;
    }
  return percpu_cache_put_slow (p, tc_idx);
}

/* Whether the fence is needed: with one thread, no sequence but the
   caller's can be under way, and the caller is in none.  A thread leaves
   the count only after its thread cache shut down, from when it no
   longer uses the caches.  */
static bool
percpu_fence_needed (void)
{
  return atomic_load_acquire (&__nptl_nthreads) > 1;
}

/* Make every other thread of the process that is in a sequence leave
   it.  Called with percpu_lock held.  Returns false if membarrier
   failed.  */
static bool
percpu_fence (void)
{
  if (!percpu_fence_needed ())
    return true;
  if (percpu.state != percpu_ready)
    return false;
  /* Registration is per process: a forked child registers again.  */
  if (!percpu.fence_registered)
    {
      if (INTERNAL_SYSCALL_CALL (membarrier,
				 MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ,
				 0, 0) != 0)
	return false;
      percpu.fence_registered = true;
    }
  return INTERNAL_SYSCALL_CALL (membarrier,
				MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
				0, 0) == 0;
}

/* Store PERCPU_LOCKED into the count of class C of cache CPU; return
   the count it replaced.  */
static intptr_t
percpu_lock_count (unsigned int cpu, unsigned int c)
{
  intptr_t *count = percpu_count (cpu, c);
  intptr_t n = atomic_load_relaxed (count);
  while (!atomic_compare_exchange_weak_acquire (count, &n, PERCPU_LOCKED))
    ;
  if (n < 0 || n > percpu.cap[c])
    malloc_printerr ("malloc(): corrupted per-CPU cache");
  return n;
}

/* Store back the counts SAVED of cache CPU that are still locked.  A
   count that a sequence committed over keeps that sequence's value: it
   read the count before it was locked, and the slots did not change.  */
static void
percpu_unlock_cache (unsigned int cpu, const intptr_t *saved)
{
  for (unsigned int c = 0; c < percpu.nclasses; c++)
    {
      intptr_t *count = percpu_count (cpu, c);
      intptr_t expected = PERCPU_LOCKED;
      while (!atomic_compare_exchange_weak_release (count, &expected,
						    saved[c]))
	if (expected != PERCPU_LOCKED)
	  break;
    }
}

/* Lock every count of cache CPU against the operations, and make sure
   with the fence that no sequence that read a count before it was
   locked committed after: such a commit overwrote the lock, so lock
   that count again, until none did.  SAVED receives the counts.
   Returns false, with the counts stored back, if the fence failed.  */
static bool
percpu_lock_cache (unsigned int cpu, intptr_t *saved)
{
  for (unsigned int c = 0; c < percpu.nclasses; c++)
    saved[c] = percpu_lock_count (cpu, c);
  for (;;)
    {
      if (!percpu_fence ())
	{
	  percpu_unlock_cache (cpu, saved);
	  return false;
	}
      /* Every thread of the process that was in a sequence has now
	 left it, committed or not.  */
      bool stable = true;
      for (unsigned int c = 0; c < percpu.nclasses; c++)
	if (atomic_load_relaxed (percpu_count (cpu, c)) != PERCPU_LOCKED)
	  {
	    saved[c] = percpu_lock_count (cpu, c);
	    stable = false;
	  }
      if (stable)
	return true;
    }
}

static void
percpu_drain_transfer (void)
{
  void *batch[PERCPU_MAX_SLOTS];
  for (unsigned int c = 0; c < percpu.nclasses; c++)
    {
      size_t n;
      while ((n = percpu_transfer_get (c, batch, PERCPU_MAX_SLOTS)) > 0)
	percpu_free_batch (batch, n);
    }
}

/* The fence failed: the caches take no new chunks and no cache of
   another CPU is emptied again.  Called with percpu_lock held.  */
static void
percpu_lose_fence (void)
{
  atomic_store_release (&percpu.state, percpu_unfenced);
  percpu_drain_transfer ();
}

/* Empty the caches of CPUs FIRST to END - 1 into the arenas.  Called
   with percpu_lock held.  Returns false if that needs the fence and it
   failed (now or before): the caches not emptied yet keep their
   chunks.  */
static bool
percpu_drain_range (unsigned int first, unsigned int end)
{
  intptr_t saved[TCACHE_SMALL_BINS];
  /* After a failure, membarrier is not called again.  */
  if (percpu.state != percpu_ready && percpu_fence_needed ())
    return false;
  for (unsigned int cpu = first; cpu < end; cpu++)
    {
      bool empty = true;
      for (unsigned int c = 0; c < percpu.nclasses && empty; c++)
	empty = atomic_load_relaxed (percpu_count (cpu, c)) == 0;
      if (empty)
	continue;
      if (!percpu_lock_cache (cpu, saved))
	{
	  percpu_lose_fence ();
	  return false;
	}
      percpu_count_event (cpu, percpu_word_drains, 1);
      for (unsigned int c = 0; c < percpu.nclasses; c++)
	percpu_free_batch (percpu_slots (percpu_count (cpu, c)), saved[c]);
      for (unsigned int c = 0; c < percpu.nclasses; c++)
	atomic_store_release (percpu_count (cpu, c), 0);
    }
  return true;
}

/* malloc_trim: return every cached chunk to its arena; without the
   fence, those of the transfer caches and of the caller's CPU.  */
static void
percpu_cache_drain (void)
{
  if (!percpu_has_caches (atomic_load_acquire (&percpu.state)))
    return;
  __libc_lock_lock (percpu_lock);
  if (!percpu_drain_range (0, percpu.ncaches))
    percpu_drain_local ();
  percpu_drain_transfer ();
  __libc_lock_unlock (percpu_lock);
}

/* Empty the caches that had no operation since the last look, at least
   PERCPU_IDLE_NS ago: their CPU (or concurrency ID) is no longer
   used.  */
static void
percpu_drain_idle (void)
{
  if (__libc_lock_trylock (percpu_lock) != 0)
    return;
  struct timespec now;
  __clock_gettime (CLOCK_MONOTONIC, &now);
  int64_t now_ns = now.tv_sec * (int64_t) 1000000000 + now.tv_nsec;
  if (now_ns - percpu.last_look_ns < PERCPU_IDLE_NS)
    {
      __libc_lock_unlock (percpu_lock);
      return;
    }
  percpu.last_look_ns = now_ns;
  for (unsigned int cpu = 0; cpu < percpu.ncaches; cpu++)
    {
      intptr_t *used = &percpu_cache_of (cpu)[percpu_word_used];
      if (atomic_load_relaxed (used) != 0)
	atomic_store_relaxed (used, 0);
      else if (!percpu_drain_range (cpu, cpu + 1))
	break;
    }
  __libc_lock_unlock (percpu_lock);
}

/* A thread exits.  Concurrency IDs are below the number of threads, so
   the caches of IDs from that number on are no longer used.  Without
   the fence, the thread empties the cache it runs on.  */
static void
percpu_cache_thread_exit (void)
{
  percpu_exiting = true;
  int state = atomic_load_acquire (&percpu.state);
  if (state == percpu_unfenced)
    {
      percpu_drain_local ();
      return;
    }
  if (state != percpu_ready || percpu.field != RSEQ_PERCPU_INDEX_MM_CID)
    return;
  /* This thread still counts in __nptl_nthreads.  */
  unsigned int live = atomic_load_relaxed (&__nptl_nthreads);
  if (live > 1)
    live--;
  if (live >= percpu.ncaches)
    return;
  __libc_lock_lock (percpu_lock);
  percpu_drain_range (live, percpu.ncaches);
  __libc_lock_unlock (percpu_lock);
}

/* fork: percpu_lock is taken before the arena locks, the transfer
   caches' after them (nothing holding one takes another lock).  With
   the cache off (the tunable is read once, at startup) there is nothing
   to lock.  */
static void
percpu_cache_fork_lock_parent (void)
{
  if (percpu.mode != percpu_off)
    __libc_lock_lock (percpu_lock);
}

static void
percpu_cache_fork_lock_transfer (void)
{
  if (percpu_has_caches (percpu.state))
    for (unsigned int c = 0; c < percpu.nclasses; c++)
      __libc_lock_lock (percpu.transfer[c].lock);
}

static void
percpu_cache_fork_unlock_parent (void)
{
  if (percpu_has_caches (percpu.state))
    for (unsigned int c = 0; c < percpu.nclasses; c++)
      __libc_lock_unlock (percpu.transfer[c].lock);
  if (percpu.mode != percpu_off)
    __libc_lock_unlock (percpu_lock);
}

/* The child keeps the caches and their chunks: it has the same memory,
   and a concurrency ID or CPU it will use finds them.  Its membarrier
   registration is its own, made when it first needs the fence.  */
static void
percpu_cache_fork_unlock_child (void)
{
  if (percpu_has_caches (percpu.state))
    for (unsigned int c = 0; c < percpu.nclasses; c++)
      __libc_lock_init (percpu.transfer[c].lock);
  if (percpu.mode != percpu_off)
    __libc_lock_init (percpu_lock);
  percpu.fence_registered = false;
}

struct percpu_cache_stats
{
  const char *mode;		/* "off", "mm_cid" or "cpu_id".  */
  size_t caches;		/* Per-CPU caches set up.  */
  size_t chunks;		/* Chunks held, in them and the transfer
				   cache.  */
  size_t bytes;			/* Their total size.  */
};

/* The chunks and bytes that cache CPU holds.  */
static void
percpu_cache_held (unsigned int cpu, size_t *chunks, size_t *bytes)
{
  *chunks = *bytes = 0;
  for (unsigned int c = 0; c < percpu.nclasses; c++)
    {
      intptr_t k = atomic_load_relaxed (percpu_count (cpu, c));
      if (k > 0)
	{
	  *chunks += k;
	  *bytes += k * (tidx2usize (c) + SIZE_SZ);
	}
    }
}

static void
percpu_cache_stats (struct percpu_cache_stats *stats)
{
  stats->mode = "off";
  stats->caches = 0;
  stats->chunks = 0;
  stats->bytes = 0;
  if (!percpu_has_caches (atomic_load_acquire (&percpu.state)))
    return;
  stats->mode = percpu.field == RSEQ_PERCPU_INDEX_MM_CID ? "mm_cid" : "cpu_id";
  stats->caches = percpu.ncaches;
  for (unsigned int cpu = 0; cpu < percpu.ncaches; cpu++)
    {
      size_t chunks, bytes;
      percpu_cache_held (cpu, &chunks, &bytes);
      stats->chunks += chunks;
      stats->bytes += bytes;
    }
  for (unsigned int c = 0; c < percpu.nclasses; c++)
    {
      size_t n = atomic_load_relaxed (&percpu.transfer[c].count);
      stats->chunks += n;
      stats->bytes += n * (tidx2usize (c) + SIZE_SZ);
    }
}

/* malloc_info's percpu element: the totals, then one cache element per
   cache that holds chunks or has statistics.  */
static void
percpu_cache_info (FILE *fp)
{
  struct percpu_cache_stats stats;
  percpu_cache_stats (&stats);
  if (stats.caches == 0)
    return;
  /* fence="failed": the caches take no new chunks (percpu_lose_fence).  */
  fprintf (fp, "<percpu mode=\"%s\" fence=\"%s\" caches=\"%zu\" "
	   "count=\"%zu\" size=\"%zu\" budget=\"%zu\" local=\"%d\">\n",
	   stats.mode, atomic_load_relaxed (&percpu.state) == percpu_ready
	   ? "ok" : "failed", stats.caches, stats.chunks, stats.bytes,
	   percpu.bytes, percpu.local);
  for (unsigned int cpu = 0; cpu < percpu.ncaches; cpu++)
    {
      size_t chunks, bytes;
      const intptr_t *h = percpu_cache_of (cpu);
      percpu_cache_held (cpu, &chunks, &bytes);
      if (chunks == 0 && h[percpu_word_refills] == 0
	  && h[percpu_word_flushes] == 0 && h[percpu_word_drains] == 0
	  && h[percpu_word_misses] == 0)
	continue;
      fprintf (fp, "<cache index=\"%u\" count=\"%zu\" size=\"%zu\" "
	       "refills=\"%zd\" flushes=\"%zd\" drains=\"%zd\" "
	       "misses=\"%zd\" overflows=\"%zd\"/>\n", cpu, chunks, bytes,
	       (ssize_t) h[percpu_word_refills],
	       (ssize_t) h[percpu_word_flushes],
	       (ssize_t) h[percpu_word_drains],
	       (ssize_t) h[percpu_word_misses],
	       (ssize_t) h[percpu_word_overflows]);
    }
  fputs ("</percpu>\n", fp);
}

#endif /* malloc-percpu.h */
#endif /* __RSEQ_PERCPU_ARCH && IS_IN (libc) */
