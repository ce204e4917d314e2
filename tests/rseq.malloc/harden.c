/* Checks of the chunks malloc's per-CPU cache hands out and gives back,
   on every ABI:

     misaligned   a slot overwritten with a misaligned pointer: malloc
                  aborts with "unaligned per-CPU cache chunk"
     wrong-size   a slot overwritten with a live chunk of another size:
                  malloc aborts with "mismatching size"
     trim         malloc_trim returns what the caches held to the arenas,
                  not to the calling thread's cache: mallinfo2's bytes in
                  use fall by exactly the bytes the caches held

     harden [CASE]

   Without a case the program runs each one in a new process with
   glibc.malloc.percpu=mm_cid, glibc.malloc.percpu_local=1 (the caches
   take the thread's own chunks) and glibc.malloc.tcache_count=7 and checks
   how it ended (the thread cache then holds 7 chunks of a class: the 8th
   free goes to the per-CPU cache, the 8th malloc comes from there).  77
   without the per-CPU cache.  */
#include "malloc-test.h"
#include <inttypes.h>
#include <pthread.h>

#define TUNABLES \
  "glibc.malloc.percpu=mm_cid:glibc.malloc.percpu_local=1:glibc.malloc.tcache_count=7"
#define TCACHE_COUNT 7
/* A size nothing else here allocates: its chunk pointers are only where
   the test put them.  */
#define SMALL 424
#define LARGE 200

/* The percpu element of malloc_info written to F, or NULL.  */
static char *
percpu_element (FILE *f, char *buf)
{
  CHECK_EQ (malloc_info (0, f), 0);
  CHECK_EQ (fflush (f), 0);
  char *p = strstr (buf, "<percpu ");
  if (p != NULL)
    p[strcspn (p, "\n")] = '\0';
  return p;
}

/* The slot that holds VALUE as the only chunk of its class: the one word
   of an anonymous writable mapping (the per-CPU caches are one) that
   holds VALUE right after a count of 1.  */
static uintptr_t *
find_slot (uintptr_t value)
{
  FILE *maps = fopen ("/proc/self/maps", "r");
  CHECK (maps != NULL);
  uintptr_t *found = NULL;
  int hits = 0;
  char line[512];
  while (fgets (line, sizeof line, maps) != NULL)
    {
      uintptr_t start, end;
      char perms[5];
      unsigned long inode;
      int path = 0;
      if (sscanf (line, "%" SCNxPTR "-%" SCNxPTR " %4s %*s %*s %lu %n",
		  &start, &end, perms, &inode, &path) < 4
	  || inode != 0 || line[path] != '\0' || strcmp (perms, "rw-p") != 0)
	continue;
      for (uintptr_t *w = (uintptr_t *) start + 1; w < (uintptr_t *) end; w++)
	if (*w == value && w[-1] == 1)
	  {
	    found = w;
	    hits++;
	  }
    }
  fclose (maps);
  CHECK_EQ (hits, 1);
  return found;
}

/* Put the 8th freed chunk of SMALL bytes in the per-CPU cache, replace
   its slot (with a misaligned pointer, or with a live chunk of LARGE
   bytes) and malloc the chunks back: the 8th malloc must abort.  */
static int
corrupt_slot (bool with_large)
{
  void *volatile p[TCACHE_COUNT + 1];
  for (int i = 0; i <= TCACHE_COUNT; i++)
    CHECK ((p[i] = malloc (SMALL)) != NULL);
  void *volatile large = malloc (LARGE);
  CHECK (large != NULL);
  for (int i = 0; i <= TCACHE_COUNT; i++)
    free (p[i]);
  uintptr_t *slot = find_slot ((uintptr_t) p[TCACHE_COUNT]);
  *slot = with_large ? (uintptr_t) large : *slot + 1;
  for (int i = 0; i <= TCACHE_COUNT; i++)
    p[i] = malloc (SMALL);
  printf ("malloc returned %p\n", p[TCACHE_COUNT]);
  return 1;
}

static int
misaligned (void)
{
  return corrupt_slot (false);
}

static int
wrong_size (void)
{
  return corrupt_slot (true);
}

static pthread_barrier_t filled, may_exit;

static void *
fill_and_wait (void *arg)
{
  (void) arg;
  void *volatile p[100];
  for (int i = 0; i < 100; i++)
    CHECK ((p[i] = malloc (LARGE)) != NULL);
  for (int i = 0; i < 100; i++)
    free (p[i]);
  pthread_barrier_wait (&filled);
  pthread_barrier_wait (&may_exit);
  return NULL;
}

/* malloc_info writes into a buffer set up beforehand: nothing is
   allocated or freed between reading the caches and mallinfo2.  */
static int
trim (void)
{
  static char buf[1 << 16];
  FILE *f = fmemopen (buf, sizeof buf - 1, "w");
  CHECK (f != NULL);
  CHECK (fputs ("start\n", f) >= 0 && fflush (f) == 0);
  CHECK_EQ (pthread_barrier_init (&filled, NULL, 2), 0);
  CHECK_EQ (pthread_barrier_init (&may_exit, NULL, 2), 0);
  pthread_t t;
  CHECK_EQ (pthread_create (&t, NULL, fill_and_wait, NULL), 0);
  pthread_barrier_wait (&filled);

  char *element = percpu_element (f, buf);
  size_t in_use = mallinfo2 ().uordblks;
  malloc_trim (0);
  size_t in_use_after = mallinfo2 ().uordblks;
  CHECK (element != NULL);
  long cached = malloc_info_attr (element, "size");
  printf ("%ld bytes cached; in use %zu before malloc_trim, %zu after\n",
	  cached, in_use, in_use_after);
  CHECK (cached >= (100 - TCACHE_COUNT) * (LARGE + 8));
  CHECK_EQ (in_use - in_use_after, cached);
  rewind (f);
  element = percpu_element (f, buf);
  CHECK (element != NULL);
  CHECK_EQ (malloc_info_attr (element, "count"), 0);

  pthread_barrier_wait (&may_exit);
  CHECK_EQ (pthread_join (t, NULL), 0);
  return 0;
}

static const struct malloc_test_case cases[] = {
  { "misaligned", misaligned, SIGABRT,
    "malloc(): unaligned per-CPU cache chunk detected" },
  { "wrong-size", wrong_size, SIGABRT,
    "malloc(): mismatching size of per-CPU cache chunk" },
  { "trim", trim, 0, NULL },
};

int
main (int argc, char **argv)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  reexec_with_tunables (argv, TUNABLES);
  /* Start the caches: the 8th free of a class.  */
  void *volatile warm[TCACHE_COUNT + 1];
  for (int i = 0; i <= TCACHE_COUNT; i++)
    CHECK ((warm[i] = malloc (32)) != NULL);
  for (int i = 0; i <= TCACHE_COUNT; i++)
    free (warm[i]);
  static char buf[1 << 16];
  FILE *f = fmemopen (buf, sizeof buf - 1, "w");
  CHECK (f != NULL);
  if (percpu_element (f, buf) == NULL)
    UNSUPPORTED ("malloc_info shows no per-CPU cache with " TUNABLES);
  fclose (f);

  return malloc_test_main (argc, argv, "harden [misaligned|wrong-size|trim]",
			   cases, sizeof cases / sizeof cases[0]);
}
