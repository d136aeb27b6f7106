//! Each print fmt helper and conversion over hand-written formats, with the text the
//! kernel's (and libtraceevent's) printer gives for the same bytes.

use super::record::Record;
use super::{EventPrinter, PrintFmt};
use crate::sources::tracefs::parse_format;
use crate::trace::event::EventLayout;

/// A format file with the four common fields, then `fields` (`type name;offset;size;signed`).
fn layout(fields: &[(&str, usize, usize, bool)], print_fmt: &str) -> EventLayout {
    let mut text = String::from(
        "name: t\nID: 7\nformat:\n\
         \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
         \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
         \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
         \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n",
    );
    for (declaration, offset, size, signed) in fields {
        text.push_str(&format!(
            "\tfield:{declaration};\toffset:{offset};\tsize:{size};\tsigned:{};\n",
            u8::from(*signed)
        ));
    }
    text.push_str(&format!("\nprint fmt: {print_fmt}\n"));
    parse_format("t", "t", &text).expect("format parses")
}

fn render(layout: &EventLayout, record: &Record<'_>) -> String {
    PrintFmt::compile(layout)
        .unwrap_or_else(|e| panic!("{e}"))
        .render(&record.event())
        .expect("renders")
}

#[test]
fn conversions_widths_and_length_modifiers() {
    let l = layout(
        &[
            ("int a", 8, 4, true),
            ("unsigned long b", 16, 8, false),
            ("char c[8]", 24, 8, true),
        ],
        r#""[%-6s|%6s|%08lx|%llu|%hhu|%hu|%c|%%|%d|%u|%#x|%5.3d]", REC->c, REC->c, REC->b, REC->b, REC->a, REC->a, REC->a & 0xff, REC->a, REC->a, REC->a, REC->a"#,
    );
    let r = Record::new(&l).int("a", -191).int("b", 0xbeef).text("c", "sh");
    // -191 = 0xffffff41: %hhu 65, %hu 65345, %c 'A', %u 4294967105.
    assert_eq!(
        render(&l, &r),
        "[sh    |    sh|0000beef|48879|65|65345|A|%|-191|4294967105|0xffffff41| -191]"
    );
}

#[test]
fn star_width_and_precision_take_arguments() {
    let l = layout(
        &[("int len", 8, 4, true), ("__data_loc char[] name", 12, 4, false)],
        r#""name %.*s|%*d|%-*d|", REC->len, __get_str(name), REC->len, 7, REC->len, 7"#,
    );
    let r = Record::new(&l).int("len", 3).text("name", "kworker");
    assert_eq!(render(&l, &r), "name kwo|  7|7  |");
}

#[test]
fn pointers_print_as_glibc_and_symbols_use_the_lookup() {
    let l = layout(
        &[
            ("void * p", 8, 8, false),
            ("void * q", 16, 8, false),
            ("void * f", 24, 8, false),
        ],
        r#""p=%p q=%p f=%pS g=%ps", REC->p, REC->q, REC->f, REC->f"#,
    );
    let r = Record::new(&l)
        .int("p", 0)
        .int("q", 0xffff_8881_0000_1000u64 as i64)
        .int("f", 0xffff_ffff_8100_0010u64 as i64);
    assert_eq!(
        render(&l, &r),
        "p=(nil) q=0xffff888100001000 f=0xffffffff81000010 g=0xffffffff81000010",
        "no symbolizer: addresses in hex"
    );
    let named = PrintFmt::compile(&l)
        .expect("compiles")
        .with_symbolizer(std::sync::Arc::new(|addr: u64| {
            (addr == 0xffff_ffff_8100_0010).then(|| "tick_sched_timer+0x10".to_string())
        }));
    assert_eq!(
        named.render(&r.event()).as_deref(),
        Some("p=(nil) q=0xffff888100001000 f=tick_sched_timer+0x10 g=tick_sched_timer")
    );
}

#[test]
fn get_str_and_rel_str_read_dynamic_strings() {
    let l = layout(
        &[
            ("__data_loc char[] a", 8, 4, false),
            ("__rel_loc char[] b", 12, 4, false),
        ],
        r#""a=%s b=%s", __get_str(a), __get_rel_str(b)"#,
    );
    let r = Record::new(&l).text("a", "vda").text("b", "/usr/bin/sleep");
    assert_eq!(render(&l, &r), "a=vda b=/usr/bin/sleep");
}

#[test]
fn print_symbolic_names_a_value_or_prints_it_in_hex() {
    let l = layout(
        &[("unsigned int vec", 8, 4, false), ("int mode", 12, 4, true)],
        r#""%s %s %s", __print_symbolic(REC->vec, { 0, "HI" }, { 1, "TIMER" }, { 0x20, "APIC_" "ID" }), __print_symbolic(REC->mode, { MODE_UNKNOWN, "ABS" }, { 1, "REL" }), __print_symbolic(REC->vec, { TIMER_SOFTIRQ, "T" })"#,
    );
    let r = Record::new(&l).int("vec", 0x20).int("mode", 0);
    assert_eq!(
        render(&l, &r),
        "APIC_ID 0x0 0x20",
        "adjacent literals join; an unresolved enum name never matches"
    );
    let r = Record::new(&l).int("vec", 1).int("mode", 1);
    assert_eq!(
        render(&l, &r),
        "TIMER REL T",
        "TIMER_SOFTIRQ is 1, as libtraceevent knows"
    );
}

#[test]
fn print_flags_joins_set_bits_and_prints_the_rest_in_hex() {
    let l = layout(
        &[("unsigned long flags", 8, 8, false)],
        r#""%s", __print_flags(REC->flags, "|", { 0, "NONE" }, { 0x1, "A" }, { 0x6, "BC" }, { 0x8, "D" })"#,
    );
    let text = |flags: i64| render(&l, &Record::new(&l).int("flags", flags));
    assert_eq!(text(0x9), "A|D");
    assert_eq!(text(0x7), "A|BC");
    assert_eq!(text(0x2), "0x2", "a multi-bit entry needs all its bits");
    assert_eq!(text(0x31), "A|0x30");
    assert_eq!(text(0), "NONE");
    // Unresolved enum names never match: a zero value prints nothing, as the kernel does
    // (perf 6.1's libtraceevent prints the first unresolved name there).
    let l = layout(
        &[("unsigned long state", 8, 8, false)],
        r#""state=%s", __print_flags(REC->state, "|", {I_DIRTY_SYNC, "I_DIRTY_SYNC"}, {0x8, "I_NEW"})"#,
    );
    let text = |state: i64| render(&l, &Record::new(&l).int("state", state));
    assert_eq!(text(0), "state=");
    assert_eq!(text(0x9), "state=I_NEW|0x1");
}

#[test]
fn hex_and_arrays_print_as_the_kernel_does() {
    let l = layout(
        &[
            ("__data_loc u64[] addrs", 8, 4, false),
            ("u8 insn[4]", 12, 4, false),
            ("__data_loc u8[] buf", 16, 4, false),
        ],
        r#""addrs=%s insn=%s buf=%s n=%u", __print_array(__get_dynamic_array(addrs), __get_dynamic_array_len(addrs) / sizeof(u64), sizeof(u64)), __print_hex(REC->insn, 3), __print_hex_str(__get_dynamic_array(buf), __get_dynamic_array_len(buf)), __get_dynamic_array_len(buf)"#,
    );
    let mut addrs = 0x1000u64.to_le_bytes().to_vec();
    addrs.extend_from_slice(&0xffu64.to_le_bytes());
    let r = Record::new(&l)
        .payload("addrs", &addrs)
        .element("insn", 0, 0x0f)
        .element("insn", 1, 0x1f)
        .element("insn", 2, 0x44)
        .payload("buf", &[0xde, 0xad, 0x01]);
    assert_eq!(render(&l, &r), "addrs={0x1000,0xff} insn=0f 1f 44 buf=dead01 n=3");
}

#[test]
fn sched_switch_prev_state_arithmetic_and_flags() {
    let l = super::record::fixture("sched/sched_switch");
    let state = |prev_state: i64| {
        let r = Record::new(&l)
            .text("prev_comm", "a")
            .text("next_comm", "b")
            .int("prev_state", prev_state);
        let text = render(&l, &r);
        let start = text.find("prev_state=").expect("prev_state") + "prev_state=".len();
        text[start..].split(' ').next().expect("a word").to_string()
    };
    assert_eq!(state(0), "R");
    assert_eq!(state(1), "S");
    assert_eq!(state(2), "D");
    assert_eq!(state(0x80), "I");
    assert_eq!(state(0x100), "R+", "preempted: TASK_REPORT_MAX");
    assert_eq!(state(0x101), "S+");
    assert_eq!(state(0x3), "S|D");
}

#[test]
fn unsupported_print_fmts_fall_back_to_name_value() {
    for print_fmt in [
        r#""%d", ({ int x = REC->a; x; })"#,
        r#""%d", jiffies_to_msecs(REC->a)"#,
        r#""%pU", REC->a"#,
        r#""%d", SOME_ENUM"#,
        r#""%s", REC->a"#,
        r#""%d %d", REC->a"#,
        r#""%d", REC->missing"#,
    ] {
        let l = layout(&[("int a", 8, 4, true)], print_fmt);
        assert!(PrintFmt::compile(&l).is_err(), "{print_fmt} compiles");
        let printer = EventPrinter::new(std::slice::from_ref(&l));
        assert!(printer.fallback_reason(0).is_some());
        let r = Record::new(&l).int("a", 5);
        assert_eq!(printer.fields_text(&r.event(), &l), "a=5", "{print_fmt}");
    }
}

#[test]
fn a_cut_record_falls_back_for_that_event_only() {
    let l = layout(
        &[("int a", 8, 4, true), ("__data_loc char[] s", 12, 4, false)],
        r#""a=%d s=%s", REC->a, __get_str(s)"#,
    );
    let printer = EventPrinter::new(std::slice::from_ref(&l));
    let whole = Record::new(&l).int("a", 5).text("s", "x");
    assert_eq!(printer.fields_text(&whole.event(), &l), "a=5 s=x");
    let mut cut = Record::new(&l).int("a", 5).text("s", "x");
    cut.raw.truncate(14);
    assert_eq!(printer.fields_text(&cut.event(), &l), "a=5 s=?");
}

#[test]
fn char_literals_null_strings_and_kernel_typedef_casts() {
    let l = layout(
        &[
            ("unsigned int f", 8, 4, false),
            ("int len", 12, 4, true),
            ("__data_loc char[] name", 16, 4, false),
        ],
        r#""[%c%c] %.*s|%s flags=%s", REC->f & 1 ? 'S' : '-', REC->f & 2 ? 'A' : '-', REC->len, REC->len ? __get_str(name) : ((void *)0), REC->len ? "some" : ((void *)0), __print_flags((uint)REC->f, "|", {( unsigned long)(( gfp_t)((1UL) << 1)), "TWO"})"#,
    );
    let r = Record::new(&l).int("f", 3).int("len", 2).text("name", "xfs");
    assert_eq!(
        render(&l, &r),
        "[SA] xf|some flags=TWO|0x1",
        "bits no entry names come last"
    );
    let r = Record::new(&l).int("f", 0).int("len", 0).text("name", "xfs");
    assert_eq!(
        render(&l, &r),
        "[--] |(null) flags=",
        "a NULL string prints as glibc prints it"
    );
}

#[test]
fn field_bytes_conversions_in_a_print_fmt() {
    let l = layout(
        &[
            ("__u8 saddr[4]", 8, 4, false),
            ("u8 uuid[16]", 12, 16, false),
            ("unsigned long mask[1]", 32, 8, false),
        ],
        r#""src=%pI4 fs=%pU nodes=%*pbl", REC->saddr, REC->uuid, 8, REC->mask"#,
    );
    let mut r = Record::new(&l).int("mask", 0b1011);
    for (i, byte) in [192, 168, 0, 1].into_iter().enumerate() {
        r = r.element("saddr", i, byte);
    }
    for i in 0..16 {
        r = r.element("uuid", i, 0xa0 + i as i64);
    }
    assert_eq!(
        render(&l, &r),
        "src=192.168.0.1 fs=a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf nodes=0-1,3"
    );
}
