/* UEFI entry of the x86_64 test kernel (kernel.efi: QEMU -drive if=pflash OVMF, the image
 * as \EFI\BOOT\BOOTX64.EFI on a FAT drive).
 *
 * kernel.efi is kernel.bin behind a one-page PE32+ header (.efi_header below, which the
 * Makefile's objcopy places in front of _stext): one section from _stext to _end (bss
 * included, zero-filled by the loader), no relocations. OVMF loads it at any page-aligned
 * address with paging on (an identity map) and calls efi_main(ImageHandle, SystemTable) with
 * the MS x64 ABI. efi_main uses RIP-relative addresses only (it runs where OVMF put it, not
 * at its link address): it takes the memory map, exits boot services, builds its own page
 * tables - the low 4 GiB identity-mapped with 2 MiB pages (where efi_main itself runs during
 * the switch) and the high half 0xffffffff80000000 + ... mapped page by page onto the loaded
 * image (OVMF's address is not 2 MiB-aligned) - then loads the kernel's GDT and jumps to
 * start.S's high_entry, the multiboot path's 64-bit code: the same stack, IDT and kmain. */

#define KERNEL_OFFSET   0xffffffff80000000
#define EFI_LOAD_ERROR  0x8000000000000001
#define EFI_INVALID_PARAMETER 0x8000000000000002
#define ST_BOOT_SERVICES        0x60    /* EFI_SYSTEM_TABLE.BootServices */
#define BS_GET_MEMORY_MAP       0x38    /* EFI_BOOT_SERVICES.GetMemoryMap */
#define BS_EXIT_BOOT_SERVICES   0xe8    /* EFI_BOOT_SERVICES.ExitBootServices */
#define MMAP_BYTES      (16 * 1024)     /* OVMF's map is ~100 descriptors of 48 bytes */
#define EXIT_ATTEMPTS   8
#define COM1            0x3f8
#define PTE             0x3             /* present | writable */
#define PTE_LARGE       0x83            /* present | writable | 2 MiB page */
#define EFI_PT_PAGES    2               /* 4 KiB-page tables: the high half's first 4 MiB */

/* ---- the PE32+ header: not loaded by the multiboot path (no "a" flag: not in kernel.bin);
 * its fields are the linker script's EFI_* values. ---- */
    .section .efi_header, "", @progbits
pe_dos_header:
    .ascii  "MZ"
    .org    pe_dos_header + 0x3c
    .long   pe_signature - pe_dos_header        /* e_lfanew */
pe_signature:
    .ascii  "PE\0\0"
    .short  0x8664                      /* Machine: x86-64 */
    .short  1                           /* NumberOfSections */
    .long   0, 0, 0                     /* TimeDateStamp, PointerToSymbolTable, NumberOfSymbols */
    .short  pe_sections - pe_optional   /* SizeOfOptionalHeader */
    .short  0x0226                      /* executable, large-address-aware, no line numbers/debug */
pe_optional:
    .short  0x020b                      /* PE32+ */
    .byte   0, 0                        /* linker version */
    .long   EFI_RAW_SIZE                /* SizeOfCode */
    .long   0, 0                        /* SizeOfInitializedData, SizeOfUninitializedData */
    .long   EFI_ENTRY_RVA               /* AddressOfEntryPoint: efi_main */
    .long   EFI_HEADER_SIZE             /* BaseOfCode */
    .quad   0                           /* ImageBase: below 1 MiB, so OVMF loads it anywhere */
    .long   0x1000                      /* SectionAlignment */
    .long   0x200                       /* FileAlignment */
    .short  0, 0, 0, 0, 0, 0            /* OS, image and subsystem versions */
    .long   0                           /* Win32VersionValue */
    .long   EFI_IMAGE_SIZE              /* SizeOfImage */
    .long   EFI_HEADER_SIZE             /* SizeOfHeaders */
    .long   0                           /* CheckSum */
    .short  10                          /* Subsystem: EFI application */
    .short  0                           /* DllCharacteristics */
    .quad   0, 0, 0, 0                  /* stack and heap reserve/commit */
    .long   0                           /* LoaderFlags */
    .long   16                          /* NumberOfRvaAndSizes */
    .fill   16, 8, 0                    /* data directories: no imports, exports or relocations */
pe_sections:
    .ascii  ".text\0\0\0"
    .long   EFI_VIRTUAL_SIZE            /* VirtualSize: _stext.._end, bss included */
    .long   EFI_HEADER_SIZE             /* VirtualAddress */
    .long   EFI_RAW_SIZE                /* SizeOfRawData: _stext.._edata (kernel.bin) */
    .long   EFI_HEADER_SIZE             /* PointerToRawData */
    .long   0, 0                        /* PointerToRelocations, PointerToLinenumbers */
    .short  0, 0                        /* NumberOfRelocations, NumberOfLinenumbers */
    .long   0xe0000020                  /* code, readable, writable, executable */
    .org    pe_dos_header + 0x1000      /* = EFI_HEADER_SIZE (linker.ld asserts it) */

/* ---- efi_main: MS x64 ABI (rcx = ImageHandle, rdx = SystemTable; rbx, rbp, rdi, rsi and
 * r12-r15 preserved, 32 bytes of shadow space, the fifth argument at 32(%rsp)). Returns
 * only on failure, with the status, after saying why on COM1. ---- */
    .section .text
    .globl efi_main
efi_main:
    push    %rbp
    mov     %rsp, %rbp
    push    %rbx
    push    %rdi
    push    %rsi
    push    %r12
    push    %r13
    push    %r14
    push    %r15
    sub     $40, %rsp                  /* shadow space + 5th argument; rsp 16-aligned */
    cld
    mov     %rcx, %r12                 /* ImageHandle */
    mov     ST_BOOT_SERVICES(%rdx), %r14
    /* The C code wants its bss zeroed (the multiboot path clears it too). */
    lea     __bss_start(%rip), %rdi
    lea     __bss_end(%rip), %rcx
    sub     %rdi, %rcx
    xor     %eax, %eax
    rep stosb
    /* The high-half map is built page by page from _stext, and the identity map that runs
     * this code during the switch covers the low 4 GiB only. */
    lea     _stext(%rip), %rax
    test    $0xfff, %eax
    jnz     1f
    lea     _end(%rip), %rax
    shr     $32, %rax
    jz      2f
1:  lea     msg_placement(%rip), %rsi
    jmp     efi_fail_load
2:  lea     msg_loaded(%rip), %rsi
    call    efi_puts
    lea     _stext(%rip), %rax
    call    efi_puthex
    lea     msg_newline(%rip), %rsi
    call    efi_puts
    mov     $EXIT_ATTEMPTS, %r15d
get_map:
    movq    $MMAP_BYTES, efi_mmap_size(%rip)
    lea     efi_mmap_size(%rip), %rcx  /* &MemoryMapSize */
    lea     efi_mmap(%rip), %rdx       /* MemoryMap */
    lea     efi_map_key(%rip), %r8     /* &MapKey */
    lea     efi_desc_size(%rip), %r9   /* &DescriptorSize */
    lea     efi_desc_version(%rip), %rax
    mov     %rax, 32(%rsp)             /* &DescriptorVersion */
    call    *BS_GET_MEMORY_MAP(%r14)
    test    %rax, %rax
    jz      3f
    lea     msg_get_map(%rip), %rsi
    jmp     efi_fail
3:  mov     %r12, %rcx
    mov     efi_map_key(%rip), %rdx
    call    *BS_EXIT_BOOT_SERVICES(%r14)
    test    %rax, %rax
    jz      exited
    /* The map changed since we read it (an event allocated memory): read it again. */
    movabs  $EFI_INVALID_PARAMETER, %rcx
    cmp     %rcx, %rax
    jne     4f
    dec     %r15d
    jnz     get_map
4:  lea     msg_exit(%rip), %rsi
    jmp     efi_fail

exited:                                 /* the firmware is gone: no more calls into it */
    cli
    /* Identity: PML4[0] -> pdpt_low, pdpt_low[0..3] -> pd_low[0..3], 2048 large pages. */
    lea     efi_pd_low(%rip), %rdi
    mov     $PTE_LARGE, %eax
    mov     $2048, %ecx
5:  mov     %rax, (%rdi)
    add     $0x200000, %rax
    add     $8, %rdi
    loop    5b
    lea     efi_pdpt_low(%rip), %rdi
    lea     efi_pd_low+PTE(%rip), %rax
    mov     $4, %ecx
6:  mov     %rax, (%rdi)
    add     $0x1000, %rax
    add     $8, %rdi
    loop    6b
    lea     efi_pdpt_low+PTE(%rip), %rax
    mov     %rax, efi_pml4(%rip)
    /* High half: PML4[511] -> pdpt_high, pdpt_high[510] -> pd_high, pd_high[0..] -> pt,
     * pt[(VA - KERNEL_OFFSET) / 4 KiB] -> where that page of the image was loaded. */
    lea     efi_pdpt_high+PTE(%rip), %rax
    mov     %rax, efi_pml4+511*8(%rip)
    lea     efi_pd_high+PTE(%rip), %rax
    mov     %rax, efi_pdpt_high+510*8(%rip)
    lea     efi_pd_high(%rip), %rdi
    lea     efi_pt+PTE(%rip), %rax
    mov     $EFI_PT_PAGES, %ecx
7:  mov     %rax, (%rdi)
    add     $0x1000, %rax
    add     $8, %rdi
    loop    7b
    movabs  $_stext, %rax              /* the link addresses: pt's first entry and the count */
    movabs  $KERNEL_OFFSET, %rcx
    sub     %rcx, %rax
    shr     $9, %rax                   /* (VA - KERNEL_OFFSET) / 4 KiB * 8 */
    lea     efi_pt(%rip), %rdi
    add     %rax, %rdi
    movabs  $_end + 0xfff, %rcx
    movabs  $_stext, %rax
    sub     %rax, %rcx
    shr     $12, %rcx
    lea     _stext+PTE(%rip), %rax
8:  mov     %rax, (%rdi)
    add     $0x1000, %rax
    add     $8, %rdi
    loop    8b
    /* Our own stack (its loaded address, in the identity map) before the firmware's memory
     * stops being mapped, then the new tables. */
    lea     boot_stack_top(%rip), %rsp
    lea     efi_pml4(%rip), %rax
    mov     %rax, %cr3
    /* The kernel's GDT (its descriptor holds the high address, mapped now), CS reloaded with
     * its 64-bit code selector by a far return, then the multiboot path's 64-bit code. */
    lgdt    gdt_ptr64(%rip)
    lea     9f(%rip), %rax
    pushq   $0x08
    push    %rax
    lretq
9:  xor     %esi, %esi                 /* kmain(0, 0): no multiboot magic, no info */
    xor     %ebx, %ebx
    movabs  $high_entry, %rax
    jmp     *%rax

efi_fail_load:                          /* rsi = message; status EFI_LOAD_ERROR */
    movabs  $EFI_LOAD_ERROR, %rax
efi_fail:                               /* rsi = message, rax = status */
    mov     %rax, %rbx
    call    efi_puts
    lea     msg_status(%rip), %rsi
    call    efi_puts
    mov     %rbx, %rax
    call    efi_puthex
    lea     msg_newline(%rip), %rsi
    call    efi_puts
    mov     %rbx, %rax
    add     $40, %rsp
    pop     %r15
    pop     %r14
    pop     %r13
    pop     %r12
    pop     %rsi
    pop     %rdi
    pop     %rbx
    pop     %rbp
    ret

/* COM1, polled (OVMF set it up for its console): efi_puts(rsi = NUL-terminated text),
 * efi_puthex(rax). Clobber rax, rcx, rdx, rsi. */
efi_puts:
    movzbl  (%rsi), %ecx
    test    %ecx, %ecx
    jz      2f
    mov     $(COM1 + 5), %dx
1:  in      %dx, %al
    test    $0x20, %al                 /* LSR.THRE */
    jz      1b
    mov     $COM1, %dx
    mov     %cl, %al
    out     %al, %dx
    inc     %rsi
    jmp     efi_puts
2:  ret

efi_puthex:
    push    %rbx
    push    %rdi
    mov     %rax, %rbx
    mov     $60, %edi
1:  mov     %rbx, %rax
    mov     %edi, %ecx
    shr     %cl, %rax
    and     $0xf, %eax
    lea     hex_digits(%rip), %rsi
    movzbl  (%rsi, %rax), %ecx
    mov     $(COM1 + 5), %dx
2:  in      %dx, %al
    test    $0x20, %al
    jz      2b
    mov     $COM1, %dx
    mov     %cl, %al
    out     %al, %dx
    sub     $4, %edi
    jns     1b
    pop     %rdi
    pop     %rbx
    ret

    .section .rodata
hex_digits:     .ascii "0123456789abcdef"
msg_loaded:     .asciz "\r\ntinyk-efi: image at 0x"
msg_newline:    .asciz "\r\n"
msg_placement:  .asciz "\r\ntinyk-efi: the image must be page-aligned and below 4 GiB"
msg_get_map:    .asciz "\r\ntinyk-efi: GetMemoryMap failed"
msg_exit:       .asciz "\r\ntinyk-efi: ExitBootServices failed"
msg_status:     .asciz ", status 0x"

/* Page tables (the linker puts .bss.pagetables first in bss, page-aligned) and the map. */
    .section .bss.pagetables, "aw", @nobits
    .balign 4096
efi_pml4:       .space 4096
efi_pdpt_low:   .space 4096
efi_pd_low:     .space 4 * 4096
efi_pdpt_high:  .space 4096
efi_pd_high:    .space 4096
efi_pt:         .space EFI_PT_PAGES * 4096
    .globl  EFI_PT_SPAN                 /* what efi_pt maps, for linker.ld's check */
    .set    EFI_PT_SPAN, EFI_PT_PAGES * 0x200000

    .section .bss
    .balign 8
efi_mmap_size:      .quad 0
efi_map_key:        .quad 0
efi_desc_size:      .quad 0
efi_desc_version:   .quad 0
efi_mmap:           .space MMAP_BYTES

    .section .note.GNU-stack, "", @progbits
