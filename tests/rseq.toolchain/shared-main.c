/* Calls into shared-lib.c, linked as a shared library with rseq-gcc.  */
/* rseq-test: host-only: half of toolchain.exp's rseq-gcc -shared check
   (with shared-lib.c); the cross drivers' -shared builds rseq.dlclose's
   library */
#include <stdio.h>

extern int toolchain_lib_cpu (void);

int
main (void)
{
  int cpu = toolchain_lib_cpu ();
  printf ("lib-cpu=%d\n", cpu);
  return cpu >= 0 ? 0 : 1;
}
