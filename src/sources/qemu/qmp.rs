//! QMP, just enough to ask QEMU to quit: the greeting, capabilities, `quit`. A clean quit
//! lets the plugin's atexit handler flush queued samples and write its summary.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};

/// Send `quit` over the QMP socket at `path`.
pub fn quit(path: &Path, timeout: Duration) -> anyhow::Result<()> {
    let stream =
        UnixStream::connect(path).with_context(|| format!("cannot connect to QMP at {}", path.display()))?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    let mut line = String::new();
    reader.read_line(&mut line).context("no QMP greeting")?;
    if !line.contains("\"QMP\"") {
        bail!("unexpected QMP greeting: {}", line.trim());
    }
    writer.write_all(b"{\"execute\":\"qmp_capabilities\"}\r\n")?;
    line.clear();
    reader
        .read_line(&mut line)
        .context("no answer to qmp_capabilities")?;
    if !line.contains("\"return\"") {
        bail!("qmp_capabilities refused: {}", line.trim());
    }
    writer.write_all(b"{\"execute\":\"quit\"}\r\n")?;
    // Wait for QEMU to take the command: closing the socket first can drop it unread.
    line.clear();
    match reader.read_line(&mut line) {
        Ok(_) => Ok(()),
        // QEMU may exit before it answers; the caller watches the process anyway.
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::TimedOut => {
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}
