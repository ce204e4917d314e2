/* Calls into shared-lib.c, linked as a shared library with rseq-gcc.  */
#include <stdio.h>

extern int toolchain_lib_cpu (void);

int
main (void)
{
  int cpu = toolchain_lib_cpu ();
  printf ("lib-cpu=%d\n", cpu);
  return cpu >= 0 ? 0 : 1;
}
