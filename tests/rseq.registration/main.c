/* The main thread's area: registered with the length and alignment the
   kernel asked for, and __rseq_size/__rseq_offset/__rseq_flags say so.  */
#include "rseq-test.h"

int
main (void)
{
  require_kernel_rseq ();

  CHECK_EQ (__rseq_size, expected_rseq_size ());
  CHECK_EQ (__rseq_flags, 0);
  CHECK (test_thread_pointer () + __rseq_offset
	 == (char *) rseq_area_pointer ());
  /* The offset is the same for every thread, so it keeps the area's
     alignment relative to the (aligned) thread pointer.  */
  CHECK_EQ (__rseq_offset % rseq_area_align (), 0);
  CHECK_EQ ((uintptr_t) rseq_area_pointer () % rseq_area_align (), 0);
  /* glibc's vfork word, right before the area, is clear outside a
     vfork child.  */
  CHECK_EQ (raw_area_word (RSEQ_AREA_VFORK_OFFSET), 0);
  check_thread_registered ("main");

  /* The registered length is exactly what glibc claims: one byte more
     or less is a different registration, which the kernel refuses.  */
  struct rseq *area = rseq_area_pointer ();
  unsigned int len = registration_length (__rseq_size);
  CHECK_ERRNO (rseq (area, len + 32, 0, RSEQ_SIG), EINVAL);
  if (len > RSEQ_ORIGINAL_SIZE)
    CHECK_ERRNO (rseq (area, RSEQ_ORIGINAL_SIZE, 0, RSEQ_SIG), EINVAL);

  /* Fields past the ones the kernel provides are not claimed.  */
  if (getauxval (AT_RSEQ_FEATURE_SIZE) == 0)
    CHECK_EQ (__rseq_size, 20);
  else
    CHECK (__rseq_size >= 28);

  printf ("__rseq_size %u, registered length %u, offset %td\n",
	  __rseq_size, len, __rseq_offset);
  return 0;
}
