/* What glibc a program that cannot be changed (xz, zstd, git, python3)
   ran under, and what malloc's per-CPU cache did in it, for
   tests/rseq.malloc/real_programs.py and bench/real_programs_bench.py:

     REAL_PROGRAMS_PROBE_FILE=records.txt LD_PRELOAD=./malloc-probe.so PROGRAM

   Built with the system gcc, so that it loads under Debian's glibc
   (the comparison runs, and the children that a program started by
   rseq-run starts) as under the patched one.  At exit (a destructor:
   main returned or exit was called) every process that loaded it
   appends one line, in one write (O_APPEND), to the file, its fields
   separated by tabs (the elements below have spaces):

     pid=P ppid=Q glibc=VERSION libc=PATH rseq_size=R vmhwm_kb=K
     wall_ns=N percpu_own=ELEMENT percpu_forced=ELEMENT cmd=COMMAND

   VERSION is gnu_get_libc_version (), PATH the file the process's
   libc.so.6 was loaded from, R glibc's __rseq_size (0: rseq is not
   registered, so no per-CPU cache can start; -1: a glibc without it),
   K the peak resident set (VmHWM, read
   first, so that what the probe allocates does not count), N the wall
   time (CLOCK_MONOTONIC) from this library's constructor to its
   destructor: the program's own, without a launcher's such as
   rseq-run's checks before it execs the dynamic linker.  percpu_own
   is malloc_info's <percpu ...> element as the program left it (its
   cache elements joined into the line), or "none": the caches are set
   up by the first free that the thread cache has no room for, so a
   program whose frees all fit there never shows one, even with the
   cache on.  percpu_forced is the element after the probe has freed
   more small blocks than the thread cache holds: present whenever
   glibc.malloc.percpu is on in this process, "none" when it is off or
   the glibc has no cache.  COMMAND is the first arguments as main saw
   them (under rseq-run the program's own, without the dynamic
   linker's), separated by spaces.

   The variable stays in the environment, so children write their own
   lines; a forked child that exits without exec does not (the pid the
   constructor saw is checked).  */

#define _GNU_SOURCE
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* vmhwm_kb, shared with the benchmarks.  */
#include "../../../bench/vmhwm.h"

#define VAR "REAL_PROGRAMS_PROBE_FILE"

static char path[4096];
static char command[256];
static pid_t pid;
static struct timespec start;

/* glibc 2.35 and later; weak, so that the probe loads in any glibc.  */
extern const unsigned int __rseq_size __attribute__ ((weak));

/* glibc passes constructors the arguments main gets.  Copied now: the
   program may change them, and nothing is allocated here.  */
__attribute__ ((constructor)) static void
probe_start (int argc, char **argv)
{
  const char *p = getenv (VAR);
  if (p == NULL || strlen (p) >= sizeof path)
    return;
  strcpy (path, p);
  pid = getpid ();
  clock_gettime (CLOCK_MONOTONIC, &start);
  for (int i = 0; i < argc && i < 8; i++)
    {
      size_t used = strlen (command);
      snprintf (command + used, sizeof command - used, "%s%s",
		i > 0 ? " " : "", argv[i]);
    }
}

/* dl_iterate_phdr callback: the name of the loaded libc.so.6.  */
static int
find_libc (struct dl_phdr_info *info, size_t size, void *data)
{
  const char *slash = strrchr (info->dlpi_name, '/');
  if (slash != NULL && strcmp (slash + 1, "libc.so.6") == 0)
    {
      *(const char **) data = info->dlpi_name;
      return 1;
    }
  return 0;
}

/* Write malloc_info's percpu element to OUT on one line, or "none".  */
static void
put_percpu_element (FILE *out)
{
  char *info = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&info, &len);
  if (f == NULL)
    {
      fputs ("error", out);
      return;
    }
  int failed = malloc_info (0, f) != 0;
  if (fclose (f) != 0 || failed)
    {
      fputs ("error", out);
      free (info);
      return;
    }
  char *start = strstr (info, "<percpu ");
  char *end = start != NULL ? strstr (start, "</percpu>") : NULL;
  if (end == NULL)
    fputs ("none", out);
  for (char *c = start; end != NULL && c < end; c++)
    fputc (*c == '\n' || *c == '\t' ? ' ' : *c, out);
  free (info);
}

/* Free more blocks of one size than the thread cache holds, so that a
   cache that is on gets set up.  */
static void
overflow_thread_cache (void)
{
  enum { count = 256 };
  void *volatile blocks[count];
  for (int i = 0; i < count; i++)
    blocks[i] = malloc (48);
  for (int i = 0; i < count; i++)
    free (blocks[i]);
}

__attribute__ ((destructor)) static void
probe_end (void)
{
  if (path[0] == '\0' || getpid () != pid)
    return;
  struct timespec end;
  clock_gettime (CLOCK_MONOTONIC, &end);
  long long wall = (end.tv_sec - start.tv_sec) * 1000000000LL
		   + end.tv_nsec - start.tv_nsec;
  long hwm = vmhwm_kb ();
  const char *libc = "unknown";
  dl_iterate_phdr (find_libc, &libc);
  char *line = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&line, &len);
  if (out == NULL)
    return;
  fprintf (out, "pid=%d\tppid=%d\tglibc=%s\tlibc=%s\trseq_size=%d\tvmhwm_kb=%ld"
	   "\twall_ns=%lld\tpercpu_own=", (int) pid, (int) getppid (),
	   gnu_get_libc_version (), libc,
	   &__rseq_size != NULL ? (int) __rseq_size : -1, hwm, wall);
  put_percpu_element (out);
  overflow_thread_cache ();
  fputs ("\tpercpu_forced=", out);
  put_percpu_element (out);
  fprintf (out, "\tcmd=%s\n", command);
  if (fclose (out) != 0)
    return;
  int fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0)
    {
      ssize_t unused = write (fd, line, len);
      (void) unused;
      close (fd);
    }
  free (line);
}
