/* Whether malloc's per-CPU cache runs in this process: frees more
   chunks than the thread cache holds (the caches start at the first
   such free), then looks for malloc_info's percpu element.  Prints it
   and exits 0, or exits 77 when there is none (glibc.malloc.percpu off,
   no rseq, or a kernel without what the cache needs).
   real-projects.sh runs it with the tunable it gives the projects' test
   suites, to tell a cache that cannot start from one that was not
   tested.  */
/* rseq-test: host-only: built by real-projects.sh, which tests
   programs of the host's ABI only */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (void)
{
  enum { chunks = 64 };
  void *volatile p[chunks];
  for (int i = 0; i < chunks; i++)
    if ((p[i] = malloc (32)) == NULL)
      return 1;
  for (int i = 0; i < chunks; i++)
    free (p[i]);

  char *info = NULL;
  size_t size = 0;
  FILE *out = open_memstream (&info, &size);
  if (out == NULL || malloc_info (0, out) != 0 || fclose (out) != 0)
    return 1;
  const char *element = strstr (info, "<percpu ");
  if (element == NULL)
    {
      puts ("no <percpu> element in malloc_info");
      return 77;
    }
  printf ("%.*s\n", (int) strcspn (element, "\n"), element);
  return 0;
}
