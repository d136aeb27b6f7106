/* riscv64 side of the test kernel (included by kernel.c): the NS16550 on QEMU virt
 * through the linear map, `rdtime`, and SBI shutdown. Boot is in start.S. */
#define ARCH_NAME   "riscv64"
#define PHYS_OFFSET 0xffffffc000000000UL
#define UART_BASE   (PHYS_OFFSET + 0x10000000UL)   /* NS16550 on QEMU virt */
/* What trap_panic's three values are (start.S passes scause, sepc, stval). */
#define TRAP_CAUSE  "scause"
#define TRAP_PC     "sepc"
#define TRAP_VALUE  "stval"

#include "../ns16550.h"

static void arch_init(void) { }
static uint64_t arch_ticks(void) { uint64_t t; __asm__ volatile("rdtime %0" : "=r"(t)); return t; }
static uint64_t arch_ticks_to_ms(uint64_t ticks) { return ticks / 10000; }   /* virt timebase 10 MHz */

/* ---- SBI ---- */
static long sbi_call(long eid, long fid, long a0, long a1, long a2) {
    register long x10 __asm__("a0") = a0;
    register long x11 __asm__("a1") = a1;
    register long x12 __asm__("a2") = a2;
    register long x16 __asm__("a6") = fid;
    register long x17 __asm__("a7") = eid;
    __asm__ volatile("ecall" : "+r"(x10), "+r"(x11) : "r"(x12), "r"(x16), "r"(x17) : "memory");
    return x10;
}
static void arch_poweroff(void) {
    sbi_call(0x53525354, 0, 0, 0, 0);   /* SRST: shutdown */
    sbi_call(0x08, 0, 0, 0, 0);          /* legacy shutdown */
    for (;;) __asm__ volatile("wfi");
}

/* Start the other harts (QEMU -smp) with SBI HSM hart_start at secondary_entry's physical
 * address, each given its logical CPU number. OpenSBI refuses hartids that do not exist,
 * so the count is exact. boot_arg0 is the boot hart's id. */
static int arch_start_cpus(uint64_t boot_arg0) {
    extern char secondary_entry[];
    uint64_t entry_pa = (uint64_t)secondary_entry - PHYS_OFFSET;
    int started = 0;
    for (uint64_t hart = 0; hart < MAX_CPUS && started < MAX_CPUS - 1; hart++) {
        if (hart == boot_arg0) continue;
        if (sbi_call(0x48534D, 0, (long)hart, (long)entry_pa, started + 1) == 0) started++;
    }
    return started;
}
static void cpu_relax(void) { __asm__ volatile("nop"); }

/* ---- user mode (`user N`) ----
 * Gigapage 1 of the boot table maps VA 0x40000000 onto PA 0x80000000 for U-mode: user.bin
 * (linked at USER_BASE) goes to PA USER_BASE + 0x40000000, its stack ends at USER_STACK_TOP. */
#define HAVE_USER_MODE 1
#define USER_BASE      0x40400000UL
#define USER_STACK_TOP 0x40600000UL
long enter_user(uint64_t entry, uint64_t user_sp, long arg);   /* start.S */
static long arch_run_user(long arg) {
    extern char user_image[], user_image_end[];
    volatile uint8_t *dst = (volatile uint8_t *)(PHYS_OFFSET + USER_BASE + 0x40000000UL);
    for (const char *p = user_image; p < user_image_end; p++) *dst++ = (uint8_t)*p;
    __asm__ volatile("fence.i" ::: "memory");
    return enter_user(USER_BASE, USER_STACK_TOP, arg);
}

/* ---- StarryOS shapes (kernel.c's `starry`, riscv64/starry.S) ----
 * The task context task_switch saves and loads: ra, sp, s0-s11. The timer: the SBI TIME
 * extension (OpenSBI programs the comparator), the S-mode timer interrupt (sie.STIE) into
 * trap_vector_base, re-armed by each interrupt. */
#define HAVE_STARRY_SHAPES 1
#define TASK_CONTEXT_WORDS 14
static void arch_task_init(uint64_t *context, uint8_t *stack_top, void (*entry)(void)) {
    context[0] = (uint64_t)entry;      /* ra: task_switch's `ret` enters it, ra = entry */
    context[1] = (uint64_t)stack_top;  /* sp; s0 stays 0, the end of a frame chain */
}
static uint64_t arch_ms_to_ticks(uint64_t ms) { return ms * 10000; }
static uint64_t timer_period_ticks;
static void sbi_set_timer(uint64_t when) { sbi_call(0x54494D45, 0, (long)when, 0, 0); }
static void arch_timer_start(uint64_t period_us) {
    timer_period_ticks = period_us * 10;
    sbi_set_timer(arch_ticks() + timer_period_ticks);
    __asm__ volatile("csrs sie, %0" : : "r"(1UL << 5));       /* STIE */
    __asm__ volatile("csrs sstatus, %0" : : "r"(1UL << 1));   /* SIE */
}
static void arch_timer_ack(void) { sbi_set_timer(arch_ticks() + timer_period_ticks); }
static void arch_timer_stop(void) {
    __asm__ volatile("csrc sstatus, %0" : : "r"(1UL << 1));
    __asm__ volatile("csrc sie, %0" : : "r"(1UL << 5));
    sbi_set_timer(~0UL);
}
static void arch_wait_for_interrupt(void) { __asm__ volatile("wfi"); }
