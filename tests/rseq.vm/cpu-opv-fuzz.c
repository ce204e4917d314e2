/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cpu-opv-fuzz: randomized conformance test of cpu_opv against the rules of
 * include/uapi/linux/cpu_opv.h.  Each iteration builds a random vector,
 * predicts its outcome with a user-space reference model, makes the call and
 * compares the result, the whole data region, the read-only region and the
 * canaries with the prediction.  Exit: 0 pass, 1 mismatch, 2 usage, 77 skip.
 *
 *   cpu-opv-fuzz [--seed N] [--iterations N] [--verbose]
 *   cpu-opv-fuzz --self-test-model	(the model alone; never the syscall)
 *
 * The header does not order its checks, so a vector with both an EINVAL-class
 * problem (flags, count, cpu, malformed op) and an EFAULT-class one (ops or
 * operand memory) may fail with either errno; either way nothing may change.
 * Readings of the header: a compare or memcpy of length 0 is out of range
 * (ranges start at 1, as for count); all operand memory is checked before any
 * op runs, so a bad operand after a failing compare still means EFAULT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
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

#ifndef __NR_cpu_opv
#define __NR_cpu_opv 500
#endif
#if UINTPTR_MAX > 0xffffffffu
#define KERNEL_ADDRESS	0xffffffff81000000ULL
#else
#define KERNEL_ADDRESS	0xc0000000ULL
#endif

/* Arena pages: guard, data x4, guard, read-only x2, guard, ops, guard, hole, guard. */
#define DATA_PAGES	4
#define RO_PAGE		6
#define OPS_PAGE	9
#define HOLE_PAGE	11
#define ARENA_PAGES	13
#define CANARY_LEN	16	/* at each data edge; valid ops never go there */
#define PERIOD		64	/* the data and read-only patterns repeat this often */
#define PATTERN(i)	((uint8_t)((i) % PERIOD * 37 + 11))
#define HOT_SPAN	256	/* a small window, so that ops hit each other's bytes */
#define RESET_PERIOD	16	/* iterations between pattern refills */
#define AFFINITY_PERIOD	512	/* iterations between affinity changes */
#define MAX_EAGAIN	1000	/* EAGAIN retries of one vector before giving up */
#define MIN_HITS	5	/* per outcome class, or the run proved little */
#define OPS_SLOTS	(CPU_OP_VEC_LEN_MAX + 1)
#define ADDR(p)		((uint64_t)(uintptr_t)(p))
#define IS_INTEGER(o)	((o)->op >= CPU_ADD_OP && (o)->op <= CPU_RSHIFT_OP)
#define IS_SHIFT(o)	((o)->op == CPU_LSHIFT_OP || (o)->op == CPU_RSHIFT_OP)
#define OVERLAP(x, y, len)	((x) < (y) + (len) && (y) < (x) + (len))

enum outcome { OK, COMPARE_FAIL, FAIL_EINVAL, FAIL_EFAULT, FAIL_EAGAIN, OUTCOMES };
static const char *const outcome_names[] = { "ok", "compare-fail", "EINVAL", "EFAULT", "EAGAIN" };

struct arena {
	size_t page, data_size, ro_size;
	uint8_t *base, *data, *ro, *ops_page, *hole;
	uint8_t *ro_copy;		/* what the read-only region must hold */
	uint8_t *before, *shadow;	/* data before the call; as the model expects after */
	uint64_t faulting[6];		/* no access starting at one of these succeeds */
	int nfaulting;
};

struct vector {
	struct cpu_op ops[OPS_SLOTS];	/* what the ops argument should hold */
	int nfilled, count, cpu, flags;	/* nfilled slots: a bad count may differ */
	void *ops_arg;			/* the pointer handed to the kernel */
	bool ops_arg_faults;		/* reading count ops there faults */
};

struct fuzzer {
	uint64_t seed, rng;
	unsigned long iteration, iterations, either_errno, hits[OUTCOMES];
	bool verbose;
	bool expect_einval, expect_efault;	/* the errors the header allows */
	long expect_ret;			/* the result when neither is allowed */
	/* sched_getaffinity() reports active, hence online, CPUs only. */
	cpu_set_t original_cpus, allowed_cpus;
	int highest_cpu;
	struct arena arena;
	struct vector vec;
};

/* Static, so that stdio never allocates after the hole is punched. */
static char stdout_buffer[BUFSIZ];

/* xorshift64*: deterministic, so that --seed replays a failure exactly. */
static uint64_t random64(struct fuzzer *f)
{
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return f->rng * 0x2545f4914f6cdd1dULL;
}

static uint64_t below(struct fuzzer *f, uint64_t bound)
{
	return bound ? random64(f) % bound : 0;
}

static bool chance(struct fuzzer *f, unsigned percent)
{
	return below(f, 100) < percent;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static bool inside(uint64_t addr, uint64_t len, const uint8_t *base, size_t size)
{
	return addr >= ADDR(base) && len <= size && addr - ADDR(base) <= size - len;
}

/* ---- memory arena and CPUs ---- */

static void refill_data(struct arena *a)
{
	for (size_t i = 0; i < a->data_size; i++)
		a->data[i] = PATTERN(i);
	memset(a->data, 0xa5, CANARY_LEN);
	memset(a->data + a->data_size - CANARY_LEN, 0x5a, CANARY_LEN);
}

static bool canaries_intact(const struct arena *a)
{
	for (size_t i = 0; i < CANARY_LEN; i++)
		if (a->data[i] != 0xa5 || a->data[a->data_size - 1 - i] != 0x5a)
			return false;
	return true;
}

static bool unmapped(uint64_t addr, size_t page)
{
	unsigned char resident;

	return addr != (uintptr_t)addr ||
	       mincore((void *)(uintptr_t)(addr & ~(uint64_t)(page - 1)), 1, &resident);
}

static void setup_arena(struct arena *a)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *base = mmap(NULL, ARENA_PAGES * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (base == MAP_FAILED)
		die("mmap");
	*a = (struct arena){ .page = page, .base = base, .data = base + page,
		.data_size = DATA_PAGES * page, .ro = base + RO_PAGE * page, .ro_size = 2 * page,
		.ops_page = base + OPS_PAGE * page, .hole = base + HOLE_PAGE * page,
		.ro_copy = malloc(2 * page), .before = malloc(DATA_PAGES * page),
		.shadow = malloc(DATA_PAGES * page) };
	if (!a->ro_copy || !a->before || !a->shadow ||
	    mprotect(a->data, a->data_size, PROT_READ | PROT_WRITE) ||
	    mprotect(a->ro, a->ro_size, PROT_READ | PROT_WRITE) ||
	    mprotect(a->ops_page, page, PROT_READ | PROT_WRITE))
		die("arena setup");
	for (size_t i = 0; i < a->ro_size; i++)
		a->ro[i] = a->ro_copy[i] = PATTERN(i);
	refill_data(a);
	/* The hole is punched last, so that no allocation of ours lands there. */
	if (mprotect(a->ro, a->ro_size, PROT_READ) || munmap(a->hole, page))
		die("mprotect/munmap");
	/* Guards, the hole, NULL, a kernel address: a 32-bit process on a 64-bit
	 * kernel may own 0xc0000000, hence the check of the last three. */
	uint64_t candidates[] = { ADDR(base) + 8, ADDR(a->ro) - 64, ADDR(a->hole) - 8,
				  ADDR(a->hole) + 64, 0, KERNEL_ADDRESS };
	for (int i = 0; i < 6; i++)
		if (i < 3 || unmapped(candidates[i], page))
			a->faulting[a->nfaulting++] = candidates[i];
}

static bool cpu_is_valid(const struct fuzzer *f, int cpu)
{
	return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &f->allowed_cpus);
}

static int pick_cpu_in(struct fuzzer *f, const cpu_set_t *set)
{
	int skip = (int)below(f, (uint64_t)CPU_COUNT(set));

	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, set) && skip-- == 0)
			return cpu;
	return -1;
}

static int pick_invalid_cpu(struct fuzzer *f)
{
	cpu_set_t outside;	/* allowed at start but not now: under a narrowed mask */
	int cpus[] = { -1, CPU_SETSIZE, f->highest_cpu + 1 + (int)below(f, 4),
		       (int)(uint32_t)random64(f), -1 };
	int cpu;

	CPU_XOR(&outside, &f->original_cpus, &f->allowed_cpus);
	if (CPU_COUNT(&outside))
		cpus[4] = pick_cpu_in(f, &outside);
	cpu = cpus[below(f, 5)];
	return cpu_is_valid(f, cpu) ? -1 : cpu;
}

/* Narrowing the mask makes "online but not allowed" CPUs exist. */
static void maybe_change_affinity(struct fuzzer *f)
{
	cpu_set_t want = f->original_cpus;

	if (f->iteration % AFFINITY_PERIOD || CPU_COUNT(&f->original_cpus) < 2)
		return;
	if (chance(f, 50)) {
		CPU_ZERO(&want);
		CPU_SET(pick_cpu_in(f, &f->original_cpus), &want);
		for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &f->original_cpus) && chance(f, 30))
				CPU_SET(cpu, &want);
	}
	if (sched_setaffinity(0, sizeof(want), &want) ||
	    sched_getaffinity(0, sizeof(f->allowed_cpus), &f->allowed_cpus))
		die("sched_setaffinity");
}

/* ---- reference model ---- */

static bool op_has_known_shape(const struct cpu_op *op)
{
	if (op->op >= CPU_COMPARE_EQ_OP && op->op <= CPU_MEMCPY_OP)
		return op->len >= 1 && op->len <= CPU_OP_DATA_LEN_MAX;
	return IS_INTEGER(op) && (op->len == 1 || op->len == 2 || op->len == 4 || op->len == 8);
}

/* EINVAL-class problems, visible from the op's fields alone. */
static bool op_is_malformed(const struct cpu_op *op)
{
	return !op_has_known_shape(op) ||
	       (IS_INTEGER(op) && op->u.arithmetic_op.p % op->len) ||
	       (IS_SHIFT(op) && op->u.shift_op.bits >= 8 * op->len) ||
	       (op->op == CPU_MEMCPY_OP &&
		OVERLAP(op->u.memcpy_op.dst, op->u.memcpy_op.src, op->len));
}

/* EFAULT-class problems of an op whose type and length make sense.  Compare
 * a, memcpy dst and integer p share the first address slot, b and src the second. */
static bool op_faults(const struct arena *a, const struct cpu_op *op)
{
	uint64_t first = op->u.compare_op.a, second = op->u.compare_op.b;
	bool first_writable = inside(first, op->len, a->data, a->data_size);
	bool first_readable = first_writable || inside(first, op->len, a->ro, a->ro_size);
	bool second_readable = inside(second, op->len, a->data, a->data_size) ||
			       inside(second, op->len, a->ro, a->ro_size);

	if (IS_INTEGER(op))
		return !first_writable;
	if (op->op == CPU_MEMCPY_OP)
		return !first_writable || !second_readable;
	return !first_readable || !second_readable;
}

/* The model works on copies: shadow for data, ro_copy for read-only. */
static uint8_t *model_bytes(struct arena *a, uint64_t addr)
{
	if (inside(addr, 1, a->data, a->data_size))
		return a->shadow + (addr - ADDR(a->data));
	return a->ro_copy + (addr - ADDR(a->ro));
}

/* Native-endian unsigned of len bytes: storing back only len bytes truncates
 * count and mask, wraps the add and drops bits shifted out to the left. */
static void run_integer_op(struct arena *a, const struct cpu_op *op)
{
	union { uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64; } n = { .u64 = 0 };
	uint8_t *p = model_bytes(a, op->u.arithmetic_op.p);
	uint64_t value;

	memcpy(&n, p, op->len);
	value = op->len == 1 ? n.u8 : op->len == 2 ? n.u16 : op->len == 4 ? n.u32 : n.u64;
	switch (op->op) {
	case CPU_ADD_OP: value += (uint64_t)op->u.arithmetic_op.count; break;
	case CPU_OR_OP: value |= op->u.bitwise_op.mask; break;
	case CPU_AND_OP: value &= op->u.bitwise_op.mask; break;
	case CPU_XOR_OP: value ^= op->u.bitwise_op.mask; break;
	case CPU_LSHIFT_OP: value <<= op->u.shift_op.bits; break;
	default: value >>= op->u.shift_op.bits; break;	/* no high bits: logical */
	}
	if (op->len == 1)
		n.u8 = (uint8_t)value;
	else if (op->len == 2)
		n.u16 = (uint16_t)value;
	else if (op->len == 4)
		n.u32 = (uint32_t)value;
	else
		n.u64 = value;
	memcpy(p, &n, op->len);
}

static long run_model(struct arena *a, const struct vector *v)
{
	for (int i = 0; i < v->count; i++) {
		const struct cpu_op *op = &v->ops[i];
		uint8_t *first = model_bytes(a, op->u.compare_op.a);
		uint8_t *second = IS_INTEGER(op) ? NULL : model_bytes(a, op->u.compare_op.b);

		if (op->op == CPU_MEMCPY_OP)
			memcpy(first, second, op->len);
		else if (IS_INTEGER(op))
			run_integer_op(a, op);
		else if ((memcmp(first, second, op->len) != 0) == (op->op == CPU_COMPARE_EQ_OP))
			return i + 1;
	}
	return 0;
}

static void model_vector(struct fuzzer *f)
{
	struct arena *a = &f->arena;
	const struct vector *v = &f->vec;
	bool count_valid = v->count >= 1 && v->count <= CPU_OP_VEC_LEN_MAX;

	memcpy(a->before, a->data, a->data_size);
	memcpy(a->shadow, a->data, a->data_size);
	f->expect_einval = v->flags != 0 || !count_valid || !cpu_is_valid(f, v->cpu);
	f->expect_efault = v->ops_arg_faults;
	/* With a bad count the kernel has no ops to look at. */
	for (int i = 0; count_valid && i < v->count; i++) {
		f->expect_einval |= op_is_malformed(&v->ops[i]);
		f->expect_efault |= op_has_known_shape(&v->ops[i]) && op_faults(a, &v->ops[i]);
	}
	f->expect_ret = f->expect_einval || f->expect_efault ? -1 : run_model(a, v);
}

/* ---- vector generator ---- */

/* A valid operand: in data past the canaries, or in the read-only region;
 * often in a small window at the start, so that ops meet each other. */
static uint64_t pick_address(struct fuzzer *f, uint32_t len, uint32_t align, bool read_only)
{
	const struct arena *a = &f->arena;
	size_t low = read_only ? 0 : CANARY_LEN;
	size_t room = (read_only ? a->ro_size : a->data_size - CANARY_LEN) - low - len;
	size_t offset = low + (size_t)below(f, (chance(f, 50) && room > HOT_SPAN ? HOT_SPAN : room) + 1);

	/* low is a multiple of 8, so aligning down stays past the canary. */
	return ADDR(read_only ? a->ro : a->data) + offset - offset % align;
}

/* The same pattern phase elsewhere holds equal bytes, unless ops changed them. */
static uint64_t pick_twin_address(struct fuzzer *f, uint64_t first, uint32_t len)
{
	const struct arena *a = &f->arena;
	size_t phase = (size_t)(first - ADDR(a->data)) % PERIOD;

	if (chance(f, 50))
		return ADDR(a->ro) + phase + PERIOD * below(f, (a->ro_size - len - phase) / PERIOD + 1);
	return ADDR(a->data) + phase +
	       PERIOD * (1 + below(f, (a->data_size - CANARY_LEN - len - phase) / PERIOD));
}

static uint64_t pick_faulting_address(struct fuzzer *f, uint32_t len)
{
	const struct arena *a = &f->arena;
	/* How many bytes of a straddling operand lie in accessible memory. */
	uint64_t accessible = len > 1 ? 1 + below(f, len - 1) : 0;

	switch (below(f, 4)) {
	case 0: return ADDR(a->data + a->data_size) - accessible;
	case 1: return ADDR(a->data) - (len - accessible);
	case 2: return ADDR(a->ro + a->ro_size) - accessible;
	default: return a->faulting[below(f, (uint64_t)a->nfaulting)];
	}
}

static void generate_compare_or_memcpy(struct fuzzer *f, struct cpu_op *op)
{
	unsigned roll = (unsigned)below(f, 100);
	uint64_t first, second;

	op->op = (int32_t)below(f, 3);	/* COMPARE_EQ, COMPARE_NE or MEMCPY */
	op->len = 1 + (uint32_t)below(f, roll < 80 ? 16 : roll < 95 ? 256 : CPU_OP_DATA_LEN_MAX);
	first = pick_address(f, op->len, 1, false);
	/* Equal operands must be common, or EQ would nearly always fail. */
	roll = (unsigned)below(f, 3);
	second = roll == 0 && op->op != CPU_MEMCPY_OP ? first :
		 roll == 1 ? pick_twin_address(f, first, op->len) :
		 pick_address(f, op->len, 1, chance(f, 30));
	if (op->op == CPU_MEMCPY_OP && OVERLAP(first, second, op->len))
		second = pick_address(f, op->len, 1, true);	/* never in data */
	roll = op->op != CPU_MEMCPY_OP && chance(f, 50);	/* compares: swap sides */
	op->u.compare_op.a = roll ? second : first;
	op->u.compare_op.b = roll ? first : second;
}

static void generate_integer_op(struct fuzzer *f, struct cpu_op *op, unsigned min_log_len)
{
	uint64_t values[] = { below(f, 4), UINT64_MAX, 1ULL << below(f, 64), random64(f) };

	memset(op, 0, sizeof(*op));
	op->op = CPU_ADD_OP + (int32_t)below(f, CPU_RSHIFT_OP - CPU_ADD_OP + 1);
	op->len = 1u << (min_log_len + below(f, 4 - min_log_len));
	op->u.arithmetic_op.p = pick_address(f, op->len, op->len, false);
	if (IS_SHIFT(op))
		op->u.shift_op.bits = (uint32_t)below(f, 8 * op->len);
	else	/* the count of an add and a mask share these bytes */
		op->u.bitwise_op.mask = values[below(f, 4)];
}

static void corrupt_op(struct fuzzer *f, struct cpu_op *op)
{
	static const uint32_t bad_integer_lens[] = { 0, 3, 5, 7, 16, 4096 };
	static const uint32_t bad_data_lens[] = { 0, CPU_OP_DATA_LEN_MAX + 1, 65536, UINT32_MAX };
	uint64_t window;

	switch (below(f, 7)) {
	case 0:	/* an unknown type; never 0..8, which would misread the fields */
		do
			op->op = chance(f, 50) ? CPU_RSHIFT_OP + 1 : (int32_t)random64(f);
		while (op->op >= CPU_COMPARE_EQ_OP && op->op <= CPU_RSHIFT_OP);
		break;
	case 1:
		op->len = IS_INTEGER(op) ? bad_integer_lens[below(f, 6)] : bad_data_lens[below(f, 4)];
		break;
	case 2:	/* a shift count not below the width */
		generate_integer_op(f, op, 0);
		op->op = chance(f, 50) ? CPU_LSHIFT_OP : CPU_RSHIFT_OP;
		op->u.shift_op.bits = chance(f, 10) ? UINT32_MAX :
				      8 * op->len + (uint32_t)below(f, 8 * op->len + 1);
		break;
	case 3:	/* a misaligned integer operand */
		generate_integer_op(f, op, 1);
		op->u.arithmetic_op.p += 1 + below(f, op->len - 1);
		break;
	case 4:	/* memcpy ends within one window of 2*len bytes: they overlap */
		op->op = CPU_MEMCPY_OP;
		op->len = 1 + (uint32_t)below(f, 64);
		window = pick_address(f, 2 * op->len, 1, false);
		op->u.memcpy_op.dst = window + below(f, op->len);
		op->u.memcpy_op.src = window + below(f, op->len);
		break;
	case 5:	/* a read-only destination */
		if (op->op != CPU_MEMCPY_OP)
			generate_integer_op(f, op, 0);
		op->u.compare_op.a = pick_address(f, op->len, IS_INTEGER(op) ? op->len : 1, true);
		break;
	default:
		if (IS_INTEGER(op) || chance(f, 50))
			op->u.compare_op.a = pick_faulting_address(f, op->len);
		else
			op->u.compare_op.b = pick_faulting_address(f, op->len);
		break;
	}
}

static void add_mischief(struct fuzzer *f)
{
	struct vector *v = &f->vec;
	unsigned roll = (unsigned)below(f, 100);

	if (roll < 60) {
		corrupt_op(f, &v->ops[below(f, (uint64_t)v->nfilled)]);
	} else if (roll < 70) {
		v->flags = chance(f, 50) ? (int)(1u << below(f, 32)) : (int)(uint32_t)random64(f);
		v->flags += !v->flags;
	} else if (roll < 85) {
		v->cpu = pick_invalid_cpu(f);
	} else {
		v->ops_arg_faults = true;
	}
}

/* Valid ops end flush with a guard page: reading one op too many faults. */
static void place_ops(struct fuzzer *f)
{
	struct arena *a = &f->arena;
	struct vector *v = &f->vec;
	uint8_t *end = a->ops_page + a->page, *start;
	size_t bytes = (size_t)v->nfilled * sizeof(struct cpu_op);

	memset(a->ops_page, 0, a->page);
	if (v->ops_arg_faults && chance(f, 50)) {
		v->ops_arg = (void *)(uintptr_t)a->faulting[below(f, (uint64_t)a->nfaulting)];
		return;
	}
	if (v->ops_arg_faults)	/* readable at first; the last op reaches the guard */
		start = end - bytes + 1 + below(f, sizeof(struct cpu_op));
	else	/* the header asks no alignment of @ops: sometimes 4 bytes off */
		start = end - bytes - (chance(f, 10) ? 4 : 0);
	memcpy(start, v->ops, (size_t)(end - start) < bytes ? (size_t)(end - start) : bytes);
	v->ops_arg = start;
}

static void generate_vector(struct fuzzer *f)
{
	struct vector *v = &f->vec;
	unsigned roll = (unsigned)below(f, 100);

	memset(v, 0, sizeof(*v));
	/* Mostly short vectors: they get past their compares more often. */
	v->count = roll >= 10 ? 1 + (int)below(f, chance(f, 50) ? 4 : CPU_OP_VEC_LEN_MAX) :
		   roll < 3 ? 0 : roll < 6 ? CPU_OP_VEC_LEN_MAX + 1 :
		   roll < 8 ? -1 : (int)(uint32_t)random64(f);
	/* With a bad count still fill slots, for a kernel that reads them anyway. */
	v->nfilled = roll >= 10 ? v->count : 1 + (int)below(f, OPS_SLOTS);
	for (int i = 0; i < v->nfilled; i++)
		if (chance(f, 50))
			generate_compare_or_memcpy(f, &v->ops[i]);
		else
			generate_integer_op(f, &v->ops[i], 0);
	v->cpu = pick_cpu_in(f, &f->allowed_cpus);
	if (chance(f, 40)) {
		add_mischief(f);
		if (chance(f, 25))
			add_mischief(f);
	}
	place_ops(f);
}

/* ---- checking and reporting ---- */

static void print_op(const struct arena *a, int index, const struct cpu_op *op)
{
	static const char *const names[] = { "COMPARE_EQ", "COMPARE_NE", "MEMCPY", "ADD",
					     "OR", "AND", "XOR", "LSHIFT", "RSHIFT" };

	printf("  [%2d] %s (%d) len=%" PRIu32 " %#" PRIx64, index,
	       op->op >= 0 && op->op <= CPU_RSHIFT_OP ? names[op->op] : "UNKNOWN",
	       op->op, op->len, (uint64_t)op->u.compare_op.a);
	if (IS_SHIFT(op))
		printf(" bits=%" PRIu32, op->u.shift_op.bits);
	else
		printf(" %s%#" PRIx64, IS_INTEGER(op) ? "value=" : "", (uint64_t)op->u.compare_op.b);
	printf("%s%s\n", op_is_malformed(op) ? " [EINVAL-class]" : "",
	       op_has_known_shape(op) && op_faults(a, op) ? " [EFAULT-class]" : "");
}

static void report_mismatch(const struct fuzzer *f, const char *what, long ret, int err)
{
	const struct arena *a = &f->arena;
	const struct vector *v = &f->vec;
	size_t differing = 0;

	printf("MISMATCH: %s\niteration %lu, seed %" PRIu64 " (replay: --seed %" PRIu64
	       " --iterations %lu)\n", what, f->iteration, f->seed, f->seed, f->iteration + 1);
	printf("data %p, read-only %p, ops page %p, hole %p\n", (void *)a->data,
	       (void *)a->ro, (void *)a->ops_page, (void *)a->hole);
	printf("cpu_opv(ops=%p%s, count=%d, cpu=%d (%s), flags=%#x)\n", v->ops_arg,
	       v->ops_arg_faults ? " (faulting)" : "", v->count, v->cpu,
	       cpu_is_valid(f, v->cpu) ? "valid" : "invalid", (unsigned)v->flags);
	for (int i = 0; i < v->nfilled; i++)
		print_op(a, i, &v->ops[i]);
	printf("expected: return %ld, EINVAL %s, EFAULT %s (no write on error)\n",
	       f->expect_ret, f->expect_einval ? "allowed" : "no", f->expect_efault ? "allowed" : "no");
	printf("actual: return %ld, errno %d (%s)\n", ret, ret == -1 ? err : 0,
	       ret == -1 ? strerror(err) : "none");
	for (size_t i = 0; i < a->data_size; i++)
		if (a->data[i] != a->shadow[i] && differing++ < 8)
			printf("  data+%#zx: before %#04x expected %#04x actual %#04x\n",
			       i, a->before[i], a->shadow[i], a->data[i]);
	printf("%zu data bytes differ from the model\n", differing);
	if (!unmapped(ADDR(a->hole), a->page))
		printf("note: something mapped the hole page meanwhile\n");
	fflush(stdout);
	exit(1);
}

static void check_call(const struct fuzzer *f, long ret, int err)
{
	const struct arena *a = &f->arena;
	bool allowed = ret == -1 ? (err == EINVAL && f->expect_einval) ||
				   (err == EFAULT && f->expect_efault) :
				   ret == f->expect_ret;

	if (!allowed)
		report_mismatch(f, "wrong result", ret, err);
	if (!canaries_intact(a))
		report_mismatch(f, "canary bytes at the data region's edges changed", ret, err);
	/* After any error the shadow still equals the data as it was before. */
	if (memcmp(a->data, a->shadow, a->data_size))
		report_mismatch(f, "data region differs from the model", ret, err);
	if (memcmp(a->ro, a->ro_copy, a->ro_size))
		report_mismatch(f, "read-only region changed", ret, err);
}

static void run_one_vector(struct fuzzer *f)
{
	const struct vector *v = &f->vec;
	int err, retries = 0;
	long ret;
	enum outcome o;

	model_vector(f);
	for (;;) {
		errno = 0;
		ret = syscall(__NR_cpu_opv, v->ops_arg, (long)v->count, (long)v->cpu, (long)v->flags);
		err = errno;
		if (ret != -1 || err != EAGAIN)
			break;
		/* EAGAIN: the vector did not run, so retry it as it is. */
		f->hits[FAIL_EAGAIN]++;
		if (memcmp(f->arena.data, f->arena.before, f->arena.data_size))
			report_mismatch(f, "EAGAIN, yet the data changed", ret, err);
		if (++retries > MAX_EAGAIN)
			report_mismatch(f, "EAGAIN again and again", ret, err);
	}
	check_call(f, ret, err);
	o = ret == 0 ? OK : ret > 0 ? COMPARE_FAIL : err == EINVAL ? FAIL_EINVAL : FAIL_EFAULT;
	f->hits[o]++;
	f->either_errno += f->expect_einval && f->expect_efault;
	if (f->verbose)
		printf("iteration %lu: count=%d cpu=%d flags=%#x -> %s (%ld)\n", f->iteration,
		       v->count, v->cpu, (unsigned)v->flags, outcome_names[o], ret);
}

static int fuzz(struct fuzzer *f)
{
	bool toothless = false;

	for (f->iteration = 0; f->iteration < f->iterations; f->iteration++) {
		maybe_change_affinity(f);
		if (f->iteration % RESET_PERIOD == 0)
			refill_data(&f->arena);
		generate_vector(f);
		run_one_vector(f);
	}
	printf("iterations: %lu, seed %" PRIu64 "\n", f->iterations, f->seed);
	for (int o = 0; o < OUTCOMES; o++)
		printf("  %-13s %lu\n", outcome_names[o], f->hits[o]);
	printf("  (EINVAL or EFAULT both allowed: %lu)\n", f->either_errno);
	/* EAGAIN is rare by design; every other class must show up. */
	for (int o = OK; o < FAIL_EAGAIN; o++)
		if (f->hits[o] < MIN_HITS) {
			printf("outcome %s seen only %lu times\n", outcome_names[o], f->hits[o]);
			toothless = true;
		}
	printf("%s\n", toothless ? "FAIL: the run was toothless" : "PASS");
	return toothless;
}

/* ---- model self-test: hand-written vectors with known answers ---- */

enum verdict { RETURNS, EINVAL_ONLY, EFAULT_ONLY, EITHER_ERRNO };

static struct cpu_op op_of(int32_t type, uint32_t len, uint64_t first, uint64_t second)
{
	struct cpu_op op = { .op = type, .len = len };

	op.u.compare_op.a = first;	/* a, dst and p share this slot */
	if (type == CPU_LSHIFT_OP || type == CPU_RSHIFT_OP)
		op.u.shift_op.bits = (uint32_t)second;
	else
		op.u.compare_op.b = second;	/* b, src, count and mask share this one */
	return op;
}

static bool check(const char *name, bool good)
{
	printf("%s %s\n", good ? "ok  " : "FAIL", name);
	return good;
}

static bool verdict_is(struct fuzzer *f, const char *name, enum verdict want, long want_ret)
{
	model_vector(f);
	if (want == RETURNS)
		return check(name, f->expect_ret == want_ret);
	/* An error also means that nothing was written. */
	return check(name, f->expect_einval == (want != EFAULT_ONLY) &&
			   f->expect_efault == (want != EINVAL_ONLY) &&
			   !memcmp(f->arena.shadow, f->arena.before, f->arena.data_size));
}

static bool model_says(struct fuzzer *f, const char *name, enum verdict want, long want_ret,
		       int nops, ...)
{
	va_list ops;

	memset(&f->vec, 0, sizeof(f->vec));
	va_start(ops, nops);
	for (int i = 0; i < nops; i++)
		f->vec.ops[i] = va_arg(ops, struct cpu_op);
	va_end(ops);
	f->vec.nfilled = f->vec.count = nops;
	f->vec.cpu = pick_cpu_in(f, &f->allowed_cpus);
	return verdict_is(f, name, want, want_ret);
}

/* The last vector, with one argument changed. */
static bool varied_says(struct fuzzer *f, const char *name, int *field, int value)
{
	int saved = *field;
	bool good;

	*field = value;
	good = verdict_is(f, name, f->vec.ops_arg_faults ? EITHER_ERRNO : EINVAL_ONLY, 0);
	*field = saved;
	return good;
}

/* D(x): x bytes past the low canary; RO(x) has the same pattern phase. */
#define D(x)		(ADDR(f->arena.data) + CANARY_LEN + (x))
#define RO(x)		(ADDR(f->arena.ro) + CANARY_LEN + (x))
#define SHADOW(x)	(f->arena.shadow + CANARY_LEN + (x))

static int self_test_model(struct fuzzer *f)
{
	const uint16_t init16[] = { 0, 0x8001 }, want16[] = { 0xffff, 2 };
	const uint32_t init32 = 0xf0f0f0f0, want32 = 0xffff0f00;
	uint8_t init[16] = { 255, 1, 0x80 }, want[16] = { 0, 0, 1 };
	bool good = true;

	memcpy(init + 8, init16, 4);	/* native byte order, like the kernel's */
	memcpy(init + 12, &init32, 4);
	memcpy(want + 8, want16, 4);
	memcpy(want + 12, &want32, 4);
	refill_data(&f->arena);
	memcpy(f->arena.data + CANARY_LEN, init, 16);
	memcpy(f->arena.data + CANARY_LEN + 64, "AAAAAAAABBBBBBBBCCCCCCCC", 24);
	good &= model_says(f, "integer ops in order", RETURNS, 0, 8,
			   op_of(CPU_ADD_OP, 1, D(0), 1), op_of(CPU_ADD_OP, 1, D(1), 0x1ff),
			   op_of(CPU_RSHIFT_OP, 1, D(2), 7), op_of(CPU_ADD_OP, 2, D(8), UINT64_MAX),
			   op_of(CPU_LSHIFT_OP, 2, D(10), 1),
			   op_of(CPU_OR_OP, 4, D(12), 0xffffffff0000000fULL),
			   op_of(CPU_AND_OP, 4, D(12), 0x10000ffffULL),
			   op_of(CPU_XOR_OP, 4, D(12), UINT64_MAX));
	good &= check("u8 255+1=0, 1+0x1ff=0, 0x80>>7=1; u16 0-1=0xffff, 0x8001<<1=2;"
		      " u32 or/and/xor truncate their masks", !memcmp(SHADOW(0), want, 16));
	good &= model_says(f, "second compare fails: returns 2", RETURNS, 2, 3,
			   op_of(CPU_COMPARE_EQ_OP, 8, D(64), D(64)),
			   op_of(CPU_COMPARE_EQ_OP, 8, D(64), D(72)),
			   op_of(CPU_MEMCPY_OP, 8, D(80), D(64)));
	good &= check("the memcpy after it did not run", !memcmp(SHADOW(80), "CCCCCCCC", 8));
	good &= model_says(f, "third compare fails: returns 3", RETURNS, 3, 3,
			   op_of(CPU_ADD_OP, 1, D(0), 1), op_of(CPU_COMPARE_NE_OP, 8, D(64), D(72)),
			   op_of(CPU_COMPARE_NE_OP, 8, D(72), D(72)));
	good &= check("the add before it ran", !memcmp(SHADOW(0), want, 1));
	good &= model_says(f, "data equals read-only at the same phase", RETURNS, 0, 1,
			   op_of(CPU_COMPARE_EQ_OP, 16, D(128), RO(128)));
	good &= model_says(f, "memcpy of 4096 bytes across pages", RETURNS, 0, 1,
			   op_of(CPU_MEMCPY_OP, 4096, D(200), RO(100)));
	good &= check("every byte copied",
		       !memcmp(SHADOW(200), f->arena.ro_copy + CANARY_LEN + 100, 4096));
	good &= model_says(f, "misaligned u32 add", EINVAL_ONLY, 0, 1, op_of(CPU_ADD_OP, 4, D(1), 1));
	good &= model_says(f, "shift by the full width", EINVAL_ONLY, 0, 1,
			   op_of(CPU_LSHIFT_OP, 4, D(0), 32));
	good &= model_says(f, "overlapping memcpy", EINVAL_ONLY, 0, 1,
			   op_of(CPU_MEMCPY_OP, 8, D(4), D(0)));
	good &= model_says(f, "add of length 3", EINVAL_ONLY, 0, 1, op_of(CPU_ADD_OP, 3, D(0), 1));
	good &= model_says(f, "compare of 0 bytes", EINVAL_ONLY, 0, 1,
			   op_of(CPU_COMPARE_EQ_OP, 0, D(0), D(0)));
	good &= model_says(f, "unknown op type", EINVAL_ONLY, 0, 1, op_of(9, 1, D(0), 0));
	good &= model_says(f, "bad second op: the first writes nothing", EINVAL_ONLY, 0, 2,
			   op_of(CPU_ADD_OP, 1, D(0), 1), op_of(CPU_LSHIFT_OP, 1, D(0), 8));
	good &= model_says(f, "add into the read-only region", EFAULT_ONLY, 0, 1,
			   op_of(CPU_ADD_OP, 4, RO(0), 1));
	good &= model_says(f, "memcpy straddling into a guard page", EFAULT_ONLY, 0, 1,
			   op_of(CPU_MEMCPY_OP, 8, ADDR(f->arena.data + f->arena.data_size) - 4, D(0)));
	good &= model_says(f, "compare with NULL", EFAULT_ONLY, 0, 1,
			   op_of(CPU_COMPARE_EQ_OP, 1, 0, D(0)));
	good &= model_says(f, "a fault after a failing compare is still EFAULT", EFAULT_ONLY, 0, 2,
			   op_of(CPU_COMPARE_NE_OP, 1, D(0), D(0)),
			   op_of(CPU_ADD_OP, 1, ADDR(f->arena.hole), 1));
	good &= model_says(f, "misaligned kernel address: either errno", EITHER_ERRNO, 0, 1,
			   op_of(CPU_ADD_OP, 4, KERNEL_ADDRESS + 1, 1));
	good &= model_says(f, "one valid add", RETURNS, 0, 1, op_of(CPU_ADD_OP, 1, D(0), 1));
	good &= varied_says(f, "count 0", &f->vec.count, 0);
	good &= varied_says(f, "count 17", &f->vec.count, CPU_OP_VEC_LEN_MAX + 1);
	good &= varied_says(f, "flags 1", &f->vec.flags, 1);
	good &= varied_says(f, "cpu -1", &f->vec.cpu, -1);
	good &= varied_says(f, "cpu past the last allowed one", &f->vec.cpu, f->highest_cpu + 1);
	f->vec.ops_arg_faults = true;
	good &= verdict_is(f, "unreadable ops array", EFAULT_ONLY, 0);
	good &= varied_says(f, "unreadable ops and flags 2: either errno", &f->vec.flags, 2);
	printf("model self-test %s\n", good ? "PASS" : "FAIL");
	return !good;
}

/* ---- main ---- */

static void require_cpu_opv(void)
{
	FILE *file = fopen("/proc/sys/kernel/cpu_opv_syscall", "r");
	long number = -1;

	if (!file) {
		printf("UNSUPPORTED: no /proc/sys/kernel/cpu_opv_syscall (%s)\n", strerror(errno));
		exit(77);
	}
	if (fscanf(file, "%ld", &number) != 1 || number != __NR_cpu_opv) {
		printf("UNSUPPORTED: cpu_opv_syscall holds %ld, not %d: another syscall's number\n",
		       number, __NR_cpu_opv);
		exit(77);
	}
	fclose(file);
}

static uint64_t parse_number(const char *text)
{
	char *end = NULL;
	uint64_t value = text ? strtoull(text, &end, 0) : 0;

	if (!text || !*text || *end) {
		fprintf(stderr, "usage: cpu-opv-fuzz [--seed N] [--iterations N] [--verbose]"
			" | --self-test-model\n");
		exit(2);
	}
	return value;
}

int main(int argc, char **argv)
{
	static struct fuzzer fuzzer = { .seed = 12345, .iterations = 100000 };
	struct fuzzer *f = &fuzzer;
	bool self_test = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed"))
			f->seed = parse_number(argv[++i]);
		else if (!strcmp(argv[i], "--iterations"))
			f->iterations = (unsigned long)parse_number(argv[++i]);
		else if (!strcmp(argv[i], "--verbose"))
			f->verbose = true;
		else if (!strcmp(argv[i], "--self-test-model"))
			self_test = true;
		else
			parse_number(NULL);
	}
	setvbuf(stdout, stdout_buffer, _IOLBF, sizeof(stdout_buffer));
	/* Before anything else: syscall 500 may be something else on this kernel. */
	if (!self_test)
		require_cpu_opv();
	/* An odd multiplier keeps seeds apart; xorshift must not start at 0. */
	f->rng = f->seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
	f->rng += !f->rng;
	if (sched_getaffinity(0, sizeof(f->original_cpus), &f->original_cpus))
		die("sched_getaffinity");
	f->allowed_cpus = f->original_cpus;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &f->original_cpus))
			f->highest_cpu = cpu;
	setup_arena(&f->arena);
	return self_test ? self_test_model(f) : fuzz(f);
}
