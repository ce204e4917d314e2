/* Each per-CPU operation, inline and through libc's out-of-line symbol
   (as an FFI caller would use it), indexed by cpu_id and by mm_cid:
   success commits, a failed compare writes nothing, a wrong CPU aborts
   and writes nothing; bad input is refused.  */
#include "rseq-test.h"
#include "percpu.h"
#include <dlfcn.h>
#include <stddef.h>

/* The libc functions, called through pointers so nothing is inlined.  */
static int (*volatile ool_cmpeqv_storev) (int, intptr_t *, intptr_t,
					  intptr_t, int)
  = rseq_percpu_cmpeqv_storev;
static int (*volatile ool_addv) (int, intptr_t *, intptr_t, int)
  = rseq_percpu_addv;
static int (*volatile ool_current_cpu) (int) = rseq_percpu_current_cpu;

static void
check_field (int field)
{
  int cpu;
  intptr_t v, v2;

  /* Pin so that the CPU cannot change under the checks.  */
  cpu_set_t allowed, one;
  CHECK (sched_getaffinity (0, sizeof allowed, &allowed) == 0);
  int first = -1;
  for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
    if (CPU_ISSET (i, &allowed))
      first = i;
  CPU_ZERO (&one);
  CPU_SET (first, &one);
  CHECK (sched_setaffinity (0, sizeof one, &one) == 0);

  cpu = rseq_percpu_current_cpu (field);
  CHECK (cpu >= 0);
  CHECK_EQ (ool_current_cpu (field), cpu);
  if (field == RSEQ_PERCPU_INDEX_CPU_ID)
    CHECK_EQ (cpu, first);
  int other = cpu + 1;

  v = 5;
  CHECK_EQ (rseq_percpu_cmpeqv_storev (field, &v, 5, 7, cpu), 0);
  CHECK_EQ (v, 7);
  CHECK_EQ (rseq_percpu_cmpeqv_storev (field, &v, 5, 9, cpu), 1);
  CHECK_EQ (v, 7);
  CHECK (rseq_percpu_cmpeqv_storev (field, &v, 7, 9, other) < 0);
  CHECK_EQ (v, 7);
  CHECK_EQ (ool_cmpeqv_storev (field, &v, 7, 8, cpu), 0);
  CHECK_EQ (v, 8);
  CHECK_EQ (ool_cmpeqv_storev (field, &v, 7, 9, cpu), 1);
  CHECK (ool_cmpeqv_storev (field, &v, 8, 9, other) < 0);
  CHECK_EQ (v, 8);

  v = 10;
  CHECK_EQ (rseq_percpu_addv (field, &v, 5, cpu), 0);
  CHECK_EQ (ool_addv (field, &v, -3, cpu), 0);
  CHECK_EQ (v, 12);
  CHECK (rseq_percpu_addv (field, &v, 1, other) < 0);
  CHECK (ool_addv (field, &v, 1, other) < 0);
  CHECK_EQ (v, 12);

  /* List pop: head -> n1 -> n2.  */
  struct percpu_node n2 = { NULL, 2 }, n1 = { &n2, 1 };
  intptr_t head = (intptr_t) &n1, load = 0;
  CHECK (rseq_percpu_cmpnev_storeoffp_load
	 (field, &head, 0, offsetof (struct percpu_node, next), &load,
	  other) < 0);
  CHECK_EQ (head, (intptr_t) &n1);
  CHECK_EQ (rseq_percpu_cmpnev_storeoffp_load
	    (field, &head, 0, offsetof (struct percpu_node, next), &load,
	     cpu), 0);
  CHECK_EQ (load, (intptr_t) &n1);
  CHECK_EQ (head, (intptr_t) &n2);
  head = 0;
  CHECK_EQ (rseq_percpu_cmpnev_storeoffp_load
	    (field, &head, 0, offsetof (struct percpu_node, next), &load,
	     cpu), 1);

  v = 1, v2 = 2;
  CHECK_EQ (rseq_percpu_cmpeqv_cmpeqv_storev (field, &v, 1, &v2, 3, 4, cpu), 1);
  CHECK_EQ (rseq_percpu_cmpeqv_cmpeqv_storev (field, &v, 0, &v2, 2, 4, cpu), 1);
  CHECK (rseq_percpu_cmpeqv_cmpeqv_storev (field, &v, 1, &v2, 2, 4, other) < 0);
  CHECK_EQ (v, 1);
  CHECK_EQ (rseq_percpu_cmpeqv_cmpeqv_storev (field, &v, 1, &v2, 2, 4, cpu), 0);
  CHECK_EQ (v, 4);

  v = 1, v2 = 0;
  CHECK_EQ (rseq_percpu_cmpeqv_trystorev_storev (field, &v, 2, &v2, 5, 6, cpu), 1);
  CHECK_EQ (v2, 0);
  CHECK_EQ (rseq_percpu_cmpeqv_trystorev_storev (field, &v, 1, &v2, 5, 6, cpu), 0);
  CHECK (v == 6 && v2 == 5);
  CHECK_EQ (rseq_percpu_cmpeqv_trystorev_storev_release (field, &v, 6, &v2, 7, 8, cpu), 0);
  CHECK (v == 8 && v2 == 7);
  CHECK (rseq_percpu_cmpeqv_trystorev_storev (field, &v, 8, &v2, 9, 9, other) < 0);
  CHECK_EQ (v, 8);

  char dst[32] = "", src[32] = "per-CPU record";
  v = 3;
  CHECK_EQ (rseq_percpu_cmpeqv_trymemcpy_storev (field, &v, 4, dst, src, 15, 4, cpu), 1);
  CHECK_EQ (dst[0], 0);
  CHECK (rseq_percpu_cmpeqv_trymemcpy_storev (field, &v, 3, dst, src, 15, 4, other) < 0);
  CHECK_EQ (v, 3);
  CHECK_EQ (rseq_percpu_cmpeqv_trymemcpy_storev (field, &v, 3, dst, src, 15, 4, cpu), 0);
  CHECK (v == 4 && strcmp (dst, src) == 0);
  CHECK_EQ (rseq_percpu_cmpeqv_trymemcpy_storev_release (field, &v, 4, dst, src, 0, 5, cpu), 0);
  CHECK_EQ (v, 5);

  CHECK (sched_setaffinity (0, sizeof allowed, &allowed) == 0);
}

int
main (void)
{
  require_kernel_rseq ();
  check_field (RSEQ_PERCPU_INDEX_CPU_ID);
  if (__rseq_size >= 28)
    check_field (RSEQ_PERCPU_INDEX_MM_CID);
  else
    printf ("mm_cid not provided by this kernel: cpu_id only\n");

  /* Bad field: no CPU, EINVAL from libc; the operations abort.  */
  errno = 0;
  CHECK_EQ (ool_current_cpu (7), -1);
  CHECK_EQ (errno, EINVAL);
  CHECK_EQ (rseq_percpu_current_cpu (-1), -1);
  intptr_t v = 1;
  CHECK (ool_addv (7, &v, 1, 0) < 0);
  CHECK_EQ (v, 1);

  /* The library refuses what it cannot do.  */
  struct percpu_counter c;
  errno = 0;
  CHECK_EQ (percpu_counter_init (&c, 9), -1);
  CHECK_EQ (errno, EINVAL);
  struct percpu_buffer b;
  CHECK_EQ (percpu_buffer_init (&b, RSEQ_PERCPU_INDEX_CPU_ID, 0, 0), -1);
  CHECK_EQ (percpu_buffer_init (&b, RSEQ_PERCPU_INDEX_CPU_ID, 4, 0), 0);
  CHECK_EQ (percpu_buffer_push_record (&b, "x"), -1);
  CHECK_EQ (errno, EINVAL);
  void *p;
  CHECK_EQ (percpu_buffer_pop (&b, &p), 1);
  for (int i = 0; i < 4; i++)
    CHECK_EQ (percpu_buffer_push (&b, &b), 0);
  /* Full only if every push landed on one CPU; it may not have.  */
  percpu_buffer_destroy (&b);
  return 0;
}
