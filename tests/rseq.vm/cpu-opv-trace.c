/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cpu-opv-trace: the cpu_opv:cpu_opv tracepoint (the kernel patch
 * "cpu_opv: add a tracepoint").
 *
 * Enables only that event in tracefs, makes cpu_opv calls whose outcome
 * is known, disables it, makes one more call, and reads the trace back.
 * Each call made while the event was enabled must have produced exactly
 * one event, from this process, in order, with the right fields:
 *
 *   caller_cpu  the CPU the caller was on when it entered the call
 *   cpu         the CPU requested
 *   nr_ops      the number of operations requested
 *   result      what the call returned: 0, the 1-based index of the
 *               compare that stopped the vector, or -errno
 *   moved       1 if the call had to move the caller to cpu
 *
 * and the call made with the event disabled must have produced none.
 * The calls: a vector on the caller's own CPU (moved=0); a vector for
 * CPU 1 from a caller on CPU 0 allowed on {0,1} (moved=1); a vector whose
 * 2nd operation is a failing compare (result=2); a CPU out of range and a
 * CPU outside the allowed set (-EINVAL); 0 operations (-EINVAL); an
 * unreadable vector and an unreadable operand (-EFAULT).
 *
 * Needs tracefs at /sys/kernel/tracing and at least 2 online CPUs.
 * Exit: 0 pass, 1 fail, 77 unsupported (reason on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/cpu_opv.h>

#include "vm-check.h"

#define ADDR(p)		((uint64_t)(uintptr_t)(p))
#define TRACEFS		"/sys/kernel/tracing"
#define EVENT_DIR	TRACEFS "/events/cpu_opv/cpu_opv"
#define MAX_CALLS	32
/* Attempts at the moved case: the scheduler itself may move us first. */
#define MOVE_ATTEMPTS	3

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* One call and the event it must produce. */
struct call {
	const char *what;
	int caller_cpu, cpu, nr_ops, result, moved;
	bool move_case;		/* caller_cpu and moved as the trace says */
};

static struct call calls[MAX_CALLS];
static int nr_calls;

static void write_file(const char *path, const char *text, bool truncate)
{
	int fd = open(path, O_WRONLY | (truncate ? O_TRUNC : 0));

	if (fd < 0)
		die(path);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die(path);
	close(fd);
}

static void require_tracing(void)
{
	char buf[4096];
	ssize_t n;
	int fd;

	if (access(TRACEFS "/trace", R_OK))
		unsupported("no tracefs at " TRACEFS " (kernel without CONFIG_TRACING, or not mounted)");
	fd = open(EVENT_DIR "/format", O_RDONLY);
	if (fd < 0)
		unsupported("no event cpu_opv:cpu_opv in " TRACEFS "/events (kernel without the tracepoint patch)");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (!strstr(buf, "print fmt: \"caller_cpu=%d cpu=%d nr_ops=%d result=%d moved=%d\""))
		fail("unexpected format of cpu_opv:cpu_opv:\n%s", buf);
}

static void set_affinity(int cpu0, int cpu1)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu0, &set);
	if (cpu1 >= 0)
		CPU_SET(cpu1, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void add_op(struct cpu_op *op, uint64_t *p, int64_t count)
{
	memset(op, 0, sizeof(*op));
	op->op = CPU_ADD_OP;
	op->len = sizeof(*p);
	op->u.arithmetic_op.p = ADDR(p);
	op->u.arithmetic_op.count = count;
}

static void compare_op(struct cpu_op *op, const void *a, const void *b,
		       uint32_t len)
{
	memset(op, 0, sizeof(*op));
	op->op = CPU_COMPARE_EQ_OP;
	op->len = len;
	op->u.compare_op.a = ADDR(a);
	op->u.compare_op.b = ADDR(b);
}

/*
 * Make one call and record what its event must say.  @caller_cpu is the
 * CPU the caller is pinned to, or -1 for the moved case, where the trace
 * decides (see check_move_case()).
 */
static void call(const char *what, struct cpu_op *ops, int nr_ops, int cpu,
		 int caller_cpu, int want, int moved)
{
	struct call *c;
	int ret;

	if (nr_calls == MAX_CALLS) {
		fprintf(stderr, "cpu-opv-trace: too many calls\n");
		exit(1);
	}
	ret = syscall(__NR_cpu_opv, ops, nr_ops, cpu, 0);
	if (ret < 0)
		ret = -errno;
	if (ret != want)
		fail("%s: cpu_opv returned %d, expected %d", what, ret, want);
	c = &calls[nr_calls++];
	c->what = what;
	c->caller_cpu = caller_cpu;
	c->cpu = cpu;
	c->nr_ops = nr_ops;
	c->result = ret;
	c->moved = moved;
	c->move_case = caller_cpu < 0;
}

struct event {
	int pid, caller_cpu, cpu, nr_ops, result, moved;
};

/* Parse "  comm-PID  [CPU] flags  TIME: cpu_opv: caller_cpu=..." */
static bool parse_event(const char *line, struct event *e)
{
	const char *body = strstr(line, " cpu_opv: caller_cpu=");
	const char *bracket = strstr(line, " [");
	const char *dash = NULL, *p;

	if (!body || !bracket || bracket > body)
		return false;
	for (p = line; p < bracket; p++)
		if (*p == '-')
			dash = p;
	if (!dash)
		return false;
	e->pid = atoi(dash + 1);
	return sscanf(body, " cpu_opv: caller_cpu=%d cpu=%d nr_ops=%d result=%d moved=%d",
		      &e->caller_cpu, &e->cpu, &e->nr_ops, &e->result,
		      &e->moved) == 5;
}

static int read_events(struct event *events, int max, pid_t pid)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(TRACEFS "/trace", "r");

	if (!f)
		die(TRACEFS "/trace");
	while (fgets(line, sizeof(line), f)) {
		struct event e;

		if (line[0] == '#' || !strstr(line, " cpu_opv: "))
			continue;
		if (!parse_event(line, &e)) {
			fail("cannot parse trace line: %s", line);
			continue;
		}
		if (e.pid != pid) {
			printf("note: event from another process: %s", line);
			continue;
		}
		if (n < max)
			events[n] = e;
		n++;
	}
	fclose(f);
	return n;
}

/*
 * The moved case: a caller on CPU 0 allowed on {0,1} asks for CPU 1.  The
 * scheduler may have moved it to CPU 1 itself before it entered the call
 * (caller_cpu=1, moved=0), or, rarer, in the call before it was looked at
 * (caller_cpu=0, moved=0); otherwise the call moves it (caller_cpu=0,
 * moved=1).  Returns true for the last.
 */
static bool check_move_case(const struct call *c, const struct event *e)
{
	if (e->caller_cpu == 0 && e->moved == 1)
		return true;
	if ((e->caller_cpu == 1 || e->caller_cpu == 0) && e->moved == 0) {
		printf("note: %s: the scheduler moved the caller first (caller_cpu=%d moved=0)\n",
		       c->what, e->caller_cpu);
		return false;
	}
	fail("%s: caller_cpu=%d moved=%d", c->what, e->caller_cpu, e->moved);
	return false;
}

int main(void)
{
	static uint64_t counter __attribute__((aligned(8))), a = 1, b = 2;
	struct event events[MAX_CALLS + 8];
	struct cpu_op ops[4];
	int i, n, enabled_calls, moved_seen = 0;
	pid_t pid = getpid();
	void *hole;

	setvbuf(stdout, NULL, _IOLBF, 0);
	require_cpu_opv();
	require_tracing();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		unsupported("needs 2 online CPUs (boot with -smp 2)");
	hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole == MAP_FAILED)
		die("mmap");

	/* Only cpu_opv:cpu_opv, an empty buffer, one clock for all CPUs. */
	write_file(TRACEFS "/tracing_on", "0", false);
	write_file(TRACEFS "/events/enable", "0", false);
	write_file(TRACEFS "/trace_clock", "global", false);
	write_file(TRACEFS "/trace", "", true);
	write_file(EVENT_DIR "/enable", "1", false);
	write_file(TRACEFS "/tracing_on", "1", false);

	/* On the caller's own CPU: nothing to move. */
	set_affinity(0, -1);
	add_op(&ops[0], &counter, 1);
	call("own CPU", ops, 1, 0, 0, 0, 0);

	/* 3 operations, the 2nd a failing compare. */
	add_op(&ops[0], &counter, 1);
	compare_op(&ops[1], &a, &b, sizeof(a));
	add_op(&ops[2], &counter, 1);
	call("failing compare", ops, 3, 0, 0, 2, 0);

	/* Errors found before anything is pinned or moved. */
	add_op(&ops[0], &counter, 1);
	call("CPU out of range", ops, 1, 4096, 0, -EINVAL, 0);
	call("CPU not allowed", ops, 1, 1, 0, -EINVAL, 0);
	call("0 operations", ops, 0, 0, 0, -EINVAL, 0);
	call("unreadable vector", hole, 1, 0, 0, -EFAULT, 0);
	add_op(&ops[0], hole, 1);
	call("PROT_NONE operand", ops, 1, 0, 0, -EFAULT, 0);

	/*
	 * From CPU 0 to CPU 1: on CPU 0 first (setaffinity moves us there
	 * before it returns), then allowed on both, so that CPU 1 is an
	 * allowed target and the call has to move us there.
	 */
	for (i = 0; i < MOVE_ATTEMPTS; i++) {
		set_affinity(0, -1);
		set_affinity(0, 1);
		add_op(&ops[0], &counter, 1);
		call("moved to CPU 1", ops, 1, 1, -1, 0, 1);
	}
	enabled_calls = nr_calls;

	/* Disabled: this call must leave no event. */
	write_file(EVENT_DIR "/enable", "0", false);
	set_affinity(0, -1);
	add_op(&ops[0], &counter, 1);
	add_op(&ops[1], &counter, 1);
	add_op(&ops[2], &counter, 1);
	if (syscall(__NR_cpu_opv, ops, 3, 0, 0) != 0)
		fail("call with the event disabled: %s", strerror(errno));

	n = read_events(events, MAX_CALLS + 8, pid);
	if (n != enabled_calls)
		fail("%d events from pid %d, expected %d (one per call made while enabled, none after)",
		     n, (int)pid, enabled_calls);
	for (i = 0; i < enabled_calls && i < n; i++) {
		const struct call *c = &calls[i];
		const struct event *e = &events[i];

		if (e->cpu != c->cpu || e->nr_ops != c->nr_ops ||
		    e->result != c->result) {
			fail("%s: event cpu=%d nr_ops=%d result=%d, expected cpu=%d nr_ops=%d result=%d",
			     c->what, e->cpu, e->nr_ops, e->result, c->cpu,
			     c->nr_ops, c->result);
			continue;
		}
		if (c->move_case) {
			moved_seen += check_move_case(c, e);
			continue;
		}
		if (e->caller_cpu != c->caller_cpu || e->moved != c->moved)
			fail("%s: event caller_cpu=%d moved=%d, expected caller_cpu=%d moved=%d",
			     c->what, e->caller_cpu, e->moved, c->caller_cpu,
			     c->moved);
		else
			printf("ok: %s: caller_cpu=%d cpu=%d nr_ops=%d result=%d moved=%d\n",
			       c->what, e->caller_cpu, e->cpu, e->nr_ops,
			       e->result, e->moved);
	}
	for (; i < n; i++)
		fail("extra event: caller_cpu=%d cpu=%d nr_ops=%d result=%d moved=%d",
		     events[i].caller_cpu, events[i].cpu, events[i].nr_ops,
		     events[i].result, events[i].moved);
	if (!moved_seen)
		fail("no call from CPU 0 to CPU 1 reported moved=1");
	else
		printf("ok: moved to CPU 1: caller_cpu=0 cpu=1 moved=1 (%d of the attempts)\n",
		       moved_seen);
	return failures ? 1 : 0;
}
