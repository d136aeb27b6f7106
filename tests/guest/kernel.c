/* The perfscope test kernel: a 16550 UART shell (`starry:~# `) and a CPU-bound workload of
 * named functions, bracketed by BENCH_START / BENCH_END on the console.
 *
 * `bench N` runs run_bench(N):
 *   hash_workload -> hash_block -> mix_leaf        the bulk: mix_leaf is the hottest self
 *                    (hash_block inlines fold_index: an inline frame for addr2line)
 *   matmul_workload -> matmul_inner                 a second, smaller hot leaf
 *   sort_workload -> insertion_sort, mix_leaf       a third
 *   tree_workload -> tree_walk -> tree_walk -> ...  genuine recursion (self in tree_walk)
 * Everything is noinline, built with frame pointers and DWARF (see Makefile). One file for
 * every architecture: boot, UART, clock and poweroff are in <arch>/arch.h and <arch>/start.S. */
#include <stdint.h>
#include <stddef.h>

#define NOINLINE    __attribute__((noinline))

/* Per architecture (<arch>/arch.h): ARCH_NAME, uart_putc, uart_getc, arch_init, arch_ticks,
 * arch_ticks_to_ms, arch_poweroff, arch_start_cpus, cpu_relax, TRAP_CAUSE/TRAP_PC/TRAP_VALUE.
 * MAX_CPUS comes from the Makefile (start.S sizes the other CPUs' stacks with it). */
#include "arch.h"

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

/* ---- SMP: every online CPU runs each bench ----
 * CPU 0 (the boot CPU) bumps bench_round; the others, spinning in wait_for_round (so their
 * vCPUs keep running and are sampled), run the same bench and count themselves done. The
 * CPUs share the workload's arrays: their results differ, their accesses stay in bounds. */
static volatile uint32_t cpus_online = 1;
static volatile uint32_t bench_round;
static volatile int bench_round_scale;
static volatile uint32_t bench_done;

NOINLINE uint32_t wait_for_round(uint32_t seen) {
    uint32_t round;
    while ((round = __atomic_load_n(&bench_round, __ATOMIC_ACQUIRE)) == seen) cpu_relax();
    return round;
}
/* Where a started CPU goes (from <arch>/start.S, on its own stack). */
void secondary_main(void) {
    __atomic_add_fetch(&cpus_online, 1, __ATOMIC_SEQ_CST);
    uint32_t seen = 0;
    for (;;) {
        seen = wait_for_round(seen);
        run_bench(bench_round_scale);
        __atomic_add_fetch(&bench_done, 1, __ATOMIC_SEQ_CST);
    }
}
/* Start the other CPUs and wait (at most 100 ms) until those asked have checked in. */
static void start_cpus(uint64_t boot_arg0) {
    int asked = arch_start_cpus(boot_arg0);
    uint64_t t0 = arch_ticks();
    while (cpus_online < (uint32_t)(1 + asked) && arch_ticks_to_ms(arch_ticks() - t0) < 100) cpu_relax();
}
/* A bench round on every online CPU: CPU 0 opens it, runs run_bench itself (called from
 * kmain, so its paths stay kmain;run_bench;… as on one CPU), then waits for the others. */
NOINLINE uint32_t open_bench_round(int scale) {
    uint32_t others = cpus_online - 1;
    bench_done = 0;
    bench_round_scale = scale;
    __atomic_add_fetch(&bench_round, 1, __ATOMIC_RELEASE);
    return others;
}
NOINLINE void wait_bench_round(uint32_t others) {
    while (__atomic_load_n(&bench_done, __ATOMIC_ACQUIRE) < others) cpu_relax();
}

/* ---- StarryOS shapes (`starry MS`) ----
 * What a real StarryOS kernel shows a profiler, each phase MS milliseconds:
 *   task: a task started by task_switch with ra = task_entry, its entry function (StarryOS's
 *         TaskContext::init): task_entry -> task_main -> mix_leaf;
 *   irq:  timer interrupts every ms through the arch's trap entry (trap_vector_base, no CFI)
 *         into handle_irq -> irq_work, while the interrupted victim_spin keeps in the frame
 *         pointer register a pointer to data that looks like a frame record;
 *   idle: the CPU halted in WFI/HLT/idle, woken every 10 ms by the timer;
 *   asm:  asm_spin, an assembly loop of several blocks.
 * Each phase prints STARRY_<PHASE> ms=<its length>. <arch>/starry.S has the assembly. */
#ifdef HAVE_STARRY_SHAPES
void task_switch(uint64_t *from, const uint64_t *to);
uint64_t asm_spin(uint64_t n, uint64_t x);
void victim_spin(uint64_t until_ticks, uint64_t *fake_fp);

static uint64_t shell_context[TASK_CONTEXT_WORDS], task_context[TASK_CONTEXT_WORDS];
static uint8_t task_stack[16384] __attribute__((aligned(16)));
static volatile uint64_t task_until, task_result;

NOINLINE uint64_t task_main(uint64_t until) {
    uint64_t acc = 0;
    while (arch_ticks() < until) acc += mix_leaf(acc);
    return acc;
}
/* The task's entry function, reached by task_switch's return with ra = task_entry: its
 * saved return address is its own first instruction. */
NOINLINE void task_entry(void) {
    task_result = task_main(task_until);
    task_switch(task_context, shell_context);
}
static uint64_t run_task(uint64_t until) {
    for (int i = 0; i < TASK_CONTEXT_WORDS; i++) task_context[i] = 0;
    arch_task_init(task_context, task_stack + sizeof task_stack, task_entry);
    task_until = until;
    task_switch(shell_context, task_context);
    return task_result;
}

static volatile uint64_t irq_count, irq_sink;
static volatile int irq_busy;
/* The interrupt handler's own work: a leaf with a long loop, so samples land in it. */
NOINLINE uint64_t irq_work(uint64_t x) {
    for (int i = 0; i < 100000; i++) x = x * 6364136223846793005UL + (uint64_t)i;
    return x;
}
/* Called by trap_vector_base (<arch>/starry.S) for the timer interrupt. */
void handle_irq(void) {
    irq_count++;
    arch_timer_ack();
    if (irq_busy) irq_sink ^= irq_work(irq_count);
}

/* What victim_spin's frame pointer points into: [fp-16], [fp-8] (riscv64, loongarch64) and
 * [fp], [fp+8] (x86_64) both read as (a higher "frame", a data address in the image). */
static uint64_t fake_frame[8];

static uint64_t starry_phase(const char *name, uint64_t t0) {
    uint64_t t1 = arch_ticks();
    puts_("STARRY_"); puts_(name); puts_(" ms="); put_u64(arch_ticks_to_ms(t1 - t0)); puts_("\n");
    return t1;
}
static void run_starry(uint64_t ms) {
    uint64_t span = arch_ms_to_ticks(ms);
    uint64_t t = arch_ticks();
    run_task(t + span);
    t = starry_phase("TASK", t);

    fake_frame[0] = fake_frame[2] = (uint64_t)&fake_frame[6];
    fake_frame[1] = fake_frame[3] = (uint64_t)&data[100];
    irq_busy = 1;
    arch_timer_start(1000);
    victim_spin(t + span, &fake_frame[2]);
    arch_timer_stop();
    irq_busy = 0;
    t = starry_phase("IRQ", t);

    arch_timer_start(10000);
    uint64_t until = t + 2 * span;
    while (arch_ticks() < until) arch_wait_for_interrupt();
    arch_timer_stop();
    t = starry_phase("IDLE", t);

    uint64_t x = 0;
    while (arch_ticks() < t + span) x ^= asm_spin(20000, x);
    irq_sink ^= x;
    starry_phase("ASM", t);
}
#endif

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

/* Called by the arch's trap entry (start.S) on any exception: the kernel has no handlers. */
void trap_panic(uint64_t cause, uint64_t pc, uint64_t value) {
    puts_("\nTRAP " TRAP_CAUSE "="); put_hex(cause); puts_(" " TRAP_PC "="); put_hex(pc);
    puts_(" " TRAP_VALUE "="); put_hex(value); puts_("\n");
    arch_poweroff();
}

extern char _stext[], _etext[];

/* Entered from start.S with the boot loader's two words (riscv64: hartid, dtb; x86_64:
 * the multiboot magic and info pointer; loongarch64: QEMU's boot information), on the boot
 * stack, fp = 0. */
void kmain(uint64_t boot_arg0, uint64_t boot_arg1) {
    (void)boot_arg1;
    arch_init();
    for (int i = 0; i < 32; i++) for (int j = 0; j < 32; j++) { mat_a[i][j] = i + j; mat_b[i][j] = i ^ j; }
    puts_("\ntinyk: " ARCH_NAME " kernel running at "); put_hex((uint64_t)&kmain);
    puts_(" text="); put_hex((uint64_t)_stext); puts_(".."); put_hex((uint64_t)_etext); puts_("\n");
    start_cpus(boot_arg0);
    puts_("tinyk: "); put_u64(cpus_online); puts_(cpus_online == 1 ? " CPU online\n" : " CPUs online\n");
    char line[128];
    for (;;) {
        puts_("starry:~# ");
        readline(line, sizeof line);
        if (starts(line, "bench")) {
            int scale = line[5] == ' ' ? atoi_(line + 6) : 10;
            if (scale <= 0) scale = 10;
            puts_("BENCH_START\n");
            uint64_t t0 = arch_ticks();
            uint32_t others = open_bench_round(scale);
            uint64_t r = run_bench(scale);
            wait_bench_round(others);
            uint64_t t1 = arch_ticks();
            puts_("BENCH_END result="); put_hex(r);
            puts_(" ticks="); put_u64(t1 - t0);
            puts_(" cpus="); put_u64(cpus_online);
            puts_(" ms="); put_u64(arch_ticks_to_ms(t1 - t0));
            puts_("\n");
        } else if (starts(line, "user")) {
#ifdef HAVE_USER_MODE
            int rounds = line[4] == ' ' ? atoi_(line + 5) : 10;
            puts_("USER_START\n");
            uint64_t t0 = arch_ticks();
            long r = arch_run_user(rounds);
            uint64_t t1 = arch_ticks();
            puts_("USER_END result="); put_hex((uint64_t)r);
            puts_(" ms="); put_u64(arch_ticks_to_ms(t1 - t0)); puts_("\n");
#else
            puts_("user: no user mode on " ARCH_NAME "\n");
#endif
        } else if (starts(line, "starry")) {
#ifdef HAVE_STARRY_SHAPES
            int ms = line[6] == ' ' ? atoi_(line + 7) : 200;
            puts_("STARRY_START\n");
            run_starry(ms > 0 ? (uint64_t)ms : 200);
            puts_("STARRY_END\n");
#else
            puts_("starry: no StarryOS shapes on " ARCH_NAME "\n");
#endif
        } else if (starts(line, "echo")) {
            puts_(line[4] == ' ' ? line + 5 : ""); puts_("\n");
        } else if (streq(line, "help")) {
            puts_("commands: bench [N], user [N], starry [MS], echo TEXT, help, exit, poweroff\n");
        } else if (streq(line, "exit") || streq(line, "poweroff")) {
            puts_("bye\n");
            arch_poweroff();
        } else if (line[0]) {
            puts_("unknown command: "); puts_(line); puts_("\n");
        }
    }
}
