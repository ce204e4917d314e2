/* Per-CPU data structures built on the patched glibc's per-CPU
   operations (<sys/rseq-percpu.h>): counter, spinlock, LIFO list, and
   ring buffers of pointers and of copied records.  Used by the tests
   and benchmarks.

   Every structure is indexed by cpu_id or by mm_cid (FIELD is
   RSEQ_PERCPU_INDEX_CPU_ID or RSEQ_PERCPU_INDEX_MM_CID) and keeps one cache line
   per possible CPU.  Functions that return int return -1 with errno set
   on failure: ENOSYS when per-CPU operations cannot run on the calling
   thread, EINVAL for bad arguments, ENOMEM.  */
#ifndef PERCPU_H
#define PERCPU_H

#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>

#ifdef PERCPU_INJECT
/* Delay loops inside the critical sections, for stress tests: point N
   spins percpu_inject_loops[N] times.  Build without PIE.  Each
   architecture counts in a register of its own that no section uses,
   except i386, which has none to spare (and a push could be cut short
   by an abort, leaving the stack unbalanced): it counts down a
   thread-local budget in memory, which percpu_inject_refill sets from
   percpu_inject_loops before each attempt.  The loops use local labels
   6 and 7, the ones <sys/rseq-percpu.h> leaves to injected code.  */
extern volatile int percpu_inject_loops[8];
extern __thread int percpu_inject_budget[8];
void percpu_inject_refill (void);
# define PERCPU_INJECT_SLOT(n) "percpu_inject_loops+4*" #n
# if defined __x86_64__
#  include "inject/x86_64.h"
# elif defined __i386__
#  include "inject/i386.h"
# elif defined __aarch64__
#  include "inject/aarch64.h"
# elif defined __arm__
#  include "inject/arm.h"
# elif defined __powerpc64__
#  include "inject/powerpc64.h"
# else
#  error "PERCPU_INJECT: no delay loop for this architecture"
# endif
# define __RSEQ_PERCPU_INJECT_INPUT
#endif

#include <sys/rseq-percpu.h>

/* Aborted sequences seen by the calling thread (all structures).  */
extern __thread unsigned long percpu_aborts;

/* Number of slots: every possible CPU number and mm_cid is below it.  */
int percpu_nr_slots (void);

struct percpu_slot
{
  intptr_t value;
  intptr_t *array;		/* Buffers only.  */
} __attribute__ ((aligned (64)));

/* Counter.  */
struct percpu_counter
{
  int field;
  int nr_slots;
  struct percpu_slot *slots;
};
int percpu_counter_init (struct percpu_counter *c, int field);
void percpu_counter_destroy (struct percpu_counter *c);
int percpu_counter_add (struct percpu_counter *c, intptr_t count);
intptr_t percpu_counter_sum (const struct percpu_counter *c);

/* Spinlock: one lock word per CPU.  acquire returns the CPU whose lock
   is held, to be passed to release.  */
struct percpu_lock
{
  int field;
  int nr_slots;
  struct percpu_slot *slots;
};
int percpu_lock_init (struct percpu_lock *l, int field);
void percpu_lock_destroy (struct percpu_lock *l);
int percpu_lock_acquire (struct percpu_lock *l);
void percpu_lock_release (struct percpu_lock *l, int cpu);

/* LIFO list of caller-owned nodes.  */
struct percpu_node
{
  struct percpu_node *next;
  intptr_t data;
};
struct percpu_list
{
  int field;
  int nr_slots;
  struct percpu_slot *heads;
};
int percpu_list_init (struct percpu_list *l, int field);
void percpu_list_destroy (struct percpu_list *l);
/* Push onto the current CPU's list; returns that CPU, or -1.  */
int percpu_list_push (struct percpu_list *l, struct percpu_node *node);
/* Pop from the current CPU's list; NULL if it is empty (errno 0) or on
   failure (errno set).  */
struct percpu_node *percpu_list_pop (struct percpu_list *l);
/* Pop from CPU's list without rseq; only when no thread uses L.  */
struct percpu_node *percpu_list_pop_slot (struct percpu_list *l, int cpu);
/* Push NODE onto CPU's list without rseq; only when no thread uses L
   (to fill every CPU's list before the list is shared).  */
void percpu_list_push_slot (struct percpu_list *l, int cpu,
			    struct percpu_node *node);

/* Ring buffer (LIFO order) of pointers, or of RECORD_SIZE-byte records
   copied in and out with the memcpy operation (RECORD_SIZE 0: pointers).
   push returns 0, 1 if the current CPU's buffer is full, -1 on failure;
   pop returns 0, 1 if it is empty, -1 on failure.  */
struct percpu_buffer
{
  int field;
  int nr_slots;
  size_t capacity;
  size_t record_size;
  struct percpu_slot *slots;
};
int percpu_buffer_init (struct percpu_buffer *b, int field, size_t capacity,
			size_t record_size);
void percpu_buffer_destroy (struct percpu_buffer *b);
int percpu_buffer_push (struct percpu_buffer *b, void *ptr);
int percpu_buffer_pop (struct percpu_buffer *b, void **ptr);
int percpu_buffer_push_record (struct percpu_buffer *b, const void *record);
int percpu_buffer_pop_record (struct percpu_buffer *b, void *record);
/* Take a pointer or record from CPU's buffer without rseq; only when no
   thread uses B.  Returns 0, or 1 if that buffer is empty.  */
int percpu_buffer_pop_slot (struct percpu_buffer *b, int cpu, void *out);
/* Put a pointer or record (IN points to it) on CPU's buffer without
   rseq; only when no thread uses B (to fill every CPU's buffer before
   the buffer is shared).  Returns 0, or 1 if that buffer is full.  */
int percpu_buffer_push_slot (struct percpu_buffer *b, int cpu,
			     const void *in);

#endif /* PERCPU_H */
