//! Output files: nothing is overwritten unless asked, secrets are private from their first
//! byte, and an output is claimed before the work that fills it.
//!
//! Every file pqkit writes goes through [`PendingOutput`]:
//!
//! 1. [`PendingOutput::claim`] checks the destination — it must not exist unless the caller
//!    passes [`Overwrite::Replace`] (the CLI's `--force`) — and creates a temporary file beside
//!    it with `O_CREAT | O_EXCL` (which never follows a symbolic link) and mode 0600 for
//!    [`Sensitivity::Secret`]. A missing or read-only directory fails here, before any work:
//!    a stateful key claims its outputs before it reserves a one-time key.
//! 2. [`PendingOutput::commit`] writes the bytes, fsyncs, and puts the file in place: with
//!    [`Overwrite::Refuse`] by a hard link, which fails if the name appeared in the meantime
//!    (no window in which an existing file is replaced), with [`Overwrite::Replace`] by an
//!    atomic rename. Either way a process killed mid-write leaves no partial file under the
//!    final name.
//! 3. A claim dropped without a commit removes its temporary file.
//!
//! `-` is standard output. A destination that exists and is not a regular file (`/dev/null`, a
//! FIFO, a terminal) is written in place: it holds nothing to clobber, and renaming over it
//! would replace the device node.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// Who may read a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sensitivity {
    /// Private keys, state files, shared secrets: created with mode 0600.
    Secret,
    /// Certificates, public keys, signatures, ciphertexts: the process's umask decides.
    Public,
}

/// Whether an existing destination may be replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overwrite {
    /// An existing file is an error ([`Error::Exists`]); the default.
    Refuse,
    /// An existing regular file is replaced atomically (the CLI's `--force`).
    Replace,
}

impl Overwrite {
    /// `Replace` when `force` is set.
    pub fn from_force(force: bool) -> Self {
        if force { Self::Replace } else { Self::Refuse }
    }
}

/// The outputs of one command: how an existing file is treated, and the command's inputs, which
/// no output may be (`pqkit sign --key k.pem -o k.pem` must not replace the key with its
/// signature, `--force` or not).
/// Two outputs of one command may not be the same file either (`keygen -o k --pub k`).
#[derive(Debug)]
pub struct Outputs<'a> {
    overwrite: Overwrite,
    inputs: &'a [&'a Path],
    claimed: std::cell::RefCell<Vec<PathBuf>>,
}

impl<'a> Outputs<'a> {
    /// Outputs of a command that reads `inputs`.
    pub fn new(overwrite: Overwrite, inputs: &'a [&'a Path]) -> Self {
        Self {
            overwrite,
            inputs,
            claimed: std::cell::RefCell::new(Vec::new()),
        }
    }

    /// Claims `path` ([`PendingOutput::claim`]) after checking it is none of the inputs and
    /// none of the outputs claimed before.
    ///
    /// # Errors
    /// [`Error::SameFile`], [`Error::DuplicateOutput`], and the errors of
    /// [`PendingOutput::claim`].
    pub fn claim(&self, path: &Path, sensitivity: Sensitivity) -> Result<PendingOutput, Error> {
        check_not_input(path, self.inputs)?;
        let name = absolute(path);
        if path.as_os_str() != "-" && self.claimed.borrow().contains(&name) {
            return Err(Error::DuplicateOutput(path.display().to_string()));
        }
        let claim = PendingOutput::claim(path, sensitivity, self.overwrite)?;
        self.claimed.borrow_mut().push(name);
        Ok(claim)
    }
}

/// `path` with its directory made absolute and resolved (the file itself need not exist).
fn absolute(path: &Path) -> PathBuf {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(dir), path.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => path.to_path_buf(),
    }
}

/// An output file claimed before its contents exist. See the module docs.
#[derive(Debug)]
pub struct PendingOutput {
    dest: PathBuf,
    target: Target,
    /// What [`PendingOutput::prepare`] wrote (kept for standard output and devices, which are
    /// written by [`PendingOutput::place`]); `None` before.
    pending: Option<Vec<u8>>,
}

#[derive(Debug)]
enum Target {
    Stdout,
    /// An existing non-regular file, written in place.
    Device,
    File {
        tmp: PathBuf,
        file: Option<File>,
        overwrite: Overwrite,
        sensitivity: Sensitivity,
    },
}

impl PendingOutput {
    /// Claims `path` (`-` for standard output).
    ///
    /// # Errors
    /// [`Error::Exists`] when `path` exists and `overwrite` is [`Overwrite::Refuse`];
    /// [`Error::Io`] when the temporary file cannot be created (missing or read-only
    /// directory, a path that is a directory).
    pub fn claim(
        path: &Path,
        sensitivity: Sensitivity,
        overwrite: Overwrite,
    ) -> Result<Self, Error> {
        if path.as_os_str() == "-" {
            return Ok(Self {
                dest: path.to_path_buf(),
                target: Target::Stdout,
                pending: None,
            });
        }
        match std::fs::symlink_metadata(path) {
            Ok(link) => {
                // What the name leads to: a symbolic link to a terminal or a pipe
                // (/dev/stdout) is written through, never replaced; a dangling link counts as
                // an existing file.
                let to = if link.file_type().is_symlink() {
                    std::fs::metadata(path).ok()
                } else {
                    Some(link)
                };
                match to {
                    Some(m) if m.is_dir() => {
                        return Err(Error::io(
                            path,
                            std::io::Error::other("is a directory, not a file name"),
                        ));
                    }
                    Some(m) if !m.is_file() => {
                        if !is_stream(&m) {
                            return Err(Error::io(
                                path,
                                std::io::Error::other(
                                    "is neither a file nor a terminal, pipe or character device",
                                ),
                            ));
                        }
                        return Ok(Self {
                            dest: path.to_path_buf(),
                            target: Target::Device,
                            pending: None,
                        });
                    }
                    _ if overwrite == Overwrite::Refuse => {
                        return Err(Error::Exists(path.display().to_string()));
                    }
                    _ => {}
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(path, e)),
        }
        let (tmp, file) = create_temporary(path, sensitivity)?;
        Ok(Self {
            dest: path.to_path_buf(),
            target: Target::File {
                tmp,
                file: Some(file),
                overwrite,
                sensitivity,
            },
            pending: None,
        })
    }

    /// The destination.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// Writes `bytes` and puts the file in place.
    ///
    /// # Errors
    /// [`Error::Io`]; [`Error::Exists`] when the destination appeared since the claim.
    pub fn commit(mut self, bytes: &[u8]) -> Result<(), Error> {
        self.prepare(bytes)?;
        self.place()
    }

    /// Writes `bytes` to the temporary file and fsyncs it, without putting it in place: what
    /// can fail for lack of room fails here. [`PendingOutput::place`] then puts it in place
    /// (standard output and devices are written then).
    ///
    /// # Errors
    /// [`Error::Io`]; an output prepared twice.
    pub fn prepare(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let dest = self.dest.clone();
        match &mut self.target {
            Target::Stdout | Target::Device => {
                if self.pending.is_some() {
                    return Err(Error::io(
                        &dest,
                        std::io::Error::other("output already prepared"),
                    ));
                }
                self.pending = Some(bytes.to_vec());
                Ok(())
            }
            Target::File { file, .. } => {
                let mut f = file.take().ok_or_else(|| {
                    Error::io(&dest, std::io::Error::other("output already prepared"))
                })?;
                self.pending = Some(Vec::new());
                f.write_all(bytes)
                    .and_then(|()| f.sync_all())
                    .map_err(|e| Error::io(&dest, e))
            }
        }
    }

    /// Puts a prepared output in place: by a hard link that fails if the name appeared, or
    /// with [`Overwrite::Replace`] by an atomic rename.
    ///
    /// # Errors
    /// [`Error::Io`]; [`Error::Exists`] when the destination appeared since the claim; an
    /// output not prepared.
    pub fn place(mut self) -> Result<(), Error> {
        let dest = self.dest.clone();
        let bytes = self
            .pending
            .take()
            .ok_or_else(|| Error::io(&dest, std::io::Error::other("output not prepared")))?;
        match &self.target {
            Target::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(&bytes)
                    .and_then(|()| out.flush())
                    .map_err(|e| Error::io(Path::new("standard output"), e))
            }
            Target::Device => OpenOptions::new()
                .write(true)
                .open(&dest)
                .and_then(|mut f| f.write_all(&bytes))
                .map_err(|e| Error::io(&dest, e)),
            Target::File {
                tmp,
                overwrite,
                sensitivity,
                ..
            } => match overwrite {
                Overwrite::Replace => std::fs::rename(tmp, &dest).map_err(|e| Error::io(&dest, e)),
                Overwrite::Refuse => match std::fs::hard_link(tmp, &dest) {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        Err(Error::Exists(dest.display().to_string()))
                    }
                    // A file system without hard links: create the name exclusively.
                    Err(_) => {
                        let written = std::fs::read(tmp).map_err(|e| Error::io(&dest, e))?;
                        write_exclusive(&dest, &written, *sensitivity)
                    }
                },
            },
        }
    }
}

impl Drop for PendingOutput {
    /// Removes the temporary file (the whole of it after a commit by hard link).
    fn drop(&mut self) {
        if let Target::File { tmp, .. } = &self.target {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Commits several outputs of one command all together or not at all: every file is written
/// and flushed first (a full disk fails here, before any name appears), then each is put in
/// place; should putting one in place fail, the new files already placed are removed again
/// (under [`Overwrite::Refuse`], the only case where they were new names).
///
/// # Errors
/// The first error; nothing of this call's is left at a destination.
pub fn commit_all(outputs: Vec<(PendingOutput, &[u8])>) -> Result<(), Error> {
    let mut prepared = Vec::with_capacity(outputs.len());
    for (mut output, bytes) in outputs {
        output.prepare(bytes)?;
        prepared.push(output);
    }
    let mut placed: Vec<PathBuf> = Vec::new();
    for output in prepared {
        let new_name = matches!(
            output.target,
            Target::File {
                overwrite: Overwrite::Refuse,
                ..
            }
        );
        let dest = output.dest.clone();
        if let Err(e) = output.place() {
            for path in &placed {
                let _ = std::fs::remove_file(path);
            }
            return Err(e);
        }
        if new_name {
            placed.push(dest);
        }
    }
    Ok(())
}

/// Claims and commits in one step.
///
/// # Errors
/// As [`PendingOutput::claim`] and [`PendingOutput::commit`].
pub fn write(
    path: &Path,
    bytes: &[u8],
    sensitivity: Sensitivity,
    overwrite: Overwrite,
) -> Result<(), Error> {
    PendingOutput::claim(path, sensitivity, overwrite)?.commit(bytes)
}

/// Refuses an output that is one of the inputs (the same file, under any name).
fn check_not_input(output: &Path, inputs: &[&Path]) -> Result<(), Error> {
    if output.as_os_str() == "-" {
        return Ok(());
    }
    // By name (an input that does not exist yet, such as a state file's lock), and by file
    // (the same file under another name).
    let name = absolute(output);
    let id = file_id(output);
    for input in inputs {
        let same_file = id.is_some() && file_id(input) == id;
        if same_file || absolute(input) == name {
            return Err(Error::SameFile {
                output: output.display().to_string(),
                input: input.display().to_string(),
            });
        }
    }
    Ok(())
}

/// Whether a non-regular file is one to write through: a character device (a terminal,
/// /dev/null) or a FIFO — never a block device (a disk) or a socket.
fn is_stream(m: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_char_device() || m.file_type().is_fifo()
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        false
    }
}

/// (device, inode) of an existing regular file; `None` for `-`, devices and missing files.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    if path.as_os_str() == "-" {
        return None;
    }
    let m = std::fs::metadata(path).ok()?;
    if !m.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        std::fs::canonicalize(path).ok().map(|p| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            p.hash(&mut h);
            (0, h.finish())
        })
    }
}

/// A new file beside `dest`, created exclusively (mode 0600 for secrets).
fn create_temporary(dest: &Path, sensitivity: Sensitivity) -> Result<(PathBuf, File), Error> {
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = dest
        .file_name()
        .ok_or_else(|| Error::io(dest, std::io::Error::other("not a file name")))?;
    let mut last = None;
    for attempt in 0..16u32 {
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".pqkit-{}-{attempt}.tmp", std::process::id()));
        let tmp = dir.join(tmp_name);
        match open_exclusive(&tmp, sensitivity) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(Error::io(dest, e)),
        }
    }
    Err(Error::io(
        dest,
        last.unwrap_or_else(|| std::io::Error::other("no temporary file name free")),
    ))
}

/// `O_CREAT | O_EXCL` (no symbolic link is followed), mode 0600 for secrets.
fn open_exclusive(path: &Path, sensitivity: Sensitivity) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(match sensitivity {
            Sensitivity::Secret => 0o600,
            Sensitivity::Public => 0o644,
        });
    }
    #[cfg(not(unix))]
    let _ = sensitivity;
    options.open(path)
}

fn write_exclusive(dest: &Path, bytes: &[u8], sensitivity: Sensitivity) -> Result<(), Error> {
    let mut f = open_exclusive(dest, sensitivity).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            Error::Exists(dest.display().to_string())
        } else {
            Error::io(dest, e)
        }
    })?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io(dest, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dir(PathBuf);

    impl Dir {
        fn new(tag: &str) -> Self {
            let d = std::env::temp_dir().join(format!(
                "pqkit-output-{tag}-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).expect("mkdir");
            Self(d)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[cfg(unix)]
    #[test]
    fn secrets_are_0600_and_nothing_is_overwritten_without_replace() {
        use std::os::unix::fs::PermissionsExt;
        let d = Dir::new("secret");
        let key = d.0.join("k.pem");
        write(&key, b"one", Sensitivity::Secret, Overwrite::Refuse).expect("write");
        let mode = std::fs::metadata(&key).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(matches!(
            write(&key, b"two", Sensitivity::Secret, Overwrite::Refuse),
            Err(Error::Exists(_))
        ));
        assert_eq!(std::fs::read(&key).expect("read"), b"one");
        write(&key, b"two", Sensitivity::Secret, Overwrite::Replace).expect("replace");
        assert_eq!(std::fs::read(&key).expect("read"), b"two");
        assert_eq!(entries(&d.0), vec!["k.pem"], "no temporary file left");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_at_the_destination_is_never_followed() {
        let d = Dir::new("symlink");
        let victim = d.0.join("victim");
        std::fs::write(&victim, b"keep").expect("write");
        let link = d.0.join("out.pem");
        std::os::unix::fs::symlink(&victim, &link).expect("symlink");
        assert!(matches!(
            write(&link, b"evil", Sensitivity::Secret, Overwrite::Refuse),
            Err(Error::Exists(_))
        ));
        // Replace swaps the link itself for a file; the link's target is untouched.
        write(&link, b"new", Sensitivity::Secret, Overwrite::Replace).expect("replace");
        assert_eq!(std::fs::read(&victim).expect("read"), b"keep");
        assert!(
            !std::fs::symlink_metadata(&link)
                .expect("stat")
                .file_type()
                .is_symlink()
        );
        // A dangling link is not followed either.
        let dangling = d.0.join("dangling");
        std::os::unix::fs::symlink(d.0.join("nowhere"), &dangling).expect("symlink");
        assert!(write(&dangling, b"x", Sensitivity::Secret, Overwrite::Refuse).is_err());
        assert!(!d.0.join("nowhere").exists());
    }

    #[test]
    fn a_claim_fails_early_and_an_abandoned_claim_leaves_nothing() {
        let d = Dir::new("claim");
        let missing = d.0.join("no-such-dir").join("sig");
        assert!(matches!(
            PendingOutput::claim(&missing, Sensitivity::Public, Overwrite::Refuse),
            Err(Error::Io { .. })
        ));
        let out = d.0.join("sig");
        let claim =
            PendingOutput::claim(&out, Sensitivity::Public, Overwrite::Refuse).expect("claim");
        assert!(
            !out.exists(),
            "nothing under the final name before the commit"
        );
        drop(claim);
        assert!(entries(&d.0).is_empty());
        // A name taken between claim and commit is not replaced.
        let claim =
            PendingOutput::claim(&out, Sensitivity::Public, Overwrite::Refuse).expect("claim");
        std::fs::write(&out, b"other").expect("write");
        assert!(matches!(claim.commit(b"mine"), Err(Error::Exists(_))));
        assert_eq!(std::fs::read(&out).expect("read"), b"other");
        assert_eq!(entries(&d.0), vec!["sig"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_device_is_written_through_not_replaced() {
        let d = Dir::new("device-link");
        let link = d.0.join("out");
        std::os::unix::fs::symlink("/dev/null", &link).expect("symlink");
        write(&link, b"x", Sensitivity::Secret, Overwrite::Replace).expect("write");
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("stat")
                .file_type()
                .is_symlink()
        );
        assert_eq!(entries(&d.0), vec!["out"]);
    }

    #[test]
    fn one_command_may_not_name_a_file_twice() {
        let d = Dir::new("twice");
        let outputs = Outputs::new(Overwrite::Replace, &[]);
        let _first = outputs
            .claim(&d.0.join("k"), Sensitivity::Secret)
            .expect("claim");
        let again = d.0.join(".").join("k");
        assert!(matches!(
            outputs.claim(&again, Sensitivity::Public),
            Err(Error::DuplicateOutput(_))
        ));
    }

    #[test]
    fn an_input_is_never_an_output() {
        let d = Dir::new("same");
        let key = d.0.join("k.pem");
        std::fs::write(&key, b"key").expect("write");
        let also = d.0.join(".").join("k.pem");
        assert!(matches!(
            check_not_input(&also, &[Path::new("other"), &key]),
            Err(Error::SameFile { .. })
        ));
        assert!(check_not_input(&d.0.join("sig"), &[&key]).is_ok());
    }
}
