/* loongarch64 side of the test kernel (included by kernel.c): the NS16550 on QEMU virt
 * through the uncached window, the stable counter, and poweroff through the ACPI GED.
 * Boot is in start.S. */
#define ARCH_NAME   "loongarch64"
#define DMW_UNCACHED 0x8000000000000000UL
#define UART_BASE   (DMW_UNCACHED + 0x1fe001e0UL)   /* NS16550 on QEMU virt */
/* The GED's sleep control register: SLP_TYP 5 (S5) | SLP_EN powers QEMU off. */
#define GED_SLEEP_CTL (DMW_UNCACHED + 0x100e001cUL)
/* What trap_panic's three values are (start.S passes ESTAT, ERA, BADV). */
#define TRAP_CAUSE  "estat"
#define TRAP_PC     "era"
#define TRAP_VALUE  "badv"

#include "../ns16550.h"

static uint32_t cpucfg(uint32_t word) {
    uint32_t v;
    __asm__ volatile("cpucfg %0, %1" : "=r"(v) : "r"(word));
    return v;
}

/* The stable counter's frequency: CPUCFG word 4 (the base clock) times word 5's multiplier
 * over its divider (QEMU la464: 100 MHz). */
static uint64_t counter_hz;
static void arch_init(void) {
    uint32_t scale = cpucfg(5);
    uint64_t mul = scale & 0xffff, div = scale >> 16;
    counter_hz = (uint64_t)cpucfg(4) * (mul ? mul : 1) / (div ? div : 1);
    if (!counter_hz) counter_hz = 100000000;
}
static uint64_t arch_ticks(void) {
    uint64_t t, id;
    __asm__ volatile("rdtime.d %0, %1" : "=r"(t), "=r"(id));
    return t;
}
static uint64_t arch_ticks_to_ms(uint64_t ticks) { return ticks / (counter_hz / 1000); }

static void arch_poweroff(void) {
    *(volatile uint8_t *)GED_SLEEP_CTL = (5 << 2) | (1 << 5);
    for (;;) __asm__ volatile("idle 0");
}

/* ---- SMP ---- */
static void iocsr_write64(uint64_t value, uint32_t reg) { __asm__ volatile("iocsrwr.d %0, %1" : : "r"(value), "r"(reg) : "memory"); }
static void iocsr_write32(uint32_t value, uint32_t reg) { __asm__ volatile("iocsrwr.w %0, %1" : : "r"(value), "r"(reg) : "memory"); }
#define IOCSR_IPI_SEND   0x1040
#define IOCSR_MBUF_SEND  0x1048
#define IOCSR_BLOCKING   (1UL << 31)

/* Write `value` into mailbox 0 of `cpu` (two 32-bit halves, high first, as Linux does). */
static void mail_send(uint32_t cpu, uint64_t value) {
    uint64_t to = IOCSR_BLOCKING | ((uint64_t)cpu << 16);
    iocsr_write64(to | (1 << 2) | (value & 0xffffffff00000000UL), IOCSR_MBUF_SEND);
    iocsr_write64(to | (0 << 2) | (value << 32), IOCSR_MBUF_SEND);
}

static uint32_t cpuid(void) { uint32_t id; __asm__ volatile("csrrd %0, 0x20" : "=r"(id)); return id; }

/* Wake the other CPUs (QEMU -smp): each waits in QEMU's boot code for an IPI, then jumps to
 * the address in its mailbox 0. That code clears the mailbox when it starts, and a vCPU
 * may start after CPU 0 has already written it, so the mail and the IPI are sent again
 * every 5 ms for 100 ms. A CPU that does not exist ignores them. Returns how many CPUs
 * checked in (kernel.c's secondary_main counts them in cpus_online). */
static volatile uint32_t cpus_online;
static int arch_start_cpus(uint64_t boot_arg0) {
    extern char secondary_entry[];
    uint32_t self = cpuid();
    (void)boot_arg0;
    for (int round = 0; round < 20; round++) {
        for (uint32_t cpu = 0; cpu < MAX_CPUS; cpu++) {
            if (cpu == self) continue;
            mail_send(cpu, (uint64_t)secondary_entry);
            iocsr_write32(IOCSR_BLOCKING | (cpu << 16) | 0, IOCSR_IPI_SEND);   /* action 0 */
        }
        uint64_t t0 = arch_ticks();
        while (arch_ticks_to_ms(arch_ticks() - t0) < 5) { }
    }
    return (int)cpus_online - 1;
}
static void cpu_relax(void) { __asm__ volatile("nop"); }

/* ---- StarryOS shapes (kernel.c's `starry`, loongarch64/starry.S) ----
 * The task context task_switch saves and loads: ra, sp, fp, s0-s8. The timer: the
 * constant timer (TCFG, periodic, at the stable counter's frequency), its interrupt (ECFG
 * line 11, CRMD.IE) into trap_vector_base, cleared through TICLR. */
#define HAVE_STARRY_SHAPES 1
#define TASK_CONTEXT_WORDS 12
static void arch_task_init(uint64_t *context, uint8_t *stack_top, void (*entry)(void)) {
    context[0] = (uint64_t)entry;      /* ra: task_switch's `jr ra` enters it, ra = entry */
    context[1] = (uint64_t)stack_top;  /* sp; fp stays 0, the end of a frame chain */
}
static uint64_t arch_ms_to_ticks(uint64_t ms) { return ms * (counter_hz / 1000); }
static void arch_timer_start(uint64_t period_us) {
    uint64_t count = (counter_hz / 1000000 * period_us) & ~3UL;    /* TCFG.InitVal: 4-aligned */
    uint64_t tcfg = count | 2 | 1;                                   /* Periodic | En */
    uint64_t lie = 1UL << 11, ie = 1UL << 2;
    __asm__ volatile("csrwr %0, 0x44" : "+r"((uint64_t){1}));        /* clear a stale tick */
    __asm__ volatile("csrwr %0, 0x41" : "+r"(tcfg));
    __asm__ volatile("csrxchg %0, %1, 0x4" : "+r"(lie) : "r"(lie));  /* ECFG.LIE[11]: timer */
    __asm__ volatile("csrxchg %0, %1, 0x0" : "+r"(ie) : "r"(ie));    /* CRMD.IE */
}
static void arch_timer_ack(void) { __asm__ volatile("csrwr %0, 0x44" : "+r"((uint64_t){1})); }
static void arch_timer_stop(void) {
    uint64_t zero = 0, ie = 1UL << 2, lie = 1UL << 11;
    __asm__ volatile("csrxchg %0, %1, 0x0" : "+r"(zero) : "r"(ie));
    zero = 0;
    __asm__ volatile("csrxchg %0, %1, 0x4" : "+r"(zero) : "r"(lie));
    zero = 0;
    __asm__ volatile("csrwr %0, 0x41" : "+r"(zero));
    arch_timer_ack();
}
static void arch_wait_for_interrupt(void) { __asm__ volatile("idle 0"); }
