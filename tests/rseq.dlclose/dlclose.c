/* dlclose of a library whose inline per-CPU operations ran in several
   threads.  An inline operation leaves the thread's rseq_cs pointing at
   the library's descriptor after it commits; once dlclose has unmapped
   the library, the kernel's read of that descriptor at the thread's
   next preemption or signal fails and kills the thread (SIGSEGV).
   glibc's dlclose must clear every such rseq_cs before unmapping.

   Built twice from this file: with -DDLCLOSE_LIB -shared -fPIC as the
   library, and as the program, which takes the library's path:

     dlclose LIBRARY

   The program checks, as well as surviving: right before dlclose the
   main thread's rseq_cs points into the library (else nothing would be
   tested: retried until it does); after dlclose no thread's rseq_cs
   points into the old mapping, and the library is no longer mapped.
   Then every thread is signalled and sleeps, so the kernel looks at
   each rseq_cs again.  A library built without optimization runs libc's
   sections instead: then dlclose must leave the main thread's rseq_cs,
   which points into libc, as it was.  */
#include "rseq-test.h"
#include <sys/rseq-percpu.h>

#define SLOTS 1024

#ifdef DLCLOSE_LIB

static intptr_t slots[SLOTS];

/* Whether lib_add's critical section is in this library (inline, as at
   -O2 and -Os) or in libc (-O0).  */
#if defined __OPTIMIZE__ && !defined __NO_INLINE__
int lib_inline_sections = 1;
#else
int lib_inline_sections = 0;
#endif

/* One inline increment of this CPU's slot; 0, or -1 with errno.  */
int
lib_add (void)
{
  for (;;)
    {
      int cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
      if (cpu < 0)
	return -1;
      if (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &slots[cpu % SLOTS],
			    1, cpu) == 0)
	return 0;
      if (errno != EAGAIN)
	return -1;
    }
}

#else /* !DLCLOSE_LIB */

# include <dlfcn.h>
# include <limits.h>
# include <pthread.h>
# include <signal.h>
# include <stdatomic.h>

# define THREADS 4

static int (*lib_add) (void);
static uintptr_t lib_start, lib_end;	/* The library's mapping.  */
static atomic_int ready;
static atomic_int closed;
static atomic_int checked;

struct worker
{
  pthread_t thread;
  volatile uint32_t *rseq_cs;	/* Low word of the thread's rseq_cs.  */
  int stale;			/* Pointed into the library after dlclose.  */
};

static struct worker workers[THREADS];

/* The low word of the calling thread's rseq_cs: every section stores a
   pointer there, and the high word stays zero.  */
static volatile uint32_t *
own_rseq_cs (void)
{
  char *cs = test_thread_pointer () + __rseq_offset + 8;
# if __BYTE_ORDER == __BIG_ENDIAN
  if (sizeof (void *) == 8)
    return NULL;
# endif
  return (volatile uint32_t *) cs;
}

static uintptr_t
read_rseq_cs (volatile uint32_t *low)
{
  if (sizeof (void *) == 8)
    return *(volatile uint64_t *) low;
  return *low;
}

static int
in_library (uintptr_t addr)
{
  return addr >= lib_start && addr < lib_end;
}

/* The lowest start and highest end of PATH's mappings; 0 if none.  */
static int
find_mapping (const char *path, uintptr_t *start, uintptr_t *end)
{
  FILE *maps = fopen ("/proc/self/maps", "r");
  CHECK (maps != NULL);
  char line[PATH_MAX + 128];
  int found = 0;
  while (fgets (line, sizeof line, maps) != NULL)
    {
      unsigned long lo, hi;
      char name[PATH_MAX];
      if (sscanf (line, "%lx-%lx %*s %*s %*s %*s %s", &lo, &hi, name) != 3
	  || strcmp (name, path) != 0)
	continue;
      if (!found || lo < *start)
	*start = lo;
      if (!found || hi > *end)
	*end = hi;
      found = 1;
    }
  fclose (maps);
  return found;
}

/* Pin the calling thread to CPU, if there is more than one CPU: the
   main thread keeps one to itself, so that nothing preempts it between
   checking its rseq_cs and dlclose (a preemption would let the kernel
   clear rseq_cs while the library is still mapped, and test nothing).  */
static void
pin_to (int cpu)
{
  long n = sysconf (_SC_NPROCESSORS_ONLN);
  if (n < 2)
    return;
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu % n, &set);
  CHECK (sched_setaffinity (0, sizeof set, &set) == 0);
}

static void
on_signal (int sig)
{
  (void) sig;
}

/* Run the library's operation, then spin without a system call (which
   could block and let the kernel clear rseq_cs) until dlclose is done;
   then check rseq_cs and get preempted.  */
static void *
worker_main (void *arg)
{
  struct worker *w = arg;
  pin_to (1);
  w->rseq_cs = own_rseq_cs ();
  if (lib_add () != 0)
    FAIL ("lib_add in a thread: %s", strerror (errno));
  atomic_fetch_add (&ready, 1);
  while (!atomic_load (&closed))
    continue;
  w->stale = in_library (read_rseq_cs (w->rseq_cs));
  atomic_fetch_add (&checked, 1);
  for (int i = 0; i < 5; i++)
    {
      usleep (2000);
      sched_yield ();
    }
  return NULL;
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    FAIL ("usage: %s LIBRARY", argv[0]);
  require_kernel_rseq ();
  if (!rseq_area_registered ())
    UNSUPPORTED ("glibc did not register rseq");
  if (own_rseq_cs () == NULL)
    UNSUPPORTED ("big-endian 64-bit: not handled by this test");

  char path[PATH_MAX];
  CHECK (realpath (argv[1], path) != NULL);
  void *handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL)
    FAIL ("dlopen %s: %s", path, dlerror ());
  lib_add = (int (*) (void)) dlsym (handle, "lib_add");
  CHECK (lib_add != NULL);
  int *inline_sections = dlsym (handle, "lib_inline_sections");
  CHECK (inline_sections != NULL);
  int in_lib = *inline_sections;
  CHECK (find_mapping (path, &lib_start, &lib_end));
  pin_to (0);
  struct sigaction sa = { .sa_handler = on_signal };
  CHECK (sigaction (SIGUSR1, &sa, NULL) == 0);

  for (int i = 0; i < THREADS; i++)
    CHECK (pthread_create (&workers[i].thread, NULL, worker_main,
			   &workers[i]) == 0);
  while (atomic_load (&ready) < THREADS)
    continue;

  /* The main thread's own operation, its rseq_cs checked right before
     dlclose: if a preemption cleared it, run it again.  */
  volatile uint32_t *main_cs = own_rseq_cs ();
  int tries = 0;
  do
    {
      if (++tries > 1000)
	FAIL ("rseq_cs never pointed at a section %s after lib_add",
	      in_lib ? "of the library" : "of libc");
      if (lib_add () != 0)
	FAIL ("lib_add: %s", strerror (errno));
    }
  while (in_library (read_rseq_cs (main_cs)) != in_lib
	 || read_rseq_cs (main_cs) == 0);
  uintptr_t before = read_rseq_cs (main_cs);
  int armed = 0;
  for (int i = 0; i < THREADS; i++)
    armed += in_library (read_rseq_cs (workers[i].rseq_cs));

  CHECK (dlclose (handle) == 0);
  uintptr_t after = read_rseq_cs (main_cs);
  atomic_store (&closed, 1);
  if (in_library (after))
    FAIL ("after dlclose the main thread's rseq_cs is %#lx, inside the "
	  "unmapped library [%#lx, %#lx)", (unsigned long) after,
	  (unsigned long) lib_start, (unsigned long) lib_end);
  /* A descriptor outside the library stays; only a preemption, which
     lets the kernel clear it, may have changed it.  */
  if (!in_lib && after != before && after != 0)
    FAIL ("dlclose changed the main thread's rseq_cs from %#lx (libc) to "
	  "%#lx", (unsigned long) before, (unsigned long) after);
  uintptr_t start, end;
  if (find_mapping (path, &start, &end))
    FAIL ("%s is still mapped after dlclose: nothing was tested", path);

  while (atomic_load (&checked) < THREADS)
    continue;
  for (int i = 0; i < THREADS; i++)
    {
      if (workers[i].stale)
	FAIL ("after dlclose thread %d's rseq_cs still points into the "
	      "unmapped library", i);
      CHECK (pthread_kill (workers[i].thread, SIGUSR1) == 0);
    }
  usleep (10000);
  for (int i = 0; i < THREADS; i++)
    CHECK (pthread_join (workers[i].thread, NULL) == 0);
  printf ("sections %s; main thread and %d of %d threads had rseq_cs in "
	  "the library at dlclose; all survived\n",
	  in_lib ? "in the library" : "in libc", armed, THREADS);
  return 0;
}

#endif /* !DLCLOSE_LIB */
