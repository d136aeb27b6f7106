//! Host symbolization on real files and the real /proc: this test process, libc, the
//! running kernel, and a small C program (tests/fixtures/host/spin.c) built here with gcc
//! and run as a child, with its debug info in place, split into a debuglink file, or
//! stripped away.
//!
//! Expected names and addresses come from the ELF itself (read with `object`) and from
//! the child's /proc/PID/maps, computed independently of the symbolizer: the load bias is
//! where the file's offset-0 mapping starts, minus the ELF's lowest load address.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};

use perfscope::symbols::host::{
    FileKey, HostFrame, HostSymbolizer, HostSymbolizerOptions, RootFrame, lookup_address,
};

fn user_only() -> HostSymbolizerOptions {
    HostSymbolizerOptions {
        kernel: false,
        ..HostSymbolizerOptions::default()
    }
}

/// User space named from DWARF too (`--inline`): inline chains and source lines.
fn user_dwarf() -> HostSymbolizerOptions {
    HostSymbolizerOptions {
        inline_frames: true,
        ..user_only()
    }
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/host/spin.c")
}

/// `gcc -O1 -g -fno-omit-frame-pointer` + `flags`, into `dir/name`.
fn build(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let status = Command::new("gcc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-rdynamic"])
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(fixture())
        .status()
        .expect("gcc must be installed for the host symbol tests");
    assert!(status.success(), "gcc failed on {}", fixture().display());
    out
}

fn build_pie(dir: &Path, name: &str) -> PathBuf {
    build(dir, name, &["-fPIE", "-pie"])
}

fn run(tool: &str, args: &[&std::ffi::OsStr]) {
    let status = Command::new(tool)
        .args(args)
        .status()
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(status.success(), "{tool} {args:?} failed");
}

/// A running child that has printed "ready"; killed on drop.
struct Spin {
    child: Child,
    exe: PathBuf,
}

impl Spin {
    fn start(exe: &Path) -> Self {
        let mut child = Command::new(exe)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", exe.display()));
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("read the child's ready line");
        assert_eq!(line, "ready\n");
        Self {
            child,
            exe: exe.canonicalize().expect("canonical exe path"),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Where ELF virtual address `vaddr` of `elf` (the unstripped build) runs in the child.
    fn runtime_address(&self, elf: &Path, vaddr: u64) -> u64 {
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", self.pid())).expect("child maps");
        let exe = self.exe.to_str().expect("utf-8 path");
        let base = maps
            .lines()
            .filter(|l| l.ends_with(exe))
            .find_map(|l| {
                let mut f = l.split_whitespace();
                let start = f.next()?.split('-').next()?;
                f.next()?;
                (f.next()? == "00000000").then(|| u64::from_str_radix(start, 16).ok())?
            })
            .expect("the executable's offset-0 mapping");
        let data = std::fs::read(elf).expect("read ELF");
        let file = object::File::parse(&*data).expect("parse ELF");
        let lowest = file.segments().map(|s| s.address()).min().expect("segments") & !0xfff;
        base + (vaddr - lowest)
    }

    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Spin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Text symbols of an ELF: name → (address, size).
fn functions(elf: &Path) -> HashMap<String, (u64, u64)> {
    let data = std::fs::read(elf).expect("read ELF");
    let file = object::File::parse(&*data).expect("parse ELF");
    file.symbols()
        .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
        .filter_map(|s| Some((s.name().ok()?.to_string(), (s.address(), s.size()))))
        .collect()
}

fn names(frames: &[HostFrame]) -> Vec<&str> {
    frames.iter().map(|f| &*f.name).collect()
}

#[inline(never)]
fn host_symbols_probe_target(x: u64) -> u64 {
    std::hint::black_box(x.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

#[test]
fn own_function_resolves_through_proc_self_maps() {
    let mut s = HostSymbolizer::new(user_dwarf()).unwrap();
    assert_eq!(host_symbols_probe_target(1), 0x9E37_79B9_7F4A_7C15);
    let address = host_symbols_probe_target as *const () as u64;
    let frames = s.resolve_user(std::process::id(), address + 1);
    let leaf = frames.last().expect("a frame");
    assert_eq!(
        &*leaf.name, "host_symbols::host_symbols_probe_target",
        "{frames:?}"
    );
    let exe = std::env::current_exe().unwrap();
    assert_eq!(&*leaf.module, exe.file_name().unwrap().to_str().unwrap());
    assert!(
        leaf.file
            .as_deref()
            .is_some_and(|f| f.ends_with("host_symbols.rs")),
        "{leaf:?}"
    );
    assert!(leaf.line > 0);
    assert_eq!(s.counters().files_loaded, 1);
    assert_eq!(s.counters().resolved, 1);
}

/// By default (no `--inline`) names come from symbol tables alone, as perf-prof's: the
/// function and the offset into it, no source line — even where DWARF is at hand (this
/// test binary's own).
#[test]
fn without_inline_frames_names_come_from_symbol_tables() {
    let mut s = HostSymbolizer::new(user_only()).unwrap();
    let address = host_symbols_probe_target as *const () as u64;
    let frames = s.resolve_user(std::process::id(), address + 1);
    assert_eq!(
        frames
            .iter()
            .map(|f| (&*f.name, f.offset, f.line))
            .collect::<Vec<_>>(),
        [("host_symbols::host_symbols_probe_target", Some(1), 0)]
    );
    let getpid = s.resolve_user(std::process::id(), libc::getpid as *const () as u64);
    assert!(
        getpid.len() == 1 && getpid[0].name.contains("getpid") && getpid[0].offset == Some(0),
        "{getpid:?}"
    );
}

#[test]
fn libc_getpid_resolves_in_libc() {
    let mut s = HostSymbolizer::new(user_dwarf()).unwrap();
    let address = libc::getpid as *const () as u64;
    let frames = s.resolve_user(std::process::id(), address);
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert!(frames[0].name.contains("getpid"), "{frames:?}");
    assert_eq!(&*frames[0].module, "libc.so.6");
    // With libc's debug package installed (found by build-id) the name and line come from
    // its DWARF; without it, from libc's .dynsym at the function's first byte.
    let libc_path = std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .find(|l| l.ends_with("/libc.so.6"))
        .and_then(|l| l.split_whitespace().last())
        .map(PathBuf::from)
        .expect("libc.so.6 mapped");
    let data = std::fs::read(&libc_path).unwrap();
    let build_id = object::File::parse(&*data)
        .unwrap()
        .build_id()
        .unwrap()
        .expect("libc build-id");
    let hex: String = build_id.iter().map(|b| format!("{b:02x}")).collect();
    let debug_file = PathBuf::from(format!(
        "/usr/lib/debug/.build-id/{}/{}.debug",
        &hex[..2],
        &hex[2..]
    ));
    if debug_file.exists() {
        assert!(frames[0].line > 0, "{frames:?}");
        assert_eq!(s.symbol_sources(std::process::id(), address)[1], debug_file);
    } else {
        assert_eq!(frames[0].offset, Some(0), "the function's first byte: {frames:?}");
    }
    // A second lookup is a cache hit and names the same function.
    assert_eq!(s.resolve_user(std::process::id(), address), frames);
    assert_eq!(s.counters().cache_hits, 1);
}

#[test]
fn kernel_symbols_from_proc_kallsyms_with_modules() {
    let mut s = HostSymbolizer::new(HostSymbolizerOptions::default()).expect("root reads /proc/kallsyms");
    assert!(s.kernel_symbol_count() > 10_000);
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap();
    let schedule = kallsyms
        .lines()
        .find_map(|l| l.strip_suffix(" T schedule"))
        .map(|a| u64::from_str_radix(a, 16).unwrap())
        .expect("schedule in /proc/kallsyms");
    let frame = s.resolve_kernel(schedule + 2);
    assert_eq!(
        (&*frame.name, &*frame.module, frame.offset),
        ("schedule", "[kernel.kallsyms]", Some(2))
    );

    let module_symbol = kallsyms.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() == 4 && matches!(f[1], "t" | "T")).then(|| (u64::from_str_radix(f[0], 16).unwrap(), f[3]))
    });
    match module_symbol {
        Some((address, module)) => {
            let frame = s.resolve_kernel(address);
            assert_eq!(&*frame.module, module, "{frame:?}");
            assert!(
                !frame.name.contains('['),
                "the module is not part of the name: {frame:?}"
            );
        }
        // No module symbol at all: the kernel has no modules loaded (or no module support).
        None => assert!(
            std::fs::read_to_string("/proc/modules")
                .map(|m| m.trim().is_empty())
                .unwrap_or(true)
        ),
    }
    assert_eq!(&*s.resolve_kernel(1).name, "[unknown]");
}

#[test]
fn hidden_kallsyms_addresses_say_to_run_as_root() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kallsyms");
    std::fs::write(&path, "0000000000000000 T _text\n0000000000000000 T schedule\n").unwrap();
    let options = HostSymbolizerOptions {
        kallsyms_path: path,
        ..HostSymbolizerOptions::default()
    };
    let message = HostSymbolizer::new(options).err().expect("an error").to_string();
    assert!(
        message.contains("run as root") && message.contains("kernel.kptr_restrict=0"),
        "{message}"
    );
}

#[test]
fn c_child_resolves_by_dwarf_with_its_inline_chain() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_pie(dir.path(), "spin");
    let funcs = functions(&exe);
    let spin = Spin::start(&exe);
    let mut s = HostSymbolizer::new(user_dwarf()).unwrap();

    for name in [
        "perfscope_hot_leaf",
        "perfscope_static_step",
        "perfscope_outer",
        "main",
    ] {
        let (vaddr, _) = funcs[name];
        let frames = s.resolve_user(spin.pid(), spin.runtime_address(&exe, vaddr));
        let leaf = frames.last().unwrap();
        assert_eq!(&*leaf.name, name, "{frames:?}");
        assert_eq!(&*leaf.module, "spin");
        assert_eq!(leaf.offset, None, "a DWARF name");
        assert!(
            leaf.file.as_deref().is_some_and(|f| f.ends_with("spin.c")) && leaf.line > 0,
            "{leaf:?}"
        );
    }

    // Somewhere in perfscope_outer the always-inline helper runs: chain innermost first.
    let (start, size) = funcs["perfscope_outer"];
    let inlined = (start..start + size)
        .map(|a| s.resolve_user(spin.pid(), spin.runtime_address(&exe, a)))
        .find(|frames| frames.len() == 2)
        .expect("an address inside the inlined helper");
    assert_eq!(names(&inlined), ["perfscope_inlined_mix", "perfscope_outer"]);

    let c = s.counters();
    assert_eq!(c.files_loaded, 1, "one file, loaded once");
    assert_eq!(c.maps_reads, 1, "maps read once, on the first address");
    assert_eq!(c.unresolved, 0);

    // An exited child stays resolvable for the grace: its samples may still be queued.
    let pid = spin.pid();
    let hot = spin.runtime_address(&exe, funcs["perfscope_hot_leaf"].0 + 4);
    spin.kill();
    s.on_exit(pid);
    assert_eq!(names(&s.resolve_user(pid, hot)), ["perfscope_hot_leaf"]);
}

#[test]
fn an_idle_file_is_dropped_and_loaded_again_when_needed() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_pie(dir.path(), "spin");
    let funcs = functions(&exe);
    let spin = Spin::start(&exe);
    let mut s = HostSymbolizer::new(HostSymbolizerOptions {
        file_idle: std::time::Duration::from_millis(100),
        ..user_only()
    })
    .unwrap();
    let at = |name: &str| spin.runtime_address(&exe, funcs[name].0);
    assert_eq!(
        names(&s.resolve_user(spin.pid(), at("perfscope_hot_leaf"))),
        ["perfscope_hot_leaf"]
    );
    assert_eq!(names(&s.resolve_user(spin.pid(), at("main"))), ["main"]);
    assert_eq!(s.counters().files_loaded, 1, "used while loaded: kept");
    // Idle past the limit (and the once-a-second sweep): the next new address loads it anew.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    assert_eq!(
        names(&s.resolve_user(spin.pid(), at("perfscope_outer"))),
        ["perfscope_outer"]
    );
    assert_eq!(s.counters().files_loaded, 2);
    // An address resolved before is answered from the address cache, file or not.
    assert_eq!(names(&s.resolve_user(spin.pid(), at("main"))), ["main"]);
    assert_eq!(s.counters().files_loaded, 2);
}

/// Strip `exe` in place with `objcopy` options.
fn objcopy(args: &[&str], exe: &Path) {
    let mut all: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    all.push(exe.as_os_str());
    run("objcopy", &all);
}

/// Split `exe`'s debug info into `debug_file` and link it (`--add-gnu-debuglink`).
fn split_debug(exe: &Path, debug_file: &Path) {
    run(
        "objcopy",
        &[
            "--only-keep-debug".as_ref(),
            exe.as_os_str(),
            debug_file.as_os_str(),
        ],
    );
    objcopy(&["--strip-all"], exe);
    let link = format!("--add-gnu-debuglink={}", debug_file.display());
    objcopy(&[&link], exe);
}

/// Where a test puts a separate debug file.
#[derive(Copy, Clone, Debug)]
enum DebugPlace {
    NextToTheFile,
    DotDebugFolder,
    /// `<debug root>/<the file's folder>/spin.debug`
    DebugRootMirror,
    /// `<debug root>/.build-id/xx/rest.debug`
    BuildIdPath,
}

#[test]
fn separate_debug_files_are_found_where_gdb_looks() {
    use DebugPlace::*;
    for place in [NextToTheFile, DotDebugFolder, DebugRootMirror, BuildIdPath] {
        let dir = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let exe = build_pie(dir.path(), "spin");
        let funcs = functions(&exe);
        let data = std::fs::read(&exe).unwrap();
        let build_id: String = object::File::parse(&*data)
            .unwrap()
            .build_id()
            .unwrap()
            .expect("gcc writes a build-id")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let exe_dir = exe.parent().unwrap().canonicalize().unwrap();
        let debug_file = match place {
            NextToTheFile => exe_dir.join("spin.debug"),
            DotDebugFolder => exe_dir.join(".debug/spin.debug"),
            DebugRootMirror => root
                .path()
                .join(exe_dir.strip_prefix("/").unwrap())
                .join("spin.debug"),
            BuildIdPath => root
                .path()
                .join(".build-id")
                .join(&build_id[..2])
                .join(format!("{}.debug", &build_id[2..])),
        };
        // objcopy records the base name (and CRC) of the file it links.
        let staging = dir.path().join("spin.debug");
        split_debug(&exe, &staging);
        if debug_file != staging {
            std::fs::create_dir_all(debug_file.parent().unwrap()).unwrap();
            std::fs::rename(&staging, &debug_file).unwrap();
        }
        assert!(
            !functions(&exe).contains_key("perfscope_static_step"),
            "fully stripped"
        );

        let spin = Spin::start(&exe);
        let options = HostSymbolizerOptions {
            debug_root: root.path().to_path_buf(),
            ..user_dwarf()
        };
        let mut s = HostSymbolizer::new(options).unwrap();
        let address = spin.runtime_address(&debug_file, funcs["perfscope_static_step"].0 + 1);
        let frames = s.resolve_user(spin.pid(), address);
        assert_eq!(names(&frames), ["perfscope_static_step"], "{place:?}");
        assert!(
            frames[0].line > 0,
            "DWARF lines come from the debug file: {place:?} {frames:?}"
        );
        assert_eq!(
            s.symbol_sources(spin.pid(), address),
            [exe.canonicalize().unwrap(), debug_file.clone()],
            "{place:?}"
        );
    }
}

#[test]
fn a_debuglink_file_of_another_build_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_pie(dir.path(), "spin");
    let funcs = functions(&exe);
    split_debug(&exe, &dir.path().join("spin.debug"));
    // Replace the debug file with the debug info of a different build of the same name.
    let other_dir = tempfile::tempdir().unwrap();
    let other = build(other_dir.path(), "spin", &["-fPIE", "-pie", "-DVARIANT=1"]);
    run(
        "objcopy",
        &[
            "--only-keep-debug".as_ref(),
            other.as_os_str(),
            dir.path().join("spin.debug").as_os_str(),
        ],
    );

    let spin = Spin::start(&exe);
    let mut s = HostSymbolizer::new(user_only()).unwrap();
    let frames = s.resolve_user(
        spin.pid(),
        spin.runtime_address(&exe, funcs["perfscope_hot_leaf"].0 + 4),
    );
    assert_eq!(names(&frames), ["perfscope_hot_leaf"]);
    assert_eq!(
        (frames[0].offset, frames[0].line),
        (Some(4), 0),
        "from .dynsym, not the foreign DWARF"
    );
}

#[test]
fn without_debug_info_names_come_from_symtab_then_dynsym() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_pie(dir.path(), "spin");
    let funcs = functions(&exe);
    objcopy(&["--strip-debug"], &exe);
    let spin = Spin::start(&exe);
    let mut s = HostSymbolizer::new(user_only()).unwrap();
    let frames = s.resolve_user(
        spin.pid(),
        spin.runtime_address(&exe, funcs["perfscope_static_step"].0 + 3),
    );
    assert_eq!(
        names(&frames),
        ["perfscope_static_step"],
        "a local symbol: .symtab"
    );
    assert_eq!((frames[0].offset, frames[0].file.clone()), (Some(3), None));
    spin.kill();

    let dir = tempfile::tempdir().unwrap();
    let exe = build_pie(dir.path(), "spin");
    objcopy(&["--strip-all"], &exe);
    let spin = Spin::start(&exe);
    let mut s = HostSymbolizer::new(user_only()).unwrap();
    let hot = s.resolve_user(
        spin.pid(),
        spin.runtime_address(&exe, funcs["perfscope_hot_leaf"].0 + 5),
    );
    assert_eq!(
        names(&hot),
        ["perfscope_hot_leaf"],
        "exported (-rdynamic): .dynsym"
    );
    assert_eq!(hot[0].offset, Some(5));
    let (vaddr, _) = funcs["perfscope_static_step"];
    let local = s.resolve_user(spin.pid(), spin.runtime_address(&exe, vaddr));
    assert_eq!(
        (&*local[0].name, &*local[0].module, local[0].offset),
        ("[unknown]", "spin", Some(vaddr)),
        "a local function has no name left, but the frame names the file"
    );
    assert_eq!(s.counters().unresolved, 1);
}

#[test]
fn fixed_address_executable_maps_file_offsets_through_pt_load() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "spin", &["-no-pie", "-Wl,-Ttext-segment=0x200000"]);
    let funcs = functions(&exe);
    let (vaddr, _) = funcs["perfscope_hot_leaf"];
    assert!(
        vaddr > 0x200000,
        "linked at 0x200000, file offsets differ from addresses"
    );
    let spin = Spin::start(&exe);
    assert_eq!(spin.runtime_address(&exe, vaddr), vaddr, "not relocated");
    let mut s = HostSymbolizer::new(user_only()).unwrap();
    assert_eq!(
        names(&s.resolve_user(spin.pid(), vaddr + 2)),
        ["perfscope_hot_leaf"]
    );
}

#[test]
fn a_file_replaced_on_disk_does_not_reuse_stale_symbols() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_pie(dir.path(), "spin");
    let old_funcs = functions(&exe);
    let first = Spin::start(&exe);
    let mut s = HostSymbolizer::new(user_only()).unwrap();
    let old_hot = first.runtime_address(&exe, old_funcs["perfscope_hot_leaf"].0);
    assert_eq!(
        names(&s.resolve_user(first.pid(), old_hot)),
        ["perfscope_hot_leaf"]
    );

    // A new build moved the functions; it replaces the file (a new inode, as installs do).
    let staging = tempfile::tempdir_in(dir.path()).unwrap();
    let new = build(staging.path(), "spin", &["-fPIE", "-pie", "-DVARIANT=1"]);
    let new_funcs = functions(&new);
    std::fs::rename(&new, &exe).unwrap();
    assert_ne!(old_funcs["perfscope_hot_leaf"], new_funcs["perfscope_hot_leaf"]);
    let second = Spin::start(&exe);
    for name in [
        "perfscope_hot_leaf",
        "perfscope_variant_padding",
        "perfscope_outer",
    ] {
        let address = second.runtime_address(&exe, new_funcs[name].0);
        assert_eq!(names(&s.resolve_user(second.pid(), address)), [name]);
    }
    assert_eq!(s.counters().files_loaded, 2, "one load per file version");

    // The first child still runs the deleted old file: a fresh symbolizer reads it through
    // /proc/PID/map_files, not the new file at the same path.
    let mut fresh = HostSymbolizer::new(user_only()).unwrap();
    let (outer, _) = old_funcs["perfscope_outer"];
    let address = old_hot - old_funcs["perfscope_hot_leaf"].0 + outer;
    assert_eq!(fresh.module_at(first.pid(), address).as_deref(), Some("spin"));
    assert_eq!(
        names(&fresh.resolve_user(first.pid(), address)),
        ["perfscope_outer"]
    );
}

#[test]
fn mmap_fork_exec_exit_records_drive_the_lookups() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_pie(dir.path(), "spin");
    let funcs = functions(&exe);
    let data = std::fs::read(&exe).unwrap();
    let elf = object::File::parse(&*data).unwrap();
    let text = elf
        .segments()
        .find(|seg| {
            let (offset, size) = seg.file_range();
            (seg.address()..seg.address() + size).contains(&funcs["perfscope_hot_leaf"].0) && offset > 0
        })
        .expect("the text segment");
    let (text_offset, text_size) = text.file_range();
    let text_vaddr = text.address();
    drop(elf);

    // Pids no kernel hands out (above PID_MAX_LIMIT), so only the records define them.
    const PARENT: u32 = 4_000_000_001;
    const CHILD: u32 = 4_000_000_002;
    const START: u64 = 0x5555_0000_0000;
    let at = |name: &str| START + (funcs[name].0 - text_vaddr);
    let mut s = HostSymbolizer::new(user_only()).unwrap();
    s.on_comm(PARENT, PARENT, "spin", true);
    s.on_mmap(PARENT, START, text_size, text_offset, exe.to_str().unwrap(), None);
    assert_eq!(
        names(&s.resolve_user(PARENT, at("perfscope_outer"))),
        ["perfscope_outer"]
    );

    s.on_fork(PARENT, CHILD);
    assert_eq!(
        names(&s.resolve_user(CHILD, at("perfscope_hot_leaf"))),
        ["perfscope_hot_leaf"]
    );
    assert_eq!(
        s.counters().files_loaded,
        1,
        "parent and child share the file's symbols"
    );

    // exec in the child: the old image is gone until new mappings arrive.
    s.on_comm(CHILD, CHILD, "other", true);
    assert_eq!(
        &*s.resolve_user(CHILD, at("perfscope_hot_leaf"))[0].name,
        "[unknown]"
    );
    assert_eq!(s.comm(CHILD, CHILD).as_deref(), Some("other"));
    s.on_mmap(CHILD, START + 0x10_0000, text_size, text_offset, "//anon", None);
    assert_eq!(&*s.resolve_user(CHILD, START + 0x10_0010)[0].module, "[anon]");
    // The parent is untouched.
    assert_eq!(
        names(&s.resolve_user(PARENT, at("perfscope_hot_leaf"))),
        ["perfscope_hot_leaf"]
    );

    // The record's own device/inode identify the file (what MMAP2 carries).
    let key = FileKey::of_path(exe.to_str().unwrap()).unwrap();
    s.on_mmap(
        CHILD,
        START,
        text_size,
        text_offset,
        exe.to_str().unwrap(),
        Some(key),
    );
    assert_eq!(
        names(&s.resolve_user(CHILD, at("perfscope_hot_leaf"))),
        ["perfscope_hot_leaf"]
    );

    // Root frames like perf top's comm,pid sort keys.
    let options = HostSymbolizerOptions {
        root_frame: RootFrame::CommPid,
        ..user_only()
    };
    let mut rooted = HostSymbolizer::new(options).unwrap();
    rooted.on_comm(PARENT, PARENT + 7, "worker", false);
    assert_eq!(
        rooted.root_frame_text(PARENT, PARENT + 7, None).as_deref(),
        Some("worker:4000000001")
    );

    assert_eq!(
        lookup_address(at("perfscope_outer"), 1),
        at("perfscope_outer") - 1
    );
}

/// The start of a process's `[vdso]` mapping.
fn vdso_start(pid: u32) -> u64 {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    maps.lines()
        .find(|l| l.ends_with("[vdso]"))
        .and_then(|l| u64::from_str_radix(l.split('-').next()?, 16).ok())
        .expect("a [vdso] mapping")
}

/// The address of `name` in this process's vDSO, from the image itself.
fn own_vdso_symbol(name: &str) -> u64 {
    use std::os::unix::fs::FileExt;
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let line = maps
        .lines()
        .find(|l| l.ends_with("[vdso]"))
        .expect("a [vdso] mapping");
    let (start, end) = line.split_whitespace().next().unwrap().split_once('-').unwrap();
    let (start, end) = (
        u64::from_str_radix(start, 16).unwrap(),
        u64::from_str_radix(end, 16).unwrap(),
    );
    let mut image = vec![0u8; (end - start) as usize];
    std::fs::File::open("/proc/self/mem")
        .unwrap()
        .read_exact_at(&mut image, start)
        .unwrap();
    let elf = object::File::parse(&*image).unwrap();
    let lowest = elf.segments().map(|s| s.address()).min().unwrap();
    let symbol = elf
        .dynamic_symbols()
        .find(|s| s.name() == Ok(name))
        .unwrap_or_else(|| panic!("{name} in the vDSO"));
    start + (symbol.address() - lowest)
}

#[test]
fn vdso_frames_are_named_from_the_kernel_image() {
    let mut s = HostSymbolizer::new(user_only()).unwrap();
    let address = own_vdso_symbol("__vdso_clock_gettime") + 1;
    let frames = s.resolve_user(std::process::id(), address);
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert!(frames[0].name.contains("clock_gettime"), "{frames:?}");
    assert_eq!((&*frames[0].module, frames[0].offset), ("[vdso]", Some(1)));

    // Another process's vDSO is the same image at its own address.
    let dir = tempfile::tempdir().unwrap();
    let spin = Spin::start(&build_pie(dir.path(), "spin"));
    let in_child = vdso_start(spin.pid()) + (address - vdso_start(std::process::id()));
    assert_eq!(s.resolve_user(spin.pid(), in_child), frames);
    assert_eq!(s.counters().cache_hits, 1, "one image, one cache entry");
}

#[test]
fn jit_code_in_anonymous_memory_is_named_by_the_perf_map() {
    // A pid no kernel hands out, so its perf map is this test's alone.
    const PID: u32 = 4_000_000_011;
    const JIT: u64 = 0x7f00_0000_0000;
    let map = PathBuf::from(format!("/tmp/perf-{PID}.map"));
    std::fs::write(&map, format!("{:x} 40 LazyCompile:*fib app.js:3\n", JIT + 0x100)).unwrap();

    let mut s = HostSymbolizer::new(user_only()).unwrap();
    s.on_comm(PID, PID, "node", true);
    s.on_mmap(PID, JIT, 0x10000, 0, "//anon", None);
    let frames = s.resolve_user(PID, JIT + 0x104);
    std::fs::remove_file(&map).unwrap();
    assert_eq!(
        (&*frames[0].name, &*frames[0].module, frames[0].offset),
        ("LazyCompile:*fib app.js:3", "perf-4000000011.map", Some(4))
    );
    // Anonymous code the map does not list still names its mapping.
    let unlisted = s.resolve_user(PID, JIT + 0x200);
    assert_eq!(
        (&*unlisted[0].name, &*unlisted[0].module),
        ("[unknown]", "[anon]")
    );
    // An address no mapping holds.
    assert_eq!(&*s.resolve_user(PID, 0x1000)[0].module, "[unknown]");
}
