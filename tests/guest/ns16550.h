/* The NS16550 UART of QEMU's riscv64 and loongarch64 `virt`, memory-mapped at UART_BASE
 * (a virtual address the arch maps), polled: what kernel.c's console needs. Included by
 * those arches' arch.h after they define UART_BASE. */
static volatile uint8_t *const uart = (volatile uint8_t *)UART_BASE;

static void uart_putc(char c) {
    while ((uart[5] & 0x20) == 0) { }   /* LSR.THRE */
    uart[0] = (uint8_t)c;
}
static int uart_getc(void) {
    while ((uart[5] & 0x01) == 0) { }   /* LSR.DR */
    return uart[0];
}
