/* Peak resident set of a program that cannot be changed (glibc's
   bench-malloc-thread and bench-malloc-simple), for bench/malloc-bench.sh:

     MALLOC_BENCH_VMHWM_FILE=out.txt LD_PRELOAD=./vmhwm-preload.so PROGRAM

   At exit (a destructor: the program returns from main or calls exit)
   it appends one line to the file named by MALLOC_BENCH_VMHWM_FILE:

     pid=P prog=NAME vmhwm_kb=K wall_ns=N

   NAME is the program's name (program_invocation_short_name), K VmHWM
   from /proc/self/status, the peak resident set of this process image,
   and N the wall time (CLOCK_MONOTONIC) from this library's constructor
   to its destructor.  Every process that has the library loaded and
   exits normally writes its line (one write, O_APPEND): a wrapper such
   as /usr/bin/time that starts the program and outlives it writes one
   too, so the reader picks the line of the program it means.

   Why not getrusage's ru_maxrss, which the benchtests print themselves:
   Linux keeps ru_maxrss across execve, so a program started through a
   wrapper that execs it (a shell script such as rseq-run, or any larger
   process that execs) reports the wrapper's peak if that was higher.
   VmHWM belongs to the memory map, which execve replaces, so it is the
   program's own peak.  (ru_maxrss of RUSAGE_CHILDREN in the parent has
   the same problem and mixes all children.)

   The variable stays in the environment, so the library works through
   wrappers that exec the program (nice, env, rseq-run): an image that
   execs runs no destructor.  A forked child that exits without exec
   does not write (the destructor checks the pid the constructor saw).
   Only getenv, open, read, write and clock_gettime are used: no malloc,
   whatever allocator is loaded.  */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "vmhwm.h"

#define VAR "MALLOC_BENCH_VMHWM_FILE"

static char path[4096];
static struct timespec start;
static pid_t pid;

__attribute__ ((constructor)) static void
vmhwm_start (void)
{
  const char *p = getenv (VAR);
  if (p == NULL || strlen (p) >= sizeof path)
    return;
  strcpy (path, p);
  pid = getpid ();
  clock_gettime (CLOCK_MONOTONIC, &start);
}

/* Decimal digits of V at the end of BUF; returns their start.  */
static char *
fmt_u (char *end, unsigned long long v)
{
  *--end = '\0';
  do
    *--end = '0' + v % 10;
  while ((v /= 10) != 0);
  return end;
}

__attribute__ ((destructor)) static void
vmhwm_end (void)
{
  if (path[0] == '\0' || getpid () != pid)
    return;
  struct timespec end;
  clock_gettime (CLOCK_MONOTONIC, &end);
  unsigned long long wall = (end.tv_sec - start.tv_sec) * 1000000000ULL
                            + end.tv_nsec - start.tv_nsec;

  long hwm = vmhwm_kb ();
  int fd;

  char line[512], num[32];
  line[0] = '\0';
  strcat (line, "pid=");
  strcat (line, fmt_u (num + sizeof num, pid));
  strcat (line, " prog=");
  strncat (line, program_invocation_short_name, 256);
  strcat (line, " vmhwm_kb=");
  strcat (line, hwm < 0 ? "-1" : fmt_u (num + sizeof num, hwm));
  strcat (line, " wall_ns=");
  strcat (line, fmt_u (num + sizeof num, wall));
  strcat (line, "\n");
  fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0)
    {
      ssize_t unused = write (fd, line, strlen (line));
      (void) unused;
      close (fd);
    }
}
