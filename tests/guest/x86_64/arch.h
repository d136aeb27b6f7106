/* x86_64 side of the test kernel (included by kernel.c): the 16550 at I/O port 0x3f8 (COM1,
 * QEMU's -serial), the TSC calibrated against the PIT, an IDT that reports exceptions, and
 * ACPI poweroff on q35. Boot (multiboot, long mode, high half) is in start.S. */
#define ARCH_NAME   "x86_64"
#define COM1        0x3f8
/* What trap_panic's three values are (start.S's trap_common passes vector, rip, cr2). */
#define TRAP_CAUSE  "vector"
#define TRAP_PC     "rip"
#define TRAP_VALUE  "cr2"

static inline uint8_t inb(uint16_t port) {
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port)); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port)); }

static void uart_putc(char c) {
    while ((inb(COM1 + 5) & 0x20) == 0) { }   /* LSR.THRE */
    outb(COM1, (uint8_t)c);
}
static int uart_getc(void) {
    while ((inb(COM1 + 5) & 0x01) == 0) { }   /* LSR.DR */
    return inb(COM1);
}

static uint64_t arch_ticks(void) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* TSC ticks per ms (under TCG the TSC is the host's): counted over 10 ms of PIT channel 2. */
static uint64_t tsc_per_ms;
static void calibrate_tsc(void) {
    const uint16_t count = 11932;             /* 10 ms at 1.193182 MHz */
    outb(0x61, (uint8_t)((inb(0x61) & ~0x02) | 0x01));   /* gate on, speaker off */
    outb(0x43, 0xb0);                         /* channel 2, lo/hi byte, mode 0 */
    outb(0x42, (uint8_t)(count & 0xff));
    outb(0x42, (uint8_t)(count >> 8));
    uint64_t t0 = arch_ticks();
    /* OUT2 (port 0x61 bit 5) rises at the terminal count; give up after ~1e9 ticks. */
    while ((inb(0x61) & 0x20) == 0)
        if (arch_ticks() - t0 > 1000000000UL) return;
    tsc_per_ms = (arch_ticks() - t0) / 10;
}
static uint64_t arch_ticks_to_ms(uint64_t ticks) { return tsc_per_ms ? ticks / tsc_per_ms : 0; }

/* The 32 exception vectors, each to its stub in start.S (they end in trap_panic). */
struct idt_gate {
    uint16_t offset_lo, selector;
    uint8_t ist, type;
    uint16_t offset_mid;
    uint32_t offset_hi, reserved;
} __attribute__((packed));
/* Vectors 32-47: the PIC's interrupts, remapped there by arch_timer_start (starry.S). */
static struct idt_gate idt[48];
extern char isr_stubs[], trap_vector_base[];

static struct idt_gate interrupt_gate(uint64_t handler) {
    return (struct idt_gate){
        .offset_lo = (uint16_t)handler, .selector = 0x08, .ist = 0, .type = 0x8e,
        .offset_mid = (uint16_t)(handler >> 16), .offset_hi = (uint32_t)(handler >> 32),
    };
}

static void arch_init(void) {
    for (int v = 0; v < 32; v++) idt[v] = interrupt_gate((uint64_t)isr_stubs + 16 * (uint64_t)v);
    for (int v = 32; v < 48; v++) idt[v] = interrupt_gate((uint64_t)trap_vector_base);
    struct { uint16_t limit; uint64_t base; } __attribute__((packed)) idtr = { sizeof idt - 1, (uint64_t)idt };
    __asm__ volatile("lidt %0" : : "m"(idtr));
    outb(COM1 + 1, 0);                        /* no UART interrupts: the console is polled */
    calibrate_tsc();
}

static void arch_poweroff(void) {
    /* ACPI PM1a_CNT of q35's ICH9 (PMBASE 0x600, set by SeaBIOS): SLP_EN with SLP_TYP 0 is
     * QEMU's soft power off, so QEMU exits with status 0. */
    outw(0x604, 0x2000);
    for (;;) __asm__ volatile("cli; hlt");
}

/* One CPU: starting APs needs a real-mode trampoline and INIT-SIPI-SIPI, which this test
 * kernel does not have (the SMP tests run on riscv64 and loongarch64). */
static int arch_start_cpus(uint64_t boot_arg0) { (void)boot_arg0; return 0; }
static void cpu_relax(void) { __asm__ volatile("pause"); }

/* ---- StarryOS shapes (kernel.c's `starry`, x86_64/starry.S) ----
 * A task's context is its saved rsp: task_switch pushes the callee-saved registers and
 * returns on the new stack. The timer: the PIT (channel 0, rate generator) on IRQ 0 of the
 * 8259 PIC, remapped to vector 32, into trap_vector_base; handle_irq's ack is the EOI. */
#define HAVE_STARRY_SHAPES 1
#define TASK_CONTEXT_WORDS 1
static void arch_task_init(uint64_t *context, uint8_t *stack_top, void (*entry)(void)) {
    uint64_t *sp = (uint64_t *)stack_top;
    *--sp = (uint64_t)entry;           /* the entry's own return address: ra = entry */
    *--sp = (uint64_t)entry;           /* where task_switch's `ret` goes */
    for (int i = 0; i < 6; i++) *--sp = 0;   /* r15..rbx, rbp = 0: the end of a frame chain */
    context[0] = (uint64_t)sp;
}
static uint64_t arch_ms_to_ticks(uint64_t ms) { return ms * tsc_per_ms; }
static void pic_init(uint8_t master_mask) {
    outb(0x20, 0x11); outb(0xa0, 0x11);   /* ICW1: init, ICW4 follows */
    outb(0x21, 32);   outb(0xa1, 40);     /* ICW2: vector bases */
    outb(0x21, 4);    outb(0xa1, 2);      /* ICW3: slave on IRQ 2 */
    outb(0x21, 1);    outb(0xa1, 1);      /* ICW4: 8086 mode */
    outb(0x21, master_mask); outb(0xa1, 0xff);
}
static void arch_timer_start(uint64_t period_us) {
    uint32_t divisor = (uint32_t)(1193182ULL * period_us / 1000000);
    pic_init(0xfe);                       /* IRQ 0 only */
    outb(0x43, 0x34);                     /* channel 0, lo/hi byte, mode 2 */
    outb(0x40, (uint8_t)(divisor & 0xff));
    outb(0x40, (uint8_t)(divisor >> 8));
    __asm__ volatile("sti");
}
static void arch_timer_ack(void) { outb(0x20, 0x20); }
static void arch_timer_stop(void) {
    __asm__ volatile("cli");
    outb(0x21, 0xff);                     /* mask every IRQ */
}
/* sti;hlt: interrupts are enabled only after hlt starts, so none is lost in between. */
static void arch_wait_for_interrupt(void) { __asm__ volatile("sti; hlt"); }
