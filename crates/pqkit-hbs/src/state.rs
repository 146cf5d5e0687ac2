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
//! (flock) and a second opener gets [`StateError::Locked`] after retrying for 200 ms (a lock
//! just released can linger in a forked child until its exec). Exhaustion is an error, never a
//! wrap-around.
//!
//! The trees are not secret and not state: `<state>.cache` keeps them (leaves and subtree
//! roots of the trees in use and of the next trees being built) so that opening a key
//! computes no leaves — an H20 tree takes minutes to compute. It is written at key generation
//! and when a key that signed is dropped ([`StatefulKey::save_cache`]), MACed with a key
//! derived from the signing key; a cache that is missing, stale, damaged or not this key's is
//! ignored and the trees are computed. Which counter values are used never depends on it.
//!
//! Layout (version 1), big-endian: "PQKIT-HBS\0" ‖ u8 version ‖ u8 kind ‖ key ‖ u64 next ‖
//! SHA-256 of all before it (32), where kind 1 (HSS) has key = u8 L ‖ (u32 LMS type ‖ u32
//! LM-OTS type) × L ‖ I (16) ‖ SEED (m), and kinds 2 (XMSS) and 3 (XMSS^MT) have key = u32 OID ‖
//! S_XMSS (n) ‖ SK_PRF (n) ‖ SEED (n).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use rand_core::{OsRng, RngCore};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::hss::{HssSigner, Level};
use crate::lms::{Identifier, u32_at};
use crate::params::{lms_by_code, ots_by_code};
use crate::public::PublicKey;
use crate::signer::Signer;
use crate::tree::TreeCache;
use crate::xmss::{XmssParams, XmssSigner, by_oid};

const MAGIC: &[u8; 10] = b"PQKIT-HBS\0";
const VERSION: u8 = 1;
const KIND_HSS: u8 = 1;
const KIND_XMSS: u8 = 2;
const KIND_XMSS_MT: u8 = 3;
const CACHE_MAGIC: &[u8; 16] = b"PQKIT-HBS-CACHE\0";
/// How long a held lock is retried before [`StateError::Locked`] (see `lock`).
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(200);

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
    /// The state file's bytes before `next`: header, parameters and secrets.
    key: Zeroizing<Vec<u8>>,
    signer: Signer,
    /// The next counter value to use in memory.
    next: u64,
    /// The `next` on disk: values in `next..reserved_end` are reserved for this process.
    reserved_end: u64,
    /// Whether the trees changed since the cache file was written (or it was unusable).
    dirty: bool,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> StateError + '_ {
    move |e| StateError::Io(path.to_path_buf(), e)
}

fn lock_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

fn cache_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".cache");
    PathBuf::from(p)
}

/// HMAC-SHA-256 keyed with SHA-256("pqkit-hbs tree cache v1" ‖ the key's state bytes).
fn cache_mac(key: &[u8]) -> Hmac<Sha256> {
    let mac_key: Zeroizing<[u8; 32]> = Zeroizing::new(
        Sha256::new()
            .chain_update(b"pqkit-hbs tree cache v1")
            .chain_update(key)
            .finalize()
            .into(),
    );
    // HMAC takes keys of any length.
    Hmac::<Sha256>::new_from_slice(&mac_key[..]).unwrap_or_else(|_| unreachable!())
}

/// The cache file's trees when the file is present, whole and this key's; empty otherwise.
fn read_cache(path: &Path, key: &[u8]) -> Option<TreeCache> {
    let bytes = fs::read(cache_path(path)).ok()?;
    let rest = bytes.strip_prefix(&CACHE_MAGIC[..])?;
    let (&version, rest) = rest.split_first()?;
    (version == VERSION && rest.len() >= 32).then_some(())?;
    let (body, tag) = rest.split_at(rest.len() - 32);
    cache_mac(key).chain_update(body).verify_slice(tag).ok()?;
    TreeCache::from_bytes(body)
}

fn lock(path: &Path) -> Result<File, StateError> {
    let lp = lock_path(path);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lp)
        .map_err(io(&lp))?;
    // A lock released a moment ago can still be held by a child process that another thread
    // of this process forked and that has not reached exec yet (the child's copy of the
    // close-on-exec descriptor shares the lock): so a held lock is retried for a short while
    // before it counts as another signer's.
    let start = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
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

fn hss_key(levels: &[Level], id: &Identifier, seed: &[u8]) -> Zeroizing<Vec<u8>> {
    let mut out = Zeroizing::new(Vec::with_capacity(128));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[VERSION, KIND_HSS, u8::try_from(levels.len()).unwrap_or(0)]);
    for (lms, ots) in levels {
        out.extend_from_slice(&lms.code.to_be_bytes());
        out.extend_from_slice(&ots.code.to_be_bytes());
    }
    out.extend_from_slice(id);
    out.extend_from_slice(seed);
    out
}

fn xmss_key(params: &XmssParams, s_xmss: &[u8], sk_prf: &[u8], seed: &[u8]) -> Zeroizing<Vec<u8>> {
    let kind = if params.multi_tree {
        KIND_XMSS_MT
    } else {
        KIND_XMSS
    };
    let mut out = Zeroizing::new(Vec::with_capacity(128));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[VERSION, kind]);
    out.extend_from_slice(&params.oid.to_be_bytes());
    out.extend_from_slice(s_xmss);
    out.extend_from_slice(sk_prf);
    out.extend_from_slice(seed);
    out
}

/// The whole file: key ‖ u64 next ‖ SHA-256.
fn encode(key: &[u8], next: u64) -> Zeroizing<Vec<u8>> {
    let mut out = Zeroizing::new(Vec::with_capacity(key.len() + 40));
    out.extend_from_slice(key);
    out.extend_from_slice(&next.to_be_bytes());
    let digest = Sha256::digest(&out[..]);
    out.extend_from_slice(&digest);
    out
}

/// A state file, checked and opened.
struct Decoded {
    /// The bytes before `next`.
    key: Zeroizing<Vec<u8>>,
    next: u64,
    /// Ready for counter value `next`, its trees from the cache file where it has them.
    signer: Signer,
    /// Whether the cache file was usable.
    cached: bool,
}

/// Checks the file and opens its signer.
fn decode(path: &Path, bytes: &[u8], threads: usize) -> Result<Decoded, StateError> {
    let bad = |why| StateError::Corrupt(path.to_path_buf(), why);
    if bytes.len() < MAGIC.len() + 2 + 8 + 32 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(bad("no pqkit-hbs header"));
    }
    let (body, digest) = bytes.split_at(bytes.len() - 32);
    if Sha256::digest(body)[..] != digest[..] {
        return Err(bad("checksum mismatch"));
    }
    let (key, next) = body.split_at(body.len() - 8);
    let next = u64::from_be_bytes(next.try_into().map_err(|_| bad("wrong length"))?);
    let at = MAGIC.len();
    if key[at] != VERSION {
        return Err(bad("unsupported version"));
    }
    let cache = read_cache(path, key);
    let cached = cache.as_ref().is_some_and(|c| !c.is_empty());
    let cache = cache.unwrap_or_default();
    let rest = &key[at + 2..];
    let signer = match key[at + 1] {
        KIND_HSS => {
            let l = usize::from(*rest.first().ok_or(bad("wrong length"))?);
            if !(1..=8).contains(&l) {
                return Err(bad("levels outside 1–8"));
            }
            let mut levels = Vec::with_capacity(l);
            for i in 0..l {
                let lms = lms_by_code(u32_at(rest, 1 + 8 * i)?)?;
                let ots = ots_by_code(u32_at(rest, 5 + 8 * i)?)?;
                levels.push((lms, ots));
            }
            let secrets = &rest[1 + 8 * l..];
            let m = levels[0].0.m;
            if secrets.len() != 16 + m {
                return Err(bad("wrong length"));
            }
            let mut id = [0u8; 16];
            id.copy_from_slice(&secrets[..16]);
            Signer::Hss(HssSigner::open(
                &levels,
                id,
                &secrets[16..],
                next,
                threads,
                cache,
            )?)
        }
        kind @ (KIND_XMSS | KIND_XMSS_MT) => {
            let params = by_oid(u32_at(rest, 0)?, kind == KIND_XMSS_MT)?;
            let n = params.n;
            let secrets = &rest[4..];
            if secrets.len() != 3 * n {
                return Err(bad("wrong length"));
            }
            let (s_xmss, sk_prf, seed) = (&secrets[..n], &secrets[n..2 * n], &secrets[2 * n..]);
            Signer::Xmss(XmssSigner::open(
                params, s_xmss, sk_prf, seed, next, threads, cache,
            )?)
        }
        _ => return Err(bad("unsupported kind")),
    };
    Ok(Decoded {
        key: Zeroizing::new(key.to_vec()),
        next,
        signer,
        cached,
    })
}

/// `len` bytes from the OS RNG.
fn random(path: &Path, len: usize) -> Result<Zeroizing<Vec<u8>>, StateError> {
    let mut out = Zeroizing::new(vec![0u8; len]);
    OsRng
        .try_fill_bytes(&mut out)
        .map_err(|e| StateError::Io(path.to_path_buf(), std::io::Error::other(e.to_string())))?;
    Ok(out)
}

/// Writes `bytes` as `path` atomically and durably: temp file in the same directory, fsync,
/// rename, fsync of the directory. Without `durable`, the fsyncs are left out (atomic only).
fn persist(path: &Path, bytes: &[u8], durable: bool) -> Result<(), StateError> {
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
        if durable {
            f.sync_all()?;
        }
        drop(f);
        fs::rename(&tmp, path)?;
        if durable {
            File::open(&dir)?.sync_all()?;
        }
        Ok(())
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
        let seed = random(path, m)?;
        id.copy_from_slice(&random(path, 16)?);
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
        Self::create_with(path, hss_key(levels, &id, seed), || {
            Ok(Signer::Hss(HssSigner::generate(levels, id, seed, threads)?))
        })
    }

    /// Generates a new XMSS or XMSS^MT key (S_XMSS, SK_PRF, SEED from the OS RNG) on
    /// `threads` threads and writes its state file (refusing to overwrite one).
    ///
    /// # Errors
    /// As [`StatefulKey::create`].
    pub fn create_xmss(
        path: &Path,
        params: &'static XmssParams,
        threads: usize,
    ) -> Result<Self, StateError> {
        let n = params.n;
        let (s_xmss, sk_prf, seed) = (random(path, n)?, random(path, n)?, random(path, n)?);
        Self::create_with(path, xmss_key(params, &s_xmss, &sk_prf, &seed), || {
            Ok(Signer::Xmss(XmssSigner::generate(
                params, &s_xmss, &sk_prf, &seed, threads,
            )?))
        })
    }

    fn create_with(
        path: &Path,
        key: Zeroizing<Vec<u8>>,
        signer: impl FnOnce() -> Result<Signer, StateError>,
    ) -> Result<Self, StateError> {
        let lock = lock(path)?;
        if path.exists() {
            return Err(StateError::Exists(path.to_path_buf()));
        }
        let signer = signer()?;
        persist(path, &encode(&key, 0), true)?;
        let mut me = Self {
            path: path.to_path_buf(),
            _lock: lock,
            key,
            signer,
            next: 0,
            reserved_end: 0,
            dirty: true,
        };
        me.save_cache()?;
        Ok(me)
    }

    /// Opens a key's state file, taking its lock, and takes the trees of the current path
    /// from the cache file — or computes them on `threads` threads when it is missing or
    /// unusable. Values reserved by an earlier process are skipped.
    ///
    /// # Errors
    /// [`StateError::Locked`] when another signer holds the key; [`StateError::Corrupt`];
    /// I/O errors.
    pub fn open(path: &Path, threads: usize) -> Result<Self, StateError> {
        let lock = lock(path)?;
        let bytes = Zeroizing::new(fs::read(path).map_err(io(path))?);
        let d = decode(path, &bytes, threads)?;
        Ok(Self {
            path: path.to_path_buf(),
            _lock: lock,
            key: d.key,
            signer: d.signer,
            next: d.next,
            reserved_end: d.next,
            dirty: !d.cached,
        })
    }

    /// The public key.
    pub fn public_key(&self) -> PublicKey {
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
        persist(&self.path, &encode(&self.key, end), true)?;
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
        self.dirty = true;
        Ok(self.signer.sign(counter, message)?)
    }

    /// The cache file, `<state>.cache`.
    pub fn cache_path(&self) -> PathBuf {
        cache_path(&self.path)
    }

    /// Writes the trees in memory to the cache file (atomically, not fsynced: a lost cache
    /// costs only time). Done at key generation and when a key that signed is dropped.
    ///
    /// # Errors
    /// I/O errors.
    pub fn save_cache(&mut self) -> Result<(), StateError> {
        let body = self.signer.save_cache().to_bytes();
        let tag = cache_mac(&self.key)
            .chain_update(&body)
            .finalize()
            .into_bytes();
        let mut out = Vec::with_capacity(CACHE_MAGIC.len() + 1 + body.len() + 32);
        out.extend_from_slice(CACHE_MAGIC);
        out.push(VERSION);
        out.extend_from_slice(&body);
        out.extend_from_slice(&tag);
        persist(&self.cache_path(), &out, false)?;
        self.dirty = false;
        Ok(())
    }
}

impl Drop for StatefulKey {
    /// Saves the cache when the trees changed; a failure only costs the next open time.
    fn drop(&mut self) {
        if self.dirty {
            let _ = self.save_cache();
        }
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
