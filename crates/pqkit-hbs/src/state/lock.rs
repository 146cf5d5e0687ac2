//! One signer at a time: an exclusive `flock` on `<state>.lock`, removed when released.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

use super::StateError;

/// How long a held lock is retried before [`StateError::Locked`] (see [`lock`]).
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(200);

pub(super) fn lock_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

/// An exclusive lock on `<state>.lock`, removed when released.
pub(super) struct Lock {
    path: PathBuf,
    _file: File,
}

impl Drop for Lock {
    /// Unlinks the lock file while still holding it; closing the file then releases it.
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

pub(super) fn lock(path: &Path) -> Result<Lock, StateError> {
    let lp = lock_path(path);
    // A lock released a moment ago can still be held by a child process that another thread
    // of this process forked and that has not reached exec yet (the child's copy of the
    // close-on-exec descriptor shares the lock): so a held lock is retried for a short while
    // before it counts as another signer's.
    let start = std::time::Instant::now();
    loop {
        let mut options = OpenOptions::new();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // A symbolic link is not followed, and a FIFO in the lock's place does not block.
            options
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let file = options
            .open(&lp)
            .map_err(|e| StateError::Io(lp.clone(), e))?;
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Err(StateError::Io(
                lp,
                std::io::Error::other("the lock is not a regular file"),
            ));
        }
        match file.try_lock() {
            // The holder before us unlinks the file when it releases it: a lock taken on a
            // file no longer under that name locks nothing, so check the name still leads to it.
            Ok(()) if same_file(&file, &lp) => {
                return Ok(Lock {
                    path: lp,
                    _file: file,
                });
            }
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) if start.elapsed() < LOCK_PATIENCE => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(StateError::Locked(path.to_path_buf(), lp));
            }
            Err(fs::TryLockError::Error(e)) => return Err(StateError::Io(lp, e)),
        }
    }
}

/// Whether `path` names the open `file`.
fn same_file(file: &File, path: &Path) -> bool {
    let (Ok(a), Ok(b)) = (file.metadata(), fs::metadata(path)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        a.dev() == b.dev() && a.ino() == b.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        true
    }
}
