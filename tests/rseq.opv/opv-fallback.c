/* What glibc's own cpu_opv test leaves out.  That test,
   sysdeps/unix/sysv/linux/tst-cpu-opv.c, runs in this area too, on
   every ABI (rseq_area_glibc_tests in tests/lib/rseq.exp), and checks
   the wrapper and its helpers; this program checks the rest:
   - the fallback of libc's per-CPU operations to cpu_opv
     (<sys/rseq-percpu.h>): forced, it runs every operation through
     cpu_opv and counts each, decides an empty pop without the kernel,
     refuses another CPU with EAGAIN and an impossible one with EINVAL;
     never, it counts nothing; on a kernel without cpu_opv a forced
     operation fails with ENOSYS and writes nothing;
   - the AT_CPU_OPV entry of the auxiliary vector against the number
     the kernel publishes in /proc/sys/kernel/cpu_opv_syscall, and, on a
     kernel without cpu_opv, that not even libc's first look calls the
     number (a seccomp filter installed before it would answer EPERM);
   - a CPU taken offline (as root in the VMs): EINVAL, nothing written;
   - a cpu_opv_cmpstorememcpy copy whose length is not a multiple of
     CPU_OP_DATA_LEN_MAX, and EFAULT from a bitwise operation.
   The per-CPU operations are libc's (RSEQ_PERCPU_NO_INLINE), where the
   fallback mode applies.  */
#define RSEQ_PERCPU_NO_INLINE 1
#include "rseq-test.h"
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/cpu_opv.h>
#include <sys/prctl.h>
#include <sys/rseq-percpu.h>

#define NR_CPU_OPV 500

/* Make the number answer EPERM, so a wrapper that calls it on a kernel
   without cpu_opv is caught (the kernel would answer ENOSYS itself).  */
static void
trap_cpu_opv_number (void)
{
  struct sock_filter filter[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, NR_CPU_OPV, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { sizeof filter / sizeof filter[0], filter };
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
      || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
    UNSUPPORTED ("cannot install a seccomp filter: %s", strerror (errno));
}

/* ADDV on the calling thread's CPU, with the CPU read again when the
   thread migrated between the read and the call (EAGAIN).  */
static int
add_on_own_cpu (int (*addv) (int, intptr_t *, intptr_t, int), intptr_t *v)
{
  int ret;
  do
    ret = addv (RSEQ_PERCPU_INDEX_CPU_ID, v, 1,
		rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID));
  while (ret < 0 && errno == EAGAIN);
  return ret;
}

/* Under trap_cpu_opv_number, from the process's first cpu_opv call on:
   ENOSYS from the wrapper, and from a forced fallback, which writes and
   counts nothing.  */
static void
test_without_cpu_opv (void)
{
  intptr_t v = 5;
  CHECK_ERRNO (cpu_opv (NULL, 0, 0, 0), ENOSYS);

  int (*addv) (int, intptr_t *, intptr_t, int) = rseq_percpu_addv;
  CHECK_EQ (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_ALWAYS),
	    RSEQ_PERCPU_FALLBACK_AUTO);
  CHECK (rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID) >= 0);
  CHECK_ERRNO (add_on_own_cpu (addv, &v), ENOSYS);
  CHECK_EQ (v, 5);
  CHECK_EQ (rseq_percpu_fallbacks (), 0);
  printf ("no cpu_opv: ENOSYS from the first call and the forced"
	  " fallback, number 500 never called\n");
}

static int
my_cpu (void)
{
  int cpu = sched_getcpu ();
  CHECK (cpu >= 0);
  return cpu;
}

/* Three whole pieces and a partial one, copied whole.  */
static void
test_copy_with_partial_piece (void)
{
  enum { LEN = 3 * CPU_OP_DATA_LEN_MAX + 123 };
  int cpu = my_cpu ();
  static unsigned char src[LEN], dst[LEN];
  for (int i = 0; i < LEN; i++)
    src[i] = i * 7;
  intptr_t v = 1;
  CHECK_EQ (cpu_opv_cmpstorememcpy (&v, 1, dst, src, LEN, 3, cpu), 0);
  CHECK (memcmp (dst, src, LEN) == 0);
  CHECK_EQ (v, 3);
}

/* tst-cpu-opv checks EFAULT from the add, compare and memcpy
   operations; a bitwise one on a null pointer fails so too.  */
static void
test_bitwise_fault (void)
{
  struct cpu_op op;
  memset (&op, 0, sizeof op);
  op.op = CPU_XOR_OP;
  op.len = sizeof (uint32_t);
  op.u.bitwise_op.p = 0;
  op.u.bitwise_op.mask = 0xff;
  CHECK_ERRNO (cpu_opv (&op, 1, my_cpu (), 0), EFAULT);
}

/* The fallback controls of <sys/rseq-percpu.h>, through libc.  */
static void
test_fallback_modes (void)
{
  int (*addv) (int, intptr_t *, intptr_t, int) = rseq_percpu_addv;
  intptr_t v = 0;

  CHECK_ERRNO (rseq_percpu_set_fallback (42), EINVAL);
  CHECK_EQ (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_ALWAYS),
	    RSEQ_PERCPU_FALLBACK_AUTO);
  unsigned long before = rseq_percpu_fallbacks ();
  for (int i = 0; i < 100; i++)
    CHECK_EQ (add_on_own_cpu (addv, &v), 0);
  CHECK_EQ (v, 100);
  CHECK_EQ (rseq_percpu_fallbacks () - before, 100);

  /* The count is of cpu_opv calls, one per trace event: a pop from an
     empty list is decided without the kernel and counts nothing (it
     used to count one operation); direct cpu_opv calls count nothing
     either.  */
  int (*pop) (int, intptr_t *, intptr_t, long int, intptr_t *, int)
    = rseq_percpu_cmpnev_storeoffp_load;
  intptr_t head = 0, load = -1;
  before = rseq_percpu_fallbacks ();
  int ret;
  do
    ret = pop (RSEQ_PERCPU_INDEX_CPU_ID, &head, 0, 0, &load, my_cpu ());
  while (ret < 0 && errno == EAGAIN);
  CHECK_EQ (ret, 1);
  CHECK_EQ (load, -1);
  CHECK_EQ (cpu_opv_add (&v, 0, sizeof v, my_cpu ()), 0);
  CHECK_EQ (rseq_percpu_fallbacks (), before);

  /* A CPU that is not the thread's (the caller migrated after reading
     it, or never ran there) is refused with EAGAIN, so that the caller
     reads its CPU again, rather than run there by cpu_opv; a CPU no
     thread can have (not below get_nprocs_conf) with EINVAL, since
     reading the CPU again could never give it.  */
  cpu_set_t all, here;
  CHECK (sched_getaffinity (0, sizeof all, &all) == 0);
  int cpu = my_cpu ();
  CPU_ZERO (&here);
  CPU_SET (cpu, &here);
  CHECK (sched_setaffinity (0, sizeof here, &here) == 0);
  int other = cpu == 0 ? 1 : 0;
  before = rseq_percpu_fallbacks ();
  CHECK_ERRNO (addv (RSEQ_PERCPU_INDEX_CPU_ID, &v, 1, other), EAGAIN);
  CHECK_ERRNO (addv (RSEQ_PERCPU_INDEX_CPU_ID, &v, 1, 100000), EINVAL);
  CHECK_EQ (v, 100);
  CHECK_EQ (rseq_percpu_fallbacks (), before);
  CHECK (sched_setaffinity (0, sizeof all, &all) == 0);

  CHECK_EQ (rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_NEVER),
	    RSEQ_PERCPU_FALLBACK_ALWAYS);
  before = rseq_percpu_fallbacks ();
  CHECK (addv (RSEQ_PERCPU_INDEX_CPU_ID, &v, 1, my_cpu ()) >= -1);
  CHECK_EQ (rseq_percpu_fallbacks (), before);
  rseq_percpu_set_fallback (RSEQ_PERCPU_FALLBACK_AUTO);
}

/* What the kernel publishes, read independently of libc.  */
static int
kernel_has_cpu_opv (void)
{
  int nr = -1;
  FILE *f = fopen ("/proc/sys/kernel/cpu_opv_syscall", "r");
  if (f != NULL)
    {
      if (fscanf (f, "%d", &nr) != 1)
	nr = -1;
      fclose (f);
    }
  return nr == NR_CPU_OPV;
}

/* A CPU taken offline (CPU hotplug, as root in the VM) is refused with
   EINVAL and nothing is written; once back online it works again.  */
static void
test_offline_cpu (void)
{
  const char *path = "/sys/devices/system/cpu/cpu1/online";
  FILE *f = fopen (path, "w");
  if (f == NULL)
    {
      printf ("CPU 1 cannot be taken offline here (%s): hotplug not tested\n",
	      strerror (errno));
      return;
    }
  cpu_set_t all;
  CHECK (sched_getaffinity (0, sizeof all, &all) == 0);
  CHECK (fputs ("0", f) >= 0 && fclose (f) == 0);
  intptr_t v = 0;
  CHECK_ERRNO (cpu_opv_add (&v, 1, sizeof v, 1), EINVAL);
  CHECK_EQ (v, 0);
  f = fopen (path, "w");
  CHECK (f != NULL && fputs ("1", f) >= 0 && fclose (f) == 0);
  /* Offlining dropped CPU 1 from the affinity mask; put it back.  */
  CHECK (sched_setaffinity (0, sizeof all, &all) == 0);
  CHECK_EQ (cpu_opv_add (&v, 1, sizeof v, 1), 0);
  CHECK_EQ (v, 1);
  printf ("CPU 1 offline: EINVAL; back online: works\n");
}

int
main (void)
{
  if (rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID) < 0)
    UNSUPPORTED ("rseq is not registered");
  if (!kernel_has_cpu_opv ())
    {
      /* libc learns it from the auxiliary vector, without a call.  */
      CHECK_EQ (getauxval (AT_CPU_OPV), 0);
      /* Before libc's first look, so a blind call would be caught.  */
      trap_cpu_opv_number ();
      test_without_cpu_opv ();
      return 0;
    }
  CHECK_EQ (getauxval (AT_CPU_OPV), NR_CPU_OPV);
  test_copy_with_partial_piece ();
  test_bitwise_fault ();
  test_fallback_modes ();
  test_offline_cpu ();
  printf ("cpu_opv: fallback modes, partial copy, bitwise EFAULT work\n");
  return 0;
}
