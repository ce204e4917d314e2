/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cpu-opv-coherence: cpu_opv must operate on the memory user space sees.
 *
 * The kernel pins an operand's page before it runs the vector.  If that
 * page is later replaced in the page table (copy-on-write of the zero
 * page, of a private file page or of a page shared with a forked child),
 * the vector reads a page nobody writes any more.  Each case races
 * vectors, or a vector and a plain store, on fresh memory and checks that
 * the outcome is one that a vector running atomically on its CPU can give.
 *
 *   cpu-opv-coherence [--rounds N] CASE
 *
 * CASE:
 *   zero-page    two vectors "if (x == 0) x += 1" on CPU 0, started
 *                together, x on a page only read so far (the zero page):
 *                exactly one may succeed, and x ends at 1
 *   file-page    the same on a MAP_PRIVATE file page read but not written
 *   fork         the same on an anonymous page shared with a forked child
 *   plain-store  a thread on CPU 0 stores x = 5 then flag = 1; a vector on
 *                CPU 0 "if (flag == 1 && x != 0)": once it sees the flag it
 *                must see x == 5
 *   read-only    operands in read-only memory still work (.rodata, a
 *                PROT_READ anonymous and a MAP_SHARED file page) and the
 *                EFAULT rules hold (PROT_NONE, write-only, read-only
 *                destination)
 *   deadline     a SCHED_DEADLINE caller: allowed within its root domain,
 *                EINVAL for a CPU of another root domain (isolcpus=)
 *
 * Exit: 0 pass, 1 fail, 2 usage, 77 unsupported (reason on the last line).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/cpu_opv.h>

#include "vm-check.h"

#define ADDR(p)		((uint64_t)(uintptr_t)(p))
#define TARGET_CPU	0
#define MAX_EAGAIN	1000

static long page_size;
/* The system call, retried on EAGAIN (the caller was moved away). */
static int cpu_opv(struct cpu_op *ops, int count, int cpu)
{
	int tries, ret;

	for (tries = 0; tries < MAX_EAGAIN; tries++) {
		ret = syscall(__NR_cpu_opv, ops, count, cpu, 0);
		if (ret >= 0 || errno != EAGAIN)
			return ret;
	}
	return ret;
}

static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static void compare_op(struct cpu_op *op, int type, const void *a,
		       const void *b, uint32_t len)
{
	memset(op, 0, sizeof(*op));
	op->op = type;
	op->len = len;
	op->u.compare_op.a = ADDR(a);
	op->u.compare_op.b = ADDR(b);
}

static void add_op(struct cpu_op *op, void *p, int64_t count)
{
	memset(op, 0, sizeof(*op));
	op->op = CPU_ADD_OP;
	op->len = sizeof(uint64_t);
	op->u.arithmetic_op.p = ADDR(p);
	op->u.arithmetic_op.count = count;
}

static void memcpy_op(struct cpu_op *op, void *dst, const void *src,
		      uint32_t len)
{
	memset(op, 0, sizeof(*op));
	op->op = CPU_MEMCPY_OP;
	op->len = len;
	op->u.memcpy_op.dst = ADDR(dst);
	op->u.memcpy_op.src = ADDR(src);
}

static void *map_or_die(size_t len, int prot, int flags, int fd)
{
	void *p = mmap(NULL, len, prot, flags, fd, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

/* ---- two vectors "if (x == 0) x += 1" racing on one CPU ---- */

struct race {
	pthread_barrier_t start, done;
	uint64_t *volatile x;
	int result[2], error[2];
	bool stop;
};

struct racer_arg {
	struct race *race;
	int me;
};

static const uint64_t zero;

static void *racer(void *arg)
{
	struct race *race = ((struct racer_arg *)arg)->race;
	int me = ((struct racer_arg *)arg)->me;
	struct cpu_op ops[2];

	for (;;) {
		pthread_barrier_wait(&race->start);
		if (race->stop)
			return NULL;
		compare_op(&ops[0], CPU_COMPARE_EQ_OP, race->x, &zero,
			   sizeof(uint64_t));
		add_op(&ops[1], race->x, 1);
		race->result[me] = cpu_opv(ops, 2, TARGET_CPU);
		race->error[me] = errno;
		pthread_barrier_wait(&race->done);
	}
}

/* Fresh memory for one round; *x reads 0 and has never been written here. */
struct fresh {
	void *map;
	uint64_t *x;
	pid_t child;
	int child_pipe;
};

enum memory_kind { ZERO_PAGE, FILE_PAGE, FORKED_PAGE };

static int zeros_fd = -1;

static int open_zero_file(void)
{
	char path[] = "/tmp/cpu-opv-coherence.XXXXXX";
	int fd = mkstemp(path);
	char *buf = calloc(1, page_size);

	if (fd < 0 || !buf || write(fd, buf, page_size) != page_size) {
		perror("zero-filled file");
		exit(1);
	}
	unlink(path);
	free(buf);
	return fd;
}

/* A child that keeps the page shared until the round is over. */
static void fork_holder(struct fresh *f)
{
	int fds[2];
	char c;

	if (pipe(fds)) {
		perror("pipe");
		exit(1);
	}
	f->child = fork();
	if (f->child < 0) {
		perror("fork");
		exit(1);
	}
	if (f->child == 0) {
		close(fds[1]);
		while (read(fds[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(*f->x == 0 ? 0 : 1);	/* the child's copy stays 0 */
	}
	close(fds[0]);
	f->child_pipe = fds[1];
}

static void fresh_memory(struct fresh *f, enum memory_kind kind)
{
	f->child = 0;
	if (kind == FILE_PAGE) {
		f->map = map_or_die(page_size, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE, zeros_fd);
	} else {
		f->map = map_or_die(page_size, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1);
	}
	f->x = (uint64_t *)f->map + 8;
	if (kind == FORKED_PAGE) {
		*(volatile uint64_t *)f->x = 0;	/* a real anonymous page */
		fork_holder(f);
	} else {
		(void)*(volatile uint64_t *)f->x;	/* map it, read-only */
	}
}

static void release_memory(struct fresh *f)
{
	int status;

	if (f->child > 0) {
		close(f->child_pipe);
		if (waitpid(f->child, &status, 0) != f->child ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail("the forked child's copy of x changed");
	}
	munmap(f->map, page_size);
}

static void race_rounds(enum memory_kind kind, int rounds)
{
	static const char *const names[] = { "zero page", "private file page",
					     "page shared with a child" };
	struct race race = { 0 };
	struct racer_arg args[2] = { { &race, 0 }, { &race, 1 } };
	pthread_t threads[2];
	int both = 0, neither = 0, bad_value = 0, errors = 0, i, round;
	struct fresh f;

	if (kind == FILE_PAGE)
		zeros_fd = open_zero_file();
	pthread_barrier_init(&race.start, NULL, 3);
	pthread_barrier_init(&race.done, NULL, 3);
	for (i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, racer, &args[i]);
	for (round = 0; round < rounds; round++) {
		int successes = 0;

		fresh_memory(&f, kind);
		race.x = f.x;
		pthread_barrier_wait(&race.start);
		pthread_barrier_wait(&race.done);
		for (i = 0; i < 2; i++) {
			if (race.result[i] < 0) {
				if (errors++ < 3)
					printf("round %d: cpu_opv: %s\n", round,
					       strerror(race.error[i]));
			} else if (race.result[i] == 0) {
				successes++;
			}
		}
		both += successes == 2;
		neither += successes == 0;
		if (*f.x != (uint64_t)successes)
			bad_value++;
		release_memory(&f);
	}
	race.stop = true;
	pthread_barrier_wait(&race.start);
	for (i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	printf("%s: %d rounds: both succeeded in %d, neither in %d, x wrong in %d, errors %d\n",
	       names[kind], rounds, both, neither, bad_value, errors);
	if (both || neither || bad_value || errors)
		fail("%s: exactly one of two racing vectors must succeed", names[kind]);
}

/* ---- a plain store on the target CPU, then a vector ---- */

struct store_round {
	pthread_barrier_t start, done;
	uint64_t *volatile x;
	uint64_t flag;
	bool stop;
};

static void *plain_storer(void *arg)
{
	struct store_round *s = arg;

	pin_to_cpu(TARGET_CPU);
	for (;;) {
		pthread_barrier_wait(&s->start);
		if (s->stop)
			return NULL;
		*(volatile uint64_t *)s->x = 5;
		__atomic_store_n(&s->flag, 1, __ATOMIC_RELEASE);
		pthread_barrier_wait(&s->done);
	}
}

/*
 * Both stores run on CPU 0 before a vector that sees the flag (vectors run
 * there with preemption off), so such a vector must also see x == 5.
 */
static void plain_store_rounds(int rounds)
{
	static const uint64_t one = 1;
	struct store_round s = { 0 };
	int stale = 0, errors = 0, round, ret;
	struct cpu_op ops[2];
	pthread_t storer;
	struct fresh f;

	/* The storer is pinned to CPU 0; this thread may run anywhere. */
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		unsupported("plain-store needs two online CPUs");
	pthread_barrier_init(&s.start, NULL, 2);
	pthread_barrier_init(&s.done, NULL, 2);
	pthread_create(&storer, NULL, plain_storer, &s);
	for (round = 0; round < rounds; round++) {
		fresh_memory(&f, ZERO_PAGE);
		s.x = f.x;
		__atomic_store_n(&s.flag, 0, __ATOMIC_RELAXED);
		compare_op(&ops[0], CPU_COMPARE_EQ_OP, &s.flag, &one,
			   sizeof(uint64_t));
		compare_op(&ops[1], CPU_COMPARE_NE_OP, f.x, &zero,
			   sizeof(uint64_t));
		pthread_barrier_wait(&s.start);
		do
			ret = cpu_opv(ops, 2, TARGET_CPU);
		while (ret == 1);	/* the flag is not set yet */
		if (ret < 0 && errors++ < 3)
			printf("round %d: cpu_opv: %s\n", round, strerror(errno));
		stale += ret == 2;
		pthread_barrier_wait(&s.done);
		release_memory(&f);
	}
	s.stop = true;
	pthread_barrier_wait(&s.start);
	pthread_join(storer, NULL);
	printf("plain store: %d rounds: the vector saw the flag but x == 0 in %d, errors %d\n",
	       rounds, stale, errors);
	if (stale || errors)
		fail("a vector that saw the flag must see the store before it");
}

/* ---- read-only operands ---- */

static const uint64_t rodata_value = 0x1122334455667788ULL;

static void expect_result(const char *what, int got, int want)
{
	if (got != want)
		fail("%s: got %d (%s), want %d", what, got,
		     got < 0 ? strerror(errno) : "-", want);
}

static void expect_errno(const char *what, int got, int want_errno)
{
	if (got != -1 || errno != want_errno)
		fail("%s: got %d (%s), want -1 %s", what, got,
		     got < 0 ? strerror(errno) : "-", strerror(want_errno));
}

static void read_only_cases(void)
{
	uint64_t local = rodata_value, dest = 0;
	int fd = open_zero_file();
	uint64_t *ro_anon = map_or_die(page_size, PROT_READ,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1);
	uint64_t *ro_shared = map_or_die(page_size, PROT_READ, MAP_SHARED, fd);
	uint64_t *none = map_or_die(page_size, PROT_NONE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1);
	uint64_t *wronly = map_or_die(page_size, PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1);
	struct cpu_op ops[2];

	compare_op(&ops[0], CPU_COMPARE_EQ_OP, &local, &rodata_value, 8);
	expect_result(".rodata compare", cpu_opv(ops, 1, TARGET_CPU), 0);
	compare_op(&ops[0], CPU_COMPARE_EQ_OP, ro_anon, &zero, 8);
	expect_result("PROT_READ anonymous compare", cpu_opv(ops, 1, TARGET_CPU), 0);
	compare_op(&ops[0], CPU_COMPARE_EQ_OP, ro_shared, ro_anon, 8);
	expect_result("PROT_READ shared file compare", cpu_opv(ops, 1, TARGET_CPU), 0);
	memcpy_op(&ops[0], &dest, &rodata_value, 8);
	expect_result("memcpy from .rodata", cpu_opv(ops, 1, TARGET_CPU), 0);
	if (dest != rodata_value)
		fail("memcpy from .rodata copied %#" PRIx64, dest);
	compare_op(&ops[0], CPU_COMPARE_NE_OP, ro_anon, &rodata_value, 8);
	memcpy_op(&ops[1], &dest, ro_anon, 8);
	expect_result("memcpy from PROT_READ anonymous", cpu_opv(ops, 2, TARGET_CPU), 0);
	if (dest != 0)
		fail("memcpy from PROT_READ anonymous copied %#" PRIx64, dest);

	compare_op(&ops[0], CPU_COMPARE_EQ_OP, none, &zero, 8);
	expect_errno("PROT_NONE compare", cpu_opv(ops, 1, TARGET_CPU), EFAULT);
	compare_op(&ops[0], CPU_COMPARE_EQ_OP, wronly, &zero, 8);
	expect_errno("write-only compare", cpu_opv(ops, 1, TARGET_CPU), EFAULT);
	add_op(&ops[0], ro_anon, 1);
	expect_errno("add to PROT_READ anonymous", cpu_opv(ops, 1, TARGET_CPU), EFAULT);
	add_op(&ops[0], (void *)&rodata_value, 1);
	expect_errno("add to .rodata", cpu_opv(ops, 1, TARGET_CPU), EFAULT);
	memcpy_op(&ops[0], ro_shared, &local, 8);
	expect_errno("memcpy into PROT_READ shared", cpu_opv(ops, 1, TARGET_CPU), EFAULT);
	if (*ro_anon != 0 || *ro_shared != 0 || rodata_value != 0x1122334455667788ULL)
		fail("read-only memory changed");
	printf("read-only operands: done\n");
}

/* ---- SCHED_DEADLINE callers ---- */

struct dl_attr {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

/* CPU @cpu is isolated from the scheduler domains (its own root domain). */
static bool cpu_isolated(int cpu)
{
	char buf[256] = "";
	FILE *f = fopen("/sys/devices/system/cpu/isolated", "r");
	cpu_set_t set;
	char *p;

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	/* A list such as "1" or "1-2,4". */
	CPU_ZERO(&set);
	for (p = buf; *p && *p != '\n';) {
		long lo = strtol(p, &p, 10), hi = lo;

		if (*p == '-')
			hi = strtol(p + 1, &p, 10);
		for (; lo <= hi; lo++)
			CPU_SET(lo, &set);
		if (*p == ',')
			p++;
	}
	return CPU_ISSET(cpu, &set);
}

static void deadline_cases(void)
{
	struct dl_attr attr = {
		.size = sizeof(attr), .sched_policy = SCHED_DEADLINE,
		.sched_runtime = 20 * 1000 * 1000,
		.sched_deadline = 100 * 1000 * 1000,
		.sched_period = 100 * 1000 * 1000,
	};
	uint64_t v = 0;
	struct cpu_op op;
	cpu_set_t all;
	int cpu, ncpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (ncpus < 2)
		unsupported("deadline needs two online CPUs");
	CPU_ZERO(&all);
	for (cpu = 0; cpu < ncpus; cpu++)
		CPU_SET(cpu, &all);
	/*
	 * Become SCHED_DEADLINE in CPU 0's root domain: the affinity must
	 * cover that root domain, which is CPU 0 alone when the others are
	 * isolated and every CPU otherwise.
	 */
	pin_to_cpu(0);
	if (syscall(SYS_sched_setattr, 0, &attr, 0)) {
		if (sched_setaffinity(0, sizeof(all), &all) ||
		    syscall(SYS_sched_setattr, 0, &attr, 0))
			unsupported("cannot become SCHED_DEADLINE here");
	}
	if (sched_setaffinity(0, sizeof(all), &all))
		fail("sched_setaffinity(all CPUs) as SCHED_DEADLINE: %s",
		     strerror(errno));
	for (cpu = 0; cpu < ncpus; cpu++) {
		int ret;

		add_op(&op, &v, 1);
		ret = cpu_opv(&op, 1, cpu);
		if (cpu_isolated(cpu) != cpu_isolated(0)) {
			printf("CPU %d: other root domain: %d (%s)\n", cpu, ret,
			       ret < 0 ? strerror(errno) : "ran");
			expect_errno("SCHED_DEADLINE, CPU of another root domain",
				     ret, EINVAL);
		} else {
			printf("CPU %d: same root domain: %d\n", cpu, ret);
			expect_result("SCHED_DEADLINE, CPU of its root domain",
				      ret, 0);
		}
	}
}

int main(int argc, char **argv)
{
	int rounds = 500;
	const char *what;

	if (argc > 2 && !strcmp(argv[1], "--rounds")) {
		rounds = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc != 2 || rounds < 1) {
		fprintf(stderr, "usage: cpu-opv-coherence [--rounds N] zero-page|file-page|fork|plain-store|read-only|deadline\n");
		return 2;
	}
	what = argv[1];
	page_size = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	require_cpu_opv();
	if (!strcmp(what, "zero-page"))
		race_rounds(ZERO_PAGE, rounds);
	else if (!strcmp(what, "file-page"))
		race_rounds(FILE_PAGE, rounds);
	else if (!strcmp(what, "fork"))
		race_rounds(FORKED_PAGE, rounds);
	else if (!strcmp(what, "plain-store"))
		plain_store_rounds(rounds);
	else if (!strcmp(what, "read-only"))
		read_only_cases();
	else if (!strcmp(what, "deadline"))
		deadline_cases();
	else {
		fprintf(stderr, "cpu-opv-coherence: unknown case %s\n", what);
		return 2;
	}
	return failures ? 1 : 0;
}
