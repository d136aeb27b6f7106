//! The live copy of the records: a Unix socket perfscope listens on. The plugin connects
//! once at load and writes exactly the bytes it writes to `out`, so one decoder reads both.
//!
//! The stream is best effort by design: a refused connection, a reader that went away or a
//! reader too slow to drain the socket (a write blocked for [`WRITE_TIMEOUT`]) closes it
//! for good and counts one `stream_errors`; the file output carries on either way.

use std::io::{BufWriter, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Longer than any pause of a healthy reader; short enough that a stuck one does not
/// hold the writer thread (and so the queue) for long.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(2);

pub struct StreamSink {
    path: PathBuf,
    connection: Option<BufWriter<UnixStream>>,
    errors: u64,
}

impl StreamSink {
    /// Connect to `path`. A failure is reported on stderr and counted, not fatal.
    pub fn connect(path: &Path) -> StreamSink {
        let mut sink = StreamSink {
            path: path.to_path_buf(),
            connection: None,
            errors: 0,
        };
        match UnixStream::connect(path) {
            Ok(stream) => {
                if let Err(e) = stream.set_write_timeout(Some(WRITE_TIMEOUT)) {
                    sink.fail("cannot set a write timeout on", &e);
                } else {
                    sink.connection = Some(BufWriter::with_capacity(64 * 1024, stream));
                }
            }
            Err(e) => sink.fail("cannot connect to", &e),
        }
        sink
    }

    fn fail(&mut self, what: &str, error: &std::io::Error) {
        self.errors += 1;
        self.connection = None;
        eprintln!(
            "perfscope-qemu-plugin: {what} stream socket {}: {error}; the live stream stops, the qperf.bin file output continues (is perfscope still listening?)",
            self.path.display(),
        );
    }

    pub fn write(&mut self, bytes: &[u8]) {
        if let Some(connection) = self.connection.as_mut()
            && let Err(e) = connection.write_all(bytes)
        {
            self.fail("lost the", &e);
        }
    }

    pub fn flush(&mut self) {
        if let Some(connection) = self.connection.as_mut()
            && let Err(e) = connection.flush()
        {
            self.fail("lost the", &e);
        }
    }

    pub fn errors(&self) -> u64 {
        self.errors
    }
}
