/* A stand-in for glibc's <support/check.h>, written anew for the
   series' glibc tests that DejaGnu builds outside glibc's tree (the
   areas' glibc tests, rseq_area_glibc_tests in tests/lib/rseq.exp):
   the part of glibc's support/ those tests use, with glibc's meaning.

   A failed check prints "error: FILE:LINE: ..." and is recorded, and
   the test goes on; FAIL_EXIT1 and TEST_VERIFY_EXIT end the process
   with status 1, FAIL_UNSUPPORTED with 77 after a line "REASON
   (FILE:LINE)".  When the test ends (the
   driver, test-driver.c, runs it in a child process), a recorded
   failure turns its status 0 or 77 into 1.  The record lives in memory
   shared with every process the test forks, so a failure in a child
   counts too.  */
#ifndef SUPPORT_CHECK_H
#define SUPPORT_CHECK_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/cdefs.h>
#include <sys/mman.h>

#define EXIT_UNSUPPORTED 77

/* The number of failed checks, in every process of the test; mapped by
   support_failures_init before the test starts.  */
static unsigned int *support_failures;

static inline void
support_failures_init (void)
{
  void *p = mmap (NULL, sizeof *support_failures, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    {
      printf ("error: cannot map the record of failures: %m\n");
      exit (1);
    }
  support_failures = p;
}

static inline void
support_record_failure (void)
{
  __atomic_add_fetch (support_failures, 1, __ATOMIC_RELAXED);
}

static inline int
support_record_failure_is_failed (void)
{
  return __atomic_load_n (support_failures, __ATOMIC_RELAXED) != 0;
}

/* The test's exit STATUS, or 1 if it succeeded or was unsupported while
   a check failed.  */
static inline int
support_report_failure (int status)
{
  unsigned int failures = __atomic_load_n (support_failures, __ATOMIC_RELAXED);
  if (failures == 0)
    return status;
  printf ("error: %u test failures\n", failures);
  return status == 0 || status == EXIT_UNSUPPORTED ? 1 : status;
}

/* FILE without its directories: the source's place on this machine
   means nothing in a result.  */
static inline const char *
support_file_name (const char *file)
{
  const char *slash = strrchr (file, '/');
  return slash != NULL ? slash + 1 : file;
}

/* Print "error: FILE:LINE: " and the message; a %m in FORMAT names the
   caller's errno.  */
static inline void
support_print_failure (const char *file, int line, const char *format,
		       va_list ap)
{
  int saved_errno = errno;
  printf ("error: %s:%d: ", support_file_name (file), line);
  errno = saved_errno;
  vprintf (format, ap);
  putchar ('\n');
  errno = saved_errno;
}

/* Print the reason a test is unsupported, then " (FILE:LINE)": DejaGnu
   reports the last line of the output as the reason.  */
static inline void
support_print_unsupported (const char *file, int line, const char *format,
			   va_list ap)
{
  vprintf (format, ap);
  printf (" (%s:%d)\n", support_file_name (file), line);
}

static inline __attribute__ ((format (printf, 3, 4))) void
support_fail (const char *file, int line, const char *format, ...)
{
  support_record_failure ();
  va_list ap;
  va_start (ap, format);
  support_print_failure (file, line, format, ap);
  va_end (ap);
}

/* Exit with STATUS; a failure unless STATUS is 0 or 77.  */
static inline __attribute__ ((noreturn, format (printf, 4, 5))) void
support_fail_exit (int status, const char *file, int line,
		   const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  if (status == EXIT_UNSUPPORTED)
    support_print_unsupported (file, line, format, ap);
  else
    {
      if (status != 0)
	support_record_failure ();
      support_print_failure (file, line, format, ap);
    }
  va_end (ap);
  exit (status);
}

#define FAIL(...) support_fail (__FILE__, __LINE__, __VA_ARGS__)
#define FAIL_EXIT(status, ...) \
  support_fail_exit (status, __FILE__, __LINE__, __VA_ARGS__)
#define FAIL_EXIT1(...) FAIL_EXIT (1, __VA_ARGS__)
#define FAIL_UNSUPPORTED(...) FAIL_EXIT (EXIT_UNSUPPORTED, __VA_ARGS__)

#define TEST_VERIFY(expr)						\
  ({									\
    if (!(expr))							\
      FAIL ("not true: %s", #expr);					\
  })

#define TEST_VERIFY_EXIT(expr)						\
  ({									\
    if (!(expr))							\
      FAIL_EXIT1 ("not true: %s", #expr);				\
  })

/* LEFT_VALUE and RIGHT_VALUE differ; each is printed signed when it is
   negative (its _POSITIVE flag false and the value not zero), unsigned
   otherwise.  */
static inline void
support_compare_failed (const char *file, int line,
			const char *left, unsigned long long left_value,
			bool left_positive, const char *right,
			unsigned long long right_value, bool right_positive)
{
  support_record_failure ();
  printf ("error: %s:%d: %s != %s\n", support_file_name (file), line,
	  left, right);
  if (!left_positive && left_value != 0)
    printf ("  left:  %lld\n", (long long) left_value);
  else
    printf ("  left:  %llu\n", left_value);
  if (!right_positive && right_value != 0)
    printf ("  right: %lld\n", (long long) right_value);
  else
    printf ("  right: %llu\n", right_value);
}

/* Whether two integers are equal, as glibc's TEST_COMPARE judges it:
   the same value and the same sign, whatever their types (-1 is not
   UINT_MAX).  The unary + promotes bit-fields and small types.  */
#define TEST_COMPARE(left, right)					\
  ({									\
    __typeof__ (+(left)) support_left = (left);				\
    __typeof__ (+(right)) support_right = (right);			\
    _Static_assert (sizeof support_left <= sizeof (long long)		\
		    && sizeof support_right <= sizeof (long long),	\
		    "TEST_COMPARE compares integers up to long long");	\
    bool support_left_positive = support_left > 0;			\
    bool support_right_positive = support_right > 0;			\
    if (support_left != support_right					\
	|| support_left_positive != support_right_positive)		\
      support_compare_failed (__FILE__, __LINE__, #left,		\
			      (unsigned long long) support_left,	\
			      support_left_positive, #right,		\
			      (unsigned long long) support_right,	\
			      support_right_positive);			\
  })

/* The first LEFT_LENGTH bytes at LEFT are those at RIGHT, and the
   lengths are equal.  */
static inline void
support_compare_blob (const char *file, int line, const char *left_expr,
		      const void *left, size_t left_length,
		      const char *right_expr, const void *right,
		      size_t right_length)
{
  if (left_length != right_length)
    {
      support_record_failure ();
      printf ("error: %s:%d: blob lengths differ: %s is %zu bytes, %s %zu\n",
	      support_file_name (file), line, left_expr, left_length,
	      right_expr, right_length);
      return;
    }
  const unsigned char *l = left, *r = right;
  for (size_t i = 0; i < left_length; i++)
    if (l[i] != r[i])
      {
	support_record_failure ();
	printf ("error: %s:%d: %s and %s differ first at byte %zu of %zu:"
		" 0x%02x against 0x%02x\n", support_file_name (file), line,
		left_expr, right_expr, i, left_length, l[i], r[i]);
	return;
      }
}

#define TEST_COMPARE_BLOB(left, left_length, right, right_length)	\
  support_compare_blob (__FILE__, __LINE__, #left, (left), (left_length), \
			#right, (right), (right_length))

#endif /* support/check.h */
