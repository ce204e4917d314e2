/* Per-CPU free lists and per-CPU buffers for experiments, appended to
   the rseq._percpu module's source by build_rseq.py (which includes the
   headers and defines patched_glibc_function and FIELD_CPU_ID).

   Every operation goes through the patched glibc's out-of-line per-CPU
   functions, looked up with dlsym: their critical sections are libc's,
   they count aborts and fallbacks per thread (rseq_percpu_aborts,
   rseq_percpu_fallbacks) and honour the thread's fallback mode.  The
   counters, by contrast, use the inline sections, so an experiment
   running both sees both kinds.  */

/* Consecutive failed attempts (stale CPU, cpu_opv refusing a CPU the
   thread was just moved away from) before churn gives up with EIO:
   each failure means the thread moved, which cannot go on forever.  */
enum { STRUCT_MAX_FAILURES = 1000000 };

struct libc_structs
{
  int (*cmpeqv_storev) (int, intptr_t *, intptr_t, intptr_t, int);
  int (*cmpnev_storeoffp_load) (int, intptr_t *, intptr_t, long int,
				intptr_t *, int);
  int (*trymemcpy) (int, intptr_t *, intptr_t, void *, const void *,
		    size_t, intptr_t, int);
  int (*trymemcpy_release) (int, intptr_t *, intptr_t, void *,
			    const void *, size_t, intptr_t, int);
};

static struct libc_structs libc_structs;
static pthread_once_t libc_structs_once = PTHREAD_ONCE_INIT;

static void
resolve_libc_structs (void)
{
  libc_structs.cmpeqv_storev
    = patched_glibc_function ("rseq_percpu_cmpeqv_storev");
  libc_structs.cmpnev_storeoffp_load
    = patched_glibc_function ("rseq_percpu_cmpnev_storeoffp_load");
  libc_structs.trymemcpy
    = patched_glibc_function ("rseq_percpu_cmpeqv_trymemcpy_storev");
  libc_structs.trymemcpy_release
    = patched_glibc_function ("rseq_percpu_cmpeqv_trymemcpy_storev_release");
}

/* The functions, or NULL with errno ENOSYS under a stock glibc.  */
static const struct libc_structs *
get_libc_structs (void)
{
  pthread_once (&libc_structs_once, resolve_libc_structs);
  if (libc_structs.cmpeqv_storev == NULL)
    {
      errno = ENOSYS;
      return NULL;
    }
  return &libc_structs;
}

/* The current CPU of the calling thread, or -1 (errno ENOSYS) when
   per-CPU operations cannot run on it.  */
static int
struct_cpu (int nr_slots)
{
  int cpu = __rseq_percpu_current_cpu (FIELD_CPU_ID);
  if (cpu < 0 || cpu >= nr_slots)
    {
      errno = ENOSYS;
      return -1;
    }
  return cpu;
}

/* Whether a failed operation may be retried on a fresh CPU number:
   not when per-CPU operations or cpu_opv are missing.  */
static bool
struct_retryable (long *failures)
{
  if (errno == ENOSYS)
    return false;
  if (++*failures >= STRUCT_MAX_FAILURES)
    {
      errno = EIO;
      return false;
    }
  return true;
}

/* Free lists: one singly linked list of nodes per CPU.  */

struct list_node
{
  intptr_t next;		/* Address of the next node, or 0.  */
  long value;
};

struct list_head
{
  intptr_t first;
} __attribute__ ((aligned (64)));

typedef struct rseqpy_list
{
  int nr_slots;
  long nodes_count;
  struct list_head *heads;
  struct list_node *nodes;
} rseqpy_list;

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
  l->nr_slots = rseqpy_nr_slots ();
  l->nodes_count = nodes_count;
  l->heads = aligned_alloc (64, l->nr_slots * sizeof *l->heads);
  l->nodes = calloc (nodes_count, sizeof *l->nodes);
  if (l->heads == NULL || l->nodes == NULL)
    {
      free (l->heads);
      free (l->nodes);
      free (l);
      return NULL;
    }
  memset (l->heads, 0, l->nr_slots * sizeof *l->heads);
  /* Deal the nodes out to the CPUs' lists, values 0 .. N-1.  */
  for (long i = 0; i < nodes_count; i++)
    {
      struct list_head *head = &l->heads[i % l->nr_slots];
      l->nodes[i].value = i;
      l->nodes[i].next = head->first;
      head->first = (intptr_t) &l->nodes[i];
    }
  return l;
}

void
rseqpy_list_free (rseqpy_list *l)
{
  if (l != NULL)
    {
      free (l->heads);
      free (l->nodes);
    }
  free (l);
}

/* Pop the first node of the current CPU's list into *NODE: 0, 1 if
   that list is empty, -1 with errno on failure.  */
static int
list_pop (rseqpy_list *l, const struct libc_structs *libc,
	  struct list_node **node)
{
  long failures = 0;
  for (;;)
    {
      int cpu = struct_cpu (l->nr_slots);
      if (cpu < 0)
	return -1;
      intptr_t load;
      int ret = libc->cmpnev_storeoffp_load (FIELD_CPU_ID,
					     &l->heads[cpu].first, 0,
					     offsetof (struct list_node, next),
					     &load, cpu);
      if (ret == 0)
	*node = (struct list_node *) load;
      if (ret >= 0)
	return ret;
      if (!struct_retryable (&failures))
	return -1;
    }
}

/* Push NODE on the current CPU's list: 0, or -1 with errno.  */
static int
list_push (rseqpy_list *l, const struct libc_structs *libc,
	   struct list_node *node)
{
  long failures = 0;
  for (;;)
    {
      int cpu = struct_cpu (l->nr_slots);
      if (cpu < 0)
	return -1;
      intptr_t first = __atomic_load_n (&l->heads[cpu].first,
					 __ATOMIC_RELAXED);
      node->next = first;
      int ret = libc->cmpeqv_storev (FIELD_CPU_ID, &l->heads[cpu].first,
				     first, (intptr_t) node, cpu);
      if (ret == 0)
	return 0;
      if (ret < 0 && !struct_retryable (&failures))
	return -1;
      /* ret > 0: the list changed under us; read it again.  */
    }
}

/* N times: pop a node from the current CPU's list and push it back on
   the (then) current CPU's list.  Returns how many nodes were moved
   (fewer when the list was empty), or -1 with errno.  */
long
rseqpy_list_churn (rseqpy_list *l, long n)
{
  const struct libc_structs *libc = get_libc_structs ();
  if (libc == NULL)
    return -1;
  long moved = 0;
  for (long i = 0; i < n; i++)
    {
      struct list_node *node;
      int ret = list_pop (l, libc, &node);
      if (ret < 0)
	return -1;
      if (ret > 0)
	continue;
      if (list_push (l, libc, node) < 0)
	return -1;
      moved++;
    }
  return moved;
}

/* The values of the nodes on all lists into OUT (room for N), while no
   thread uses the lists: their count, or -1 with errno EOVERFLOW if
   the lists hold more than N nodes (a cycle or a duplicated node).  */
long
rseqpy_list_values (rseqpy_list *l, long *out, long n)
{
  long count = 0;
  for (int cpu = 0; cpu < l->nr_slots; cpu++)
    for (intptr_t p = l->heads[cpu].first; p != 0;
	 p = ((struct list_node *) p)->next)
      {
	if (count == n)
	  {
	    errno = EOVERFLOW;
	    return -1;
	  }
	out[count++] = ((struct list_node *) p)->value;
      }
  return count;
}

/* Buffers: per CPU, a stack of fixed-size items and its depth.  Items
   are copied in and out by the memcpy operations; every byte of an
   item holds the same pattern, so a torn copy shows.  */

struct buffer_cpu
{
  intptr_t depth;
  unsigned char *items;
} __attribute__ ((aligned (64)));

typedef struct rseqpy_buffer
{
  int nr_slots;
  long items_count;
  size_t item_size;
  struct buffer_cpu *cpus;
} rseqpy_buffer;

/* Item number VALUE: VALUE in the first word, then its low byte.  */
static void
buffer_fill_item (unsigned char *item, size_t size, long value)
{
  memset (item, (unsigned char) value, size);
  memcpy (item, &value, sizeof value);
}

void
rseqpy_buffer_free (rseqpy_buffer *b)
{
  if (b != NULL && b->cpus != NULL)
    for (int cpu = 0; cpu < b->nr_slots; cpu++)
      free (b->cpus[cpu].items);
  if (b != NULL)
    free (b->cpus);
  free (b);
}

/* ITEMS_COUNT items of ITEM_SIZE bytes (at least a long), dealt out to
   the CPUs; each CPU has room for all of them.  */
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
  b->nr_slots = rseqpy_nr_slots ();
  b->items_count = items_count;
  b->item_size = item_size;
  b->cpus = aligned_alloc (64, b->nr_slots * sizeof *b->cpus);
  if (b->cpus == NULL)
    {
      free (b);
      return NULL;
    }
  memset (b->cpus, 0, b->nr_slots * sizeof *b->cpus);
  for (int cpu = 0; cpu < b->nr_slots; cpu++)
    if ((b->cpus[cpu].items = malloc (items_count * item_size)) == NULL)
      {
	rseqpy_buffer_free (b);
	errno = ENOMEM;
	return NULL;
      }
  for (long i = 0; i < items_count; i++)
    {
      struct buffer_cpu *c = &b->cpus[i % b->nr_slots];
      buffer_fill_item (c->items + c->depth * item_size, item_size, i);
      c->depth++;
    }
  return b;
}

/* Copy the top item of the current CPU's stack into ITEM: 0, 1 if it
   is empty, -1 with errno.  */
static int
buffer_pop (rseqpy_buffer *b, const struct libc_structs *libc,
	    unsigned char *item)
{
  long failures = 0;
  for (;;)
    {
      int cpu = struct_cpu (b->nr_slots);
      if (cpu < 0)
	return -1;
      struct buffer_cpu *c = &b->cpus[cpu];
      intptr_t depth = __atomic_load_n (&c->depth, __ATOMIC_RELAXED);
      if (depth == 0)
	return 1;
      int ret = libc->trymemcpy (FIELD_CPU_ID, &c->depth, depth, item,
				 c->items + (depth - 1) * b->item_size,
				 b->item_size, depth - 1, cpu);
      if (ret == 0)
	return 0;
      if (ret < 0 && !struct_retryable (&failures))
	return -1;
    }
}

/* Copy ITEM onto the current CPU's stack, publishing it with the
   release variant: 0, or -1 with errno.  */
static int
buffer_push (rseqpy_buffer *b, const struct libc_structs *libc,
	     const unsigned char *item)
{
  long failures = 0;
  for (;;)
    {
      int cpu = struct_cpu (b->nr_slots);
      if (cpu < 0)
	return -1;
      struct buffer_cpu *c = &b->cpus[cpu];
      intptr_t depth = __atomic_load_n (&c->depth, __ATOMIC_RELAXED);
      /* Never full: every CPU has room for every item.  */
      int ret = libc->trymemcpy_release (FIELD_CPU_ID, &c->depth, depth,
					 c->items + depth * b->item_size,
					 item, b->item_size, depth + 1, cpu);
      if (ret == 0)
	return 0;
      if (ret < 0 && !struct_retryable (&failures))
	return -1;
    }
}

/* N times: pop an item from the current CPU's stack and push it back
   on the (then) current CPU's.  Returns how many items were moved, or
   -1 with errno.  */
long
rseqpy_buffer_churn (rseqpy_buffer *b, long n)
{
  const struct libc_structs *libc = get_libc_structs ();
  if (libc == NULL)
    return -1;
  unsigned char *item = malloc (b->item_size);
  if (item == NULL)
    return -1;
  long moved = 0;
  for (long i = 0; i < n; i++)
    {
      int ret = buffer_pop (b, libc, item);
      if (ret == 0)
	ret = buffer_push (b, libc, item) == 0 ? 0 : -1;
      if (ret < 0)
	{
	  moved = -1;
	  break;
	}
      moved += ret == 0;
    }
  free (item);
  return moved;
}

/* The item numbers on all stacks into OUT (room for N), while no
   thread uses the buffer: their count, -1 with errno EOVERFLOW if they
   hold more than N items, or EBADMSG if an item is torn.  */
long
rseqpy_buffer_values (rseqpy_buffer *b, long *out, long n)
{
  unsigned char *expect = malloc (b->item_size);
  if (expect == NULL)
    return -1;
  long count = 0;
  for (int cpu = 0; cpu < b->nr_slots; cpu++)
    for (intptr_t i = 0; i < b->cpus[cpu].depth; i++)
      {
	const unsigned char *item = b->cpus[cpu].items + i * b->item_size;
	long value;
	memcpy (&value, item, sizeof value);
	buffer_fill_item (expect, b->item_size, value);
	if (count == n || memcmp (item, expect, b->item_size) != 0)
	  {
	    errno = count == n ? EOVERFLOW : EBADMSG;
	    free (expect);
	    return -1;
	  }
	out[count++] = value;
      }
  free (expect);
  return count;
}
