/* rseq._percpu: PerCpuList and PerCpuBuffer, which are percpu/percpu.c's
   list and record buffer (compiled into this module by percpu-module.c,
   on the patched glibc's out-of-line operations: libc's critical
   sections, its per-thread abort and fallback counts and the thread's
   fallback mode).  What this file adds is what Python needs around
   them: elements dealt out to every CPU at creation, churn loops that
   run with the GIL released, and a census of the elements.  */
#include "rseqpy-internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq-percpu.h>

/* Whether percpu.c's operations can make progress on this thread, else
   false with errno ENOSYS.  They retry every failed attempt, as they
   should after an abort or a migration, so they must not start where
   libc cannot run an operation at all: under a stock glibc (percpu.c's
   calls are NULL there) or with FALLBACK_ALWAYS on a kernel without
   cpu_opv (every operation would fail with ENOSYS).  A thread without
   rseq is caught by percpu.c itself (ENOSYS).  */
static bool
percpu_can_run (void)
{
  if (!rseqpy_patched_glibc ()
      || (rseqpy_fallback_mode () == RSEQ_PERCPU_FALLBACK_ALWAYS
	  && !rseqpy_cpu_opv_present ()))
    {
      errno = ENOSYS;
      return false;
    }
  return true;
}

/* Free lists: SIZE nodes numbered 0 .. SIZE-1.  */

struct rseqpy_list
{
  struct percpu_list list;
  long nodes_count;
  struct percpu_node *nodes;
};

void
rseqpy_list_free (rseqpy_list *l)
{
  if (l == NULL)
    return;
  percpu_list_destroy (&l->list);
  free (l->nodes);
  free (l);
}

rseqpy_list *
rseqpy_list_new (long nodes_count)
{
  if (nodes_count < 1)
    {
      errno = EINVAL;
      return NULL;
    }
  rseqpy_list *l = calloc (1, sizeof *l);
  if (l == NULL)
    return NULL;
  l->nodes_count = nodes_count;
  l->nodes = calloc (nodes_count, sizeof *l->nodes);
  if (l->nodes == NULL
      || percpu_list_init (&l->list, RSEQ_PERCPU_INDEX_CPU_ID) != 0)
    {
      rseqpy_list_free (l);
      errno = ENOMEM;
      return NULL;
    }
  /* Dealt out to every CPU, so that a thread finds nodes wherever it
     runs.  */
  for (long i = 0; i < nodes_count; i++)
    {
      l->nodes[i].data = i;
      percpu_list_push_slot (&l->list, i % l->list.nr_slots, &l->nodes[i]);
    }
  return l;
}

struct percpu_list *
rseqpy_list_percpu (rseqpy_list *l)
{
  return &l->list;
}

/* N times: pop a node from the current CPU's list and push it back on
   the (then) current CPU's list.  Returns how many nodes were moved
   (fewer when a list was empty), or -1 with errno.  */
long
rseqpy_list_churn (rseqpy_list *l, long n)
{
  if (!percpu_can_run ())
    return -1;
  long moved = 0;
  for (long i = 0; i < n; i++)
    {
      struct percpu_node *node = percpu_list_pop (&l->list);
      if (node == NULL && errno != 0)
	return -1;
      if (node == NULL)
	continue;
      if (percpu_list_push (&l->list, node) < 0)
	return -1;
      moved++;
    }
  return moved;
}

/* The numbers of the nodes on all lists into OUT (room for N), while
   no thread uses the lists: their count, or -1 with errno EOVERFLOW if
   the lists hold more than N nodes (a cycle or a duplicated node).  */
long
rseqpy_list_values (rseqpy_list *l, long *out, long n)
{
  long count = 0;
  for (int cpu = 0; cpu < l->list.nr_slots; cpu++)
    for (struct percpu_node *node
	   = (struct percpu_node *) l->list.heads[cpu].value;
	 node != NULL; node = node->next)
      {
	if (count == n)
	  {
	    errno = EOVERFLOW;
	    return -1;
	  }
	out[count++] = node->data;
      }
  return count;
}

/* Buffers: SIZE items of ITEM_SIZE bytes numbered 0 .. SIZE-1, copied
   in and out by the memcpy operations.  Every byte of an item holds
   the same pattern, so a torn copy shows.  */

struct rseqpy_buffer
{
  struct percpu_buffer buffer;
  long items_count;
};

/* Item number VALUE: VALUE in the first word, then its low byte.  */
static void
fill_item (unsigned char *item, size_t size, long value)
{
  memset (item, (unsigned char) value, size);
  memcpy (item, &value, sizeof value);
}

void
rseqpy_buffer_free (rseqpy_buffer *b)
{
  if (b == NULL)
    return;
  percpu_buffer_destroy (&b->buffer);
  free (b);
}

/* Deal the items out to every CPU; each CPU has room for all of them,
   so that a push never finds its CPU's buffer full.  */
static int
deal_items (rseqpy_buffer *b)
{
  size_t size = b->buffer.record_size;
  unsigned char *item = malloc (size);
  if (item == NULL)
    return -1;
  for (long i = 0; i < b->items_count; i++)
    {
      fill_item (item, size, i);
      percpu_buffer_push_slot (&b->buffer, i % b->buffer.nr_slots, item);
    }
  free (item);
  return 0;
}

/* ITEMS_COUNT items of ITEM_SIZE bytes (at least a long).  */
rseqpy_buffer *
rseqpy_buffer_new (long items_count, long item_size)
{
  if (items_count < 1 || item_size < (long) sizeof (long)
      || item_size > 65536)
    {
      errno = EINVAL;
      return NULL;
    }
  rseqpy_buffer *b = calloc (1, sizeof *b);
  if (b == NULL)
    return NULL;
  b->items_count = items_count;
  if (percpu_buffer_init (&b->buffer, RSEQ_PERCPU_INDEX_CPU_ID, items_count,
			  item_size) != 0
      || deal_items (b) != 0)
    {
      rseqpy_buffer_free (b);
      errno = ENOMEM;
      return NULL;
    }
  return b;
}

struct percpu_buffer *
rseqpy_buffer_percpu (rseqpy_buffer *b)
{
  return &b->buffer;
}

/* Pop an item into ITEM and push it back: 0 moved, 1 the current CPU's
   buffer was empty, -1 with errno.  */
static int
buffer_move_one (rseqpy_buffer *b, unsigned char *item)
{
  int ret = percpu_buffer_pop_record (&b->buffer, item);
  if (ret != 0)
    return ret;
  ret = percpu_buffer_push_record (&b->buffer, item);
  if (ret > 0)
    errno = ENOSPC;		/* Cannot happen: room for every item.  */
  return ret == 0 ? 0 : -1;
}

/* N times: pop an item from the current CPU's buffer and push it back
   on the (then) current CPU's.  Returns how many items were moved, or
   -1 with errno.  */
long
rseqpy_buffer_churn (rseqpy_buffer *b, long n)
{
  if (!percpu_can_run ())
    return -1;
  unsigned char *item = malloc (b->buffer.record_size);
  if (item == NULL)
    return -1;
  long moved = 0;
  for (long i = 0; i < n && moved >= 0; i++)
    {
      int ret = buffer_move_one (b, item);
      if (ret < 0)
	moved = -1;
      else
	moved += ret == 0;
    }
  free (item);
  return moved;
}

/* The item numbers on all buffers into OUT (room for N), while no
   thread uses the buffer: their count, -1 with errno EOVERFLOW if they
   hold more than N items, or EBADMSG if an item is torn.  */
long
rseqpy_buffer_values (rseqpy_buffer *b, long *out, long n)
{
  size_t size = b->buffer.record_size;
  unsigned char *expect = malloc (size);
  if (expect == NULL)
    return -1;
  long count = 0;
  for (int cpu = 0; cpu < b->buffer.nr_slots && count >= 0; cpu++)
    {
      const struct percpu_slot *s = &b->buffer.slots[cpu];
      for (intptr_t i = 0; i < s->value && count >= 0; i++)
	{
	  const unsigned char *item = (const unsigned char *) s->array
				      + i * size;
	  long value;
	  memcpy (&value, item, sizeof value);
	  fill_item (expect, size, value);
	  if (count == n || memcmp (item, expect, size) != 0)
	    {
	      errno = count == n ? EOVERFLOW : EBADMSG;
	      count = -1;
	    }
	  else
	    out[count++] = value;
	}
    }
  free (expect);
  return count;
}
