/* Tiny loongarch64 kernel entry.  QEMU's `virt` direct boot (-kernel kernel.elf, no
 * firmware) loads the ELF at the low 48 bits of its addresses (PA 0x200000) and starts CPU 0
 * at the ELF entry in direct address mode (CRMD.DA = 1: the PC's upper bits are ignored),
 * a0..a2 = boot information.  We open the two direct-mapped windows StarryOS and Linux use,
 * DMW0 = 0x8000_... uncached (devices) and DMW1 = 0x9000_... cached (the kernel, linked at
 * 0x9000_0000_0020_0000), jump to the link address and switch to mapped mode: from then on
 * every PC is the high-half address the ELF's symbols name.  Other CPUs wait in QEMU's boot
 * code at 0x1c000000 (the flash) until arch_start_cpus mails them secondary_entry. */
#define CSR_CRMD      0x0
#define CSR_EENTRY    0xc
#define CSR_TLBRENTRY 0x88
#define CSR_DMW0      0x180
#define CSR_CPUID     0x20
#define CSR_DMW0      0x180
#define CSR_DMW1      0x181

    /* Open the windows and jump to the absolute (high) address stored at \high. */
    .macro  open_windows_and_jump high
    li.d    $t0, 0x8000000000000001   /* DMW0: VSEG 8, MAT 0 (strongly-ordered uncached), PLV0 */
    csrwr   $t0, CSR_DMW0
    li.d    $t0, 0x9000000000000011   /* DMW1: VSEG 9, MAT 1 (coherent cached), PLV0 */
    csrwr   $t0, CSR_DMW1
    la.pcrel $t0, \high
    ld.d    $t0, $t0, 0
    jirl    $zero, $t0, 0
    .endm

    /* Mapped mode, no frame chain, and this CPU's exception entries (CSRs are per CPU). */
    .macro  enter_mapped_mode
    li.w    $t0, 0xb0                 /* CRMD: PLV0, IE=0, PG=1, DATF=DATM=cached */
    csrwr   $t0, CSR_CRMD
    move    $fp, $zero                /* terminate the frame-pointer chain */
    move    $ra, $zero
    la.pcrel $t0, trap_vector_base
    csrwr   $t0, CSR_EENTRY
    /* TLB refills run in direct address mode: the handler's physical address. */
    la.pcrel $t0, trap_vector_base
    li.d    $t1, 0x0000ffffffffffff
    and     $t0, $t0, $t1
    csrwr   $t0, CSR_TLBRENTRY
    .endm

    .section .text.entry, "ax"
    .globl _start
_start:
    open_windows_and_jump .Lhigh

/* A CPU woken by arch_start_cpus: QEMU's boot code jumps here in direct address mode. */
    .globl secondary_entry
secondary_entry:
    open_windows_and_jump .Lsecondary_high
    .balign 8
.Lhigh:
    .dword  high_entry
.Lsecondary_high:
    .dword  secondary_high

    .section .text
    .globl high_entry
high_entry:
    enter_mapped_mode
    la.pcrel $sp, boot_stack_top
    /* clear bss */
    la.pcrel $t0, __bss_start
    la.pcrel $t1, __bss_end
1:  bgeu    $t0, $t1, 2f
    st.d    $zero, $t0, 0
    addi.d  $t0, $t0, 8
    b       1b
2:  bl      kmain
3:  idle    0
    b       3b

secondary_high:
    enter_mapped_mode
    csrrd   $t0, CSR_CPUID            /* CPU n's stack ends at secondary_stacks + n * 16 KiB */
    slli.d  $t0, $t0, 14
    la.pcrel $sp, secondary_stacks
    add.d   $sp, $sp, $t0
    bl      secondary_main
5:  idle    0
    b       5b

    .section .bss.stack, "aw", @nobits
    .balign 16
boot_stack:
    .space  64 * 1024
    .globl boot_stack_top
boot_stack_top:
    .balign 16
secondary_stacks:
    .space  (MAX_CPUS - 1) * 16 * 1024
