/* Per-CPU operations indexed by mm_cid refuse to run in a vfork child,
   inline and through libc alike.  The child shares the parent's rseq
   area but is not registered itself; mm_cid keeps the parent's value,
   so an operation that only compared mm_cid would commit with nothing
   to abort it.  Each operation in the child must return -1 with the
   errno the libc path sets (ENOSYS), and leave memory untouched; the
   parent's own operations still commit afterwards.  */
#include "rseq-test.h"
#include <sys/rseq-percpu.h>

/* libc's out-of-line versions, called through pointers the compiler
   cannot see through, beside the inline versions (-O2, -Os).  */
static int (*volatile ool_addv) (int, intptr_t *, intptr_t, int)
  = rseq_percpu_addv;
static int (*volatile ool_cmpeqv_storev) (int, intptr_t *, intptr_t,
					  intptr_t, int)
  = rseq_percpu_cmpeqv_storev;
static int (*volatile ool_cmpnev_storeoffp_load) (int, intptr_t *, intptr_t,
						  long int, intptr_t *, int)
  = rseq_percpu_cmpnev_storeoffp_load;

/* What the child saw, written into the parent's memory.  */
struct outcome
{
  int ret;
  int err;
};

static struct outcome inline_addv, libc_addv, inline_store, libc_store;
static struct outcome inline_pop, libc_pop, child_cpu;
static intptr_t counter, word, loaded, head;
static intptr_t node[2];

#define RECORD(out, call)						\
  do {									\
    errno = 0;								\
    (out).ret = (call);							\
    (out).err = errno;							\
  } while (0)

static void
child_operations (int cid)
{
  RECORD (child_cpu, rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_MM_CID));
  RECORD (inline_addv,
	  rseq_percpu_addv (RSEQ_PERCPU_INDEX_MM_CID, &counter, 1, cid));
  RECORD (libc_addv, ool_addv (RSEQ_PERCPU_INDEX_MM_CID, &counter, 1, cid));
  RECORD (inline_store,
	  rseq_percpu_cmpeqv_storev (RSEQ_PERCPU_INDEX_MM_CID, &word, 5, 6,
				     cid));
  RECORD (libc_store,
	  ool_cmpeqv_storev (RSEQ_PERCPU_INDEX_MM_CID, &word, 5, 6, cid));
  RECORD (inline_pop,
	  rseq_percpu_cmpnev_storeoffp_load (RSEQ_PERCPU_INDEX_MM_CID, &head,
					     0, 0, &loaded, cid));
  RECORD (libc_pop,
	  ool_cmpnev_storeoffp_load (RSEQ_PERCPU_INDEX_MM_CID, &head, 0, 0,
				     &loaded, cid));
}

static void
check_refused (const char *what, struct outcome out)
{
  if (out.ret != -1 || out.err != ENOSYS)
    FAIL ("%s in the vfork child returned %d errno %d (%s), "
	  "expected -1 errno %d (ENOSYS)", what, out.ret, out.err,
	  strerror (out.err), ENOSYS);
}

int
main (void)
{
  require_kernel_rseq ();
  if (!rseq_area_registered ())
    UNSUPPORTED ("glibc did not register rseq");
  if (rseq_area_mm_cid () < 0)
    UNSUPPORTED ("the kernel provides no mm_cid (__rseq_size %u)",
		 __rseq_size);

  /* One CPU, so that the parent's mm_cid stays what it read.  */
  cpu_set_t one;
  CPU_ZERO (&one);
  CPU_SET (sched_getcpu (), &one);
  CHECK (sched_setaffinity (0, sizeof one, &one) == 0);

  int cid = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_MM_CID);
  CHECK (cid >= 0);
  word = 5;
  node[0] = 0;
  head = (intptr_t) node;

  pid_t pid = vfork ();
  if (pid == 0)
    {
      child_operations (cid);
      _exit (0);
    }
  CHECK (pid > 0);
  int status;
  CHECK (waitpid (pid, &status, 0) == pid);
  CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0);

  CHECK_EQ (child_cpu.ret, -1);
  CHECK_EQ (child_cpu.err, ENOSYS);
  check_refused ("inline rseq_percpu_addv", inline_addv);
  check_refused ("libc rseq_percpu_addv", libc_addv);
  check_refused ("inline rseq_percpu_cmpeqv_storev", inline_store);
  check_refused ("libc rseq_percpu_cmpeqv_storev", libc_store);
  check_refused ("inline rseq_percpu_cmpnev_storeoffp_load", inline_pop);
  check_refused ("libc rseq_percpu_cmpnev_storeoffp_load", libc_pop);
  CHECK_EQ (counter, 0);
  CHECK_EQ (word, 5);
  CHECK_EQ (loaded, 0);
  CHECK_EQ (head, (intptr_t) node);

  /* The parent's area is its own again.  */
  cid = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_MM_CID);
  CHECK (cid >= 0);
  int ret;
  while ((ret = rseq_percpu_addv (RSEQ_PERCPU_INDEX_MM_CID, &counter, 1, cid))
	 < 0 && errno == EAGAIN)
    cid = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_MM_CID);
  CHECK_EQ (ret, 0);
  CHECK_EQ (counter, 1);
  return 0;
}
