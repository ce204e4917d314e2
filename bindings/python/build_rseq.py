"""Build the C parts of the rseq Python package:
python3 build_rseq.py SYSROOT_INCLUDE OUTDIR

- rseq._percpu: cffi, out-of-line API mode (the module name inside the
  package, as cffi's documentation recommends), compiled with the system
  compiler against the patched glibc's headers and linked against
  whatever libc.so.6 the process has.  The counters use the
  single-attempt critical sections of <sys/rseq-percpu.h>
  (__rseq_percpu_try_*, always inline) and look up the patched glibc's
  functions (rseq_percpu_addv, cpu_opv, the fallback mode and
  statistics) with dlsym, so the module needs no symbol beyond glibc
  2.35's __rseq_offset/__rseq_size: it imports under the patched glibc
  (the rseq-python launcher) and under a stock glibc >= 2.35 alike, and
  never loads a second libc.
  structures.c, appended to its source, adds per-CPU free lists and
  buffers built on the patched glibc's out-of-line operations.
- rseq._fastcpu: a plain CPython extension (fastcpu.c) for
  current_cpu() and current_node(), which cffi would make cost more
  than os.getpid() by releasing and retaking the GIL around each call.

Both land in OUTDIR/rseq/."""

import os
import subprocess
import sys
import sysconfig

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
int rseqpy_counter_nr_slots(rseqpy_counter *c);
int rseqpy_counter_values(rseqpy_counter *c, long *out, int n);
long rseqpy_counter_sum(rseqpy_counter *c);
unsigned long rseqpy_counter_aborts(rseqpy_counter *c);

int rseqpy_cpu_opv(int count, const int32_t *types, const uint32_t *lens,
                   const uint64_t *a, const uint64_t *b, int cpu);
int rseqpy_cpu_opv_present(void);
int rseqpy_set_fallback(int mode);
long rseqpy_thread_stat(int which);

typedef struct rseqpy_list rseqpy_list;
rseqpy_list *rseqpy_list_new(long nodes_count);
void rseqpy_list_free(rseqpy_list *l);
long rseqpy_list_churn(rseqpy_list *l, long n);
long rseqpy_list_values(rseqpy_list *l, long *out, long n);

typedef struct rseqpy_buffer rseqpy_buffer;
rseqpy_buffer *rseqpy_buffer_new(long items_count, long item_size);
void rseqpy_buffer_free(rseqpy_buffer *b);
long rseqpy_buffer_churn(rseqpy_buffer *b, long n);
long rseqpy_buffer_values(rseqpy_buffer *b, long *out, long n);
"""

SOURCE = r"""
#ifndef _GNU_SOURCE		/* Python.h, included first, defines it.  */
# define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
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
/* The inline helper, not rseq_percpu_current_cpu: that one may call
   into the patched glibc, and this module must load under a stock one.  */
int
rseqpy_current_cpu (int field)
{
  return __rseq_percpu_current_cpu (field);
}

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

/* The FIELD argument of the per-CPU operations: their ABI values, so
   that this file does not depend on the enumerators' spelling.  */
enum { FIELD_CPU_ID = 0, FIELD_MM_CID = 1 };

enum { KIND_RSEQ, KIND_ATOMIC, KIND_MUTEX };

/* What a single attempt returns when the thread was no longer on CPU
   as the section started (older headers returned -1, as for an
   abort).  */
#ifdef __RSEQ_PERCPU_CPU_CHANGED
# define RSEQPY_CPU_CHANGED __RSEQ_PERCPU_CPU_CHANGED
#else
# define RSEQPY_CPU_CHANGED (-2)
#endif

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

/* The patched glibc's per-CPU functions, looked up once; all NULL
   under a stock glibc.  ADDV is rseq_percpu_addv.  AFTER_ABORT is what
   the inline rseq_percpu_addv calls after its attempt aborted: libc's
   continuation, which counts the abort and then retries and falls
   back like ADDV (__rseq_percpu_addv_slow); glibc builds without it
   have __rseq_percpu_count_abort and ADDV instead.  */
struct libc_percpu
{
  int (*addv) (int, intptr_t *, intptr_t, int);
  int (*after_abort) (int, intptr_t *, intptr_t, int);
  void (*count_abort) (void);
  int (*set_fallback) (int);
};

static struct libc_percpu libc_percpu;
static pthread_once_t libc_percpu_once = PTHREAD_ONCE_INIT;

static void
resolve_libc_percpu (void)
{
  libc_percpu.addv = patched_glibc_function ("rseq_percpu_addv");
  libc_percpu.after_abort
    = patched_glibc_function ("__rseq_percpu_addv_slow");
  if (libc_percpu.after_abort == NULL)
    {
      libc_percpu.after_abort = libc_percpu.addv;
      libc_percpu.count_abort
	= patched_glibc_function ("__rseq_percpu_count_abort");
    }
  libc_percpu.set_fallback
    = patched_glibc_function ("rseq_percpu_set_fallback");
}

static const struct libc_percpu *
get_libc_percpu (void)
{
  pthread_once (&libc_percpu_once, resolve_libc_percpu);
  return &libc_percpu;
}

/* The calling thread's fallback mode in the patched glibc (which has no
   getter: setting returns the old mode), or AUTO without it.  Read on
   each add_many call, so that a mode set from C is honoured too.  */
static int
thread_fallback_mode (const struct libc_percpu *libc)
{
  if (libc->set_fallback == NULL)
    return RSEQ_PERCPU_FALLBACK_AUTO;
  int mode = libc->set_fallback (RSEQ_PERCPU_FALLBACK_AUTO);
  libc->set_fallback (mode);
  return mode;
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
		  const struct libc_percpu *libc, bool libc_first)
{
  int ret;
  if (libc_first)
    ret = libc->addv (field, slot, count, cpu);
  else
    {
      if (libc->after_abort == NULL)
	return ADD_RETRY;
      if (libc->count_abort != NULL)
	libc->count_abort ();
      ret = libc->after_abort (field, slot, count, cpu);
    }
  if (ret == 0)
    return ADD_DONE;
  if (libc_first && field == FIELD_CPU_ID && errno == ENOSYS)
    return ADD_NO_CPU_OPV;
  return ADD_RETRY;
}

/* N adds of COUNT to the current CPU's slot, as a C caller of
   rseq_percpu_addv gets them: one inline attempt each, then libc
   (add_through_libc) under the patched glibc, or another attempt
   under a stock one.  Always inlined so that FIELD is a constant and
   the critical section addresses its CPU field directly.  */
static inline __attribute__ ((always_inline)) int
rseq_add_loop (rseqpy_counter *c, int field, long n, intptr_t count,
	       const struct libc_percpu *libc, bool libc_first,
	       unsigned long *aborts)
{
  struct slot *slots = c->slots;
  int nr_slots = c->nr_slots;
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
	  if (ret == RSEQPY_CPU_CHANGED)
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
  const struct libc_percpu *libc = get_libc_percpu ();
  bool libc_first
    = (thread_fallback_mode (libc) == RSEQ_PERCPU_FALLBACK_ALWAYS
       && libc->addv != NULL);
  unsigned long aborts = 0;
  int ret;
  if (c->field == FIELD_CPU_ID)
    ret = rseq_add_loop (c, FIELD_CPU_ID, n, count, libc, libc_first,
			 &aborts);
  else
    ret = rseq_add_loop (c, FIELD_MM_CID, n, count, libc, libc_first,
			 &aborts);
  __atomic_fetch_add (&c->aborts, aborts, __ATOMIC_RELAXED);
  return ret;
}

int
rseqpy_counter_add_many (rseqpy_counter *c, long n, long count)
{
  if (c->kind == KIND_RSEQ)
    return addv_many (c, n, count);
  if (c->kind == KIND_ATOMIC)
    for (long i = 0; i < n; i++)
      __atomic_fetch_add (&c->slots[0].value, count, __ATOMIC_RELAXED);
  else
    for (long i = 0; i < n; i++)
      {
	pthread_mutex_lock (&c->lock);
	c->slots[0].value += count;
	pthread_mutex_unlock (&c->lock);
      }
  return ADD_DONE;
}

int
rseqpy_counter_nr_slots (rseqpy_counter *c)
{
  return c->nr_slots;
}

/* Copy the N slot values into OUT: N must be the counter's slot
   count (-1 with errno EINVAL otherwise).  */
int
rseqpy_counter_values (rseqpy_counter *c, long *out, int n)
{
  if (n != c->nr_slots)
    {
      errno = EINVAL;
      return -1;
    }
  for (int i = 0; i < n; i++)
    out[i] = __atomic_load_n (&c->slots[i].value, __ATOMIC_RELAXED);
  return n;
}

long
rseqpy_counter_sum (rseqpy_counter *c)
{
  long sum = 0;
  for (int i = 0; i < c->nr_slots; i++)
    sum += __atomic_load_n (&c->slots[i].value, __ATOMIC_RELAXED);
  return sum;
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


def build_percpu(include, outdir):
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "structures.c")) as f:
        structures = f.read()
    ffi.set_source("rseq._percpu", SOURCE + structures,
                   extra_compile_args=["-O2", "-isystem", include],
                   libraries=["dl", "pthread"])
    ffi.compile(tmpdir=outdir, verbose=False)


def build_fastcpu(include, outdir):
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "fastcpu.c")
    target = os.path.join(outdir, "rseq", "_fastcpu"
                          + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-shared", "-fPIC",
                    "-I", sysconfig.get_paths()["include"],
                    "-isystem", include, source, "-o", target], check=True)


def main():
    include, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(outdir, "rseq"), exist_ok=True)
    build_percpu(include, outdir)
    build_fastcpu(include, outdir)


if __name__ == "__main__":
    main()
