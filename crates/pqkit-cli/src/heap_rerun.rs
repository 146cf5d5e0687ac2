//! Heap figures without a counting allocator in every command: `pqkit demo` and
//! `pqkit bench handshake` run themselves again as `pqkit-heap` (the same command line on
//! pqkit-bench's [`TrackingAllocator`](pqkit_bench::heap::TrackingAllocator)), found beside the
//! running executable. `pqkit server`, `sign` and the rest never pay for the metering.

use std::path::PathBuf;
use std::process::ExitCode;

/// The metered twin of this executable, if it is installed beside it.
fn twin() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let twin = exe.with_file_name(format!("pqkit-heap{}", std::env::consts::EXE_SUFFIX));
    (twin != exe && twin.is_file()).then_some(twin)
}

/// The unmetered `pqkit` executable: this one, or the `pqkit` beside it when this is
/// `pqkit-heap` (servers started for a benchmark must not pay for the metering).
///
/// # Errors
/// When the running executable cannot be found.
pub(crate) fn plain_executable() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let heap = format!("pqkit-heap{}", std::env::consts::EXE_SUFFIX);
    if exe.file_name().is_some_and(|n| n == heap.as_str()) {
        let plain = exe.with_file_name(format!("pqkit{}", std::env::consts::EXE_SUFFIX));
        if plain.is_file() {
            return Ok(plain);
        }
    }
    Ok(exe)
}

/// `None` when this process can meter its heap, or when no `pqkit-heap` is installed beside
/// it (the heap figures are then left out); otherwise runs this command line under
/// `pqkit-heap` and returns its exit status. The standard streams are shared, so the child's
/// output is the command's output.
pub(crate) fn metered_or_rerun() -> Option<ExitCode> {
    if pqkit_bench::heap::available() {
        return None;
    }
    let Some(twin) = twin() else {
        eprintln!(
            "pqkit: no pqkit-heap beside this executable: the heap figures read 0 \
             (`cargo build -p pqkit-cli` builds both binaries)"
        );
        return None;
    };
    let status = std::process::Command::new(&twin)
        .args(std::env::args_os().skip(1))
        .status();
    Some(match status {
        Ok(s) => match s.code() {
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => {
                // Killed by a signal: the shell's convention, 128 + the signal's number.
                use std::os::unix::process::ExitStatusExt;
                let signal = s.signal().and_then(|n| u8::try_from(n).ok()).unwrap_or(0);
                ExitCode::from(128u8.saturating_add(signal))
            }
        },
        Err(e) => {
            eprintln!("pqkit: cannot start {}: {e}", twin.display());
            ExitCode::from(1)
        }
    })
}
