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
   when nothing aborts it every time.

   The window modes check where a critical section starts: one attempt
   of an inline operation (__rseq_percpu_addv) in a child pinned to one
   CPU, which exits 10 if the attempt aborted and 11 if it committed
   (the counter is checked against either); 12 (its CPU check failed),
   13 (the counter disagrees) and 14 (no area) are errors.

     singlestep window         steps the child (on arm from the entry of
			       the function holding the section) to the
			       first stop with rseq_cs set, right after
			       the arming store: its PC must be the
			       descriptor's start_ip, and after it the
			       child, no longer stepped, must have aborted;
     singlestep window-commit  finds the commit in a stepped probe with
			       rseq_cs cleared (it must be the section's
			       last instruction), then stops another child
			       there once (a breakpoint): it must abort;
     singlestep window-after   stops a child once at post_commit_ip: it
			       must have committed.

   They exit 0 on success, 1 on failure and 77 without a registered rseq
   area or on an architecture without inline sections.  */
#include "rseq-test.h"
#include "percpu.h"
#include <signal.h>
#include <sys/cpu_opv.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

/* Small enough that the stepped loop (about 1,700 steps per operation,
   each a round trip through the tracer) finishes in a minute or two
   under emulation.  */
#define INCREMENTS 16
#define NODES 8
#define LIST_CYCLES 6

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

/* The window between the arming store and start_ip.

   Every critical section stores the address of its descriptor into
   rseq_cs, and start_ip must be the very next instruction: a thread
   stopped with its PC after the store but before start_ip is outside
   [start_ip, post_commit_ip), so the kernel clears rseq_cs and the
   section then runs unprotected.  The window modes check that with one
   attempt of an inline operation (__rseq_percpu_addv, count 1) in a
   child pinned to one CPU, which exits with its result:  */
#define WINDOW_ABORTED 10	/* The attempt aborted, the counter is 0.  */
#define WINDOW_COMMITTED 11	/* It committed, the counter is 1.  */
#define WINDOW_CPU_CHANGED 12	/* Not on the CPU it read, though pinned.  */
#define WINDOW_BAD_VALUE 13	/* The counter disagrees with the result.  */
#define WINDOW_NO_CPU 14	/* No CPU to run on (no area).  */

#define WINDOW_STEP_BUDGET 100000
#define WINDOW_TRIES 10

#ifdef __RSEQ_PERCPU_ARCH
# include <stddef.h>
# include <sys/user.h>

static intptr_t window_value;

/* The attempt, called through a pointer so that the tracer knows where
   it starts (arm starts stepping there).  */
static __attribute__ ((noinline)) int
window_attempt (struct rseq *area, intptr_t *v, int cpu)
{
  return __rseq_percpu_addv (area, __RSEQ_AREA_CPU_ID_OFFSET, v, 1, cpu);
}
static int (*volatile window_attempt_ptr) (struct rseq *, intptr_t *, int)
  = window_attempt;

static void
window_child (int cpu)
{
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  if (sched_setaffinity (0, sizeof set, &set) < 0)
    FAIL ("sched_setaffinity (CPU %d): %s", cpu, strerror (errno));
  if (ptrace (PTRACE_TRACEME, 0, NULL, NULL) < 0)
    FAIL ("PTRACE_TRACEME: %s", strerror (errno));
  raise (SIGSTOP);		/* The sync point.  */
  struct rseq *area = __rseq_area_pointer ();
  cpu = __rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
  if (area == NULL || cpu < 0)
    _exit (WINDOW_NO_CPU);
  int r = window_attempt_ptr (area, &window_value, cpu);
  if (r == -1)
    _exit (window_value == 0 ? WINDOW_ABORTED : WINDOW_BAD_VALUE);
  if (r == 0)
    _exit (window_value == 1 ? WINDOW_COMMITTED : WINDOW_BAD_VALUE);
  _exit (r == __RSEQ_PERCPU_CPU_CHANGED ? WINDOW_CPU_CHANGED : WINDOW_BAD_VALUE);
}

static const char *
window_status_name (int status)
{
  switch (status)
    {
    case WINDOW_ABORTED: return "aborted";
    case WINDOW_COMMITTED: return "committed";
    case WINDOW_CPU_CHANGED: return "found itself on another CPU";
    case WINDOW_BAD_VALUE: return "left a counter inconsistent with its result";
    case WINDOW_NO_CPU: return "found no rseq area or CPU";
    default: return "failed";
    }
}

/* The child's memory, a word at a time (ADDR and LEN aligned to words).  */
static void
peek_bytes (pid_t pid, uintptr_t addr, void *buf, size_t len)
{
  for (size_t i = 0; i < len; i += sizeof (long))
    {
      errno = 0;
      long word = ptrace (PTRACE_PEEKDATA, pid, addr + i, NULL);
      if (errno != 0)
	FAIL ("PTRACE_PEEKDATA %#lx: %s", (unsigned long) (addr + i),
	      strerror (errno));
      memcpy ((char *) buf + i, &word, sizeof word);
    }
}

static void
poke_bytes (pid_t pid, uintptr_t addr, const void *buf, size_t len)
{
  for (size_t i = 0; i < len; i += sizeof (long))
    {
      long word;
      memcpy (&word, (const char *) buf + i, sizeof word);
      if (ptrace (PTRACE_POKEDATA, pid, addr + i, word) < 0)
	FAIL ("PTRACE_POKEDATA %#lx: %s", (unsigned long) (addr + i),
	      strerror (errno));
    }
}

/* rseq_cs of the child's area AREA (two words, low first, on 32-bit
   ABIs: every ABI here is little-endian).  */
static uint64_t
peek_rseq_cs (pid_t pid, uintptr_t area)
{
  uint64_t cs;
  peek_bytes (pid, area + __RSEQ_AREA_RSEQ_CS_OFFSET, &cs, sizeof cs);
  return cs;
}

static void
poke_rseq_cs (pid_t pid, uintptr_t area, uint64_t cs)
{
  poke_bytes (pid, area + __RSEQ_AREA_RSEQ_CS_OFFSET, &cs, sizeof cs);
}

/* The child's PC, on the ABIs the stepping code above does not cover.  */
# if defined __x86_64__ || defined __i386__
#  ifdef __x86_64__
#   define PC_OFFSET offsetof (struct user_regs_struct, rip)
#  else
#   define PC_OFFSET offsetof (struct user_regs_struct, eip)
#  endif
static uintptr_t
child_pc (pid_t pid)
{
  errno = 0;
  long pc = ptrace (PTRACE_PEEKUSER, pid, PC_OFFSET, NULL);
  if (errno != 0)
    FAIL ("PTRACE_PEEKUSER: %s", strerror (errno));
  return pc;
}

static void
set_child_pc (pid_t pid, uintptr_t pc)
{
  if (ptrace (PTRACE_POKEUSER, pid, PC_OFFSET, pc) < 0)
    FAIL ("PTRACE_POKEUSER: %s", strerror (errno));
}
# elif defined __arm__
static uintptr_t
child_pc (pid_t pid)
{
  struct user_regs regs;
  if (ptrace (PTRACE_GETREGS, pid, NULL, &regs) < 0)
    FAIL ("PTRACE_GETREGS: %s", strerror (errno));
  return regs.uregs[15];
}
# endif

/* Where the child trapped.  On arm the kernel handles rseq before it
   reports the stop: a stop inside an armed section shows the child
   already moved to the abort handler (and rseq_cs cleared), and a stop
   outside one shows rseq_cs cleared.  The breakpoint's address is then
   si_addr, not the PC.  Elsewhere the stop comes first: the PC (after
   an x86 int3, the PC less one, which run_to_breakpoint handles).  */
static uintptr_t
trap_address (pid_t pid)
{
# ifdef __arm__
  siginfo_t si;
  memset (&si, 0, sizeof si);
  if (ptrace (PTRACE_GETSIGINFO, pid, NULL, &si) < 0)
    FAIL ("PTRACE_GETSIGINFO: %s", strerror (errno));
  return (uintptr_t) si.si_addr;
# else
  return child_pc (pid);
# endif
}

/* Put a breakpoint at ADDR in the child (SET), or its instruction back
   (the tracer's own copy: the child is a fork of it).  */
static void
set_breakpoint (pid_t pid, uintptr_t addr, int set)
{
# if defined __x86_64__ || defined __i386__
  uintptr_t word = addr & ~(uintptr_t) (sizeof (long) - 1);
  errno = 0;
  long val = ptrace (PTRACE_PEEKTEXT, pid, word, NULL);
  if (errno != 0)
    FAIL ("PTRACE_PEEKTEXT: %s", strerror (errno));
  ((unsigned char *) &val)[addr - word]
    = set ? 0xcc : *(const unsigned char *) addr;	/* int3 */
  if (ptrace (PTRACE_POKETEXT, pid, word, val) < 0)
    FAIL ("PTRACE_POKETEXT: %s", strerror (errno));
# elif defined __arm__
  poke_breakpoint (pid, addr, set);
# else
  poke_insn (pid, addr, set ? BREAKPOINT_INSN : *(const uint32_t *) addr);
# endif
}

/* Run the child to a breakpoint at ADDR, lift it and leave the child
   stopped with its PC at ADDR.  Returns -1, or the child's exit status
   if it exited without reaching ADDR.  */
static int
run_to_breakpoint (pid_t pid, uintptr_t addr)
{
  set_breakpoint (pid, addr, 1);
  int status = resume_until_trap (pid, PTRACE_CONT);
  if (status >= 0)
    return status;
  uintptr_t pc = trap_address (pid);
# if defined __x86_64__ || defined __i386__
  if (pc == addr + 1)		/* int3 traps after itself.  */
    {
      set_child_pc (pid, addr);
      pc = addr;
    }
# endif
  if (pc != addr)
    FAIL ("SIGTRAP at %#lx, not at the breakpoint at %#lx",
	  (unsigned long) pc, (unsigned long) addr);
  set_breakpoint (pid, addr, 0);
  return -1;
}

# ifdef __arm__
/* The target of the branch at PC (B and B<cond>; CBZ and CBNZ in T32),
   or 0.  Calls, returns and other writes to the PC are not followed:
   a step over one of them never reaches its breakpoint, and the caller
   fails.  */
static uintptr_t
arm_branch_target (uintptr_t pc)
{
#  ifdef __thumb__
  uint16_t h = *(const uint16_t *) pc;
  if ((h & 0xf000) == 0xd000 && ((h >> 8) & 0xf) < 0xe)	/* B<c> T1 */
    return pc + 4 + ((int32_t) (int8_t) (h & 0xff) << 1);
  if ((h & 0xf800) == 0xe000)					/* B T2 */
    return pc + 4 + ((int32_t) ((uint32_t) (h & 0x7ff) << 21) >> 20);
  if ((h & 0xf500) == 0xb100)				/* CBZ, CBNZ */
    return pc + 4 + ((((h >> 9) & 1) << 6) | (((h >> 3) & 0x1f) << 1));
  if ((h & 0xf800) == 0xf000)
    {
      uint16_t h2 = *(const uint16_t *) (pc + 2);
      uint32_t s = (h >> 10) & 1, j1 = (h2 >> 13) & 1, j2 = (h2 >> 11) & 1;
      if ((h2 & 0xd000) == 0x9000)				/* B T4 */
	{
	  uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
	  uint32_t imm = (s << 24) | (i1 << 23) | (i2 << 22)
			 | ((uint32_t) (h & 0x3ff) << 12) | ((h2 & 0x7ff) << 1);
	  return pc + 4 + ((int32_t) (imm << 7) >> 7);
	}
      if ((h2 & 0xd000) == 0x8000 && ((h >> 6) & 0xf) < 0xe)	/* B<c> T3 */
	{
	  uint32_t imm = (s << 20) | (j2 << 19) | (j1 << 18)
			 | ((uint32_t) (h & 0x3f) << 12) | ((h2 & 0x7ff) << 1);
	  return pc + 4 + ((int32_t) (imm << 11) >> 11);
	}
    }
  return 0;
#  else
  uint32_t i = *(const uint32_t *) pc;
  if ((i >> 28) != 0xf && (i & 0x0f000000) == 0x0a000000)	/* B<c> */
    return pc + 8 + ((int32_t) (i << 8) >> 6);
  return 0;
#  endif
}

/* One step the way a debugger steps without PTRACE_SINGLESTEP: a
   breakpoint on the next instruction, and on the branch target.  */
static int
step_one (pid_t pid)
{
  uintptr_t pc = child_pc (pid);
  uintptr_t next[2] = { pc + INSN_SIZE (pc), arm_branch_target (pc) };
  int n = next[1] != 0 && next[1] != next[0] ? 2 : 1;
  for (int k = 0; k < n; k++)
    poke_breakpoint (pid, next[k], 1);
  int status = resume_until_trap (pid, PTRACE_CONT);
  if (status >= 0)
    return status;
  uintptr_t now = trap_address (pid);
  for (int k = 0; k < n; k++)
    poke_breakpoint (pid, next[k], 0);
  if (now != next[0] && (n == 1 || now != next[1]))
    FAIL ("stepping from %#lx stopped at %#lx: an instruction this tracer"
	  " does not follow", (unsigned long) pc, (unsigned long) now);
  return -1;
}
# else
static int
step_one (pid_t pid)
{
  int status;
  single_step (pid, 1, &status);
  return status;
}
# endif

struct window_cs
{
  uint32_t version;
  uint32_t flags;
  uint64_t start_ip;
  uint64_t post_commit_offset;
  uint64_t abort_ip;
};

# ifdef __arm__
extern const struct window_cs __start___rseq_cs[];
extern const struct window_cs __stop___rseq_cs[];

/* The descriptor of window_attempt's section, from this program's own
   __rseq_cs (the child is a fork of it): the one with the lowest
   start_ip in or after window_attempt.  */
static void
window_own_cs (struct window_cs *cs)
{
  uintptr_t entry = (uintptr_t) window_attempt & ~(uintptr_t) 1;
  const struct window_cs *best = NULL;
  for (const struct window_cs *d = __start___rseq_cs; d < __stop___rseq_cs;
       d++)
    if (d->start_ip >= entry && (best == NULL || d->start_ip < best->start_ip))
      best = d;
  if (best == NULL)
    FAIL ("no descriptor at or after window_attempt (%#lx)",
	  (unsigned long) entry);
  *cs = *best;
}
# endif

/* Fork a child that stops at the sync point, with rseq_cs cleared.  */
static pid_t
window_start_child (uintptr_t area, int cpu)
{
  fflush (stdout);
  fflush (stderr);
  pid_t pid = fork ();
  if (pid < 0)
    FAIL ("fork: %s", strerror (errno));
  if (pid == 0)
    window_child (cpu);
  int ws;
  if (waitpid (pid, &ws, 0) != pid || !WIFSTOPPED (ws)
      || WSTOPSIG (ws) != SIGSTOP)
    FAIL ("child did not stop at the sync point (wait status %#x)", ws);
  poke_rseq_cs (pid, area, 0);
  if (peek_rseq_cs (pid, area) != 0)
    FAIL ("rseq_cs of the child at %#lx stays non-zero",
	  (unsigned long) area);
  return pid;
}

/* Step the child from the sync point (on arm from the entry of
   window_attempt) to the first stop at which rseq_cs is set: the stop
   right after the arming store.  Returns rseq_cs, and the PC there in
   *PC and the descriptor in *CS.  */
static uint64_t
step_to_arming (pid_t pid, uintptr_t area, uintptr_t *pc,
		struct window_cs *cs)
{
# ifdef __arm__
  uintptr_t entry = (uintptr_t) window_attempt & ~(uintptr_t) 1;
  int status = run_to_breakpoint (pid, entry);
  if (status >= 0)
    FAIL ("the child exited (status %d) before window_attempt at %#lx",
	  status, (unsigned long) entry);
# endif
  for (long steps = 0; steps < WINDOW_STEP_BUDGET; steps++)
    {
      uint64_t armed = peek_rseq_cs (pid, area);
# ifdef __arm__
      /* The kernel cleared rseq_cs before reporting the stop; if the
	 stop was inside the armed section, it moved the child to the
	 abort handler too: the stop right after arming is that one.  */
      if (steps > 0 && child_pc (pid) != trap_address (pid))
	{
	  window_own_cs (cs);
	  if (child_pc (pid) != cs->abort_ip)
	    FAIL ("the kernel moved the child from %#lx to %#lx, not to"
		  " window_attempt's abort handler %#llx",
		  (unsigned long) trap_address (pid),
		  (unsigned long) child_pc (pid),
		  (unsigned long long) cs->abort_ip);
	  *pc = trap_address (pid);
	  printf ("aborted after %ld steps, at the stop at %#lx; start_ip"
		  " %#llx, abort_ip %#llx\n", steps, (unsigned long) *pc,
		  (unsigned long long) cs->start_ip,
		  (unsigned long long) cs->abort_ip);
	  return cs->start_ip;
	}
# endif
      if (armed != 0)
	{
	  *pc = child_pc (pid);
	  peek_bytes (pid, armed, cs, sizeof *cs);
	  if (cs->version != 0 || cs->post_commit_offset == 0)
	    FAIL ("rseq_cs %#llx: version %u, post_commit_offset %llu:"
		  " not a descriptor", (unsigned long long) armed,
		  cs->version, (unsigned long long) cs->post_commit_offset);
	  printf ("armed after %ld steps: rseq_cs %#llx, PC %#lx; start_ip"
		  " %#llx, post_commit_ip %#llx, abort_ip %#llx\n", steps,
		  (unsigned long long) armed, (unsigned long) *pc,
		  (unsigned long long) cs->start_ip,
		  (unsigned long long) (cs->start_ip + cs->post_commit_offset),
		  (unsigned long long) cs->abort_ip);
	  return armed;
	}
      int status = step_one (pid);
      if (status >= 0)
	FAIL ("the child exited (status %d: %s) after %ld steps without"
	      " a stop in its armed section%s", status,
	      window_status_name (status), steps,
	      status == WINDOW_COMMITTED
	      ? ": no stop aborted the section, so rseq_cs was cleared before"
		" start_ip (a stop between the arming store and start_ip)"
	      : "");
    }
  FAIL ("rseq_cs still clear after %d steps", WINDOW_STEP_BUDGET);
}

# ifndef __arm__
static void
window_kill (pid_t pid)
{
  int ws;
  kill (pid, SIGKILL);
  waitpid (pid, &ws, 0);
}
# endif

/* Let the stopped child finish without stops; its exit status.  */
static int
window_finish (pid_t pid)
{
  int status = resume_until_trap (pid, PTRACE_CONT);
  if (status < 0)
    FAIL ("unexpected SIGTRAP at %#lx", (unsigned long) child_pc (pid));
  return status;
}

/* A child stopped exactly once, at a breakpoint at ADDR, then run to
   its end: its exit status.  A child that exits without reaching ADDR
   had its attempt aborted by something else before it (a preemption or
   an interrupt): another child tries again.  */
static int
window_stop_once (uintptr_t area, int cpu, uintptr_t addr)
{
  for (int tries = 0; tries < WINDOW_TRIES; tries++)
    {
      pid_t pid = window_start_child (area, cpu);
      int status = run_to_breakpoint (pid, addr);
      if (status == WINDOW_ABORTED)
	continue;
      if (status >= 0)
	FAIL ("the child exited (status %d: %s) without reaching the"
	      " breakpoint at %#lx", status, window_status_name (status),
	      (unsigned long) addr);
      printf ("stopped at %#lx, rseq_cs %#llx\n", (unsigned long) addr,
	      (unsigned long long) peek_rseq_cs (pid, area));
      return window_finish (pid);
    }
  FAIL ("%d attempts aborted before reaching %#lx", WINDOW_TRIES,
	(unsigned long) addr);
}

/* singlestep window: stop right after the arming store; that stop
   must be at start_ip (a), and the kernel must restart the section
   from there (b).  */
static int
window_main (uintptr_t area, int cpu)
{
  int failed = 0;
  uintptr_t pc;
  struct window_cs cs;
  pid_t pid = window_start_child (area, cpu);
  step_to_arming (pid, area, &pc, &cs);
  if (pc != cs.start_ip)
    {
      fprintf (stderr, "FAIL: %s:%d: the stop right after the arming store"
	       " is at %#lx, not at start_ip %#llx: a preemption there is"
	       " outside the section, and the kernel clears rseq_cs\n",
	       __FILE__, __LINE__, (unsigned long) pc,
	       (unsigned long long) cs.start_ip);
      failed = 1;
    }
  int status = window_finish (pid);
  if (status != WINDOW_ABORTED)
    {
      fprintf (stderr, "FAIL: %s:%d: the attempt %s (exit status %d) after"
	       " a stop at %#lx right after the arming store: expected"
	       " aborted, the kernel must restart the section%s\n",
	       __FILE__, __LINE__, window_status_name (status), status,
	       (unsigned long) pc,
	       status == WINDOW_COMMITTED
	       ? " (it cleared rseq_cs instead, and the section ran"
		 " unprotected)" : "");
      failed = 1;
    }
  if (failed)
    return 1;
  printf ("PASS: the stop right after the arming store is at start_ip"
	  " %#lx and aborts the attempt\n", (unsigned long) pc);
  return 0;
}

/* singlestep window-commit: a probe child stepped through the section
   with rseq_cs cleared (so that nothing aborts) shows which instruction
   changes the counter: the commit, which must be the last of the
   section.  A second child stops only there, and must abort.  */
static int
window_commit_main (uintptr_t area, int cpu)
{
  struct window_cs cs;
# ifdef __arm__
  /* The commit store is 4 bytes in A32 and in T32 (str.w: r12 is a
     high register); rseq.sections checks it is the last instruction.  */
  window_own_cs (&cs);
  uintptr_t commit = cs.start_ip + cs.post_commit_offset - 4;
  uintptr_t start = cs.start_ip, post = start + cs.post_commit_offset;
# else
  uintptr_t pc;
  pid_t pid = window_start_child (area, cpu);
  step_to_arming (pid, area, &pc, &cs);
  uintptr_t start = cs.start_ip, post = start + cs.post_commit_offset;
  poke_rseq_cs (pid, area, 0);
  uintptr_t commit = 0;
  long steps = 0;
  for (;; steps++)
    {
      intptr_t value;
      peek_bytes (pid, (uintptr_t) &window_value, &value, sizeof value);
      if (value != 0)
	break;
      if (steps == WINDOW_STEP_BUDGET)
	FAIL ("no commit after %ld steps", steps);
      commit = child_pc (pid);
      int status = step_one (pid);
      if (status >= 0)
	FAIL ("the probe exited (status %d: %s) before it committed",
	      status, window_status_name (status));
    }
  pc = child_pc (pid);
  if (commit < start || commit >= post || pc != post)
    FAIL ("the counter changed at %#lx, and the next instruction is at"
	  " %#lx: the commit must be the last instruction of [%#lx, %#lx)",
	  (unsigned long) commit, (unsigned long) pc, (unsigned long) start,
	  (unsigned long) post);
  int probe_status = window_finish (pid);
  if (probe_status != WINDOW_COMMITTED)
    FAIL ("the probe, stepped with rseq_cs cleared, %s (exit status %d)",
	  window_status_name (probe_status), probe_status);
  printf ("the commit is at %#lx, post_commit_ip %#lx\n",
	  (unsigned long) commit, (unsigned long) post);
# endif

  int status = window_stop_once (area, cpu, commit);
  if (status != WINDOW_ABORTED)
    FAIL ("the attempt %s (exit status %d) after a stop at its commit"
	  " %#lx, inside [%#lx, %#lx): expected aborted",
	  window_status_name (status), status, (unsigned long) commit,
	  (unsigned long) start, (unsigned long) post);
  printf ("PASS: a stop at the commit %#lx aborts the attempt\n",
	  (unsigned long) commit);
  return 0;
}

/* singlestep window-after: a stop at post_commit_ip comes after the
   commit, and the attempt must have committed.  A probe child stepped
   to the arming store gives the descriptor.  */
static int
window_after_main (uintptr_t area, int cpu)
{
  struct window_cs cs;
# ifdef __arm__
  window_own_cs (&cs);
# else
  uintptr_t pc;
  pid_t pid = window_start_child (area, cpu);
  step_to_arming (pid, area, &pc, &cs);
  window_kill (pid);
# endif
  uintptr_t post = cs.start_ip + cs.post_commit_offset;
  int status = window_stop_once (area, cpu, post);
  if (status != WINDOW_COMMITTED)
    FAIL ("the attempt %s (exit status %d) after a stop at post_commit_ip"
	  " %#lx: expected committed", window_status_name (status), status,
	  (unsigned long) post);
  printf ("PASS: a stop at post_commit_ip %#lx leaves the attempt"
	  " committed\n", (unsigned long) post);
  return 0;
}
#endif /* __RSEQ_PERCPU_ARCH */

static int
window_modes (const char *mode)
{
#ifdef __RSEQ_PERCPU_ARCH
  struct rseq *area = __rseq_area_pointer ();
  if (area == NULL)
    UNSUPPORTED ("glibc registered no rseq area (__rseq_size %u)",
		 __rseq_size);
  int cpu_id = __rseq_area_load (area, __RSEQ_AREA_CPU_ID_OFFSET);
  if (cpu_id < 0)
    UNSUPPORTED ("rseq is not registered (cpu_id %d)", cpu_id);
  if (strcmp (mode, "window") == 0)
    return window_main ((uintptr_t) area, cpu_id);
  if (strcmp (mode, "window-commit") == 0)
    return window_commit_main ((uintptr_t) area, cpu_id);
  return window_after_main ((uintptr_t) area, cpu_id);
#else
  (void) mode;
  UNSUPPORTED ("no inline critical sections on this architecture");
#endif
}

int
main (int argc, char **argv)
{
  if (argc == 2 && (strcmp (argv[1], "window") == 0
		    || strcmp (argv[1], "window-commit") == 0
		    || strcmp (argv[1], "window-after") == 0))
    return window_modes (argv[1]);
  int expect_progress = argc > 1 && strcmp (argv[1], "progress") == 0;
  int never = argc > 2 && strcmp (argv[2], "--never") == 0;
  if (argc < 2 || (!expect_progress && strcmp (argv[1], "stuck") != 0))
    FAIL ("usage: singlestep progress|stuck [--never]"
	  " | window|window-commit|window-after");
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
  /* Stuck: at the progress run's rate, 30,000 steps would complete
     more than a dozen operations.  */
  long budget = expect_progress ? 5000000 : 30000;
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
