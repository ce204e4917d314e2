/* rseq._percpu: PerCpuCounter, AtomicCounter and LockedCounter.

   The slots are percpu.c's (struct percpu_counter: allocation and sum),
   but the per-CPU add is the binding's own: one inline attempt of
   <sys/rseq-percpu.h>'s critical section (__rseq_percpu_try_addv), then
   libc's continuation, as a C caller of the inline rseq_percpu_addv
   gets it.  percpu_counter_add cannot do that here: in this module
   percpu.c calls libc's out-of-line operations (percpu-module.c).  */
#include "rseqpy-internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/rseq-percpu.h>

enum { KIND_RSEQ, KIND_ATOMIC, KIND_MUTEX };

struct rseqpy_counter
{
  int kind;
  unsigned long aborts;
  pthread_mutex_t lock;
  struct percpu_counter slots;
};

rseqpy_counter *
rseqpy_counter_new (int kind, int field)
{
  rseqpy_counter *c = calloc (1, sizeof *c);
  if (c == NULL)
    return NULL;
  if (percpu_counter_init (&c->slots, field) != 0)
    {
      free (c);
      return NULL;
    }
  c->kind = kind;
  pthread_mutex_init (&c->lock, NULL);
  return c;
}

void
rseqpy_counter_free (rseqpy_counter *c)
{
  if (c != NULL)
    percpu_counter_destroy (&c->slots);
  free (c);
}

enum
{
  ADD_DONE = 0,
  ADD_NO_PERCPU = -1,		/* No per-CPU operations for the field.  */
  ADD_NO_CPU_OPV = -2,		/* FALLBACK_ALWAYS, and no cpu_opv.  */
  ADD_RETRY = 1			/* Not committed: read the CPU again.  */
};

/* The add through libc: after the inline attempt aborted, libc's
   continuation, which retries and falls back to cpu_opv as the
   thread's mode says; with FALLBACK_ALWAYS (LIBC_FIRST), instead of
   the inline attempt, rseq_percpu_addv, which goes straight to
   cpu_opv, as RSEQ_PERCPU_NO_INLINE code would.  Out of line: the
   inline loop stays small.  */
static __attribute__ ((noinline)) int
add_through_libc (int field, intptr_t *slot, intptr_t count, int cpu,
		  const struct rseqpy_libc *libc, bool libc_first)
{
  int ret;
  if (libc_first)
    ret = libc->addv (field, slot, count, cpu);
  else if (libc->addv_slow != NULL)
    ret = libc->addv_slow (field, slot, count, cpu);
  else
    return ADD_RETRY;		/* Stock glibc: another inline attempt.  */
  if (ret == 0)
    return ADD_DONE;
  if (libc_first && field == RSEQ_PERCPU_INDEX_CPU_ID && errno == ENOSYS)
    return ADD_NO_CPU_OPV;
  return ADD_RETRY;
}

/* N adds of COUNT to the current CPU's slot: one inline attempt each,
   then libc (add_through_libc).  Always inlined so that FIELD is a
   constant and the critical section addresses its CPU field
   directly.  */
static inline __attribute__ ((always_inline)) int
rseq_add_loop (rseqpy_counter *c, int field, long n, intptr_t count,
	       const struct rseqpy_libc *libc, bool libc_first,
	       unsigned long *aborts)
{
  struct percpu_slot *slots = c->slots.slots;
  int nr_slots = c->slots.nr_slots;
  for (long i = 0; i < n;)
    {
      int cpu = __rseq_percpu_current_cpu (field);
      if (cpu < 0 || cpu >= nr_slots)
	return ADD_NO_PERCPU;
      intptr_t *slot = &slots[cpu].value;
      if (!libc_first)
	{
	  int ret = __rseq_percpu_try_addv (field, slot, count, cpu);
	  if (ret == 0)
	    {
	      i++;
	      continue;
	    }
	  /* Moved off CPU before the section started: not an abort (the
	     patched glibc does not count it either); read it again.  */
	  if (ret == __RSEQ_PERCPU_CPU_CHANGED)
	    continue;
	  ++*aborts;
	}
      int ret = add_through_libc (field, slot, count, cpu, libc,
				  libc_first);
      if (ret == ADD_DONE)
	i++;
      else if (ret != ADD_RETRY)
	return ret;
    }
  return ADD_DONE;
}

/* N adds of COUNT by rseq: ADD_DONE, or ADD_NO_PERCPU (per-CPU
   operations cannot run on this thread: rseq not registered, or no
   mm_cid for an mm_cid counter), or ADD_NO_CPU_OPV.  Not inlined, and
   named after the operation: rseq.trace names the critical sections
   inlined here after this function.  */
static __attribute__ ((noinline)) int
addv_many (rseqpy_counter *c, long n, long count)
{
  const struct rseqpy_libc *libc = rseqpy_libc ();
  bool libc_first
    = (rseqpy_fallback_mode () == RSEQ_PERCPU_FALLBACK_ALWAYS
       && libc->addv != NULL);
  unsigned long aborts = 0;
  int ret;
  if (c->slots.field == RSEQ_PERCPU_INDEX_CPU_ID)
    ret = rseq_add_loop (c, RSEQ_PERCPU_INDEX_CPU_ID, n, count, libc,
			 libc_first, &aborts);
  else
    ret = rseq_add_loop (c, RSEQ_PERCPU_INDEX_MM_CID, n, count, libc,
			 libc_first, &aborts);
  __atomic_fetch_add (&c->aborts, aborts, __ATOMIC_RELAXED);
  return ret;
}

int
rseqpy_counter_add_many (rseqpy_counter *c, long n, long count)
{
  intptr_t *shared = &c->slots.slots[0].value;
  if (c->kind == KIND_RSEQ)
    return addv_many (c, n, count);
  if (c->kind == KIND_ATOMIC)
    for (long i = 0; i < n; i++)
      __atomic_fetch_add (shared, count, __ATOMIC_RELAXED);
  else
    for (long i = 0; i < n; i++)
      {
	pthread_mutex_lock (&c->lock);
	*shared += count;
	pthread_mutex_unlock (&c->lock);
      }
  return ADD_DONE;
}

int
rseqpy_counter_nr_slots (rseqpy_counter *c)
{
  return c->slots.nr_slots;
}

/* Copy the N slot values into OUT: N must be the counter's slot
   count (-1 with errno EINVAL otherwise).  */
int
rseqpy_counter_values (rseqpy_counter *c, long *out, int n)
{
  if (n != c->slots.nr_slots)
    {
      errno = EINVAL;
      return -1;
    }
  for (int i = 0; i < n; i++)
    out[i] = __atomic_load_n (&c->slots.slots[i].value, __ATOMIC_RELAXED);
  return n;
}

long
rseqpy_counter_sum (rseqpy_counter *c)
{
  return percpu_counter_sum (&c->slots);
}

unsigned long
rseqpy_counter_aborts (rseqpy_counter *c)
{
  return __atomic_load_n (&c->aborts, __ATOMIC_RELAXED);
}
