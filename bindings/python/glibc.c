/* rseq._percpu: the process's rseq area, kernel and glibc as Python's
   info(), current_*(), OpVector, set_fallback and thread_*() see them.

   Only glibc 2.35's __rseq_offset and __rseq_size are linked; the
   patched glibc's functions are looked up with dlsym, so that the
   module imports under a stock glibc as well (rseqpy-internal.h).  */
#include "rseqpy-internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/rseq-percpu.h>

int rseqpy_cpu (void) { return rseq_area_cpu (); }
int rseqpy_node (void) { return rseq_area_node (); }
int rseqpy_mm_cid (void) { return rseq_area_mm_cid (); }
int rseqpy_registered (void) { return rseq_area_registered (); }
unsigned int rseqpy_rseq_size (void) { return __rseq_size; }
long rseqpy_rseq_offset (void) { return (long) __rseq_offset; }
unsigned long rseqpy_auxv (unsigned long type) { return getauxval (type); }

/* The inline helper, not rseq_percpu_current_cpu: that one may call
   into the patched glibc, which may be missing.  */
int
rseqpy_current_cpu (int field)
{
  return __rseq_percpu_current_cpu (field);
}

/* percpu.c's count, so that counters and structures agree.  */
int
rseqpy_nr_slots (void)
{
  return percpu_nr_slots ();
}

static struct rseqpy_libc libc;
static pthread_once_t libc_once = PTHREAD_ONCE_INIT;

static void
resolve_libc (void)
{
  libc.addv = dlsym (RTLD_DEFAULT, "rseq_percpu_addv");
  libc.addv_slow = dlsym (RTLD_DEFAULT, "__rseq_percpu_addv_slow");
  libc.set_fallback = dlsym (RTLD_DEFAULT, "rseq_percpu_set_fallback");
  libc.cpu_opv = dlsym (RTLD_DEFAULT, "cpu_opv");
  libc.aborts = dlsym (RTLD_DEFAULT, "rseq_percpu_aborts");
  libc.fallbacks = dlsym (RTLD_DEFAULT, "rseq_percpu_fallbacks");
  /* An empty vector is EINVAL for a kernel with cpu_opv, ENOSYS for one
     without.  */
  int saved = errno;
  libc.cpu_opv_present = (libc.cpu_opv != NULL
			  && libc.cpu_opv (NULL, 0, 0, 0) < 0
			  && errno == EINVAL);
  errno = saved;
}

const struct rseqpy_libc *
rseqpy_libc (void)
{
  pthread_once (&libc_once, resolve_libc);
  return &libc;
}

/* The patched glibc exports the RSEQ_1.0 functions.  */
int
rseqpy_patched_glibc (void)
{
  return rseqpy_libc ()->addv != NULL;
}

/* glibc has no getter: setting returns the old mode.  */
int
rseqpy_fallback_mode (void)
{
  const struct rseqpy_libc *l = rseqpy_libc ();
  if (l->set_fallback == NULL)
    return RSEQ_PERCPU_FALLBACK_AUTO;
  int mode = l->set_fallback (RSEQ_PERCPU_FALLBACK_AUTO);
  l->set_fallback (mode);
  return mode;
}

int
rseqpy_set_fallback (int mode)
{
  const struct rseqpy_libc *l = rseqpy_libc ();
  if (l->set_fallback == NULL)
    {
      errno = ENOSYS;
      return -1;
    }
  return l->set_fallback (mode);
}

/* This thread's aborts (0) or cpu_opv fallbacks (1) in the patched
   glibc's per-CPU operations; -1 without it.  */
long
rseqpy_thread_stat (int which)
{
  const struct rseqpy_libc *l = rseqpy_libc ();
  unsigned long (*get) (void) = which == 0 ? l->aborts : l->fallbacks;
  return get == NULL ? -1 : (long) get ();
}

/* Run a vector described by parallel arrays (TYPES, LENS, and the two
   address-or-value words A and B of each operation) through the
   patched glibc's cpu_opv.  -1 with errno ENOSYS without it.  */
int
rseqpy_cpu_opv (int count, const int32_t *types, const uint32_t *lens,
		const uint64_t *a, const uint64_t *b, int cpu)
{
  int (*run) (struct cpu_op *, int, int, int) = rseqpy_libc ()->cpu_opv;
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

/* Probed once, when the module resolves libc (resolve_libc).  */
int
rseqpy_cpu_opv_present (void)
{
  return rseqpy_libc ()->cpu_opv_present;
}
