/* A shared library built with rseq-gcc -shared: it uses the patched
   glibc's inline accessor, so it works in a program running under the
   patched glibc.  */
/* rseq-test: host-only: half of toolchain.exp's rseq-gcc -shared check
   (with shared-main.c); the cross drivers' -shared builds rseq.dlclose's
   library */
#define _GNU_SOURCE	/* the rseq_area_* accessors */
#include <sys/rseq.h>

int
toolchain_lib_cpu (void)
{
  return rseq_area_cpu ();
}
