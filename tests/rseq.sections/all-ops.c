/* Every per-CPU operation of <sys/rseq-percpu.h>, with each CPU
   numbering (cpu_id and mm_cid, as constants and as a run-time value),
   release variants included, so that sections.exp can check the
   machine code of every critical section the headers emit
   (tests/lib/check-rseq-cs.py).  Nothing here is run for its result:
   main calls each operation once so that the program also links.

   -DALL_OPS_MIXED (arm only) defines every function twice, once for A32
   and once for T32 (target attributes), in one translation unit: the
   arming sequence must be right in both instruction sets even when one
   object mixes them.  */
/* rseq-test: host-only: not run; sections.exp checks its critical
   sections for the cross ABIs too */

#include <stdint.h>
#include <string.h>
#include <sys/rseq-percpu.h>

static intptr_t v, v2, loaded;
static char dst[64], src[64];

/* The list popped: HEAD points at a node whose next pointer (offset 0)
   is null; reset before each pop, so that no pop follows a bad pointer.  */
static intptr_t head, node;

/* One set of functions per (attributes, name tag, field): FIELD is a
   constant or the parameter f, which keeps both calls in one function.  */
#define DEFINE_OPS(attr, tag, field)					\
  attr int tag##_current (int f)					\
  {									\
    (void) f;								\
    return rseq_percpu_current_cpu (field);				\
  }									\
  attr int tag##_cmpeqv_storev (int f, int cpu)				\
  {									\
    (void) f;								\
    return rseq_percpu_cmpeqv_storev (field, &v, 0, 1, cpu);		\
  }									\
  attr int tag##_addv (int f, int cpu)					\
  {									\
    (void) f;								\
    return rseq_percpu_addv (field, &v, 1, cpu);			\
  }									\
  attr int tag##_cmpnev_storeoffp_load (int f, int cpu)			\
  {									\
    (void) f;								\
    node = 0;								\
    head = (intptr_t) &node;						\
    return rseq_percpu_cmpnev_storeoffp_load (field, &head, 0, 0,	\
					      &loaded, cpu);		\
  }									\
  attr int tag##_cmpeqv_cmpeqv_storev (int f, int cpu)			\
  {									\
    (void) f;								\
    return rseq_percpu_cmpeqv_cmpeqv_storev (field, &v, 0, &v2, 0, 1,	\
					     cpu);			\
  }									\
  attr int tag##_cmpeqv_trystorev_storev (int f, int cpu)		\
  {									\
    (void) f;								\
    return rseq_percpu_cmpeqv_trystorev_storev (field, &v, 0, &v2, 2,	\
						1, cpu);		\
  }									\
  attr int tag##_cmpeqv_trystorev_storev_release (int f, int cpu)	\
  {									\
    (void) f;								\
    return rseq_percpu_cmpeqv_trystorev_storev_release (field, &v, 0,	\
							&v2, 2, 1, cpu); \
  }									\
  attr int tag##_cmpeqv_trymemcpy_storev (int f, int cpu)		\
  {									\
    (void) f;								\
    return rseq_percpu_cmpeqv_trymemcpy_storev (field, &v, 0, dst, src,	\
						sizeof dst, 1, cpu);	\
  }									\
  attr int tag##_cmpeqv_trymemcpy_storev_release (int f, int cpu)	\
  {									\
    (void) f;								\
    return rseq_percpu_cmpeqv_trymemcpy_storev_release (field, &v, 0,	\
							dst, src,	\
							sizeof dst, 1,	\
							cpu);		\
  }									\
  static int tag##_all (int f)						\
  {									\
    int cpu = tag##_current (f);					\
    return (tag##_cmpeqv_storev (f, cpu)				\
	    | tag##_addv (f, cpu)					\
	    | tag##_cmpnev_storeoffp_load (f, cpu)			\
	    | tag##_cmpeqv_cmpeqv_storev (f, cpu)			\
	    | tag##_cmpeqv_trystorev_storev (f, cpu)			\
	    | tag##_cmpeqv_trystorev_storev_release (f, cpu)		\
	    | tag##_cmpeqv_trymemcpy_storev (f, cpu)			\
	    | tag##_cmpeqv_trymemcpy_storev_release (f, cpu));		\
  }

#define ALL_OPS_SET(attr, prefix)					\
  DEFINE_OPS (attr, prefix##cpu_id, RSEQ_PERCPU_INDEX_CPU_ID)		\
  DEFINE_OPS (attr, prefix##mm_cid, RSEQ_PERCPU_INDEX_MM_CID)		\
  DEFINE_OPS (attr, prefix##field, f)					\
  static int prefix##run (void)						\
  {									\
    return (prefix##cpu_id_all (0) | prefix##mm_cid_all (0)		\
	    | prefix##field_all (RSEQ_PERCPU_INDEX_CPU_ID)		\
	    | prefix##field_all (RSEQ_PERCPU_INDEX_MM_CID));		\
  }

#ifdef ALL_OPS_MIXED
ALL_OPS_SET (__attribute__ ((target ("arm"))), a32_)
ALL_OPS_SET (__attribute__ ((target ("thumb"))), t32_)
# define RUN_ALL() (a32_run () | t32_run ())
#else
ALL_OPS_SET (, )
# define RUN_ALL() run ()
#endif

int
main (void)
{
  memset (src, 1, sizeof src);
  /* Any mix of results is fine: only the code matters here.  */
  return RUN_ALL () < -1000;
}
