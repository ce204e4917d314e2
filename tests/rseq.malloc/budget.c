/* glibc.malloc.percpu_bytes has one meaning for every value: the
   per-CPU budget, 1 MiB unless it is set to a value in its range (64 KiB
   to 16 MiB); like any glibc tunable, a value it cannot parse or one
   out of range is ignored, so 0, 1 and "abc" give the default rather
   than a cache that is on but holds nothing.  Each case runs this
   program again with the tunables and reads the budget malloc_info
   reports, and checks that the caches take chunks.  */
#include "malloc-test.h"

/* The budget and chunk count the caches report after frees of another
   thread's chunks that overflow the thread cache (budget 0 when
   malloc_info shows none).  */
static void
report (void)
{
  void *blocks[256];
  malloc_foreign_chunks (blocks, 256, 48);
  for (int i = 0; i < 256; i++)
    free (blocks[i]);
  char *element = malloc_info_line ("<percpu ");
  if (element == NULL)
    {
      printf ("budget=0 count=0\n");
      return;
    }
  printf ("budget=%ld count=%ld\n", malloc_info_attr (element, "budget"),
	  malloc_info_attr (element, "count"));
  free (element);
}

/* Run this program with glibc.malloc.percpu=cpu_id and, unless VALUE is
   NULL, glibc.malloc.percpu_bytes=VALUE; check the budget it reports.  */
static int
check_value (const char *argv0, const char *value, long want)
{
  char tunables[128], command[512];
  snprintf (tunables, sizeof tunables, "glibc.malloc.percpu=cpu_id%s%s",
	    value != NULL ? ":glibc.malloc.percpu_bytes=" : "",
	    value != NULL ? value : "");
  snprintf (command, sizeof command, "GLIBC_TUNABLES='%s' '%s' --report",
	    tunables, argv0);
  FILE *p = popen (command, "r");
  CHECK (p != NULL);
  long budget = -1, count = -1;
  int fields = fscanf (p, "budget=%ld count=%ld", &budget, &count);
  CHECK_EQ (pclose (p), 0);
  CHECK_EQ (fields, 2);
  if (budget == 0 && value == NULL)
    UNSUPPORTED ("malloc_info shows no per-CPU cache (a glibc without it,"
		 " no rseq, or no MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ)");
  printf ("percpu_bytes=%s: budget %ld, %ld chunks cached\n",
	  value != NULL ? value : "(unset)", budget, count);
  if (budget != want)
    FAIL ("percpu_bytes=%s: budget %ld, expected %ld",
	  value != NULL ? value : "(unset)", budget, want);
  if (count <= 0)
    FAIL ("percpu_bytes=%s: the caches hold no chunk after 256 frees",
	  value != NULL ? value : "(unset)");
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "--report") == 0)
    {
      report ();
      return 0;
    }
  const long def = 1024 * 1024;
  check_value (argv[0], NULL, def);
  /* Ignored: not a number, or below or above the range.  */
  check_value (argv[0], "abc", def);
  check_value (argv[0], "0", def);
  check_value (argv[0], "1", def);
  check_value (argv[0], "65535", def);
  check_value (argv[0], "16777217", def);
  check_value (argv[0], "99999999999999999999", def);
  /* Taken: the range's ends and a value inside.  */
  check_value (argv[0], "65536", 65536);
  check_value (argv[0], "4194304", 4194304);
  check_value (argv[0], "0x1000000", 16777216);
  return 0;
}
