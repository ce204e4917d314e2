# Hand-written rseq critical sections for the self-test of
# tests/lib/check-rseq-cs.py (sections.exp): proof that the checker
# fails what it should.  Descriptor 0x0 is right and must draw no
# complaint; each of the others is wrong in the ways noted, and
# sections.exp expects every one of them to be named.
#
#   0x20  RSEQ_SIG misspelt before abort_ip; abort_ip inside the
#         section (and so outside __rseq_failure)
#   0x40  version 1; no arming store before start_ip (a nop); ends with
#         a register add, not a commit store; missing from
#         __rseq_cs_ptr_array; a branch from outside enters it; its
#         exit point lies inside it
#   __rseq_cs_ptr_array also holds a pointer into the middle of 0x0.

	.text
	.globl	bad_cs_fixture
	.type	bad_cs_fixture, @function
bad_cs_fixture:
	leaq	.Lgood_cs(%rip), %rcx
	movq	%rcx, 8(%rdi)
.Lgood_start:
	movl	4(%rdi), %ecx
	cmpl	%ecx, %esi
	jnz	.Lout
	movq	%rdx, (%r8)
.Lgood_end:

	leaq	.Lbad1_cs(%rip), %rcx
	movq	%rcx, 8(%rdi)
.Lbad1_start:
	movl	4(%rdi), %ecx
	.byte	0x0f, 0xb9, 0x3d
	.long	0x53053054
.Lbad1_abort:
	movq	%rdx, (%r8)
.Lbad1_end:

	nop
.Lbad2_start:
	movl	4(%rdi), %ecx
.Lbad2_mid:
	addq	%rcx, %rdx
.Lbad2_end:
	jmp	.Lbad2_mid
.Lout:
	ret
	.size	bad_cs_fixture, . - bad_cs_fixture

	.section __rseq_cs, "aw"
	.balign	32
.Lgood_cs:
	.long	0, 0
	.quad	.Lgood_start, .Lgood_end - .Lgood_start, .Lgood_abort
.Lbad1_cs:
	.long	0, 0
	.quad	.Lbad1_start, .Lbad1_end - .Lbad1_start, .Lbad1_abort
.Lbad2_cs:
	.long	1, 0
	.quad	.Lbad2_start, .Lbad2_end - .Lbad2_start, .Lgood_abort

	.section __rseq_cs_ptr_array, "aw"
	.balign	8
	.quad	.Lgood_cs, .Lbad1_cs, .Lgood_cs + 8

	.section __rseq_exit_point_array, "aw"
	.balign	8
	.quad	.Lgood_start, .Lout
	.quad	.Lbad2_start, .Lbad2_mid

	.section __rseq_failure, "ax"
	.balign	4
	.byte	0x0f, 0xb9, 0x3d
	.long	0x53053053
.Lgood_abort:
	jmp	.Lout

	.section .note.GNU-stack, "", @progbits
