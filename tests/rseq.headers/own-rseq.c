/* Written for glibc 2.35/2.36's <sys/rseq.h>, which declared no
   functions: a helper of its own named rseq.  */
/* rseq-test: host-only: a compile check of headers.exp, not run: that
   it compiles is the test */
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

static int
rseq (struct rseq *area, unsigned int len, int flags, unsigned int sig)
{
  return syscall (SYS_rseq, area, len, flags, sig);
}

int
main (void)
{
  return rseq ((struct rseq *) 0, 0, 0, 0) == 0;
}
