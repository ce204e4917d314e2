"""Build the C part of the rseq Python package (cffi, out-of-line API
mode): python3 build_rseq.py SYSROOT_INCLUDE OUTDIR

The module is compiled with the system compiler against the patched
glibc's headers and linked against whatever libc.so.6 the process has.
The counters use the single-attempt critical sections of
<sys/rseq-percpu.h> (__rseq_percpu_try_*, always inline) and look up
the patched glibc's functions (cpu_opv, the fallback statistics) with
dlsym, so the module needs no symbol beyond glibc 2.35's
__rseq_offset/__rseq_size: it imports under the patched glibc
(out/bin/rseq-python) and under a stock glibc >= 2.35 alike, and never
loads a second libc."""

import os
import sys

import cffi

CDEF = """
int rseqpy_cpu(void);
int rseqpy_node(void);
int rseqpy_mm_cid(void);
int rseqpy_registered(void);
unsigned int rseqpy_rseq_size(void);
long rseqpy_rseq_offset(void);
unsigned long rseqpy_auxv(unsigned long type);
int rseqpy_patched_glibc(void);
int rseqpy_current_cpu(int field);
int rseqpy_nr_slots(void);

typedef struct rseqpy_counter rseqpy_counter;
rseqpy_counter *rseqpy_counter_new(int kind, int field);
void rseqpy_counter_free(rseqpy_counter *c);
int rseqpy_counter_add_many(rseqpy_counter *c, long n, long count);
long rseqpy_counter_value(rseqpy_counter *c, int slot);
unsigned long rseqpy_counter_aborts(rseqpy_counter *c);

int rseqpy_cpu_opv(int count, const int32_t *types, const uint32_t *lens,
                   const uint64_t *a, const uint64_t *b, int cpu);
int rseqpy_cpu_opv_present(void);
int rseqpy_set_fallback(int mode);
long rseqpy_thread_stat(int which);
"""

SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/cpu_opv.h>
#include <sys/rseq-percpu.h>
#include <unistd.h>

/* A function of the patched glibc, or NULL under a stock one.  */
static void *
patched_glibc_function (const char *name)
{
  return dlsym (RTLD_DEFAULT, name);
}

int rseqpy_cpu (void) { return rseq_area_cpu (); }
int rseqpy_node (void) { return rseq_area_node (); }
int rseqpy_mm_cid (void) { return rseq_area_mm_cid (); }
int rseqpy_registered (void) { return rseq_area_registered (); }
unsigned int rseqpy_rseq_size (void) { return __rseq_size; }
long rseqpy_rseq_offset (void) { return (long) __rseq_offset; }
unsigned long rseqpy_auxv (unsigned long type) { return getauxval (type); }
int rseqpy_current_cpu (int field) { return rseq_percpu_current_cpu (field); }

/* The patched glibc exports the RSEQ_1.0 functions.  */
int
rseqpy_patched_glibc (void)
{
  return patched_glibc_function ("rseq_percpu_addv") != NULL;
}

int
rseqpy_nr_slots (void)
{
  long n = sysconf (_SC_NPROCESSORS_CONF);
  return n > 0 ? (int) n : 1;
}

enum { KIND_RSEQ, KIND_ATOMIC, KIND_MUTEX };

struct slot { intptr_t value; } __attribute__ ((aligned (64)));

typedef struct rseqpy_counter
{
  int kind, field, nr_slots;
  unsigned long aborts;
  pthread_mutex_t lock;
  struct slot *slots;
} rseqpy_counter;

rseqpy_counter *
rseqpy_counter_new (int kind, int field)
{
  rseqpy_counter *c = calloc (1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->kind = kind;
  c->field = field;
  c->nr_slots = rseqpy_nr_slots ();
  c->slots = aligned_alloc (64, c->nr_slots * sizeof *c->slots);
  if (c->slots == NULL)
    {
      free (c);
      return NULL;
    }
  memset (c->slots, 0, c->nr_slots * sizeof *c->slots);
  pthread_mutex_init (&c->lock, NULL);
  return c;
}

void
rseqpy_counter_free (rseqpy_counter *c)
{
  if (c != NULL)
    free (c->slots);
  free (c);
}

/* N adds of COUNT by rseq.  Returns 0, or -1 with errno ENOSYS when
   per-CPU operations cannot run on this thread (rseq not registered,
   or no mm_cid for an mm_cid counter).  The field is a constant in
   each loop so that the sequence is fully inlined.  */
#define RSEQ_ADD_LOOP(FIELD)						\
  for (long i = 0; i < n; i++)						\
    for (;;)								\
      {									\
	int cpu = rseq_percpu_current_cpu (FIELD);			\
	if (cpu < 0 || cpu >= c->nr_slots)				\
	  {								\
	    __atomic_fetch_add (&c->aborts, aborts, __ATOMIC_RELAXED);	\
	    errno = ENOSYS;						\
	    return -1;							\
	  }								\
	if (__rseq_percpu_try_addv (FIELD, &c->slots[cpu].value,	\
				    count, cpu) == 0)			\
	  break;							\
	aborts++;							\
      }

int
rseqpy_counter_add_many (rseqpy_counter *c, long n, long count)
{
  unsigned long aborts = 0;
  if (c->kind == KIND_ATOMIC)
    for (long i = 0; i < n; i++)
      __atomic_fetch_add (&c->slots[0].value, count, __ATOMIC_RELAXED);
  else if (c->kind == KIND_MUTEX)
    for (long i = 0; i < n; i++)
      {
	pthread_mutex_lock (&c->lock);
	c->slots[0].value += count;
	pthread_mutex_unlock (&c->lock);
      }
  else if (c->field == RSEQ_PERCPU_CPU_ID)
    RSEQ_ADD_LOOP (RSEQ_PERCPU_CPU_ID)
  else
    RSEQ_ADD_LOOP (RSEQ_PERCPU_MM_CID)
  __atomic_fetch_add (&c->aborts, aborts, __ATOMIC_RELAXED);
  return 0;
}

long
rseqpy_counter_value (rseqpy_counter *c, int slot)
{
  return __atomic_load_n (&c->slots[slot].value, __ATOMIC_RELAXED);
}

unsigned long
rseqpy_counter_aborts (rseqpy_counter *c)
{
  return __atomic_load_n (&c->aborts, __ATOMIC_RELAXED);
}

/* Run a vector described by parallel arrays (TYPES, LENS, and the two
   address-or-value words A and B of each operation) through the
   patched glibc's cpu_opv.  -1 with errno ENOSYS without it.  */
int
rseqpy_cpu_opv (int count, const int32_t *types, const uint32_t *lens,
		const uint64_t *a, const uint64_t *b, int cpu)
{
  int (*run) (struct cpu_op *, int, int, int)
    = patched_glibc_function ("cpu_opv");
  struct cpu_op ops[CPU_OP_VEC_LEN_MAX];
  if (run == NULL)
    {
      errno = ENOSYS;
      return -1;
    }
  if (count < 0 || count > CPU_OP_VEC_LEN_MAX)
    {
      errno = EINVAL;
      return -1;
    }
  memset (ops, 0, sizeof ops);
  for (int i = 0; i < count; i++)
    {
      ops[i].op = types[i];
      ops[i].len = lens[i];
      /* Every operation keeps its two words at the same offsets.  */
      ops[i].u.compare_op.a = a[i];
      ops[i].u.compare_op.b = b[i];
    }
  int ret;
  do
    ret = run (ops, count, cpu, 0);
  while (ret < 0 && errno == EAGAIN);
  return ret;
}

int
rseqpy_cpu_opv_present (void)
{
  int (*run) (struct cpu_op *, int, int, int)
    = patched_glibc_function ("cpu_opv");
  return run != NULL && run (NULL, 0, 0, 0) < 0 && errno == EINVAL;
}

int
rseqpy_set_fallback (int mode)
{
  int (*set) (int) = patched_glibc_function ("rseq_percpu_set_fallback");
  if (set == NULL)
    {
      errno = ENOSYS;
      return -1;
    }
  return set (mode);
}

/* This thread's aborts (0) or cpu_opv fallbacks (1) in the patched
   glibc's per-CPU operations; -1 without it.  */
long
rseqpy_thread_stat (int which)
{
  unsigned long (*get) (void)
    = patched_glibc_function (which == 0 ? "rseq_percpu_aborts"
			      : "rseq_percpu_fallbacks");
  return get == NULL ? -1 : (long) get ();
}
"""


def main():
    include, outdir = sys.argv[1], sys.argv[2]
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source("_rseq_percpu_c", SOURCE,
                   extra_compile_args=["-O2", "-isystem", include],
                   libraries=["dl", "pthread"])
    os.makedirs(outdir, exist_ok=True)
    ffi.compile(tmpdir=outdir, verbose=False)


if __name__ == "__main__":
    main()
