/* What the C files of rseq._percpu share beyond rseqpy.h.

   The module must import under a stock glibc >= 2.35 too, where
   RseqUnavailable then says what is missing, so it links against no
   symbol of the patched glibc: it finds them at run time (struct
   rseqpy_libc), and percpu-module.c makes percpu.c's references
   weak.  */
#ifndef RSEQPY_INTERNAL_H
#define RSEQPY_INTERNAL_H

#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>
#include <sys/cpu_opv.h>

#include "percpu.h"
#include "rseqpy.h"

/* The patched glibc's functions the binding calls directly, looked up
   once; all NULL under a stock glibc.  */
struct rseqpy_libc
{
  int (*addv) (int, intptr_t *, intptr_t, int);
  /* What the inline rseq_percpu_addv calls after its attempt aborted:
     counts the abort, then retries and falls back like addv.  */
  int (*addv_slow) (int, intptr_t *, intptr_t, int);
  int (*set_fallback) (int);
  int (*cpu_opv) (struct cpu_op *, int, int, int);
  /* Whether the kernel runs cpu_opv, probed once: the probe is a real
     system call, which a trace of the caller's calls would count.  */
  int cpu_opv_present;
  unsigned long (*aborts) (void);
  unsigned long (*fallbacks) (void);
};

const struct rseqpy_libc *rseqpy_libc (void);

/* The calling thread's fallback mode (RSEQ_PERCPU_FALLBACK_AUTO under
   a stock glibc).  */
int rseqpy_fallback_mode (void);

#endif /* RSEQPY_INTERNAL_H */
