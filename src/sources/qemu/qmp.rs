//! QMP, just enough to ask QEMU to quit: the greeting, capabilities, `quit`. A clean quit
//! lets the plugin's atexit handler flush queued samples and write its summary.

use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::input::{BoundedLines, InputError, InputKind};

/// The next answer of QEMU, as text, within the QMP caps (a line of 1 MiB).
fn next_answer(reader: &mut BoundedLines<BufReader<UnixStream>>) -> Result<String, InputError> {
    Ok(reader
        .next_line()?
        .map(|line| String::from_utf8_lossy(line).into_owned())
        .unwrap_or_default())
}

/// Send `quit` over the QMP socket at `path`.
pub fn quit(path: &Path, timeout: Duration) -> anyhow::Result<()> {
    let stream =
        UnixStream::connect(path).with_context(|| format!("cannot connect to QMP at {}", path.display()))?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let mut reader = BoundedLines::new(BufReader::new(stream.try_clone()?), path, InputKind::Qmp);
    let mut writer = stream;
    let line = next_answer(&mut reader).context("no QMP greeting")?;
    if !line.contains("\"QMP\"") {
        bail!("unexpected QMP greeting: {}", line.trim());
    }
    writer.write_all(b"{\"execute\":\"qmp_capabilities\"}\r\n")?;
    let line = next_answer(&mut reader).context("no answer to qmp_capabilities")?;
    if !line.contains("\"return\"") {
        bail!("qmp_capabilities refused: {}", line.trim());
    }
    writer.write_all(b"{\"execute\":\"quit\"}\r\n")?;
    // Wait for QEMU to take the command: closing the socket first can drop it unread.
    match next_answer(&mut reader) {
        Ok(_) => Ok(()),
        // QEMU may exit before it answers; the caller watches the process anyway.
        Err(e)
            if matches!(
                e.io_kind(),
                Some(std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}
