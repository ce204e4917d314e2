/* A tracer single-steps (PTRACE_SINGLESTEP; breakpoints on arm) a child through a loop of
   per-CPU counter increments and list pops and pushes.  Every step stops
   the child, so every rseq critical section aborts; only the cpu_opv
   fallback lets the loop make progress.

     singlestep progress  the child must finish, with exact totals and
			  with operations done through cpu_opv (needs a
			  kernel with cpu_opv; 77 otherwise);
     singlestep stuck     the child must complete no operation at all
			  within the step budget: the bug the fallback
			  fixes.  Run on a kernel without cpu_opv, or with
			  --never (RSEQ_PERCPU_FALLBACK_NEVER) anywhere.

   Before stepping, the same loop runs untraced to show it does finish
   when nothing aborts it every time.  */
#include "rseq-test.h"
#include "percpu.h"
#include <signal.h>
#include <sys/cpu_opv.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#define INCREMENTS 40
#define NODES 8
#define LIST_CYCLES 15

static long progress;		/* Operations completed; read by the tracer.  */

static struct percpu_counter counter;
static struct percpu_list list;
static struct percpu_node nodes[NODES];

static void
setup_structures (void)
{
  if (percpu_counter_init (&counter, RSEQ_PERCPU_INDEX_CPU_ID) < 0
      || percpu_list_init (&list, RSEQ_PERCPU_INDEX_CPU_ID) < 0)
    FAIL ("init: %s", strerror (errno));
  for (int i = 0; i < NODES; i++)
    {
      nodes[i].data = i;
      if (percpu_list_push (&list, &nodes[i]) < 0)
	FAIL ("push: %s", strerror (errno));
    }
}

/* The loop under test.  */
static void
run_loop (void)
{
  for (int i = 0; i < INCREMENTS; i++)
    {
      if (percpu_counter_add (&counter, 1) < 0)
	FAIL ("add: %s", strerror (errno));
      progress++;
    }
  for (int i = 0; i < LIST_CYCLES; i++)
    {
      /* The nodes are on the lists of the CPUs that pushed them; this
	 CPU's list may be empty.  */
      errno = 0;
      struct percpu_node *node = percpu_list_pop (&list);
      if (node == NULL && errno != 0)
	FAIL ("pop: %s", strerror (errno));
      progress++;
      if (node != NULL && percpu_list_push (&list, node) < 0)
	FAIL ("push: %s", strerror (errno));
      progress++;
    }
}

/* Every node must be on some CPU's list exactly once.  */
static void
check_totals (long expected_sum)
{
  CHECK_EQ (percpu_counter_sum (&counter), expected_sum);
  int seen[NODES] = { 0 };
  for (int cpu = 0; cpu < list.nr_slots; cpu++)
    for (struct percpu_node *n; (n = percpu_list_pop_slot (&list, cpu)); )
      seen[n->data]++;
  for (int i = 0; i < NODES; i++)
    CHECK_EQ (seen[i], 1);
  for (int i = 0; i < NODES; i++)
    if (percpu_list_push (&list, &nodes[i]) < 0)
      FAIL ("push: %s", strerror (errno));
}

static void
child (int mode)
{
  if (rseq_percpu_set_fallback (mode) < 0)
    FAIL ("rseq_percpu_set_fallback: %s", strerror (errno));
  if (ptrace (PTRACE_TRACEME, 0, NULL, NULL) < 0)
    FAIL ("PTRACE_TRACEME: %s", strerror (errno));
  raise (SIGSTOP);		/* The tracer starts stepping here.  */
  run_loop ();
  check_totals (2 * INCREMENTS);
  printf ("child: %ld operations, %lu aborts, %lu through cpu_opv\n",
	  progress, rseq_percpu_aborts (), rseq_percpu_fallbacks ());
  if (rseq_percpu_fallbacks () == 0)
    FAIL ("the loop finished under single-stepping without cpu_opv");
  exit (0);
}

/* Resume PID with REQUEST (PTRACE_SINGLESTEP or PTRACE_CONT) and wait
   for its next SIGTRAP stop.  Returns -1 after such a stop, else the
   child's exit status.  */
static int
resume_until_trap (pid_t pid, int request)
{
  int ws;
  if (ptrace (request, pid, NULL, NULL) < 0)
    FAIL ("ptrace resume (%d): %s", request, strerror (errno));
  if (waitpid (pid, &ws, 0) != pid)
    FAIL ("waitpid: %s", strerror (errno));
  if (WIFEXITED (ws))
    return WEXITSTATUS (ws);
  if (WIFSIGNALED (ws))
    FAIL ("child killed by signal %d", WTERMSIG (ws));
  if (WSTOPSIG (ws) != SIGTRAP)
    {
      siginfo_t si;
      memset (&si, 0, sizeof si);
      ptrace (PTRACE_GETSIGINFO, pid, NULL, &si);
      FAIL ("child stopped by signal %d (si_code %d, si_addr %p)",
	    WSTOPSIG (ws), si.si_code, si.si_addr);
    }
  return -1;
}

#if defined __aarch64__ || defined __powerpc64__
/* A load-reserve/store-conditional loop never completes under
   PTRACE_SINGLESTEP: the exception taken at every step clears the
   reservation.  Debuggers step over such a sequence as a whole (gdb's
   atomic-sequence stepping), and so does this tracer: breakpoints
   after the store-conditional and at the targets of branches leaving
   the sequence, one PTRACE_CONT, and the stop counts as one step.  The
   tracer was forked from the same program, so it reads the child's
   instructions in its own memory.  */
# include <elf.h>
# include <sys/uio.h>
# include <sys/user.h>

# define ATOMIC_SEQUENCE_MAX 16

# ifdef __aarch64__
#  define BREAKPOINT_INSN 0xd4200000	/* brk #0 */
static int
is_load_reserve (uint32_t i)
{
  return (i & 0x3fc00000) == 0x08400000;	/* ldxr, ldaxr, ldxp...  */
}

static int
is_store_conditional (uint32_t i)
{
  return (i & 0x3fc00000) == 0x08000000;	/* stxr, stlxr, stxp...  */
}

/* The target of the conditional branch I at PC, or 0.  */
static uintptr_t
cond_branch_target (uintptr_t pc, uint32_t i)
{
  if ((i & 0xff000010) == 0x54000000 || (i & 0x7e000000) == 0x34000000)
    return pc + ((int64_t) ((uint64_t) ((i >> 5) & 0x7ffff) << 45) >> 43);
  if ((i & 0x7e000000) == 0x36000000)
    return pc + ((int64_t) ((uint64_t) ((i >> 5) & 0x3fff) << 50) >> 48);
  return 0;
}

static uintptr_t
child_pc (pid_t pid)
{
  struct user_regs_struct regs;
  struct iovec iov = { &regs, sizeof regs };
  if (ptrace (PTRACE_GETREGSET, pid, NT_PRSTATUS, &iov) < 0)
    FAIL ("PTRACE_GETREGSET: %s", strerror (errno));
  return regs.pc;
}
# else
#  define BREAKPOINT_INSN 0x7fe00008	/* trap */
static unsigned int
xo (uint32_t i)
{
  return (i >> 26) == 31 ? (i >> 1) & 0x3ff : 0;
}

static int
is_load_reserve (uint32_t i)
{
  /* lbarx, lharx, lwarx, ldarx, lqarx.  */
  return xo (i) == 52 || xo (i) == 116 || xo (i) == 20 || xo (i) == 84
	 || xo (i) == 276;
}

static int
is_store_conditional (uint32_t i)
{
  /* stbcx., sthcx., stwcx., stdcx., stqcx.  */
  return xo (i) == 694 || xo (i) == 726 || xo (i) == 150 || xo (i) == 214
	 || xo (i) == 182;
}

static uintptr_t
cond_branch_target (uintptr_t pc, uint32_t i)
{
  if ((i >> 26) == 16 && (i & 2) == 0)
    return pc + (int16_t) (i & 0xfffc);
  return 0;
}

static uintptr_t
child_pc (pid_t pid)
{
  errno = 0;
  long pc = ptrace (PTRACE_PEEKUSER, pid, 32 * sizeof (long), NULL); /* PT_NIP */
  if (errno != 0)
    FAIL ("PTRACE_PEEKUSER: %s", strerror (errno));
  return pc;
}
# endif

/* Write INSN at ADDR in the child.  */
static void
poke_insn (pid_t pid, uintptr_t addr, uint32_t insn)
{
  uintptr_t word = addr & ~(uintptr_t) (sizeof (long) - 1);
  errno = 0;
  long val = ptrace (PTRACE_PEEKTEXT, pid, word, NULL);
  if (errno != 0)
    FAIL ("PTRACE_PEEKTEXT: %s", strerror (errno));
  memcpy ((char *) &val + (addr - word), &insn, sizeof insn);
  if (ptrace (PTRACE_POKETEXT, pid, word, val) < 0)
    FAIL ("PTRACE_POKETEXT: %s", strerror (errno));
}

/* If the child is at the start of an atomic sequence, run it over the
   sequence and return 1; else return 0.  */
static int
step_over_atomic_sequence (pid_t pid)
{
  uintptr_t pc = child_pc (pid);
  const uint32_t *code = (const uint32_t *) pc;
  if (!is_load_reserve (code[0]))
    return 0;
  uintptr_t bp[ATOMIC_SEQUENCE_MAX + 1];
  int nr = 0;
  for (int k = 1; k < ATOMIC_SEQUENCE_MAX; k++)
    {
      uintptr_t at = pc + 4 * k;
      if (is_store_conditional (code[k]))
	{
	  bp[nr++] = at + 4;
	  break;
	}
      uintptr_t target = cond_branch_target (at, code[k]);
      if (target != 0 && (target < pc || target > at))
	bp[nr++] = target;
    }
  if (nr == 0 || !is_store_conditional (*(const uint32_t *) (bp[nr - 1] - 4)))
    return 0;
  for (int k = 0; k < nr; k++)
    poke_insn (pid, bp[k], BREAKPOINT_INSN);
  if (resume_until_trap (pid, PTRACE_CONT) >= 0)
    FAIL ("the child exited in an atomic sequence at %#lx",
	  (unsigned long) pc);
  for (int k = 0; k < nr; k++)
    poke_insn (pid, bp[k], *(const uint32_t *) bp[k]);
  return 1;
}
#else
# define step_over_atomic_sequence(pid) 0
#endif

#ifndef __arm__
/* Single-step CHILD until it exits or BUDGET steps have passed.
   Returns the number of steps, and the exit status in *STATUS (-1 if it
   is still running).  */
static long
single_step (pid_t pid, long budget, int *status)
{
  long steps = 0;
  *status = -1;
  for (; steps < budget && *status < 0; steps++)
    if (!step_over_atomic_sequence (pid))
      *status = resume_until_trap (pid, PTRACE_SINGLESTEP);
  return steps;
}

#endif

#ifdef __arm__
/* 32-bit Arm has no PTRACE_SINGLESTEP.  Debuggers step there with
   breakpoints, so this tracer does the same to every critical section
   of the program and of libc: a breakpoint on each instruction of each
   section (found through each object's __rseq_cs_ptr_array), and at
   each stop the breakpoint
   just hit is lifted and the one before it put back, so the child can
   only ever run the one instruction it stopped at before stopping
   again, as under single-stepping.  Outside the sections the child
   runs freely: what matters is that no section can run from start to
   commit without a stop.  Each stop counts as a step.  */
# include <sys/user.h>

# include <fcntl.h>
# include <link.h>
# include <stdlib.h>
# include <unistd.h>

# ifdef __thumb__
#  define BREAKPOINT 0xde01	/* The kernel's Thumb ptrace breakpoint.  */
#  define INSN_SIZE(p) ((*(const uint16_t *) (p) >> 11) >= 0x1d ? 4 : 2)
# else
#  define BREAKPOINT 0xe7f001f0	/* The kernel's A32 ptrace breakpoint.  */
#  define INSN_SIZE(p) 4
# endif

# define MAX_BREAKPOINTS 4096
static uintptr_t bp_addr[MAX_BREAKPOINTS];
static uintptr_t bp_abort[MAX_BREAKPOINTS]; /* Its section's abort_ip.  */
static int nr_bp;

/* Breakpoints on the instructions of the sections listed in ARRAY (N
   entries of an __rseq_cs_ptr_array).  */
static void
add_sections (const uint64_t *array, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      const struct rseq_cs *cs = (const struct rseq_cs *) (uintptr_t) array[i];
      uintptr_t pc = cs->start_ip;
      for (; pc < cs->start_ip + cs->post_commit_offset; pc += INSN_SIZE (pc))
	{
	  if (nr_bp == MAX_BREAKPOINTS)
	    FAIL ("more than %d instructions in critical sections", nr_bp);
	  bp_abort[nr_bp] = cs->abort_ip;
	  bp_addr[nr_bp++] = pc;
	}
    }
}

/* dl_iterate_phdr callback: the sections of one loaded object, from the
   __rseq_cs_ptr_array section its file's section headers locate (the
   program's own and libc's: the libc operations the program calls have
   sections of their own, which must stop too).  */
static int
add_object_sections (struct dl_phdr_info *info, size_t size, void *data)
{
  (void) size;
  (void) data;
  const char *path = info->dlpi_name[0] != '\0' ? info->dlpi_name : "/proc/self/exe";
  int fd = open (path, O_RDONLY);
  if (fd < 0)
    return 0;
  ElfW(Ehdr) eh;
  if (pread (fd, &eh, sizeof eh, 0) == sizeof eh && eh.e_shnum > 0
      && eh.e_shentsize == sizeof (ElfW(Shdr)) && eh.e_shstrndx < eh.e_shnum)
    {
      ElfW(Shdr) *sh = calloc (eh.e_shnum, sizeof *sh);
      size_t len = eh.e_shnum * sizeof *sh;
      if (sh != NULL && pread (fd, sh, len, eh.e_shoff) == (ssize_t) len)
	{
	  ElfW(Shdr) *strtab = &sh[eh.e_shstrndx];
	  char *names = malloc (strtab->sh_size + 1);
	  if (names != NULL
	      && pread (fd, names, strtab->sh_size, strtab->sh_offset)
		 == (ssize_t) strtab->sh_size)
	    {
	      names[strtab->sh_size] = '\0';
	      for (int i = 0; i < eh.e_shnum; i++)
		if (sh[i].sh_name < strtab->sh_size
		    && strcmp (names + sh[i].sh_name, "__rseq_cs_ptr_array") == 0)
		  add_sections ((const uint64_t *) (info->dlpi_addr + sh[i].sh_addr),
				sh[i].sh_size / sizeof (uint64_t));
	    }
	  free (names);
	}
      free (sh);
    }
  close (fd);
  return 0;
}

/* The instructions of every section of every loaded object; the tracer
   was forked from the same program, so the addresses are the child's.  */
static void
find_section_instructions (void)
{
  dl_iterate_phdr (add_object_sections, NULL);
  if (nr_bp == 0)
    FAIL ("no critical section in this program (__rseq_cs_ptr_array)");
}

/* Write the breakpoint at ADDR (SET) or the original instruction.  */
static void
poke_breakpoint (pid_t pid, uintptr_t addr, int set)
{
# ifdef __thumb__
  uintptr_t word = addr & ~(uintptr_t) 3;
  errno = 0;
  unsigned long val = ptrace (PTRACE_PEEKTEXT, pid, word, NULL);
  if (errno != 0)
    FAIL ("PTRACE_PEEKTEXT: %s", strerror (errno));
  uint16_t half = set ? BREAKPOINT : *(const uint16_t *) addr;
  int shift = (addr & 2) * 8;
  val = (val & ~(0xffffUL << shift)) | ((unsigned long) half << shift);
# else
  uintptr_t word = addr;
  unsigned long val = set ? BREAKPOINT : *(const uint32_t *) addr;
# endif
  if (ptrace (PTRACE_POKETEXT, pid, word, val) < 0)
    FAIL ("PTRACE_POKETEXT: %s", strerror (errno));
}

/* The breakpoint index of ADDR, or -1.  */
static int
find_breakpoint (uintptr_t addr)
{
  for (int i = 0; i < nr_bp; i++)
    if (bp_addr[i] == addr)
      return i;
  return -1;
}

/* Each stop is a breakpoint trap (TRAP_BRKPT, si_addr the breakpoint).
   The kernel may abort the section before the stop is reported: the
   child then stops at the section's abort handler and no breakpoint is
   lifted; else the one it stopped at is lifted, so that it runs that
   one instruction next.  */
static long
step_child (pid_t pid, long budget, int *status)
{
  find_section_instructions ();
  for (int i = 0; i < nr_bp; i++)
    poke_breakpoint (pid, bp_addr[i], 1);
  uintptr_t lifted = 0;
  long steps = 0;
  *status = -1;
  for (; steps < budget; steps++)
    {
      *status = resume_until_trap (pid, PTRACE_CONT);
      if (*status >= 0)
	break;
      struct user_regs regs;
      siginfo_t si;
      if (ptrace (PTRACE_GETREGS, pid, NULL, &regs) < 0
	  || ptrace (PTRACE_GETSIGINFO, pid, NULL, &si) < 0)
	FAIL ("PTRACE_GETREGS/GETSIGINFO: %s", strerror (errno));
      uintptr_t pc = regs.uregs[15];
      uintptr_t trap = (uintptr_t) si.si_addr;
      int bp = si.si_code == TRAP_BRKPT ? find_breakpoint (trap) : -1;
      if (bp < 0 || (pc != trap && pc != bp_abort[bp]))
	FAIL ("SIGTRAP (si_code %d, si_addr %#lx) at %#lx after %ld stops:"
	      " not a breakpoint, or not stopped at it or its abort handler",
	      si.si_code, (unsigned long) trap, (unsigned long) pc, steps);
      if (lifted != 0)
	poke_breakpoint (pid, lifted, 1);
      lifted = 0;
      if (pc == trap)
	{
	  poke_breakpoint (pid, pc, 0);
	  lifted = pc;
	}
    }
  return steps;
}
#else
# define step_child single_step
#endif

int
main (int argc, char **argv)
{
  int expect_progress = argc > 1 && strcmp (argv[1], "progress") == 0;
  int never = argc > 2 && strcmp (argv[2], "--never") == 0;
  if (argc < 2 || (!expect_progress && strcmp (argv[1], "stuck") != 0))
    FAIL ("usage: singlestep progress|stuck [--never]");
  if (rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID) < 0)
    UNSUPPORTED ("rseq is not registered");
  int have_opv = cpu_opv (NULL, 0, 0, 0) < 0 && errno == EINVAL;
  if (expect_progress && !have_opv)
    UNSUPPORTED ("the kernel has no cpu_opv");

  /* Untraced, the loop finishes (and resolves every symbol, so the
     stepped child does not step through the dynamic linker).  */
  setup_structures ();
  run_loop ();
  check_totals (INCREMENTS);
  progress = 0;

  pid_t pid = fork ();
  if (pid < 0)
    FAIL ("fork: %s", strerror (errno));
  if (pid == 0)
    child (never ? RSEQ_PERCPU_FALLBACK_NEVER : RSEQ_PERCPU_FALLBACK_AUTO);

  int ws;
  if (waitpid (pid, &ws, 0) != pid || !WIFSTOPPED (ws)
      || WSTOPSIG (ws) != SIGSTOP)
    FAIL ("child did not stop before the loop");

  int status;
  long budget = expect_progress ? 5000000 : 200000;
  long steps = step_child (pid, budget, &status);
  if (expect_progress)
    {
      if (status != 0)
	FAIL ("child %s after %ld steps",
	      status < 0 ? "still running" : "failed", steps);
      printf ("PASS: the stepped loop finished in %ld steps\n", steps);
      return 0;
    }

  errno = 0;
  long done = ptrace (PTRACE_PEEKDATA, pid, &progress, NULL);
  if (errno != 0)
    FAIL ("PTRACE_PEEKDATA: %s", strerror (errno));
  kill (pid, SIGKILL);
  waitpid (pid, &ws, 0);
  if (status >= 0 || done != 0)
    FAIL ("the stepped loop made progress (%ld operations in %ld steps)"
	  " without the fallback", done, steps);
  printf ("PASS: %ld steps, no operation completed (cpu_opv %s%s)\n", steps,
	  have_opv ? "present" : "absent", never ? ", fallback off" : "");
  return 0;
}
