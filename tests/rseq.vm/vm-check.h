/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the static cpu_opv VM tests share: failure counting, the
 * UNSUPPORTED exit (77, reason on stderr) and the check that the running
 * kernel has cpu_opv.  Include after the libc and uapi headers.
 */
#ifndef VM_CHECK_H
#define VM_CHECK_H

#ifndef __NR_cpu_opv
#define __NR_cpu_opv 500
#endif

static int failures;

static void unsupported(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
static void unsupported(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(77);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

/* The kernel says which number cpu_opv has, if it has it. */
static void require_cpu_opv(void)
{
	char buf[32] = "";
	FILE *f = fopen("/proc/sys/kernel/cpu_opv_syscall", "r");

	if (!f || !fgets(buf, sizeof(buf), f) || atoi(buf) != __NR_cpu_opv)
		unsupported("this kernel has no cpu_opv (no /proc/sys/kernel/cpu_opv_syscall)");
	fclose(f);
}

#endif /* VM_CHECK_H */
