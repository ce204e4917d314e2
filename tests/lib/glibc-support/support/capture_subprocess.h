/* A stand-in for glibc's <support/capture_subprocess.h> (see check.h):
   run a function in a child process and capture what it writes to
   standard output and standard error.  */
#ifndef SUPPORT_CAPTURE_SUBPROCESS_H
#define SUPPORT_CAPTURE_SUBPROCESS_H

#include <poll.h>
#include <unistd.h>
#include <support/check.h>
#include <support/xmemstream.h>
#include <support/xunistd.h>

/* BUFFER holds LENGTH bytes and a terminating null byte.  */
struct support_capture_output
{
  char *buffer;
  size_t length;
};

/* What the child wrote, and its wait status.  */
struct support_capture_subprocess
{
  struct support_capture_output out;
  struct support_capture_output err;
  int status;
};

static inline void
support_capture_pipe (int fds[2])
{
  if (pipe (fds) != 0)
    FAIL_EXIT1 ("pipe: %m");
}

/* Read what is ready on *PFD into STREAM; stop polling it at its end.  */
static inline void
support_capture_transfer (struct pollfd *pfd, struct xmemstream *stream)
{
  if (pfd->revents == 0)
    return;
  char buf[1024];
  ssize_t n;
  do
    n = read (pfd->fd, buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n > 0)
    TEST_VERIFY (fwrite (buf, n, 1, stream->out) == 1);
  else
    {
      if (n < 0)
	FAIL ("reading the output of a subprocess: %m");
      pfd->fd = -1;
    }
}

/* Read the child's two pipes until both end.  */
static inline void
support_capture_read (int out_fd, int err_fd,
		      struct support_capture_subprocess *result)
{
  struct xmemstream out, err;
  xopen_memstream (&out);
  xopen_memstream (&err);
  struct pollfd fds[2] = { { .fd = out_fd, .events = POLLIN },
			   { .fd = err_fd, .events = POLLIN } };
  while (fds[0].fd >= 0 || fds[1].fd >= 0)
    {
      int ready = poll (fds, 2, -1);
      if (ready < 0 && errno == EINTR)
	continue;
      if (ready < 0)
	FAIL_EXIT1 ("poll: %m");
      support_capture_transfer (&fds[0], &out);
      support_capture_transfer (&fds[1], &err);
    }
  xfclose_memstream (&out);
  xfclose_memstream (&err);
  result->out = (struct support_capture_output) { out.buffer, out.length };
  result->err = (struct support_capture_output) { err.buffer, err.length };
}

/* Run CALLBACK (CLOSURE) in a child process that exits 0 when it
   returns.  */
static inline struct support_capture_subprocess
support_capture_subprocess (void (*callback) (void *), void *closure)
{
  int out[2], err[2];
  support_capture_pipe (out);
  support_capture_pipe (err);
  fflush (stdout);
  fflush (stderr);
  pid_t pid = xfork ();
  if (pid == 0)
    {
      if (dup2 (out[1], STDOUT_FILENO) < 0 || dup2 (err[1], STDERR_FILENO) < 0)
	_exit (1);
      close (out[0]);
      close (out[1]);
      close (err[0]);
      close (err[1]);
      callback (closure);
      _exit (0);
    }
  close (out[1]);
  close (err[1]);
  struct support_capture_subprocess result;
  support_capture_read (out[0], err[0], &result);
  close (out[0]);
  close (err[0]);
  xwaitpid (pid, &result.status, 0);
  return result;
}

static inline void
support_capture_subprocess_free (struct support_capture_subprocess *p)
{
  free (p->out.buffer);
  free (p->err.buffer);
}

#endif /* support/capture_subprocess.h */
