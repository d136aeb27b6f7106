//! A path opened once and read once.
//!
//! The first bytes can be looked at ([`InputFile::peek`]) before anything is consumed, so a
//! format is told from a prefix of the same reader that then reads on from it: a pipe or a
//! process substitution (`report <(cat x.qperf.bin)`) is never opened twice, and nothing
//! is read before it is needed.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::InputError;

/// Bytes asked of the file by the first read: most inputs (`/proc` files, sidecars, TOML)
/// fit, and a small read costs no large buffer.
const FIRST_READ_BYTES: usize = 8 * 1024;

/// The most bytes asked of the file per read, once reads keep filling the buffer.
const CHUNK_BYTES: usize = 256 * 1024;

/// What kind of file a path is, as far as reading it goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FileType {
    /// A regular file of this size when it was opened (`/proc` files say 0).
    Regular { len: u64 },
    /// A pipe or FIFO (`<(…)`, `/dev/stdin` of a pipeline): read once, its length unknown.
    Pipe,
    /// A character device (`/dev/zero`, `/dev/urandom`, a terminal).
    CharDevice,
    /// A socket, a block device: read as a stream.
    Other,
}

impl FileType {
    fn of(metadata: &std::fs::Metadata) -> FileType {
        let t = metadata.file_type();
        if t.is_file() {
            FileType::Regular { len: metadata.len() }
        } else if t.is_fifo() {
            FileType::Pipe
        } else if t.is_char_device() {
            FileType::CharDevice
        } else {
            FileType::Other
        }
    }

    /// What `path` is, from its metadata: a FIFO is not opened (opening one has effects: it
    /// releases a writer waiting for its reader, which closing it again then cuts off).
    pub fn of_path(path: &Path) -> Result<FileType, InputError> {
        let metadata = std::fs::metadata(path).map_err(|cause| InputError::Open {
            path: path.to_path_buf(),
            cause,
        })?;
        if metadata.is_dir() {
            return Err(InputError::Directory {
                path: path.to_path_buf(),
            });
        }
        Ok(FileType::of(&metadata))
    }

    /// Refuse anything but a regular file at `path` without opening it, for an input read
    /// in place by someone else (SQLite opens a session by its path).
    pub fn require_regular(path: &Path, what: &'static str) -> Result<(), InputError> {
        match FileType::of_path(path)? {
            FileType::Regular { .. } => Ok(()),
            other => Err(InputError::NotRegular {
                path: path.to_path_buf(),
                file_type: other.described(),
                what,
            }),
        }
    }

    /// "a pipe", for messages.
    pub fn described(self) -> &'static str {
        match self {
            FileType::Regular { .. } => "a regular file",
            FileType::Pipe => "a pipe",
            FileType::CharDevice => "a character device",
            FileType::Other => "not a regular file",
        }
    }
}

/// An opened input: a buffered reader that can look ahead.
pub struct InputFile {
    path: PathBuf,
    file: File,
    file_type: FileType,
    /// `buf[pos..filled]` are read from the file and not consumed yet.
    buf: Vec<u8>,
    pos: usize,
    filled: usize,
    /// The file said end of input.
    at_end: bool,
    consumed: u64,
    /// Shares `consumed` with a progress display on another thread.
    progress: Option<Arc<AtomicU64>>,
}

impl InputFile {
    /// Open `path` for reading (a directory is refused here, not at the first read). A
    /// FIFO is waited on until a writer comes, or a signal asks to stop.
    pub fn open(path: &Path) -> Result<InputFile, InputError> {
        let open_error = |cause| InputError::Open {
            path: path.to_path_buf(),
            cause,
        };
        let file = if FileType::of_path(path).is_ok_and(|t| t == FileType::Pipe) {
            open_fifo(path)?
        } else {
            File::open(path).map_err(open_error)?
        };
        let metadata = file.metadata().map_err(open_error)?;
        if metadata.is_dir() {
            return Err(InputError::Directory {
                path: path.to_path_buf(),
            });
        }
        Ok(InputFile {
            path: path.to_path_buf(),
            file,
            file_type: FileType::of(&metadata),
            buf: Vec::new(),
            pos: 0,
            filled: 0,
            at_end: false,
            consumed: 0,
            progress: None,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file itself, to map it.
    pub(super) fn file(&self) -> &File {
        &self.file
    }

    pub fn file_type(&self) -> FileType {
        self.file_type
    }

    /// A regular file: it has a size, a folder around it, and it can be read in place.
    pub fn is_regular(&self) -> bool {
        matches!(self.file_type, FileType::Regular { .. })
    }

    /// Bytes of a regular file not consumed yet, from its size now; `None` for a stream,
    /// whose rest is unknown until read.
    pub fn remaining_len(&self) -> Option<u64> {
        if !self.is_regular() {
            return None;
        }
        let len = self.file.metadata().ok()?.len();
        Some(len.saturating_sub(self.consumed))
    }

    /// Bytes consumed so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Count consumed bytes into `counter` too (progress shown from another thread).
    pub fn count_into(&mut self, counter: Arc<AtomicU64>) {
        counter.store(self.consumed, Ordering::Relaxed);
        self.progress = Some(counter);
    }

    /// Refuse anything but a regular file, for an input read in place (`what`: "a session").
    pub fn require_regular(&self, what: &'static str) -> Result<(), InputError> {
        if self.is_regular() {
            return Ok(());
        }
        Err(InputError::NotRegular {
            path: self.path.clone(),
            file_type: self.file_type.described(),
            what,
        })
    }

    /// Up to `n` bytes ahead, without consuming them: fewer only at the end of the input.
    /// What was peeked is what the next reads return.
    pub fn peek(&mut self, n: usize) -> Result<&[u8], InputError> {
        while self.filled - self.pos < n && !self.at_end {
            if self.pos > 0 {
                self.buf.copy_within(self.pos..self.filled, 0);
                self.filled -= self.pos;
                self.pos = 0;
            }
            let want = (self.filled + FIRST_READ_BYTES).max(n);
            if self.buf.len() < want {
                self.buf.resize(want, 0);
            }
            self.read_more()?;
        }
        let end = self.filled.min(self.pos + n);
        Ok(&self.buf[self.pos..end])
    }

    /// One read into the free space after `filled`. A stream (a pipe, a device) is read
    /// once it has bytes, so a signal's request to stop ends the wait for them.
    fn read_more(&mut self) -> Result<(), InputError> {
        if !self.is_regular() {
            wait_readable(&self.file, &self.path, "more input")?;
        }
        loop {
            match self.file.read(&mut self.buf[self.filled..]) {
                Ok(0) => {
                    self.at_end = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.filled += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(cause) => {
                    return Err(InputError::Read {
                        path: self.path.clone(),
                        cause,
                    });
                }
            }
        }
    }
}

/// Open a FIFO without blocking in `open(2)` (a signal does not end that wait: it is
/// restarted), then wait for its writer as for any stream's bytes.
fn open_fifo(path: &Path) -> Result<File, InputError> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|cause| InputError::Open {
            path: path.to_path_buf(),
            cause,
        })?;
    wait_readable(&file, path, "a writer to the FIFO")?;
    // Reads block again: the wait before each read is what a signal ends.
    // SAFETY: fcntl on a descriptor `file` owns.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
    Ok(file)
}

/// Wait until `file` has bytes or says its end (a FIFO's writer came, and maybe went),
/// looking at the process's stop request in between.
fn wait_readable(file: &File, path: &Path, waiting_for: &'static str) -> Result<(), InputError> {
    use std::os::unix::io::AsRawFd;
    let mut poll = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one pollfd, alive for the call.
        let ready = unsafe { libc::poll(&mut poll, 1, crate::stop::LOOK_EVERY.as_millis() as i32) };
        if ready > 0 {
            // Bytes that are there are read even after a request to stop: the reader
            // stops between records, where what it read is whole.
            return Ok(());
        }
        if crate::stop::requested() {
            return Err(InputError::Stopped {
                path: path.to_path_buf(),
                waiting_for,
            });
        }
        if ready < 0 {
            let cause = io::Error::last_os_error();
            if cause.kind() != io::ErrorKind::Interrupted {
                return Err(InputError::Read {
                    path: path.to_path_buf(),
                    cause,
                });
            }
        }
    }
}

impl BufRead for InputFile {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.filled && !self.at_end {
            // The buffer doubles while reads fill it, up to a chunk; a large peek is not
            // kept once it has been consumed.
            let size = match self.buf.len() {
                0 => FIRST_READ_BYTES,
                len if self.filled == len => (len * 2).min(CHUNK_BYTES),
                len => len.min(CHUNK_BYTES),
            };
            self.pos = 0;
            self.filled = 0;
            if self.buf.len() != size {
                self.buf = vec![0; size];
            }
            self.read_more()?;
        }
        Ok(&self.buf[self.pos..self.filled])
    }

    fn consume(&mut self, amount: usize) {
        let amount = amount.min(self.filled - self.pos);
        self.pos += amount;
        self.consumed += amount as u64;
        if let Some(progress) = &self.progress {
            progress.fetch_add(amount as u64, Ordering::Relaxed);
        }
    }
}

impl Read for InputFile {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_with(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        f
    }

    #[test]
    fn what_was_peeked_is_read_again_and_then_the_rest() {
        let data: Vec<u8> = (0..600_000u32).map(|i| (i % 251) as u8).collect();
        let f = file_with(&data);
        let mut input = InputFile::open(f.path()).unwrap();
        assert_eq!(input.file_type(), FileType::Regular { len: 600_000 });
        assert_eq!(input.peek(3).unwrap(), &data[..3]);
        // A peek longer than a chunk grows the buffer.
        assert_eq!(input.peek(300_000).unwrap(), &data[..300_000]);
        let mut head = [0u8; 10];
        input.read_exact(&mut head).unwrap();
        assert_eq!(head, data[..10]);
        assert_eq!(input.remaining_len(), Some(599_990));
        let mut rest = Vec::new();
        input.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, data[10..]);
        assert_eq!(input.consumed(), 600_000);
        assert!(input.peek(1).unwrap().is_empty());
    }

    #[test]
    fn a_pipe_is_told_apart_and_read_once() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "printf 'a;b 1\\n'"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        use std::os::fd::AsRawFd;
        let path = PathBuf::from(format!("/proc/self/fd/{}", stdout.as_raw_fd()));
        let mut input = InputFile::open(&path).unwrap();
        assert_eq!(input.file_type(), FileType::Pipe);
        assert_eq!(input.remaining_len(), None);
        assert_eq!(input.peek(64).unwrap(), b"a;b 1\n");
        let mut all = String::new();
        input.read_to_string(&mut all).unwrap();
        assert_eq!(all, "a;b 1\n");
        assert!(input.require_regular("a session").is_err());
        child.wait().unwrap();
    }

    #[test]
    fn a_directory_is_refused_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let e = InputFile::open(dir.path()).err().unwrap();
        assert!(e.to_string().ends_with("is a directory: give a file"), "{e}");
    }

    #[test]
    fn dev_zero_is_a_character_device_and_is_not_regular() {
        let input = InputFile::open(Path::new("/dev/zero")).unwrap();
        assert_eq!(input.file_type(), FileType::CharDevice);
        let e = input.require_regular("a session").unwrap_err().to_string();
        assert!(
            e.contains("/dev/zero is a character device, not a regular file"),
            "{e}"
        );
    }
}
