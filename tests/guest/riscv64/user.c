/* A user-mode program for the riscv64 test kernel (`user N` runs it in U-mode): its own
 * ELF (user.elf, linked at USER_BASE 0x40400000 by user.ld), so `perfscope --user-elf`
 * has something to name. No globals (nothing zeroes a .bss); the kernel gives it a stack
 * and N in a0, and it returns its result with an ecall. */
#include <stdint.h>

#define NOINLINE __attribute__((noinline))

NOINLINE uint64_t user_hot(uint64_t x) {           /* the hottest user function */
    for (int r = 0; r < 64; r++) {
        x ^= x >> 29; x *= 0xbf58476d1ce4e5b9UL;
        x ^= x >> 32; x += (uint64_t)r;
    }
    return x;
}
NOINLINE uint64_t user_work(long rounds) {
    uint64_t acc = 0;
    for (long i = 0; i < rounds * 1000; i++) acc += user_hot(acc + (uint64_t)i);
    return acc;
}
__attribute__((section(".text.entry"), noreturn)) void user_main(long rounds) {
    register uint64_t a0 __asm__("a0") = user_work(rounds);
    for (;;) __asm__ volatile("ecall" : : "r"(a0));
}
