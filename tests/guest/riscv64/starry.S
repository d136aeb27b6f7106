/* The shapes of StarryOS's riscv64 kernel that a profiler meets (kernel.c's `starry N`),
 * in assembly without call-frame information, as StarryOS writes them:
 * - trap_vector_base: the trap entry. An interrupt calls handle_irq and comes back to a
 *   return label (a return address without CFI); an exception ends in trap_panic. Its
 *   blocks are sampled at several offsets.
 * - task_switch: a context switch; a new task starts with ra = its entry function.
 * - asm_spin: an assembly loop of several blocks (one function, many sampled offsets).
 * - victim_spin: spins with s0 pointing at data that looks like a frame record, as a kernel
 *   without frame pointers leaves s0 holding any pointer. */

/* The trap frame: ra, t0-t6, a0-a7 (what a C handler may clobber). */
#define TRAP_FRAME 144

    .section .text
    .balign 4
    .globl trap_vector_base
trap_vector_base:
    addi    sp, sp, -TRAP_FRAME
    sd      ra, 0(sp)
    sd      t0, 8(sp)
    sd      t1, 16(sp)
    sd      t2, 24(sp)
    sd      t3, 32(sp)
    sd      t4, 40(sp)
    sd      t5, 48(sp)
    sd      t6, 56(sp)
    sd      a0, 64(sp)
    sd      a1, 72(sp)
    sd      a2, 80(sp)
    sd      a3, 88(sp)
    sd      a4, 96(sp)
    sd      a5, 104(sp)
    sd      a6, 112(sp)
    sd      a7, 120(sp)
    csrr    a0, scause
    bgez    a0, .Lexception          /* scause bit 63 clear: an exception */
    call    handle_irq
    /* handle_irq returns here: a return address with no CFI, and s0 is whatever the
     * interrupted code left in it. */
    ld      ra, 0(sp)
    ld      t0, 8(sp)
    ld      t1, 16(sp)
    ld      t2, 24(sp)
    ld      t3, 32(sp)
    ld      t4, 40(sp)
    ld      t5, 48(sp)
    ld      t6, 56(sp)
    ld      a0, 64(sp)
    ld      a1, 72(sp)
    ld      a2, 80(sp)
    ld      a3, 88(sp)
    ld      a4, 96(sp)
    ld      a5, 104(sp)
    ld      a6, 112(sp)
    ld      a7, 120(sp)
    addi    sp, sp, TRAP_FRAME
    sret
.Lexception:
    csrr    a1, sepc
    csrr    a2, stval
    call    trap_panic
1:  wfi
    j       1b
    .size   trap_vector_base, . - trap_vector_base

/* void task_switch(uint64_t *from, const uint64_t *to): saves ra, sp, s0-s11 into `from`,
 * loads them from `to` and returns to the loaded ra. A new task's context holds
 * ra = its entry function and s0 = 0, as StarryOS's TaskContext::init leaves it. */
    .balign 4
    .globl task_switch
task_switch:
    sd      ra, 0(a0)
    sd      sp, 8(a0)
    sd      s0, 16(a0)
    sd      s1, 24(a0)
    sd      s2, 32(a0)
    sd      s3, 40(a0)
    sd      s4, 48(a0)
    sd      s5, 56(a0)
    sd      s6, 64(a0)
    sd      s7, 72(a0)
    sd      s8, 80(a0)
    sd      s9, 88(a0)
    sd      s10, 96(a0)
    sd      s11, 104(a0)
    ld      ra, 0(a1)
    ld      sp, 8(a1)
    ld      s0, 16(a1)
    ld      s1, 24(a1)
    ld      s2, 32(a1)
    ld      s3, 40(a1)
    ld      s4, 48(a1)
    ld      s5, 56(a1)
    ld      s6, 64(a1)
    ld      s7, 72(a1)
    ld      s8, 80(a1)
    ld      s9, 88(a1)
    ld      s10, 96(a1)
    ld      s11, 104(a1)
    ret
    .size   task_switch, . - task_switch

/* uint64_t asm_spin(uint64_t n, uint64_t x): n rounds of a loop of four blocks. */
    .balign 4
    .globl asm_spin
asm_spin:
    li      t0, 0
1:  addi    t0, t0, 1
    andi    t1, t0, 1
    beqz    t1, 2f
    xor     a1, a1, t0
    slli    t2, a1, 13
    j       3f
2:  add     a1, a1, t0
    srli    t2, a1, 7
3:  xor     a1, a1, t2
    bltu    t0, a0, 1b
    mv      a0, a1
    ret
    .size   asm_spin, . - asm_spin

/* void victim_spin(uint64_t until_ticks, uint64_t *fake_fp): spins until rdtime reaches
 * `until_ticks` with s0 = fake_fp. */
    .balign 4
    .globl victim_spin
victim_spin:
    addi    sp, sp, -16
    sd      s0, 0(sp)
    mv      s0, a1
1:  rdtime  t0
    bltu    t0, a0, 1b
    ld      s0, 0(sp)
    addi    sp, sp, 16
    ret
    .size   victim_spin, . - victim_spin
