/* librseq's <rseq/rseq.h> and the kernel selftests' rseq.h (Linux 6.3
   and later) define these enumerators; a program may include them
   together with <sys/rseq-percpu.h>.  */
/* rseq-test: host-only: a compile check of headers.exp, not run: that
   it compiles is the test */
enum rseq_percpu_mode
{
  RSEQ_PERCPU_CPU_ID = 0,
  RSEQ_PERCPU_MM_CID = 1
};

#include <sys/rseq-percpu.h>

int
main (void)
{
  return rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID)
	 < (int) RSEQ_PERCPU_MM_CID - 2;
}
