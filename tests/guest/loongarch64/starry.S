/* The shapes of a StarryOS kernel that a profiler meets (kernel.c's `starry N`), for
 * loongarch64, in assembly without call-frame information, as StarryOS writes them:
 * - trap_vector_base: the exception entry (EENTRY, and TLBRENTRY at its physical address).
 *   An interrupt calls handle_irq and comes back to a return label (a return address
 *   without CFI); an exception ends in trap_panic.
 * - task_switch: a context switch; a new task starts with ra = its entry function.
 * - asm_spin: an assembly loop of several blocks (one function, many sampled offsets).
 * - victim_spin: spins with fp pointing at data that looks like a frame record, as a kernel
 *   without frame pointers leaves fp holding any pointer. */
#define CSR_ESTAT     0x5
#define CSR_ERA       0x6
#define CSR_BADV      0x7

/* The trap frame: ra, a0-a7, t0-t8 (what a C handler may clobber), 16-byte aligned. */
#define TRAP_FRAME 144

    .section .text
    .balign 4096                      /* EENTRY and TLBRENTRY are page aligned */
    .globl trap_vector_base
trap_vector_base:
    addi.d  $sp, $sp, -TRAP_FRAME
    st.d    $ra, $sp, 0
    st.d    $a0, $sp, 8
    st.d    $a1, $sp, 16
    st.d    $a2, $sp, 24
    st.d    $a3, $sp, 32
    st.d    $a4, $sp, 40
    st.d    $a5, $sp, 48
    st.d    $a6, $sp, 56
    st.d    $a7, $sp, 64
    st.d    $t0, $sp, 72
    st.d    $t1, $sp, 80
    st.d    $t2, $sp, 88
    st.d    $t3, $sp, 96
    st.d    $t4, $sp, 104
    st.d    $t5, $sp, 112
    st.d    $t6, $sp, 120
    st.d    $t7, $sp, 128
    st.d    $t8, $sp, 136
    csrrd   $t0, CSR_ESTAT
    srli.d  $t1, $t0, 16
    andi    $t1, $t1, 0x3f            /* ESTAT.Ecode: 0 for an interrupt */
    bnez    $t1, .Lexception
    bl      handle_irq
    /* handle_irq returns here: a return address with no CFI, and fp is whatever the
     * interrupted code left in it. */
    ld.d    $ra, $sp, 0
    ld.d    $a0, $sp, 8
    ld.d    $a1, $sp, 16
    ld.d    $a2, $sp, 24
    ld.d    $a3, $sp, 32
    ld.d    $a4, $sp, 40
    ld.d    $a5, $sp, 48
    ld.d    $a6, $sp, 56
    ld.d    $a7, $sp, 64
    ld.d    $t0, $sp, 72
    ld.d    $t1, $sp, 80
    ld.d    $t2, $sp, 88
    ld.d    $t3, $sp, 96
    ld.d    $t4, $sp, 104
    ld.d    $t5, $sp, 112
    ld.d    $t6, $sp, 120
    ld.d    $t7, $sp, 128
    ld.d    $t8, $sp, 136
    addi.d  $sp, $sp, TRAP_FRAME
    ertn
.Lexception:
    csrrd   $a0, CSR_ESTAT
    csrrd   $a1, CSR_ERA
    csrrd   $a2, CSR_BADV
    la.pcrel $sp, boot_stack_top      /* a fresh stack: the fault may be the stack's */
    bl      trap_panic
1:  idle    0
    b       1b
    .size   trap_vector_base, . - trap_vector_base

/* void task_switch(uint64_t *from, const uint64_t *to): saves ra, sp, fp, s0-s8 into
 * `from`, loads them from `to` and jumps to the loaded ra. A new task's context holds
 * ra = its entry function and fp = 0. */
    .balign 4
    .globl task_switch
task_switch:
    st.d    $ra, $a0, 0
    st.d    $sp, $a0, 8
    st.d    $fp, $a0, 16
    st.d    $s0, $a0, 24
    st.d    $s1, $a0, 32
    st.d    $s2, $a0, 40
    st.d    $s3, $a0, 48
    st.d    $s4, $a0, 56
    st.d    $s5, $a0, 64
    st.d    $s6, $a0, 72
    st.d    $s7, $a0, 80
    st.d    $s8, $a0, 88
    ld.d    $ra, $a1, 0
    ld.d    $sp, $a1, 8
    ld.d    $fp, $a1, 16
    ld.d    $s0, $a1, 24
    ld.d    $s1, $a1, 32
    ld.d    $s2, $a1, 40
    ld.d    $s3, $a1, 48
    ld.d    $s4, $a1, 56
    ld.d    $s5, $a1, 64
    ld.d    $s6, $a1, 72
    ld.d    $s7, $a1, 80
    ld.d    $s8, $a1, 88
    jirl    $zero, $ra, 0
    .size   task_switch, . - task_switch

/* uint64_t asm_spin(uint64_t n, uint64_t x): n rounds of a loop of four blocks. */
    .balign 4
    .globl asm_spin
asm_spin:
    move    $t0, $zero
1:  addi.d  $t0, $t0, 1
    andi    $t1, $t0, 1
    beqz    $t1, 2f
    xor     $a1, $a1, $t0
    slli.d  $t2, $a1, 13
    b       3f
2:  add.d   $a1, $a1, $t0
    srli.d  $t2, $a1, 7
3:  xor     $a1, $a1, $t2
    bltu    $t0, $a0, 1b
    move    $a0, $a1
    jirl    $zero, $ra, 0
    .size   asm_spin, . - asm_spin

/* void victim_spin(uint64_t until_ticks, uint64_t *fake_fp): spins until the stable
 * counter reaches `until_ticks` with fp = fake_fp. */
    .balign 4
    .globl victim_spin
victim_spin:
    addi.d  $sp, $sp, -16
    st.d    $fp, $sp, 0
    move    $fp, $a1
1:  rdtime.d $t0, $zero
    bltu    $t0, $a0, 1b
    ld.d    $fp, $sp, 0
    addi.d  $sp, $sp, 16
    jirl    $zero, $ra, 0
    .size   victim_spin, . - victim_spin
