/* Every outcome of the rseq() wrapper.  With glibc's registration
   active: EBUSY (same registration), EPERM (other signature), EINVAL
   (other area or length, bad flags).  With it turned off by the
   tunable (the test re-executes itself): EINVAL for misalignment, short
   length and bad flags, EFAULT for an address outside user space, then
   a successful registration, unregistration and their errors.  */
#include "rseq-test.h"

#define OTHER_SIG (RSEQ_SIG ^ 0x1)
#define BAD_FLAG (1 << 30)

/* A kernel address: 32-byte aligned but outside user space.  */
#define KERNEL_ADDRESS ((struct rseq *) (uintptr_t) -64)

static union
{
  struct rseq area;
  char bytes[128];
} storage __attribute__ ((aligned (64)));

static void
check_with_glibc_registration (void)
{
  struct rseq *mine = rseq_area_pointer ();
  unsigned int len = registration_length (__rseq_size);

  CHECK (mine != NULL);
  CHECK_ERRNO (rseq (mine, len, 0, RSEQ_SIG), EBUSY);
  CHECK_ERRNO (rseq (mine, len, 0, OTHER_SIG), EPERM);
  CHECK_ERRNO (rseq (&storage.area, RSEQ_ORIGINAL_SIZE, 0, RSEQ_SIG), EINVAL);
  CHECK_ERRNO (rseq (mine, len + 32, 0, RSEQ_SIG), EINVAL);
  /* A flag no kernel knows (2 is RSEQ_FLAG_SLICE_EXT_DEFAULT_ON since
     Linux 7.0, with which re-registering answers EBUSY).  */
  CHECK_ERRNO (rseq (mine, len, BAD_FLAG, RSEQ_SIG), EINVAL);
  /* Unregistering with the wrong signature or area is refused, and
     leaves glibc's registration in place.  */
  CHECK_ERRNO (rseq (mine, len, RSEQ_FLAG_UNREGISTER, OTHER_SIG), EPERM);
  CHECK_ERRNO (rseq (&storage.area, len, RSEQ_FLAG_UNREGISTER, RSEQ_SIG),
	       EINVAL);
  check_thread_registered ("after refused calls");
}

static void
check_without_registration (void)
{
  struct rseq *area = &storage.area;

  CHECK_EQ (__rseq_size, 0);
  CHECK_ERRNO (rseq (area, RSEQ_ORIGINAL_SIZE, 4, RSEQ_SIG), EINVAL);
  CHECK_ERRNO (rseq ((struct rseq *) (storage.bytes + 8),
		     RSEQ_ORIGINAL_SIZE, 0, RSEQ_SIG), EINVAL);
  CHECK_ERRNO (rseq (area, 16, 0, RSEQ_SIG), EINVAL);
  CHECK_ERRNO (rseq (area, 0, 0, RSEQ_SIG), EINVAL);
  CHECK_ERRNO (rseq (KERNEL_ADDRESS, RSEQ_ORIGINAL_SIZE, 0, RSEQ_SIG),
	       EFAULT);
  /* Unregistering when nothing is registered.  */
  CHECK_ERRNO (rseq (area, RSEQ_ORIGINAL_SIZE, RSEQ_FLAG_UNREGISTER,
		     RSEQ_SIG), EINVAL);

  /* Now a registration of our own.  */
  memset (&storage, 0, sizeof storage);
  area->cpu_id = RSEQ_CPU_ID_UNINITIALIZED;
  CHECK_EQ (rseq (area, RSEQ_ORIGINAL_SIZE, 0, RSEQ_SIG), 0);
  /* The kernel fills cpu_id before returning to user space.  */
  unsigned int cpu;
  CHECK (syscall_getcpu (&cpu, NULL) == 0);
  CHECK ((int) ((volatile struct rseq *) area)->cpu_id >= 0);
  CHECK_ERRNO (rseq (area, RSEQ_ORIGINAL_SIZE, 0, RSEQ_SIG), EBUSY);
  CHECK_ERRNO (rseq (area, RSEQ_ORIGINAL_SIZE, 0, OTHER_SIG), EPERM);
  CHECK_ERRNO (rseq (area, RSEQ_ORIGINAL_SIZE, RSEQ_FLAG_UNREGISTER,
		     OTHER_SIG), EPERM);
  CHECK_ERRNO (rseq (area, RSEQ_ORIGINAL_SIZE + 32, RSEQ_FLAG_UNREGISTER,
		     RSEQ_SIG), EINVAL);
  CHECK_EQ (rseq (area, RSEQ_ORIGINAL_SIZE, RSEQ_FLAG_UNREGISTER, RSEQ_SIG), 0);
  CHECK_EQ ((int) ((volatile struct rseq *) area)->cpu_id,
	    RSEQ_CPU_ID_UNINITIALIZED);

  /* A larger registration works where the kernel reports a feature
     size (Linux 6.3 and later): the extended ABI.  */
  if (getauxval (AT_RSEQ_FEATURE_SIZE) >= 28)
    {
      CHECK_EQ (rseq (area, 64, 0, RSEQ_SIG), 0);
      CHECK_EQ (rseq (area, 64, RSEQ_FLAG_UNREGISTER, RSEQ_SIG), 0);
    }
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "--unregistered") == 0)
    {
      check_without_registration ();
      return 0;
    }

  require_kernel_rseq ();
  check_with_glibc_registration ();

  run_self_with_rseq_off (argv[0], "--unregistered");
  return 0;
}
