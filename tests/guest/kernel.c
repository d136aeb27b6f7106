/* The perfscope test kernel: an NS16550 shell (`starry:~# `) and a CPU-bound workload of
 * named functions, bracketed by BENCH_START / BENCH_END on the console.
 *
 * `bench N` runs run_bench(N):
 *   hash_workload -> hash_block -> mix_leaf        the bulk: mix_leaf is the hottest self
 *                    (hash_block inlines fold_index: an inline frame for addr2line)
 *   matmul_workload -> matmul_inner                 a second, smaller hot leaf
 *   sort_workload -> insertion_sort, mix_leaf       a third
 *   tree_workload -> tree_walk -> tree_walk -> ...  genuine recursion (self in tree_walk)
 * Everything is noinline, built with frame pointers and DWARF (see Makefile). */
#include <stdint.h>
#include <stddef.h>

#define PHYS_OFFSET 0xffffffc000000000UL
#define UART_BASE   (PHYS_OFFSET + 0x10000000UL)   /* NS16550 on QEMU virt */
#define NOINLINE    __attribute__((noinline))

static volatile uint8_t *const uart = (volatile uint8_t *)UART_BASE;

static void uart_putc(char c) {
    while ((uart[5] & 0x20) == 0) { }   /* LSR.THRE */
    uart[0] = (uint8_t)c;
}
static int uart_getc(void) {
    while ((uart[5] & 0x01) == 0) { }   /* LSR.DR */
    return uart[0];
}
static void puts_(const char *s) { while (*s) { if (*s == '\n') uart_putc('\r'); uart_putc(*s++); } }
static void put_u64(uint64_t v) {
    char b[24]; int i = 0;
    if (!v) { uart_putc('0'); return; }
    while (v) { b[i++] = (char)('0' + v % 10); v /= 10; }
    while (i) uart_putc(b[--i]);
}
static void put_hex(uint64_t v) {
    puts_("0x");
    for (int i = 60; i >= 0; i -= 4) uart_putc("0123456789abcdef"[(v >> i) & 0xf]);
}
static uint64_t rdtime(void) { uint64_t t; __asm__ volatile("rdtime %0" : "=r"(t)); return t; }

/* ---- SBI ---- */
static long sbi_call(long eid, long fid, long a0, long a1) {
    register long x10 __asm__("a0") = a0;
    register long x11 __asm__("a1") = a1;
    register long x16 __asm__("a6") = fid;
    register long x17 __asm__("a7") = eid;
    __asm__ volatile("ecall" : "+r"(x10), "+r"(x11) : "r"(x16), "r"(x17) : "memory");
    return x10;
}
static void sbi_shutdown(void) {
    sbi_call(0x53525354, 0, 0, 0);   /* SRST: shutdown */
    sbi_call(0x08, 0, 0, 0);          /* legacy shutdown */
    for (;;) __asm__ volatile("wfi");
}

/* ---- workload: named nested functions ---- */
static uint64_t data[4096];
static uint32_t mat_a[32][32], mat_b[32][32], mat_c[32][32];

NOINLINE uint64_t mix_leaf(uint64_t x) {          /* leaf: the bulk of the bench's time */
    /* A long loop of its own, so any sampler (TB-start or per-instruction) lands here. */
    for (int r = 0; r < 48; r++) {
        x ^= x >> 33; x *= 0xff51afd7ed558ccdUL;
        x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53UL;
        x ^= x >> 33; x += (uint64_t)r;
    }
    return x;
}
/* Always inlined into hash_block, so samples there resolve to fold_index inside hash_block. */
static inline __attribute__((always_inline)) uint64_t fold_index(uint64_t h, int i) {
    uint64_t x = h + (uint64_t)i;
    x ^= x << 7;
    x += (x >> 11) * 3;
    return x;
}
NOINLINE uint64_t hash_block(uint64_t seed, int n) {     /* calls leaf */
    uint64_t h = seed;
    for (int i = 0; i < n; i++) h = mix_leaf(fold_index(h, i));
    return h;
}
NOINLINE uint64_t hash_workload(int rounds) {      /* outer */
    uint64_t acc = 0;
    for (int r = 0; r < rounds; r++) acc += hash_block(acc + (uint64_t)r, 256);
    return acc;
}
NOINLINE void matmul_inner(int i) {
    for (int j = 0; j < 32; j++) {
        uint32_t s = 0;
        for (int k = 0; k < 32; k++) s += mat_a[i][k] * mat_b[k][j];
        mat_c[i][j] = s;
    }
}
NOINLINE uint64_t matmul_workload(int rounds) {
    uint64_t acc = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 32; i++) matmul_inner(i);
        acc += mat_c[r & 31][(r * 7) & 31];
        mat_a[r & 31][(r * 3) & 31] += 1;
    }
    return acc;
}
NOINLINE void insertion_sort(uint64_t *a, int n) {
    for (int i = 1; i < n; i++) {
        uint64_t v = a[i]; int j = i - 1;
        while (j >= 0 && a[j] > v) { a[j + 1] = a[j]; j--; }
        a[j + 1] = v;
    }
}
NOINLINE uint64_t sort_workload(int rounds) {
    uint64_t acc = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 256; i++) data[i] = mix_leaf((uint64_t)(r * 256 + i));
        insertion_sort(data, 256);
        acc += data[r & 255];
    }
    return acc;
}
/* Recursion: a binary tree walk whose work happens at the bottom, in tree_walk itself. */
NOINLINE uint64_t tree_walk(int depth, uint64_t seed) {
    if (depth == 0) {
        uint64_t x = seed;
        for (int i = 0; i < 64; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
        return x;
    }
    return tree_walk(depth - 1, seed * 3 + 1) ^ tree_walk(depth - 1, seed * 5 + 2);
}
NOINLINE uint64_t tree_workload(int rounds) {
    uint64_t acc = 0;
    for (int r = 0; r < rounds; r++) acc += tree_walk(6, (uint64_t)r);
    return acc;
}
NOINLINE uint64_t run_bench(int scale) {
    uint64_t acc = 0;
    acc += hash_workload(20 * scale);
    acc += matmul_workload(4 * scale);
    acc += sort_workload(scale);
    acc += tree_workload(10 * scale);
    return acc;
}

/* ---- shell ---- */
static int streq(const char *a, const char *b) { while (*a && *a == *b) { a++; b++; } return *a == *b; }
static int starts(const char *a, const char *p) { while (*p) if (*a++ != *p++) return 0; return 1; }
static int atoi_(const char *s) { int v = 0; while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0'); return v; }

static int readline(char *buf, int cap) {
    int n = 0;
    for (;;) {
        int c = uart_getc();
        if (c == '\r' || c == '\n') { puts_("\n"); buf[n] = 0; return n; }
        if ((c == 0x7f || c == 8) && n > 0) { n--; puts_("\b \b"); continue; }
        if (n < cap - 1 && c >= 32 && c < 127) { buf[n++] = (char)c; uart_putc((char)c); }
    }
}

void trap_panic(uint64_t scause, uint64_t sepc, uint64_t stval) {
    puts_("\nTRAP scause="); put_hex(scause); puts_(" sepc="); put_hex(sepc);
    puts_(" stval="); put_hex(stval); puts_("\n");
    sbi_shutdown();
}

extern char _stext[], _etext[];

void kmain(uint64_t hartid, uint64_t dtb) {
    (void)hartid; (void)dtb;
    for (int i = 0; i < 32; i++) for (int j = 0; j < 32; j++) { mat_a[i][j] = i + j; mat_b[i][j] = i ^ j; }
    puts_("\ntinyk: riscv64 kernel running at "); put_hex((uint64_t)&kmain);
    puts_(" text="); put_hex((uint64_t)_stext); puts_(".."); put_hex((uint64_t)_etext); puts_("\n");
    char line[128];
    for (;;) {
        puts_("starry:~# ");
        readline(line, sizeof line);
        if (starts(line, "bench")) {
            int scale = line[5] == ' ' ? atoi_(line + 6) : 10;
            if (scale <= 0) scale = 10;
            puts_("BENCH_START\n");
            uint64_t t0 = rdtime();
            uint64_t r = run_bench(scale);
            uint64_t t1 = rdtime();
            puts_("BENCH_END result="); put_hex(r);
            puts_(" ticks="); put_u64(t1 - t0);
            puts_(" ms="); put_u64((t1 - t0) / 10000);   /* virt timebase 10 MHz */
            puts_("\n");
        } else if (starts(line, "echo")) {
            puts_(line[4] == ' ' ? line + 5 : ""); puts_("\n");
        } else if (streq(line, "help")) {
            puts_("commands: bench [N], echo TEXT, help, exit, poweroff\n");
        } else if (streq(line, "exit") || streq(line, "poweroff")) {
            puts_("bye\n");
            sbi_shutdown();
        } else if (line[0]) {
            puts_("unknown command: "); puts_(line); puts_("\n");
        }
    }
}
