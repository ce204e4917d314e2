/* A signed overflow for -fsanitize=undefined in C, whose runtime needs
   libstdc++ at link time (drivers-cli.sh).  */
/* rseq-test: host-only: built by drivers-cli.sh with
   -fsanitize=undefined, whose runtime is the host's */
#include <limits.h>
#include <stdio.h>
int
main (int argc, char **argv)
{
  int x = INT_MAX;
  x += argc;
  printf ("%d\n", x);
  return 0;
}
