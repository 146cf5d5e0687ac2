//! A stateful signing key on disk that never hands out a one-time key twice.
//!
//! The state file holds the parameters, the top (I, SEED) and `next`: every counter value
//! below `next` has been handed out (or skipped). Before a signature leaves
//! [`StatefulKey::sign`], its counter value is below the `next` on disk: the key reserves one
//! value (or, with [`StatefulKey::reserve`], a range) by writing the advanced `next` to a
//! temporary file, fsyncing it, renaming it over the state file and fsyncing the directory.
//! After a crash the file says where to go on: reserved values that were never used are
//! skipped, never reused. A persist that fails (read-only directory, full disk) is an error,
//! and no signature is made.
//!
//! One process at a time: [`StatefulKey::open`] takes an exclusive lock on `<state>.lock`
//! (flock) and a second opener gets [`StateError::Locked`]. Exhaustion is an error, never a
//! wrap-around.
//!
//! Layout (version 1), big-endian: "PQKIT-HBS\0" ‖ u8 version ‖ u8 kind (1 = HSS) ‖ u8 L ‖
//! (u32 LMS type ‖ u32 LM-OTS type) × L ‖ I (16) ‖ SEED (m) ‖ u64 next ‖ SHA-256 of all
//! before it (32).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use rand_core::{OsRng, RngCore};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::hss::{HssSigner, Level};
use crate::lms::{HssPublicKey, Identifier, u32_at};
use crate::params::{lms_by_code, ots_by_code};

const MAGIC: &[u8; 10] = b"PQKIT-HBS\0";
const VERSION: u8 = 1;
const KIND_HSS: u8 = 1;

/// Errors of a state file.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Another process (or another key object here) holds the key.
    #[error("{0}: the key is in use by another signer (lock {1} is held)")]
    Locked(PathBuf, PathBuf),
    /// The state file exists already (keygen never overwrites a key).
    #[error("{0}: a state file exists already; refusing to overwrite a key")]
    Exists(PathBuf),
    /// The state could not be read or persisted; no signature was made.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// The file is not a pqkit state file, or is damaged.
    #[error("{0}: not a valid pqkit-hbs state file: {1}")]
    Corrupt(PathBuf, &'static str),
    /// A signing error (exhaustion among them).
    #[error(transparent)]
    Hbs(#[from] crate::Error),
}

/// Used and remaining one-time keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// Counter values handed out or skipped.
    pub used: u64,
    /// Counter values still available.
    pub remaining: u64,
    /// Total signatures the key can make.
    pub capacity: u64,
}

/// A signing key bound to its state file. Not `Clone`: one object per key, signing through
/// `&mut self`.
pub struct StatefulKey {
    path: PathBuf,
    _lock: File,
    levels: Vec<Level>,
    id: Identifier,
    seed: Zeroizing<Vec<u8>>,
    signer: HssSigner,
    /// The next counter value to use in memory.
    next: u64,
    /// The `next` on disk: values in `next..reserved_end` are reserved for this process.
    reserved_end: u64,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> StateError + '_ {
    move |e| StateError::Io(path.to_path_buf(), e)
}

fn lock_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

fn lock(path: &Path) -> Result<File, StateError> {
    let lp = lock_path(path);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lp)
        .map_err(io(&lp))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(fs::TryLockError::WouldBlock) => Err(StateError::Locked(path.to_path_buf(), lp)),
        Err(fs::TryLockError::Error(e)) => Err(StateError::Io(lp, e)),
    }
}

fn encode(levels: &[Level], id: &Identifier, seed: &[u8], next: u64) -> Zeroizing<Vec<u8>> {
    let mut out = Zeroizing::new(Vec::with_capacity(128));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[VERSION, KIND_HSS, u8::try_from(levels.len()).unwrap_or(0)]);
    for (lms, ots) in levels {
        out.extend_from_slice(&lms.code.to_be_bytes());
        out.extend_from_slice(&ots.code.to_be_bytes());
    }
    out.extend_from_slice(id);
    out.extend_from_slice(seed);
    out.extend_from_slice(&next.to_be_bytes());
    let digest = Sha256::digest(&out[..]);
    out.extend_from_slice(&digest);
    out
}

/// What a state file holds.
type Decoded = (Vec<Level>, Identifier, Zeroizing<Vec<u8>>, u64);

fn decode(path: &Path, bytes: &[u8]) -> Result<Decoded, StateError> {
    let bad = |why| StateError::Corrupt(path.to_path_buf(), why);
    if bytes.len() < MAGIC.len() + 3 + 32 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(bad("no pqkit-hbs header"));
    }
    let (body, digest) = bytes.split_at(bytes.len() - 32);
    if Sha256::digest(body)[..] != digest[..] {
        return Err(bad("checksum mismatch"));
    }
    let at = MAGIC.len();
    if body[at] != VERSION || body[at + 1] != KIND_HSS {
        return Err(bad("unsupported version or kind"));
    }
    let l = usize::from(body[at + 2]);
    if !(1..=8).contains(&l) {
        return Err(bad("levels outside 1–8"));
    }
    let mut pos = at + 3;
    let mut levels = Vec::with_capacity(l);
    for _ in 0..l {
        let lms = lms_by_code(u32_at(body, pos)?)?;
        let ots = ots_by_code(u32_at(body, pos + 4)?)?;
        levels.push((lms, ots));
        pos += 8;
    }
    let m = levels[0].0.m;
    if body.len() != pos + 16 + m + 8 {
        return Err(bad("wrong length"));
    }
    let mut id = [0u8; 16];
    id.copy_from_slice(&body[pos..pos + 16]);
    let seed = Zeroizing::new(body[pos + 16..pos + 16 + m].to_vec());
    let mut next = [0u8; 8];
    next.copy_from_slice(&body[pos + 16 + m..]);
    Ok((levels, id, seed, u64::from_be_bytes(next)))
}

/// Writes `bytes` as `path` atomically and durably: temp file in the same directory, fsync,
/// rename, fsync of the directory.
fn persist(path: &Path, bytes: &[u8]) -> Result<(), StateError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let result = (|| {
        let mut f = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        File::open(&dir)?.sync_all()
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(StateError::Io(path.to_path_buf(), e));
    }
    Ok(())
}

impl StatefulKey {
    /// Generates a new HSS key with `levels`, the top I and SEED from the OS RNG, on
    /// `threads` threads, and writes its state file (refusing to overwrite one).
    ///
    /// # Errors
    /// [`StateError::Exists`], [`StateError::Locked`], I/O errors, parameter errors.
    pub fn create(path: &Path, levels: &[Level], threads: usize) -> Result<Self, StateError> {
        let m = levels.first().map_or(32, |(l, _)| l.m);
        let mut id = [0u8; 16];
        let mut seed = Zeroizing::new(vec![0u8; m]);
        let rng_error = |e: rand_core::Error| {
            StateError::Io(path.to_path_buf(), std::io::Error::other(e.to_string()))
        };
        OsRng.try_fill_bytes(&mut id).map_err(rng_error)?;
        OsRng.try_fill_bytes(&mut seed).map_err(rng_error)?;
        Self::create_from_seed(path, levels, id, &seed, threads)
    }

    /// As [`StatefulKey::create`], from a given top I and SEED (m bytes).
    ///
    /// # Errors
    /// As [`StatefulKey::create`].
    pub fn create_from_seed(
        path: &Path,
        levels: &[Level],
        id: Identifier,
        seed: &[u8],
        threads: usize,
    ) -> Result<Self, StateError> {
        let lock = lock(path)?;
        if path.exists() {
            return Err(StateError::Exists(path.to_path_buf()));
        }
        let signer = HssSigner::generate(levels, id, seed, threads)?;
        persist(path, &encode(levels, &id, seed, 0))?;
        Ok(Self {
            path: path.to_path_buf(),
            _lock: lock,
            levels: levels.to_vec(),
            id,
            seed: Zeroizing::new(seed.to_vec()),
            signer,
            next: 0,
            reserved_end: 0,
        })
    }

    /// Opens a key's state file, taking its lock, and regenerates the trees of the current
    /// path on `threads` threads. Values reserved by an earlier process are skipped.
    ///
    /// # Errors
    /// [`StateError::Locked`] when another signer holds the key; [`StateError::Corrupt`];
    /// I/O errors.
    pub fn open(path: &Path, threads: usize) -> Result<Self, StateError> {
        let lock = lock(path)?;
        let bytes = Zeroizing::new(fs::read(path).map_err(io(path))?);
        let (levels, id, seed, next) = decode(path, &bytes)?;
        let signer = HssSigner::generate(&levels, id, &seed, threads)?;
        Ok(Self {
            path: path.to_path_buf(),
            _lock: lock,
            levels,
            id,
            seed,
            signer,
            next,
            reserved_end: next,
        })
    }

    /// The public key.
    pub fn public_key(&self) -> HssPublicKey {
        self.signer.public_key()
    }

    /// The state file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Used and remaining signatures (reserved values count as used).
    pub fn status(&self) -> Status {
        let capacity = self.signer.capacity();
        let used = self.reserved_end.min(capacity);
        Status {
            used,
            remaining: capacity - used,
            capacity,
        }
    }

    /// Bytes of tree nodes the signer keeps in memory.
    pub fn cache_bytes(&self) -> usize {
        self.signer.cache_bytes()
    }

    /// Reserves `count` more counter values on disk at once (fewer at the end of the key),
    /// so the next signatures need no write each.
    ///
    /// # Errors
    /// [`crate::Error::Exhausted`] when none is left; I/O errors (nothing reserved then).
    pub fn reserve(&mut self, count: u64) -> Result<(), StateError> {
        let capacity = self.signer.capacity();
        if self.reserved_end >= capacity {
            return Err(crate::Error::Exhausted.into());
        }
        let end = self.reserved_end.saturating_add(count.max(1)).min(capacity);
        persist(&self.path, &encode(&self.levels, &self.id, &self.seed, end))?;
        self.reserved_end = end;
        Ok(())
    }

    /// Signs `message` with the next unused counter value; reserves it on disk first when it
    /// is not reserved yet.
    ///
    /// # Errors
    /// [`crate::Error::Exhausted`]; I/O errors of the reservation (no signature is made).
    pub fn sign(&mut self, message: &[u8]) -> Result<Vec<u8>, StateError> {
        if self.next >= self.reserved_end {
            self.reserve(1)?;
        }
        let counter = self.next;
        self.next += 1;
        Ok(self.signer.sign(counter, message)?)
    }
}

impl std::fmt::Debug for StatefulKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatefulKey")
            .field("path", &self.path)
            .field("next", &self.next)
            .field("reserved_end", &self.reserved_end)
            .finish_non_exhaustive()
    }
}
