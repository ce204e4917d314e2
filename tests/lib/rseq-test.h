/* Helpers shared by the C test programs of the rseq toolchain testsuite.
   A test exits 0 on success, 1 on failure (after printing FAIL: ...),
   and 77 when something it needs is unavailable (after printing why).  */
#ifndef RSEQ_TEST_H
#define RSEQ_TEST_H

#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/rseq.h>
#include <sys/rseq-syscall.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_UNSUPPORTED 77

#define FAIL(...)							\
  do {									\
    fprintf (stderr, "FAIL: %s:%d: ", __FILE__, __LINE__);		\
    fprintf (stderr, __VA_ARGS__);					\
    fputc ('\n', stderr);						\
    exit (1);								\
  } while (0)

#define UNSUPPORTED(...)						\
  do {									\
    printf ("UNSUPPORTED: ");						\
    printf (__VA_ARGS__);						\
    putchar ('\n');							\
    exit (EXIT_UNSUPPORTED);						\
  } while (0)

#define CHECK(cond)							\
  do {									\
    if (!(cond))							\
      FAIL ("check failed: %s", #cond);					\
  } while (0)

#define CHECK_EQ(actual, expected)					\
  do {									\
    long long _a = (long long) (actual), _e = (long long) (expected);	\
    if (_a != _e)							\
      FAIL ("%s is %lld, expected %s = %lld", #actual, _a, #expected, _e); \
  } while (0)

/* Expect CALL to fail with -1 and errno ERR.  */
#define CHECK_ERRNO(call, err)						\
  do {									\
    errno = 0;								\
    long _r = (long) (call);						\
    int _e = errno;							\
    if (_r != -1 || _e != (err))					\
      FAIL ("%s returned %ld errno %d (%s), expected -1 errno %d (%s)", \
	    #call, _r, _e, strerror (_e), (err), strerror (err));	\
  } while (0)

#define RSEQ_ORIGINAL_SIZE 32	/* Length every kernel accepts.  */
#define RSEQ_ORIGINAL_FEATURE_SIZE 20

/* The thread pointer, found without glibc's headers.  GCC 12 knows
   __builtin_thread_pointer on powerpc64 but cannot expand it; the thread
   pointer is r13 there.  */
static inline char *
test_thread_pointer (void)
{
#ifdef __powerpc64__
  char *tp;
  __asm__ ("mr %0, 13" : "=r" (tp));
  return tp;
#else
  return (char *) __builtin_thread_pointer ();
#endif
}

/* The cpu_id field, read without going through glibc's accessors.  */
static inline int
raw_area_cpu_id (void)
{
  return *(volatile int32_t *) (test_thread_pointer ()
				+ __rseq_offset + RSEQ_AREA_CPU_ID_OFFSET);
}

/* The 32-bit word at OFFSET from the area (negative: before it), read
   without going through glibc's accessors.  */
static inline uint32_t
raw_area_word (int offset)
{
  return *(volatile uint32_t *) (test_thread_pointer () + __rseq_offset
				 + offset);
}

/* The fields the kernel owns, which user space must never write.  */
struct kernel_fields
{
  uint32_t cpu_id_start, cpu_id, node_id, mm_cid;
};

static inline struct kernel_fields
raw_kernel_fields (void)
{
  struct kernel_fields f = {
    raw_area_word (RSEQ_AREA_CPU_ID_START_OFFSET),
    raw_area_word (RSEQ_AREA_CPU_ID_OFFSET),
    raw_area_word (RSEQ_AREA_NODE_ID_OFFSET),
    raw_area_word (RSEQ_AREA_MM_CID_OFFSET),
  };
  return f;
}

/* CPU and node from the getcpu system call itself.  */
static inline int
syscall_getcpu (unsigned int *cpu, unsigned int *node)
{
  return syscall (SYS_getcpu, cpu, node, NULL);
}

/* The length glibc (2.43) registers for a feature size: the feature
   size itself, at least the original 32 bytes (33 on Linux 7).  */
static inline unsigned int
registration_length (unsigned int feature_size)
{
  return feature_size < RSEQ_ORIGINAL_SIZE ? RSEQ_ORIGINAL_SIZE : feature_size;
}

/* The __rseq_size glibc must report on this kernel: the feature size
   of the auxiliary vector, at least the original 20 bytes.  */
static inline unsigned int
expected_rseq_size (void)
{
  unsigned long feature = getauxval (AT_RSEQ_FEATURE_SIZE);
  return feature < RSEQ_ORIGINAL_FEATURE_SIZE ? RSEQ_ORIGINAL_FEATURE_SIZE : feature;
}

/* The alignment of glibc's area: the kernel's AT_RSEQ_ALIGN, at least
   32 bytes.  */
static inline unsigned long
rseq_area_align (void)
{
  unsigned long align = getauxval (AT_RSEQ_ALIGN);
  return align < 32 ? 32 : align;
}


/* Skip the test when the kernel has no rseq at all (ENOSYS).  */
static inline void
require_kernel_rseq (void)
{
  if (syscall (SYS_rseq, NULL, 0, 0, 0) == -1 && errno == ENOSYS)
    UNSUPPORTED ("kernel does not implement rseq");
}

/* Check that glibc registered the calling thread's area with the
   kernel, with the length and signature it claims: registering the
   same area again must fail with EBUSY, which the kernel only answers
   for an identical registration.  cpu_id must agree with getcpu.  */
static inline void
check_thread_registered (const char *where)
{
  struct rseq *area = rseq_area_pointer ();
  if (area == NULL)
    FAIL ("%s: no rseq area (__rseq_size %u)", where, __rseq_size);
  if (!rseq_area_registered ())
    FAIL ("%s: area not registered (cpu_id %d)", where, raw_area_cpu_id ());
  unsigned long align = rseq_area_align ();
  if ((uintptr_t) area % align != 0)
    FAIL ("%s: area %p not aligned to %lu", where, (void *) area, align);
  errno = 0;
  int r = rseq (area, registration_length (__rseq_size), 0, RSEQ_SIG);
  if (r != -1 || errno != EBUSY)
    FAIL ("%s: re-registering glibc's area gave %d errno %d (%s), not EBUSY",
	  where, r, errno, strerror (errno));

  /* The thread may migrate between the loads; retry until a stable
     reading brackets the system call.  */
  for (int attempt = 0; attempt < 1000; attempt++)
    {
      int before = raw_area_cpu_id ();
      unsigned int cpu;
      CHECK (syscall_getcpu (&cpu, NULL) == 0);
      if (before == (int) cpu && raw_area_cpu_id () == before)
	return;
    }
  FAIL ("%s: cpu_id never agreed with getcpu", where);
}

/* Run this program again with glibc's registration turned off
   (GLIBC_TUNABLES=glibc.pthread.rseq=0) and ARG as its only argument;
   fail unless that run exits 0.  */
static inline void
run_self_with_rseq_off (const char *argv0, const char *arg)
{
  pid_t pid = fork ();
  CHECK (pid >= 0);
  if (pid == 0)
    {
      setenv ("GLIBC_TUNABLES", "glibc.pthread.rseq=0", 1);
      execl ("/proc/self/exe", argv0, arg, (char *) NULL);
      FAIL ("execl: %s", strerror (errno));
    }
  int status;
  CHECK (waitpid (pid, &status, 0) == pid);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    FAIL ("%s with glibc.pthread.rseq=0 failed, status %#x", arg, status);
}

#endif /* RSEQ_TEST_H */
