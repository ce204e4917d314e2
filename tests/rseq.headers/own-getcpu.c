/* Without _GNU_SOURCE, <sys/rseq.h> declares nothing of <sched.h>'s GNU
   extensions, so a program may use their names for its own.  */
/* rseq-test: host-only: a compile check of headers.exp, not run: that
   it compiles is the test */
#include <sys/rseq.h>

static int
getcpu (void)
{
  return 0;
}

static long
sched_getcpu (long x)
{
  return x;
}

int
main (void)
{
  return getcpu () + (int) sched_getcpu (0) + (int) (__rseq_size > 1024);
}
