/* A stand-in for glibc's <support/xunistd.h> (see check.h): process
   and mapping calls that end the test with status 1 when they fail.  */
#ifndef SUPPORT_XUNISTD_H
#define SUPPORT_XUNISTD_H

#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <support/check.h>

static inline pid_t
xfork (void)
{
  pid_t pid = fork ();
  if (pid < 0)
    FAIL_EXIT1 ("fork: %m");
  return pid;
}

static inline pid_t
xwaitpid (pid_t pid, int *status, int flags)
{
  pid_t result = waitpid (pid, status, flags);
  if (result < 0)
    FAIL_EXIT1 ("waitpid (%d): %m", (int) pid);
  return result;
}

static inline void *
xmmap (void *addr, size_t length, int prot, int flags, int fd)
{
  void *p = mmap (addr, length, prot, flags, fd, 0);
  if (p == MAP_FAILED)
    FAIL_EXIT1 ("mmap of %zu bytes: %m", length);
  return p;
}

static inline void
xmunmap (void *addr, size_t length)
{
  if (munmap (addr, length) != 0)
    FAIL_EXIT1 ("munmap of %zu bytes at %p: %m", length, addr);
}

#endif /* support/xunistd.h */
