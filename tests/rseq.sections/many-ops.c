/* One function with many inlined per-CPU operations and string
   literals, built as position-independent code: GCC places ARM
   literal pools from its estimate of the code size, and counts an asm
   goto (each critical section) as one instruction.  Without the size
   hint of the ARM primitives (__RSEQ_ASM_SIZE_HINT), this function
   loads a literal beyond its reach and the assembler fails with
   "offset out of range".  sections.exp builds it for every ABI with
   -fpie -pie and checks its sections; main runs nothing.  */
/* rseq-test: host-only: not run; sections.exp builds and checks it for
   the cross ABIs too */

#include <stdint.h>
#include <stdio.h>
#include <sys/rseq-percpu.h>

intptr_t counters[64];
static char dst[64], src[64];

#define OPS(n)								\
  r += rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &counters[(n) % 64], \
			 1, cpu);					\
  if (r == (n))								\
    puts ("add " #n);							\
  r += rseq_percpu_cmpeqv_trymemcpy_storev (RSEQ_PERCPU_INDEX_CPU_ID,	\
					    &counters[(n) % 64], 0, dst, \
					    src, sizeof dst, 1, cpu);	\
  if (r == (n) + 1)							\
    puts ("copy " #n);
#define OPS8(n) OPS (n) OPS (n + 1) OPS (n + 2) OPS (n + 3)		\
  OPS (n + 4) OPS (n + 5) OPS (n + 6) OPS (n + 7)

int
many_ops (int cpu)
{
  int r = 0;
  OPS8 (0) OPS8 (8) OPS8 (16) OPS8 (24) OPS8 (32) OPS8 (40)
  return r;
}

int
main (int argc, char **argv)
{
  (void) argv;
  /* Never true: the operations are built, not run.  */
  if (argc < 0)
    return many_ops (argc);
  return 0;
}
