//! Values pinned over real tracefs layouts (tests/fixtures/tracefs) and hand-built records.

use super::*;
use crate::sources::tracefs::parse_format;
use crate::trace::event::{EventIndex, FieldKind, FieldLayout};

fn layout(path: &str) -> EventLayout {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/tracefs/events/{path}/format",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture exists");
    let (system, name) = path.split_once('/').expect("sys/name");
    parse_format(system, name, &text).expect("fixture parses")
}

fn event(raw: &[u8]) -> TraceEvent<'_> {
    TraceEvent {
        time_ns: 1_000_000,
        cpu: 3,
        pid: 100,
        tid: 101,
        event: EventIndex(0),
        raw,
        callchain: &[],
        rebuilt: false,
    }
}

/// A sched_stat_runtime record as 6.18 lays it out: `__data_loc comm@8, pid@12,
/// runtime@16`, the comm payload after the fixed part.
fn stat_runtime_record(comm: &str, pid: i32, runtime: u64) -> Vec<u8> {
    let mut raw = vec![0u8; 24];
    raw[0..2].copy_from_slice(&363u16.to_le_bytes());
    raw[4..8].copy_from_slice(&pid.to_le_bytes());
    let payload_len = comm.len() as u32 + 1;
    raw[8..12].copy_from_slice(&(24u32 | (payload_len << 16)).to_le_bytes());
    raw[12..16].copy_from_slice(&pid.to_le_bytes());
    raw[16..24].copy_from_slice(&runtime.to_le_bytes());
    raw.extend_from_slice(comm.as_bytes());
    raw.push(0);
    raw
}

fn empty_layout() -> EventLayout {
    EventLayout {
        system: "t".into(),
        name: "t".into(),
        id: 1,
        fields: vec![],
        print_fmt: String::new(),
    }
}

fn int(text: &str) -> Option<i64> {
    let bound = Expr::parse(text)
        .and_then(|e| e.bind(&empty_layout()))
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    bound.eval(&event(&[])).map(|v| v.as_int().expect("an integer"))
}

#[test]
fn arithmetic_follows_c_precedence() {
    assert_eq!(int("1 + 2 * 3"), Some(7));
    assert_eq!(int("(1 + 2) * 3"), Some(9));
    assert_eq!(int("10 - 4 - 3"), Some(3), "left associative");
    assert_eq!(int("100 / 10 / 5"), Some(2));
    assert_eq!(int("7 % 4 + 1"), Some(4));
    assert_eq!(int("1 << 4 + 1"), Some(32), "+ binds tighter than <<");
    assert_eq!(int("1 | 2 ^ 3 & 6"), Some(1), "1 | (2 ^ (3 & 6))");
    assert_eq!(int("6 & 3 ^ 1"), Some(3), "(6 & 3) ^ 1");
    assert_eq!(int("1 < 2 == 1"), Some(1));
    assert_eq!(int("2 > 3 || 4 >= 4 && 0 != 1"), Some(1));
    assert_eq!(int("-5 / 2"), Some(-2), "signed division truncates");
    assert_eq!(int("!0 + !7 + ~0"), Some(0));
    assert_eq!(int("0x10 + 010 + 10"), Some(34), "hex, octal, decimal");
    assert_eq!(int("1 ? 2 : 3"), Some(2));
    assert_eq!(int("0 ? 2 : 0 ? 3 : 4"), Some(4), "?: is right associative");
    assert_eq!(int("-1 >> 60"), Some(-1), "signed shift is arithmetic");
    assert_eq!(
        int("0xffffffffffffffff >> 60"),
        Some(15),
        "u64 literal shifts logically"
    );
    assert_eq!(int("0xffffffffffffffff > 1"), Some(1), "u64 compares unsigned");
    assert_eq!(int("ntohs(0x1234) + ntohl(1)"), Some(0x3412 + 0x0100_0000));
    assert_eq!(int("_cpu * 1000 + _pid + _tid"), Some(3201));
    assert_eq!(int("_time / 1000"), Some(1000));
    assert_eq!(int("(u8)0x1ff"), Some(0xff));
    assert_eq!(int("(char)0xff"), Some(-1));
    assert_eq!(int("(unsigned  int)-1"), Some(0xffff_ffff));
    assert_eq!(int("(s32)0xffffffff + 1"), Some(0), "a cast binds tighter than +");
    assert_eq!(int("(bool)256"), Some(1));
    assert_eq!(int("(u64)-1 > 0"), Some(1), "(u64) makes the compare unsigned");
    assert_eq!(int("(long)-1 > 0"), Some(0));
    assert_eq!(int("(void *)-1 >> 63"), Some(1));
    assert_eq!(int("(1) + (2)"), Some(3), "a parenthesised value is not a cast");
}

#[test]
fn division_by_zero_is_none() {
    assert_eq!(int("1 / 0"), None);
    assert_eq!(int("1 % (2 - 2)"), None);
    assert_eq!(int("0xffffffffffffffff / 0"), None);
    assert_eq!(
        int("-9223372036854775807 - 1 == -9223372036854775807 - 1"),
        Some(1)
    );
    assert_eq!(
        int("(-9223372036854775807 - 1) / -1"),
        Some(i64::MIN),
        "wraps, no panic"
    );
}

#[test]
fn runtime_over_1000_on_the_real_sched_stat_runtime_layout() {
    let layout = layout("sched/sched_stat_runtime");
    let raw = stat_runtime_record("kworker/0:1", 4321, 1_234_567);
    let ev = event(&raw);
    let value = |text: &str| {
        Expr::parse(text)
            .and_then(|e| e.bind(&layout))
            .unwrap_or_else(|e| panic!("{e}"))
            .eval(&ev)
            .map(|v| v.to_string())
    };
    assert_eq!(value("runtime/1000").as_deref(), Some("1234"));
    assert_eq!(value("pid").as_deref(), Some("4321"));
    assert_eq!(value("common_pid + 1").as_deref(), Some("4322"));
    assert_eq!(value("comm").as_deref(), Some("kworker/0:1"));
    assert_eq!(value("comm == \"kworker/0:1\"").as_deref(), Some("1"));
    assert_eq!(value("comm != \"kworker/0:1\"").as_deref(), Some("0"));
    assert_eq!(value("comm ~ \"kworker*\"").as_deref(), Some("1"));
    assert_eq!(value("comm ~ \"ksoftirqd*\"").as_deref(), Some("0"));
    assert_eq!(value("comm[1]").as_deref(), Some("119"), "'w'");
    assert_eq!(value("strncmp(comm, \"kworker/1\", 8)").as_deref(), Some("0"));
    assert_eq!(value("strncmp(comm, \"kworker/1\", 9) < 0").as_deref(), Some("1"));
    assert_eq!(
        value("printf(\"%-12s|%6d|%lx\", comm, pid, runtime)").as_deref(),
        Some("kworker/0:1 |  4321|12d687")
    );
    assert_eq!(
        value("pid > 4000 ? comm : \"other\"").as_deref(),
        Some("kworker/0:1")
    );
    // A record cut before runtime: None, not a wrong number.
    assert_eq!(value_on(&layout, "runtime/1000", &raw[..20]), None);
    assert_eq!(value_on(&layout, "comm", &raw[..26]), None, "payload cut");
}

fn value_on(layout: &EventLayout, text: &str, raw: &[u8]) -> Option<String> {
    let bound = Expr::parse(text).and_then(|e| e.bind(layout)).expect("binds");
    bound.eval(&event(raw)).map(|v| v.to_string())
}

#[test]
fn array_indexing_on_sys_enter_args() {
    let layout = layout("raw_syscalls/sys_enter");
    let mut raw = vec![0u8; 64];
    raw[8..16].copy_from_slice(&0i64.to_le_bytes());
    for i in 0..6u64 {
        raw[16 + 8 * i as usize..24 + 8 * i as usize].copy_from_slice(&(i * 10 + 1).to_le_bytes());
    }
    assert_eq!(value_on(&layout, "args[1]", &raw).as_deref(), Some("11"));
    assert_eq!(value_on(&layout, "args[id + 5]", &raw).as_deref(), Some("51"));
    assert_eq!(value_on(&layout, "args[6]", &raw), None, "out of range");
    assert_eq!(value_on(&layout, "args[-1]", &raw), None);
    assert_eq!(
        value_on(&layout, "id == 0 && args[2] == 21", &raw).as_deref(),
        Some("1")
    );
}

#[test]
fn ksymbol_uses_the_callers_lookup_or_hex() {
    let layout = layout("raw_syscalls/sys_enter");
    let mut raw = vec![0u8; 64];
    raw[16..24].copy_from_slice(&0xffff_ffff_8100_0010u64.to_le_bytes());
    let bound = Expr::parse("ksymbol(args[0])")
        .and_then(|e| e.bind(&layout))
        .expect("binds");
    assert_eq!(
        bound.eval(&event(&raw)).map(|v| v.to_string()).as_deref(),
        Some("0xffffffff81000010")
    );
    let bound = bound.with_symbolizer(Arc::new(|addr| {
        (addr == 0xffff_ffff_8100_0010).then(|| "do_syscall_64".to_string())
    }));
    assert_eq!(
        bound
            .eval(&event(&raw))
            .and_then(|v| v.as_str().map(String::from))
            .as_deref(),
        Some("do_syscall_64")
    );
}

#[test]
fn printkey_binds_to_key_only() {
    let bound = Expr::parse("printf(\"%5d\", key)")
        .and_then(|e| e.bind_vars(&["key"]))
        .expect("binds");
    assert_eq!(bound.eval_vars(&[42]), Some(Value::Str(Cow::Borrowed("   42"))));
    let err = Expr::parse("key + pid")
        .and_then(|e| e.bind_vars(&["key"]))
        .unwrap_err();
    assert_eq!(err.position, 6);
    assert!(err.message.contains("'key'"), "{}", err.message);
}

#[test]
fn errors_point_at_the_bad_character() {
    let layout = layout("sched/sched_stat_runtime");
    let at = |text: &str| {
        let err = Expr::parse(text).and_then(|e| e.bind(&layout)).unwrap_err();
        (err.position, err.message)
    };
    let (pos, msg) = at("runtime / vruntime");
    assert_eq!(pos, 10);
    assert!(
        msg.contains("unknown field 'vruntime'") && msg.contains("comm, pid, runtime"),
        "{msg}"
    );
    assert_eq!(at("1 + ").0, 4);
    assert_eq!(at("(1 + 2").0, 6);
    assert_eq!(at("1 + 2)").0, 5);
    assert_eq!(at("pid = 1").0, 4);
    assert_eq!(at("pid @ 1").0, 4);
    assert_eq!(at("\"abc").0, 0);
    assert_eq!(at("0x").0, 0);
    assert_eq!(at("09").0, 0);
    assert_eq!(at("comm + 1").0, 5);
    assert_eq!(at("pid == \"x\"").0, 7);
    assert_eq!(at("nosuch(1)").0, 0);
    assert_eq!(at("printf(\"%d %d\", pid)").0, 0);
    assert_eq!(at("printf(\"a %f\", pid)").0, 10);
    assert_eq!(at("printf(\"%s\", pid)").0, 13);
    assert_eq!(at("pid[0]").0, 0);
    assert_eq!(at("").0, 0);
    let err = Expr::parse("runtime /* 2").unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad expression: expected a value, found '*'\n  runtime /* 2\n           ^"
    );
}

#[test]
fn no_input_panics() {
    let layout = layout("raw_syscalls/sys_enter");
    let mut inputs: Vec<String> = Vec::new();
    let seeds = [
        "args[1] + id * 3 ? printf(\"%5lx\", args[0]) : \"x\"",
        "comm ~ \"kw[a-z\" && strncmp(\"a\", \"b\", -1)",
        "((((((((1))))))))",
        "0xffffffffffffffffff",
        "'\\",
        "-~!+-~!1",
        "printf(\"%",
        "a[b[c[d]]]",
    ];
    for seed in seeds {
        for end in 0..=seed.len() {
            if seed.is_char_boundary(end) {
                inputs.push(seed[..end].to_string());
                inputs.push(seed[end..].to_string());
            }
        }
    }
    inputs.push("(".repeat(10_000));
    inputs.push("-".repeat(10_000) + "1");
    inputs.push(vec!["1"; 10_000].join("+"));
    inputs.push("a[".repeat(5_000));
    inputs.push("1?".repeat(5_000));
    inputs.push("é~ü".into());
    inputs.push("printf(\"\\é%f\", 1)".into());
    for text in &inputs {
        match Expr::parse(text).and_then(|e| e.bind(&layout)) {
            Ok(bound) => {
                for raw in [&[][..], &[0xff; 7][..], &[0xff; 64][..]] {
                    let _ = bound.eval(&event(raw));
                }
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
        if let Err(e) = Filter::compile(text, &layout) {
            let _ = e.to_string();
        }
    }
    assert!(
        Expr::parse(&"(".repeat(10_000))
            .unwrap_err()
            .message
            .contains("nested deeper")
    );
    assert!(
        Expr::parse(&vec!["1"; 10_000].join("+"))
            .unwrap_err()
            .message
            .contains("nested deeper")
    );
}

#[test]
fn filters_accept_ftrace_syntax() {
    let switch = layout("sched/sched_switch");
    let mut raw = vec![0u8; 64];
    raw[8..12].copy_from_slice(b"bash");
    raw[24..28].copy_from_slice(&1234i32.to_le_bytes());
    raw[28..32].copy_from_slice(&120i32.to_le_bytes());
    raw[32..40].copy_from_slice(&1i64.to_le_bytes());
    raw[40..51].copy_from_slice(b"kworker/0:1");
    raw[56..60].copy_from_slice(&0i32.to_le_bytes());
    raw[60..64].copy_from_slice(&120i32.to_le_bytes());
    let ev = event(&raw);
    let check = |text: &str| {
        Filter::compile(text, &switch)
            .unwrap_or_else(|e| panic!("{e}"))
            .matches(&ev)
    };
    assert!(check("prev_pid == 1234"));
    assert!(check("prev_comm == \"bash\""));
    assert!(check("prev_comm == bash"), "unquoted string value");
    assert!(check("next_comm ~ kworker*"), "unquoted glob");
    assert!(check("next_comm ~ \"kworker*\" && prev_state & 1"));
    assert!(check("!(prev_pid < 1000) || next_pid == 5"));
    assert!(check("prev_comm != zsh&&next_pid==0"));
    assert!(
        check("next_pid < prev_prio"),
        "field vs field, rejected by some kernels"
    );
    assert!(!check("prev_pid < prev_prio"));
    assert!(!check("prev_comm == zsh"));
    assert!(check("cpu == 3 && CPU < 4"), "ftrace's special cpu field");
    assert!(Filter::compile("comm == bash", &switch).is_err());
    assert!(check("1"));
    assert!(!check("0"));
    assert!(!check("prev_pid / next_pid"), "division by zero does not match");
    let err = Filter::compile("prev_pid == bash", &switch).unwrap_err();
    assert!(err.message.contains("unknown field 'bash'"), "{}", err.message);
    assert!(
        Filter::compile("prev_comm", &switch).is_err(),
        "a string is not a condition"
    );
    // A record cut short never matches.
    let cut = event(&raw[..20]);
    assert!(
        !Filter::compile("prev_pid == 1234", &switch)
            .expect("compiles")
            .matches(&cut)
    );
}

#[test]
fn data_loc_arrays_index_their_payload() {
    let dma = layout("dma/dma_map_sg");
    let mut raw = vec![0u8; 48];
    // phys_addrs @24: two u64 at 48.
    raw[24..28].copy_from_slice(&(48u32 | (16u32 << 16)).to_le_bytes());
    raw.extend_from_slice(&7u64.to_le_bytes());
    raw.extend_from_slice(&9u64.to_le_bytes());
    assert_eq!(value_on(&dma, "phys_addrs[1]", &raw).as_deref(), Some("9"));
    assert_eq!(value_on(&dma, "phys_addrs[2]", &raw), None);
    let err = Expr::parse("phys_addrs + 1")
        .and_then(|e| e.bind(&dma))
        .unwrap_err();
    assert!(err.message.contains("dynamic array"), "{}", err.message);
    let fl = FieldLayout {
        name: "x".into(),
        declaration: "long x[3]".into(),
        offset: 0,
        size: 24,
        kind: FieldKind::Array { element_size: 8 },
    };
    let l = EventLayout {
        fields: vec![fl],
        ..empty_layout()
    };
    let raw = (-5i64).to_le_bytes().repeat(3);
    assert_eq!(value_on(&l, "x[2] < 0", &raw).as_deref(), Some("1"));
}

#[test]
fn bound_expressions_and_filters_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<BoundExpr>();
    send_sync::<Filter>();
    send_sync::<Expr>();
}

#[test]
fn bound_text_shows_where_fields_are_read_and_which_operators_are_unsigned() {
    let switch = layout("sched/sched_switch");
    let bound = |text: &str| Expr::parse(text).unwrap().bind(&switch).unwrap().bound_text();
    // prev_pid: pid_t (4 bytes, signed) at offset 24; prev_state: long at 32.
    assert_eq!(
        bound("prev_pid * 2 + (next_pid == 1)"),
        "((s32@24 * 2) + (s32@56 == 1))"
    );
    assert_eq!(bound("(u64)prev_state < 5"), "((u64)s64@32 <u 5)");
    assert_eq!(
        bound("prev_comm ~ \"kworker*\""),
        "(str@8(prev_comm) ~ \"kworker*\")"
    );
    assert_eq!(bound("_cpu ? -_pid : !_tid"), "(_cpu ? -_pid : !_tid)");
}
