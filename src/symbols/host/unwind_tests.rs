use super::*;

/// This thread's registers inside the function that called it, and a copy of its stack
/// from the stack pointer up (as `PERF_SAMPLE_STACK_USER` would hold it).
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn capture_here() -> (UserRegisters, Vec<u8>) {
    let (sp, fp, pc): (u64, u64, u64);
    // SAFETY: reads three registers, touches no memory.
    unsafe {
        std::arch::asm!(
            "mov {sp}, rsp",
            "mov {fp}, rbp",
            "lea {pc}, [rip]",
            sp = out(reg) sp,
            fp = out(reg) fp,
            pc = out(reg) pc,
        );
    }
    (UserRegisters { pc, sp, fp, lr: 0 }, copy_own_stack(sp, 32 * 1024))
}

/// Up to `len` bytes of this process's memory from `sp`, stopping at the first unmapped
/// page (the top of the stack).
#[cfg(target_arch = "x86_64")]
fn copy_own_stack(sp: u64, len: usize) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let mem = std::fs::File::open("/proc/self/mem").unwrap();
    let mut out = Vec::new();
    let mut chunk = vec![0u8; 512];
    while out.len() < len {
        match mem.read_at(&mut chunk, sp + out.len() as u64) {
            Ok(n) if n > 0 => out.extend_from_slice(&chunk[..n]),
            _ => break,
        }
    }
    out
}

#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn unwind_level_two(unwinder: &mut UserUnwinder) -> (Vec<u64>, WalkEnd) {
    let (regs, stack) = capture_here();
    let mut frames = Vec::new();
    let end = unwinder.unwind(std::process::id(), regs, &stack, &mut frames);
    // Keep this frame a frame (no tail call into unwind).
    std::hint::black_box(&frames);
    (frames, end)
}

#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn unwind_level_one(unwinder: &mut UserUnwinder) -> (Vec<u64>, WalkEnd) {
    let result = unwind_level_two(unwinder);
    std::hint::black_box(&result);
    result
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_copy_of_this_threads_stack_unwinds_through_its_callers() {
    let mut unwinder = UserUnwinder::new(UnwinderOptions::default());
    let (frames, _) = unwind_level_one(&mut unwinder);
    let mut symbols = super::super::HostSymbolizer::new(super::super::HostSymbolizerOptions {
        kernel: false,
        ..Default::default()
    })
    .unwrap();
    let pid = std::process::id();
    let names: Vec<String> = frames
        .iter()
        .enumerate()
        .map(|(i, &ip)| {
            let frames = symbols.resolve_user(pid, super::super::lookup_address(ip, i));
            frames.last().map(|f| f.name.to_string()).unwrap_or_default()
        })
        .collect();
    eprintln!("frames {:x?}", frames);
    eprintln!(
        "{}",
        std::fs::read_to_string("/proc/self/maps")
            .unwrap()
            .lines()
            .filter(|l| l.contains("r-xp"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let at = |name: &str| {
        names
            .iter()
            .position(|n| n.ends_with(name))
            .unwrap_or_else(|| panic!("{name} not in {names:#?}"))
    };
    // Leaf first: where the registers were read, then its callers in order.
    assert!(at("capture_here") < at("unwind_level_two"), "{names:#?}");
    assert!(at("unwind_level_two") < at("unwind_level_one"), "{names:#?}");
    assert!(
        at("unwind_level_one") < at("a_copy_of_this_threads_stack_unwinds_through_its_callers"),
        "{names:#?}"
    );
    assert!(frames.len() > 5, "into the test harness: {names:#?}");
    let counters = unwinder.counters();
    assert_eq!(counters.walks, 1);
    assert!(counters.files_loaded >= 1, "{counters:?}");
    // A second walk from the same place finds the modules already there.
    let loaded = counters.files_loaded;
    let (again, _) = unwind_level_one(&mut unwinder);
    assert_eq!(unwinder.counters().files_loaded, loaded);
    assert_eq!(again.len(), frames.len());
}

#[test]
fn a_stack_copy_too_short_for_the_first_frame_gives_the_sampled_address_alone() {
    let mut unwinder = UserUnwinder::new(UnwinderOptions::default());
    let regs = UserRegisters {
        pc: a_stack_copy_too_short_for_the_first_frame_gives_the_sampled_address_alone as *const () as usize
            as u64,
        sp: 0x7ffd_0000_0000,
        fp: 0x7ffd_0000_0100,
        lr: 0,
    };
    let mut frames = Vec::new();
    let end = unwinder.unwind(std::process::id(), regs, &[], &mut frames);
    assert_eq!(frames, [regs.pc]);
    assert_eq!(end, WalkEnd::Truncated);
    assert_eq!(unwinder.counters().complete, 0);
}

#[test]
fn an_exec_forgets_the_old_images_unwinder() {
    let mut unwinder = UserUnwinder::new(UnwinderOptions::default());
    const PID: u32 = 4_000_000_010;
    unwinder.on_exec(PID);
    unwinder.on_mmap(PID, 0x1000, 0x1000, 0, "/nonexistent/a", None);
    let regs = UserRegisters {
        pc: 0x1800,
        ..Default::default()
    };
    let mut frames = Vec::new();
    unwinder.unwind(PID, regs, &[], &mut frames);
    assert_eq!(frames, [0x1800]);
    assert_eq!(unwinder.counters().spaces_built, 1);
    unwinder.unwind(PID, regs, &[], &mut frames);
    assert_eq!(unwinder.counters().spaces_built, 1, "same maps, same unwinder");
    unwinder.on_mmap(PID, 0x4000, 0x1000, 0, "/nonexistent/b", None);
    unwinder.unwind(PID, regs, &[], &mut frames);
    assert_eq!(unwinder.counters().spaces_built, 2, "new maps, new unwinder");
    unwinder.on_exec(PID);
    unwinder.unwind(PID, regs, &[], &mut frames);
    assert_eq!(unwinder.counters().spaces_built, 3);
}
