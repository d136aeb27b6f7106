//! The process's stop request ends every wait on the outside world: opening a FIFO nobody
//! writes, reading a pipe whose writer stalls. A signal only raises the flag (the blocking
//! call is restarted), so without this a `report` of a stalled pipe outlived every SIGINT.
//! Its own test binary: the request is for the whole process.

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use perfscope::input::{InputError, InputFile};

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_stop_request_ends_the_wait_for_a_writer_and_for_more_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (lonely, stalled) = (dir.path().join("lonely"), dir.path().join("stalled"));
    mkfifo(&lonely);
    mkfifo(&stalled);

    // A writer that sends a few bytes and then nothing, holding the FIFO open.
    let writer = {
        let stalled = stalled.clone();
        std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new().write(true).open(&stalled).unwrap();
            w.write_all(b"first bytes").unwrap();
            std::thread::sleep(Duration::from_secs(3));
        })
    };
    let mut input = InputFile::open(&stalled).expect("the writer came");
    let mut first = [0u8; 11];
    input.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"first bytes");

    let reader = std::thread::spawn(move || {
        let started = Instant::now();
        let more = input.read(&mut [0u8; 16]);
        (more.map_err(|e| e.to_string()), started.elapsed())
    });
    let opener = std::thread::spawn(move || {
        let started = Instant::now();
        (InputFile::open(&lonely).err(), started.elapsed())
    });
    std::thread::sleep(Duration::from_millis(500));
    assert!(!reader.is_finished() && !opener.is_finished(), "both wait");
    perfscope::stop::request();

    let (more, waited) = reader.join().unwrap();
    let message = more.expect_err("no more bytes came");
    assert!(message.contains("stopped while waiting for"), "{message}");
    assert!(message.contains("more input"), "{message}");
    // It waited for the request, not for the writer (which sleeps 3 s).
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    let (error, waited) = opener.join().unwrap();
    assert!(
        matches!(error, Some(InputError::Stopped { waiting_for, .. }) if waiting_for.contains("writer")),
        "{error:?}"
    );
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    writer.join().unwrap();
}
