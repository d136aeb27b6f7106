/* Tiny x86_64 kernel entry.  QEMU's -kernel multiboot loader (it refuses ELF64 images, so
 * the header below uses the "a.out kludge": QEMU loads the raw kernel.bin at the physical
 * addresses it names) enters _start in 32-bit protected mode, paging off, EAX = multiboot
 * magic, EBX = the multiboot info.  We build a 4-level table of 2 MiB pages (identity and
 * the high half 0xffffffff80000000 + pa, both for the first 1 GiB), enable PAE and long
 * mode, and jump to the link address 0xffffffff80100000 + ... in 64-bit code.
 * Everything is linked high; before paging, PA() gives the physical address. */
#define KERNEL_OFFSET 0xffffffff80000000
#define PA(x) ((x) - KERNEL_OFFSET)
#define MB_MAGIC 0x1BADB002
#define MB_FLAGS 0x00010000            /* bit 16: header_addr..entry_addr are valid */

    .section .text.entry, "ax"
    .code32
    .balign 4
multiboot_header:
    .long   MB_MAGIC
    .long   MB_FLAGS
    .long   -(MB_MAGIC + MB_FLAGS)
    .long   PA(multiboot_header)       /* header_addr */
    .long   PA(_stext)                 /* load_addr: kernel.bin starts here */
    .long   PA(_edata)                 /* load_end_addr: end of kernel.bin */
    .long   PA(_end)                   /* bss_end_addr */
    .long   PA(_start)                 /* entry_addr */

    .globl _start
_start:
    cli
    cld
    mov     %eax, %esi                 /* magic: kept for kmain (rdmsr clobbers edx) */
    /* clear bss: the page tables and the stack live there */
    mov     $PA(__bss_start), %edi
    mov     $PA(__bss_end), %ecx
    sub     %edi, %ecx
    shr     $2, %ecx
    xor     %eax, %eax
    rep stosl
    /* PML4[0] -> pdpt_low, PML4[511] -> pdpt_high; pdpt_low[0], pdpt_high[510] -> pd */
    mov     $(PA(boot_pdpt_low) + 3), %eax          /* present | writable */
    mov     %eax, PA(boot_pml4)
    mov     $(PA(boot_pdpt_high) + 3), %eax
    mov     %eax, PA(boot_pml4) + 511 * 8
    mov     $(PA(boot_pd) + 3), %eax
    mov     %eax, PA(boot_pdpt_low)
    mov     %eax, PA(boot_pdpt_high) + 510 * 8
    /* pd[i] = i * 2 MiB | PS | writable | present */
    mov     $PA(boot_pd), %edi
    mov     $0x83, %eax
    mov     $512, %ecx
1:  mov     %eax, (%edi)
    add     $0x200000, %eax
    add     $8, %edi
    loop    1b
    mov     $PA(boot_pml4), %eax
    mov     %eax, %cr3
    mov     %cr4, %eax
    or      $0x20, %eax                /* CR4.PAE */
    mov     %eax, %cr4
    mov     $0xC0000080, %ecx          /* IA32_EFER */
    rdmsr
    or      $0x100, %eax               /* EFER.LME */
    wrmsr
    mov     %cr0, %eax
    or      $0x80000001, %eax          /* CR0.PG | CR0.PE */
    mov     %eax, %cr0
    lgdt    PA(gdt_ptr32)
    ljmp    $0x08, $PA(long_mode_low)

    .code64
long_mode_low:                          /* 64-bit, still at the identity address */
    movabs  $high_entry, %rax
    jmp     *%rax

    .section .text
    .globl high_entry
high_entry:
    lgdt    gdt_ptr64(%rip)            /* the same GDT at its high address */
    mov     $0x10, %eax
    mov     %eax, %ds
    mov     %eax, %es
    mov     %eax, %ss
    mov     %eax, %fs
    mov     %eax, %gs
    lea     boot_stack_top(%rip), %rsp
    xor     %ebp, %ebp                 /* terminate the frame-pointer chain */
    mov     %esi, %edi                 /* kmain(multiboot magic, multiboot info) */
    mov     %ebx, %esi
    call    kmain
2:  cli
    hlt
    jmp     2b

/* Exception stubs, 16 bytes apart (arch_init points IDT vector v at isr_stubs + 16 * v):
 * push a zero where the CPU pushes no error code, then the vector. */
    .macro isr v
    .balign 16
    .if (\v == 8) || (\v >= 10 && \v <= 14) || (\v == 17) || (\v == 21) || (\v == 29) || (\v == 30)
    .else
    pushq   $0
    .endif
    pushq   $\v
    jmp     trap_common
    .endm

    .balign 16
    .globl isr_stubs
isr_stubs:
    .irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    isr \v
    .endr

trap_common:                            /* [rsp] = vector, [rsp+8] = error, [rsp+16] = rip */
    mov     (%rsp), %rdi
    mov     16(%rsp), %rsi
    mov     %cr2, %rdx
    xor     %ebp, %ebp
    and     $-16, %rsp
    call    trap_panic
3:  cli
    hlt
    jmp     3b

    .section .data
    .balign 16
gdt:
    .quad   0
    .quad   0x00af9a000000ffff         /* 0x08: 64-bit code */
    .quad   0x00cf92000000ffff         /* 0x10: data */
gdt_end:
gdt_ptr32:
    .word   gdt_end - gdt - 1
    .long   PA(gdt)
    .balign 8
    .globl gdt_ptr64                   /* efi.S loads it too */
gdt_ptr64:
    .word   gdt_end - gdt - 1
    .quad   gdt

    .section .bss.pagetables, "aw", @nobits
    .balign 4096
boot_pml4:
    .space  4096
boot_pdpt_low:
    .space  4096
boot_pdpt_high:
    .space  4096
boot_pd:
    .space  4096

    .section .bss.stack, "aw", @nobits
    .balign 16
boot_stack:
    .space  64 * 1024
    .globl boot_stack_top
boot_stack_top:

    .section .note.GNU-stack, "", @progbits
