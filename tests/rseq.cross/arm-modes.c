/* ARM: per-CPU operations inlined into an A32 function and into a T32
   function of the same file (target attributes), built once with
   -marm and once with -mthumb, so that each run has a function in the
   file's own mode and one in the other.  The address each section
   stores in rseq_cs must be its own descriptor, whatever the mode: a
   descriptor address off by the other mode's PC bias makes the kernel
   kill the thread at its next preemption.  Checked directly (rseq_cs
   right after the operation is a descriptor in __rseq_cs whose section
   lies in the function) and by surviving sleeps after each call.  */
#include "rseq-test.h"
#include <sys/rseq-percpu.h>

#ifdef __arm__

struct descriptor
{
  uint32_t version, flags;
  uint64_t start_ip, post_commit_offset, abort_ip;
};

extern const struct descriptor __start___rseq_cs[], __stop___rseq_cs[];

static intptr_t slots[1024];

/* The descriptor left in rseq_cs by one inline increment, read right
   after it (0 if a preemption cleared it first).  */
#define MODE_FUNCTION(name, mode)					\
  __attribute__ ((target (mode), noinline)) static uintptr_t		\
  name (void)								\
  {									\
    for (;;)								\
      {									\
	int cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);	\
	if (cpu < 0)							\
	  FAIL ("no CPU: %s", strerror (errno));			\
	if (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID,			\
			      &slots[cpu % 1024], 1, cpu) == 0)		\
	  return *(volatile uint32_t *) (test_thread_pointer ()		\
					 + __rseq_offset + 8);		\
	if (errno != EAGAIN)						\
	  FAIL ("addv: %s", strerror (errno));				\
      }									\
  }

MODE_FUNCTION (in_arm, "arm")
MODE_FUNCTION (in_thumb, "thumb")

/* Run FN until rseq_cs is seen, check it, then sleep.  */
static void
check_mode (const char *mode, uintptr_t (*fn) (void))
{
  uintptr_t code = (uintptr_t) fn & ~(uintptr_t) 1;
  uintptr_t cs = 0;
  for (int i = 0; i < 1000 && cs == 0; i++)
    cs = fn ();
  if (cs == 0)
    FAIL ("%s: rseq_cs was always cleared", mode);
  const struct descriptor *d = (const struct descriptor *) cs;
  if (d < __start___rseq_cs || d >= __stop___rseq_cs
      || (cs - (uintptr_t) __start___rseq_cs) % sizeof *d != 0)
    FAIL ("%s: rseq_cs %#lx is not a descriptor of __rseq_cs [%p, %p)",
	  mode, (unsigned long) cs, (void *) __start___rseq_cs,
	  (void *) __stop___rseq_cs);
  if (d->version != 0 || d->start_ip < code || d->start_ip >= code + 4096)
    FAIL ("%s: descriptor %p (version %u, start_ip %#llx) is not the "
	  "section of the function at %#lx", mode, (void *) d, d->version,
	  (unsigned long long) d->start_ip, (unsigned long) code);
  for (int i = 0; i < 5; i++)
    {
      fn ();
      usleep (1000);
    }
  printf ("%s: descriptor %p, start_ip %#llx\n", mode, (void *) d,
	  (unsigned long long) d->start_ip);
}

int
main (void)
{
  require_kernel_rseq ();
  if (!rseq_area_registered ())
    UNSUPPORTED ("glibc did not register rseq");
  check_mode ("A32", in_arm);
  check_mode ("T32", in_thumb);
  return 0;
}

#else

int
main (void)
{
  UNSUPPORTED ("ARM (AArch32) only");
}

#endif
