/* The shapes of a StarryOS kernel that a profiler meets (kernel.c's `starry N`), for
 * x86_64, in assembly without call-frame information, as StarryOS writes them:
 * - trap_vector_base: the entry of the PIC's interrupts (IDT vectors 32-47). It calls
 *   handle_irq and comes back to a return label (a return address without CFI).
 * - task_switch: a context switch; a new task's stack returns into its entry function with
 *   that entry as its own return address, the x86_64 form of riscv64's ra = entry.
 * - asm_spin: an assembly loop of several blocks (one function, many sampled offsets).
 * - victim_spin: spins with rbp pointing at data that looks like a frame record, as a
 *   kernel without frame pointers leaves rbp holding any pointer. */

    .section .text
    .balign 16
    .globl trap_vector_base
trap_vector_base:
    /* The CPU pushed ss, rsp, rflags, cs, rip on a 16-byte aligned stack: nine pushes
     * (the registers a C handler may clobber) keep it aligned for the call. */
    push    %rax
    push    %rcx
    push    %rdx
    push    %rsi
    push    %rdi
    push    %r8
    push    %r9
    push    %r10
    push    %r11
    call    handle_irq
    /* handle_irq returns here: a return address with no CFI, and rbp is whatever the
     * interrupted code left in it. */
    pop     %r11
    pop     %r10
    pop     %r9
    pop     %r8
    pop     %rdi
    pop     %rsi
    pop     %rdx
    pop     %rcx
    pop     %rax
    iretq
    .size   trap_vector_base, . - trap_vector_base

/* void task_switch(uint64_t *from, const uint64_t *to): pushes the callee-saved registers,
 * saves rsp into from[0], loads rsp from to[0], pops them and returns on the new stack. */
    .balign 16
    .globl task_switch
task_switch:
    push    %rbp
    push    %rbx
    push    %r12
    push    %r13
    push    %r14
    push    %r15
    mov     %rsp, (%rdi)
    mov     (%rsi), %rsp
    pop     %r15
    pop     %r14
    pop     %r13
    pop     %r12
    pop     %rbx
    pop     %rbp
    ret
    .size   task_switch, . - task_switch

/* uint64_t asm_spin(uint64_t n, uint64_t x): n rounds of a loop of four blocks. */
    .balign 16
    .globl asm_spin
asm_spin:
    xor     %eax, %eax
1:  inc     %rax
    test    $1, %al
    jz      2f
    xor     %rax, %rsi
    mov     %rsi, %rdx
    shl     $13, %rdx
    jmp     3f
2:  add     %rax, %rsi
    mov     %rsi, %rdx
    shr     $7, %rdx
3:  xor     %rdx, %rsi
    cmp     %rdi, %rax
    jb      1b
    mov     %rsi, %rax
    ret
    .size   asm_spin, . - asm_spin

/* void victim_spin(uint64_t until_ticks, uint64_t *fake_fp): spins until the TSC reaches
 * `until_ticks` with rbp = fake_fp. */
    .balign 16
    .globl victim_spin
victim_spin:
    push    %rbp
    mov     %rsi, %rbp
1:  rdtsc
    shl     $32, %rdx
    or      %rdx, %rax
    cmp     %rdi, %rax
    jb      1b
    pop     %rbp
    ret
    .size   victim_spin, . - victim_spin

    .section .note.GNU-stack, "", @progbits
