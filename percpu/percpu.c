/* Per-CPU data structures on rseq per-CPU operations; see percpu.h.
   Every operation follows the same loop: read the current CPU, run one
   sequence on that CPU's slot, and on an abort count it and retry.  */
#include "percpu.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef PERCPU_INJECT
volatile int percpu_inject_loops[8];
__thread int percpu_inject_budget[8];

void
percpu_inject_refill (void)
{
  for (int i = 0; i < 8; i++)
    percpu_inject_budget[i] = percpu_inject_loops[i];
}
#endif

__thread unsigned long percpu_aborts;

int
percpu_nr_slots (void)
{
  long n = sysconf (_SC_NPROCESSORS_CONF);
  return n > 0 ? (int) n : 1;
}

static struct percpu_slot *
alloc_slots (int field, int *nr_slots)
{
  if (field != RSEQ_PERCPU_INDEX_CPU_ID && field != RSEQ_PERCPU_INDEX_MM_CID)
    {
      errno = EINVAL;
      return NULL;
    }
  *nr_slots = percpu_nr_slots ();
  size_t size = sizeof (struct percpu_slot) * *nr_slots;
  struct percpu_slot *slots = aligned_alloc (64, size);
  if (slots != NULL)
    memset (slots, 0, size);
  return slots;
}

/* What every structure's init and destroy do with its header (FIELD,
   NR_SLOTS, SLOTS): one zeroed, aligned slot per configured CPU.  */
static int
slots_init (int field, int *field_out, int *nr_slots, struct percpu_slot **slots)
{
  *field_out = field;
  *slots = alloc_slots (field, nr_slots);
  return *slots == NULL ? -1 : 0;
}

static void
slots_free (struct percpu_slot **slots)
{
  free (*slots);
  *slots = NULL;
}

/* The CPU to run the next sequence on, or -1 with errno set.  */
static int
current_slot (int field, int nr_slots)
{
#ifdef PERCPU_INJECT
  percpu_inject_refill ();
#endif
  int cpu = rseq_percpu_current_cpu (field);
  if (cpu < 0)
    {
      errno = ENOSYS;
      return -1;
    }
  if (cpu >= nr_slots)
    {
      errno = ERANGE;
      return -1;
    }
  return cpu;
}

int
percpu_counter_init (struct percpu_counter *c, int field)
{
  return slots_init (field, &c->field, &c->nr_slots, &c->slots);
}

void
percpu_counter_destroy (struct percpu_counter *c)
{
  slots_free (&c->slots);
}

int
percpu_counter_add (struct percpu_counter *c, intptr_t count)
{
  for (;;)
    {
      int cpu = current_slot (c->field, c->nr_slots);
      if (cpu < 0)
	return -1;
      if (rseq_percpu_addv (c->field, &c->slots[cpu].value, count, cpu) == 0)
	return 0;
      percpu_aborts++;
    }
}

intptr_t
percpu_counter_sum (const struct percpu_counter *c)
{
  intptr_t sum = 0;
  for (int i = 0; i < c->nr_slots; i++)
    sum += __atomic_load_n (&c->slots[i].value, __ATOMIC_RELAXED);
  return sum;
}

int
percpu_lock_init (struct percpu_lock *l, int field)
{
  return slots_init (field, &l->field, &l->nr_slots, &l->slots);
}

void
percpu_lock_destroy (struct percpu_lock *l)
{
  slots_free (&l->slots);
}

int
percpu_lock_acquire (struct percpu_lock *l)
{
  for (;;)
    {
      int cpu = current_slot (l->field, l->nr_slots);
      if (cpu < 0)
	return -1;
      int ret = rseq_percpu_cmpeqv_storev (l->field, &l->slots[cpu].value,
					   0, 1, cpu);
      if (ret == 0)
	{
	  /* The sequence's store is plain; order the critical section
	     after it.  */
	  __atomic_thread_fence (__ATOMIC_ACQUIRE);
	  return cpu;
	}
      if (ret < 0)
	percpu_aborts++;
      else
	/* Held by a thread preempted on this CPU: let it run.  */
	sched_yield ();
    }
}

void
percpu_lock_release (struct percpu_lock *l, int cpu)
{
  __atomic_store_n (&l->slots[cpu].value, 0, __ATOMIC_RELEASE);
}

int
percpu_list_init (struct percpu_list *l, int field)
{
  return slots_init (field, &l->field, &l->nr_slots, &l->heads);
}

void
percpu_list_destroy (struct percpu_list *l)
{
  slots_free (&l->heads);
}

int
percpu_list_push (struct percpu_list *l, struct percpu_node *node)
{
  for (;;)
    {
      int cpu = current_slot (l->field, l->nr_slots);
      if (cpu < 0)
	return -1;
      intptr_t *head = &l->heads[cpu].value;
      intptr_t expect = __atomic_load_n (head, __ATOMIC_RELAXED);
      node->next = (struct percpu_node *) expect;
      int ret = rseq_percpu_cmpeqv_storev (l->field, head, expect,
					   (intptr_t) node, cpu);
      if (ret == 0)
	return cpu;
      if (ret < 0)
	percpu_aborts++;
    }
}

struct percpu_node *
percpu_list_pop (struct percpu_list *l)
{
  for (;;)
    {
      int cpu = current_slot (l->field, l->nr_slots);
      if (cpu < 0)
	return NULL;
      intptr_t node;
      int ret = rseq_percpu_cmpnev_storeoffp_load
	(l->field, &l->heads[cpu].value, 0,
	 offsetof (struct percpu_node, next), &node, cpu);
      if (ret == 0)
	return (struct percpu_node *) node;
      if (ret > 0)
	{
	  errno = 0;
	  return NULL;
	}
      percpu_aborts++;
    }
}

struct percpu_node *
percpu_list_pop_slot (struct percpu_list *l, int cpu)
{
  struct percpu_node *node = (struct percpu_node *) l->heads[cpu].value;
  if (node != NULL)
    l->heads[cpu].value = (intptr_t) node->next;
  return node;
}

int
percpu_buffer_init (struct percpu_buffer *b, int field, size_t capacity,
		    size_t record_size)
{
  size_t entry = record_size != 0 ? record_size : sizeof (intptr_t);
  if (capacity == 0 || capacity > SIZE_MAX / 2 / entry)
    {
      errno = EINVAL;
      return -1;
    }
  b->capacity = capacity;
  b->record_size = record_size;
  if (slots_init (field, &b->field, &b->nr_slots, &b->slots) != 0)
    return -1;
  for (int i = 0; i < b->nr_slots; i++)
    {
      b->slots[i].array = calloc (capacity, entry);
      if (b->slots[i].array == NULL)
	{
	  percpu_buffer_destroy (b);
	  errno = ENOMEM;
	  return -1;
	}
    }
  return 0;
}

void
percpu_buffer_destroy (struct percpu_buffer *b)
{
  if (b->slots == NULL)
    return;
  for (int i = 0; i < b->nr_slots; i++)
    free (b->slots[i].array);
  slots_free (&b->slots);
}

/* Reject the pointer calls on a record buffer and vice versa.  */
static int
check_kind (const struct percpu_buffer *b, int records)
{
  if ((b->record_size != 0) != records)
    {
      errno = EINVAL;
      return -1;
    }
  return 0;
}

int
percpu_buffer_push (struct percpu_buffer *b, void *ptr)
{
  if (check_kind (b, 0) != 0)
    return -1;
  for (;;)
    {
      int cpu = current_slot (b->field, b->nr_slots);
      if (cpu < 0)
	return -1;
      struct percpu_slot *s = &b->slots[cpu];
      intptr_t offset = __atomic_load_n (&s->value, __ATOMIC_RELAXED);
      if ((size_t) offset >= b->capacity)
	return 1;
      /* Fill the free slot, then publish it by moving the offset.  */
      int ret = rseq_percpu_cmpeqv_trystorev_storev_release
	(b->field, &s->value, offset, &s->array[offset], (intptr_t) ptr,
	 offset + 1, cpu);
      if (ret == 0)
	return 0;
      if (ret < 0)
	percpu_aborts++;
    }
}

int
percpu_buffer_pop (struct percpu_buffer *b, void **ptr)
{
  if (check_kind (b, 0) != 0)
    return -1;
  for (;;)
    {
      int cpu = current_slot (b->field, b->nr_slots);
      if (cpu < 0)
	return -1;
      struct percpu_slot *s = &b->slots[cpu];
      intptr_t offset = __atomic_load_n (&s->value, __ATOMIC_RELAXED);
      if (offset == 0)
	return 1;
      intptr_t top = __atomic_load_n (&s->array[offset - 1],
				      __ATOMIC_RELAXED);
      /* The top entry must still be TOP when the offset moves down.  */
      int ret = rseq_percpu_cmpeqv_cmpeqv_storev
	(b->field, &s->value, offset, &s->array[offset - 1], top,
	 offset - 1, cpu);
      if (ret == 0)
	{
	  *ptr = (void *) top;
	  return 0;
	}
      if (ret < 0)
	percpu_aborts++;
    }
}

int
percpu_buffer_push_record (struct percpu_buffer *b, const void *record)
{
  if (check_kind (b, 1) != 0)
    return -1;
  for (;;)
    {
      int cpu = current_slot (b->field, b->nr_slots);
      if (cpu < 0)
	return -1;
      struct percpu_slot *s = &b->slots[cpu];
      intptr_t offset = __atomic_load_n (&s->value, __ATOMIC_RELAXED);
      if ((size_t) offset >= b->capacity)
	return 1;
      char *dst = (char *) s->array + offset * b->record_size;
      int ret = rseq_percpu_cmpeqv_trymemcpy_storev_release
	(b->field, &s->value, offset, dst, record, b->record_size,
	 offset + 1, cpu);
      if (ret == 0)
	return 0;
      if (ret < 0)
	percpu_aborts++;
    }
}

int
percpu_buffer_pop_record (struct percpu_buffer *b, void *record)
{
  if (check_kind (b, 1) != 0)
    return -1;
  for (;;)
    {
      int cpu = current_slot (b->field, b->nr_slots);
      if (cpu < 0)
	return -1;
      struct percpu_slot *s = &b->slots[cpu];
      intptr_t offset = __atomic_load_n (&s->value, __ATOMIC_RELAXED);
      if (offset == 0)
	return 1;
      const char *src = (const char *) s->array
			+ (offset - 1) * b->record_size;
      /* Copy out into the caller's record, then release the slot.  */
      int ret = rseq_percpu_cmpeqv_trymemcpy_storev
	(b->field, &s->value, offset, record, src, b->record_size,
	 offset - 1, cpu);
      if (ret == 0)
	return 0;
      if (ret < 0)
	percpu_aborts++;
    }
}

int
percpu_buffer_pop_slot (struct percpu_buffer *b, int cpu, void *out)
{
  struct percpu_slot *s = &b->slots[cpu];
  if (s->value == 0)
    return 1;
  s->value--;
  if (b->record_size != 0)
    memcpy (out, (char *) s->array + s->value * b->record_size,
	    b->record_size);
  else
    *(void **) out = (void *) s->array[s->value];
  return 0;
}

void
percpu_list_push_slot (struct percpu_list *l, int cpu,
		       struct percpu_node *node)
{
  node->next = (struct percpu_node *) l->heads[cpu].value;
  l->heads[cpu].value = (intptr_t) node;
}

int
percpu_buffer_push_slot (struct percpu_buffer *b, int cpu, const void *in)
{
  struct percpu_slot *s = &b->slots[cpu];
  if ((size_t) s->value >= b->capacity)
    return 1;
  if (b->record_size != 0)
    memcpy ((char *) s->array + s->value * b->record_size, in,
	    b->record_size);
  else
    s->array[s->value] = (intptr_t) *(void *const *) in;
  s->value++;
  return 0;
}
