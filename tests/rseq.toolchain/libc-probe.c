/* Prints which libc the program runs with: the libc.so.6 it maps ("none"
   when statically linked), whether this thread's rseq area is registered
   and __rseq_size.  The toolchain tests match these lines.  Built with
   -DSTOCK_GLIBC against Debian's headers, which lack the accessors.  */
/* rseq-test: host-only: a probe for toolchain.exp's checks of the host
   drivers and rseq-run (patched against stock glibc on the host) */
#define _GNU_SOURCE	/* the rseq_area_* accessors */
#include <stdio.h>
#include <string.h>
#ifdef STOCK_GLIBC
/* Debian's <sys/rseq.h> needs kernel headers that -m32 lacks here.  */
extern const unsigned int __rseq_size;
#else
# include <sys/rseq.h>
#endif

static void
print_mapped_libc (void)
{
  FILE *maps = fopen ("/proc/self/maps", "r");
  char line[4096];
  const char *found = "none";
  static char path[4096];
  if (maps == NULL)
    {
      puts ("libc: unknown (no /proc/self/maps)");
      return;
    }
  while (fgets (line, sizeof line, maps) != NULL)
    {
      char *name = strchr (line, '/');
      if (name != NULL && strstr (name, "/libc.so.6") != NULL)
	{
	  name[strcspn (name, "\n")] = '\0';
	  snprintf (path, sizeof path, "%s", name);
	  found = path;
	}
    }
  fclose (maps);
  printf ("libc: %s\n", found);
}

int
main (void)
{
  print_mapped_libc ();
#ifdef STOCK_GLIBC
  printf ("registered=%s\n", __rseq_size > 0 ? "yes" : "no");
#else
  printf ("registered=%s\n", rseq_area_registered () ? "yes" : "no");
#endif
  printf ("rseq_size=%u\n", __rseq_size);
  return 0;
}
