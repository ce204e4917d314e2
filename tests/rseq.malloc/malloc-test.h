/* What the tests of malloc's per-CPU cache share: reading malloc_info,
   running with the cache's tunables, and running cases each in a new
   process of the test.  */
#ifndef MALLOC_TEST_H
#define MALLOC_TEST_H

#include "rseq-test.h"
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

/* malloc_info's output; the caller frees it.  Not inlined: GCC 12 then
   takes the buffer open_memstream set for a dangling pointer.  */
__attribute__ ((noinline, unused)) static char *
malloc_info_text (void)
{
  char *buf;
  size_t len;
  FILE *f = open_memstream (&buf, &len);
  CHECK (f != NULL);
  CHECK_EQ (malloc_info (0, f), 0);
  CHECK_EQ (fclose (f), 0);
  return buf;
}

/* The line of malloc_info that starts with START ("<percpu ",
   "<cache index=\"1\" "), or NULL; the caller frees it.  */
static inline char *
malloc_info_line (const char *start)
{
  char *info = malloc_info_text ();
  char *p = strstr (info, start);
  char *line = p != NULL ? strndup (p, strcspn (p, "\n")) : NULL;
  free (info);
  return line;
}

/* The number in attribute NAME of LINE, a line of malloc_info.  */
static inline long
malloc_info_attr (const char *line, const char *name)
{
  char key[32];
  snprintf (key, sizeof key, " %s=\"", name);
  const char *v = strstr (line, key);
  if (v == NULL)
    FAIL ("no attribute %s in %s", name, line);
  return strtol (v + strlen (key), NULL, 10);
}

struct foreign_request
{
  void **chunks;
  int n;
  size_t size;
};

static void *
foreign_thread (void *closure)
{
  struct foreign_request *r = closure;
  for (int i = 0; i < r->n; i++)
    CHECK ((r->chunks[i] = malloc (r->size)) != NULL);
  return NULL;
}

/* N chunks of SIZE bytes from the arena of a thread that has exited on
   return.  The caches take chunks that a thread frees away from their
   arena's thread (with glibc.malloc.percpu_local=1 its own as well), so
   the caller's frees of these reach them once its thread cache is
   full.  */
__attribute__ ((unused)) static void
malloc_foreign_chunks (void **chunks, int n, size_t size)
{
  struct foreign_request r = { chunks, n, size };
  pthread_t t;
  CHECK_EQ (pthread_create (&t, NULL, foreign_thread, &r), 0);
  CHECK_EQ (pthread_join (t, NULL), 0);
}

/* Execute this program again with GLIBC_TUNABLES=TUNABLES unless it has
   them already: glibc reads tunables at startup.  */
static inline void
reexec_with_tunables (char **argv, const char *tunables)
{
  const char *now = getenv ("GLIBC_TUNABLES");
  if (now != NULL && strcmp (now, tunables) == 0)
    return;
  CHECK_EQ (setenv ("GLIBC_TUNABLES", tunables, 1), 0);
  execv ("/proc/self/exe", argv);
  FAIL ("execv /proc/self/exe: %s", strerror (errno));
}

/* A case of a test, run in a new process of it: it must exit 0, or die
   of SIGNAL with MESSAGE in its standard error.  */
struct malloc_test_case
{
  const char *name;
  int (*run) (void);
  int signal;
  const char *message;
};

/* Run CASES[I] in a new process: 0 if it ended as it must, 77 if it was
   unsupported, else 1.  */
static inline int
malloc_test_run_one (char *argv0, const struct malloc_test_case *c)
{
  int err[2];
  CHECK_EQ (pipe (err), 0);
  fflush (stdout);
  pid_t pid = fork ();
  CHECK (pid >= 0);
  if (pid == 0)
    {
      dup2 (err[1], 2);
      close (err[0]);
      char *args[] = { argv0, (char *) c->name, NULL };
      execv ("/proc/self/exe", args);
      FAIL ("execv /proc/self/exe: %s", strerror (errno));
    }
  close (err[1]);
  char text[4096];
  size_t n = 0;
  ssize_t r;
  while ((r = read (err[0], text + n, sizeof text - 1 - n)) > 0)
    n += r;
  text[n] = '\0';
  close (err[0]);
  fputs (text, stdout);
  int status;
  CHECK_EQ (waitpid (pid, &status, 0), pid);
  if (WIFEXITED (status) && WEXITSTATUS (status) == EXIT_UNSUPPORTED)
    return EXIT_UNSUPPORTED;
  bool ok = c->signal == 0
	    ? WIFEXITED (status) && WEXITSTATUS (status) == 0
	    : WIFSIGNALED (status) && WTERMSIG (status) == c->signal
	      && (c->message == NULL || strstr (text, c->message) != NULL);
  printf ("%s: %s %d: %s\n", c->name,
	  WIFSIGNALED (status) ? "signal" : "exit",
	  WIFSIGNALED (status) ? WTERMSIG (status) : WEXITSTATUS (status),
	  ok ? "as expected" : "WRONG");
  return ok ? 0 : 1;
}

/* The main program of a test made of cases: with a case's name as its
   argument run that case, without one run each in a new process and
   check how it ended (77 if any was unsupported and none failed).  */
static inline int
malloc_test_main (int argc, char **argv, const char *usage,
		  const struct malloc_test_case *cases, size_t ncases)
{
  if (argc == 2)
    for (size_t i = 0; i < ncases; i++)
      if (strcmp (argv[1], cases[i].name) == 0)
	return cases[i].run ();
  if (argc != 1)
    {
      fprintf (stderr, "usage: %s\n", usage);
      return 2;
    }
  int failed = 0, unsupported = 0;
  for (size_t i = 0; i < ncases; i++)
    {
      int r = malloc_test_run_one (argv[0], &cases[i]);
      failed += r == 1;
      unsupported += r == EXIT_UNSUPPORTED;
    }
  if (failed > 0)
    return 1;
  return unsupported > 0 ? EXIT_UNSUPPORTED : 0;
}

#endif
