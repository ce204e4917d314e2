/* The peak resident set of the calling process, for the benchmarks of
   bench/ and the probes that report it (vmhwm-preload.c,
   tests/rseq.malloc/real-programs/malloc-probe.c).  No stdio, so that a
   preloaded library's destructor may call it.  */

#ifndef BENCH_VMHWM_H
#define BENCH_VMHWM_H

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* VmHWM of /proc/self/status in KiB, or -1.  */
static inline long
vmhwm_kb (void)
{
  char buf[8192];
  int fd = open ("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  char *p = strstr (buf, "\nVmHWM:");
  return p != NULL ? strtol (p + 7, NULL, 10) : -1;
}

#endif /* BENCH_VMHWM_H */
