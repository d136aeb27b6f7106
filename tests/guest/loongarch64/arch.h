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

static volatile uint8_t *const uart = (volatile uint8_t *)UART_BASE;

static void uart_putc(char c) {
    while ((uart[5] & 0x20) == 0) { }   /* LSR.THRE */
    uart[0] = (uint8_t)c;
}
static int uart_getc(void) {
    while ((uart[5] & 0x01) == 0) { }   /* LSR.DR */
    return uart[0];
}

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
