/* A shared library built with rseq-gcc -shared: it uses the patched
   glibc's inline accessor, so it works in a program running under the
   patched glibc.  */
#define _GNU_SOURCE	/* the rseq_area_* accessors */
#include <sys/rseq.h>

int
toolchain_lib_cpu (void)
{
  return rseq_area_cpu ();
}
