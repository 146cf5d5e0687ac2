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
//! just released can linger in a forked child until its exec). The lock file is created 0600
//! and removed when the key is released (unlinked while still held; an opener that locked a
//! file unlinked under it sees that the name now points elsewhere and tries again). Reading
//! the state ([`status`]) takes no lock and writes nothing. Exhaustion is an error, never a
//! wrap-around.
//!
//! One file per key: a copy of a state file is a second key that signs with the same one-time
//! keys. The file records where it lives — device, inode, creation time and absolute path, rewritten with
//! every reservation — and [`StatefulKey::open`] refuses it ([`StateError::NotWhereRecorded`])
//! when it is not that file: copied (`cp`, a backup restored, another machine), renamed or
//! moved, or reached through a second hard link. [`StatefulKey::adopt`] records the new
//! place after the user has been told what that risks: if the original, or a later copy of it,
//! ever signed beyond this file's counter, those one-time keys will be used again unless the
//! counter is moved past them. Every state file is created 0600, exclusively (`O_EXCL`: a
//! symbolic link in its place is never followed). `adopt` refuses a file with a second hard
//! link, and a copy whose original is still where it was recorded and is the same key; no
//! reservation is written while the file has a second hard link.
//!
//! What this cannot see: a whole file system or virtual machine rolled back to a snapshot (the
//! file comes back with its old inode and creation time, at its old path); and, on a file
//! system that keeps no creation time, a copy that lands on a path and a reused inode number
//! the original once held. Keep state files out of snapshots that can be restored.
//!
//! The trees are not secret and not state: `<state>.cache` keeps them (leaves and subtree
//! roots of the trees in use and of the next trees being built) so that opening a key
//! computes no leaves — an H20 tree takes minutes to compute. It is written at key generation
//! and when a key that signed is dropped ([`StatefulKey::save_cache`]), MACed with a key
//! derived from the signing key; a cache that is missing, stale, damaged or not this key's is
//! ignored and the trees are computed. Which counter values are used never depends on it.
//!
//! Sealed files ([`SealKey`], used by pqkit's PKCS#11 token): the secrets are stored XORed
//! with a stream of the seal key and the public header, and the kind byte has bit 0x80 set;
//! such a file opens only with [`StatefulKey::open_sealed`] ([`StateError::Sealed`] otherwise).
//!
//! Layout (version 2), big-endian: "PQKIT-HBS\0" ‖ u8 version ‖ u8 kind ‖ key ‖ location ‖
//! u64 next ‖ SHA-256 of all before it (32), where kind 1 (HSS) has key = u8 L ‖ (u32 LMS type
//! ‖ u32 LM-OTS type) × L ‖ I (16) ‖ SEED (m), kinds 2 (XMSS) and 3 (XMSS^MT) have key = u32
//! OID ‖ S_XMSS (n) ‖ SK_PRF (n) ‖ SEED (n), and location = u64 device ‖ u64 inode ‖ u16 length
//! ‖ u64 creation time (ns) ‖ the absolute path's bytes. Version 1 (no location) is read and must be adopted once.

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
const VERSION: u8 = 2;
/// Files of version 1 have no location; they open after [`StatefulKey::adopt`].
const VERSION_1: u8 = 1;
/// The cache file's own format version.
const CACHE_VERSION: u8 = 1;
const KIND_HSS: u8 = 1;
const KIND_XMSS: u8 = 2;
const KIND_XMSS_MT: u8 = 3;
const CACHE_MAGIC: &[u8; 16] = b"PQKIT-HBS-CACHE\0";
/// Set in the kind byte of a file whose secrets are sealed (see [`SealKey`]).
const SEALED: u8 = 0x80;
/// How long a held lock is retried before [`StateError::Locked`] (see `lock`).
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(200);

/// A key that seals a state file's secrets — the HSS SEED; XMSS's S_XMSS, SK_PRF and SEED —
/// so that the file alone cannot sign: they are stored XORed with SHAKE256("pqkit-hbs seal v1"
/// ‖ key ‖ the file's public header), and the kind byte says so. A PKCS#11 token derives one
/// per key from its PIN-sealed data key. Everything else in this module's contract holds
/// unchanged: reservations, locks, location checks and [`status`] need no seal key.
pub struct SealKey(Zeroizing<[u8; 32]>);

impl SealKey {
    /// Wraps 32 secret bytes.
    pub fn new(key: [u8; 32]) -> Self {
        Self(Zeroizing::new(key))
    }
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(..)")
    }
}

/// Where the secrets end in a key's bytes (the end of its key part).
fn secret_end(key: &[u8]) -> Option<usize> {
    let at = MAGIC.len();
    let end = match key.get(at + 1)? & !SEALED {
        KIND_HSS => {
            let l = usize::from(*key.get(at + 2)?);
            let lms = lms_by_code(u32_at(key, at + 3).ok()?).ok()?;
            at + 3 + 8 * l + 16 + lms.m
        }
        kind @ (KIND_XMSS | KIND_XMSS_MT) => {
            let params = by_oid(u32_at(key, at + 2).ok()?, kind == KIND_XMSS_MT).ok()?;
            at + 2 + 4 + 3 * params.n
        }
        _ => return None,
    };
    (end <= key.len()).then_some(end)
}

/// Where the secrets start in a key's bytes (HSS: after I; XMSS: after the OID).
fn secret_start(key: &[u8]) -> Option<usize> {
    let at = MAGIC.len();
    match key.get(at + 1)? & !SEALED {
        KIND_HSS => Some(at + 3 + 8 * usize::from(*key.get(at + 2)?) + 16),
        KIND_XMSS | KIND_XMSS_MT => Some(at + 2 + 4),
        _ => None,
    }
}

/// XORs the secrets of `key` with the seal's stream: the same call seals and unseals. The
/// stream depends on the header except its version byte ([`StatefulKey::adopt`] rewrites it).
fn apply_seal(key: &mut [u8], seal: &SealKey) {
    use sha3::digest::{ExtendableOutput, Update, XofReader};
    let Some(start) = secret_start(key).filter(|s| *s <= key.len()) else {
        return;
    };
    let at = MAGIC.len();
    let mut h = sha3::Shake256::default();
    h.update(b"pqkit-hbs seal v1");
    h.update(&seal.0[..]);
    h.update(&key[..at]);
    h.update(&key[at + 1..start]);
    let mut mask = Zeroizing::new(vec![0u8; key.len() - start]);
    h.finalize_xof().read(&mut mask);
    for (b, m) in key[start..].iter_mut().zip(mask.iter()) {
        *b ^= m;
    }
}

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
    /// The file is not where it was last written: a copy, a restored backup, a rename or a
    /// second hard link. Signing from it could reuse one-time keys; see
    /// [`StatefulKey::adopt`].
    #[error(
        "{path}: this state file is not the one the key last wrote ({why}); a copy signs with \
         the same one-time keys as its original. If this is now the only copy and nothing has \
         signed with the key since this file was last written, run `pqkit hbs adopt --state \
         {path}` (it explains the risk first)"
    )]
    NotWhereRecorded {
        /// The file opened.
        path: PathBuf,
        /// What differs.
        why: String,
    },
    /// [`StatefulKey::adopt`] of a copy whose original is still there: two live copies of one
    /// key.
    #[error(
        "{path}: the file it was copied from, {original}, still exists and is the same key (its \
         next one-time key is {next}); two copies would sign with the same one-time keys. \
         Remove one of them first"
    )]
    OriginalExists {
        /// The file to adopt.
        path: PathBuf,
        /// The recorded original.
        original: PathBuf,
        /// The original's counter.
        next: u64,
    },
    /// The state file has a second name (a hard link): the other name would keep an old copy
    /// when this one is rewritten. Nothing signs until it is removed.
    #[error(
        "{path}: the state file has {links} hard links; a state file must have one name. \
         Remove the other names (`find / -samefile {path}` lists them)"
    )]
    HardLinked {
        /// The file.
        path: PathBuf,
        /// Its link count.
        links: u64,
    },
    /// The state file was named through a symbolic link: rewriting it would replace the link,
    /// not the file, and leave two keys.
    #[error("{0}: is a symbolic link; open a state file by its own name ({1})")]
    SymbolicLink(PathBuf, PathBuf),
    /// The file's secrets are sealed ([`SealKey`]) and it was opened without the seal key:
    /// it signs only through what sealed it (a PKCS#11 token).
    #[error("{0}: the key's secrets are sealed; it signs only through its token")]
    Sealed(PathBuf),
    /// A signing error (exhaustion among them).
    #[error(transparent)]
    Hbs(#[from] crate::Error),
}

/// What [`StatefulKey::adopt`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adoption {
    /// How the file differed from where it was recorded (`None`: it was where it said, or it
    /// recorded no place — an earlier pqkit's file).
    pub was: Option<String>,
    /// The counter before.
    pub next_before: u64,
    /// The counter now (moved on by the skip asked for).
    pub next: u64,
    /// Total signatures of the key.
    pub capacity: u64,
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
    /// Size of each signature, in bytes (RFC 8554 §6.4 / RFC 8391 §4.1.8, §4.2.4).
    pub signature_len: usize,
}

/// A signing key bound to its state file. Not `Clone`: one object per key, signing through
/// `&mut self`.
pub struct StatefulKey {
    path: PathBuf,
    _lock: Lock,
    /// The state file's bytes before its location: header, parameters and secrets (sealed
    /// when the file is).
    key: Zeroizing<Vec<u8>>,
    /// The same with the secrets unsealed: the tree cache's MAC key comes from it.
    plain_key: Zeroizing<Vec<u8>>,
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

/// The files a key keeps beside its state file: `<state>.lock` and `<state>.cache`. No other
/// output may be written there.
pub fn companion_files(path: &Path) -> [PathBuf; 2] {
    [lock_path(path), cache_path(path)]
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

/// HMAC-SHA-256 keyed with SHA-256("pqkit-hbs tree cache v1" ‖ the key's state bytes), the
/// format version byte read as 1 (a key adopted from version 1 keeps its cache).
fn cache_mac(key: &[u8]) -> Hmac<Sha256> {
    let at = MAGIC.len();
    let mac_key: Zeroizing<[u8; 32]> = Zeroizing::new(
        Sha256::new()
            .chain_update(b"pqkit-hbs tree cache v1")
            .chain_update(&key[..at.min(key.len())])
            .chain_update(if key.len() > at {
                &[VERSION_1][..]
            } else {
                &[][..]
            })
            .chain_update(key.get(at + 1..).unwrap_or(&[]))
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
    (version == CACHE_VERSION && rest.len() >= 32).then_some(())?;
    let (body, tag) = rest.split_at(rest.len() - 32);
    cache_mac(key).chain_update(body).verify_slice(tag).ok()?;
    TreeCache::from_bytes(body)
}

/// An exclusive lock on `<state>.lock`, removed when released.
struct Lock {
    path: PathBuf,
    _file: File,
}

impl Drop for Lock {
    /// Unlinks the lock file while still holding it; closing the file then releases it.
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

fn lock(path: &Path) -> Result<Lock, StateError> {
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
            options.mode(0o600);
        }
        let file = options.open(&lp).map_err(io(&lp))?;
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

/// Where a state file lives: the file system object and the name it was written under.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Location {
    device: u64,
    inode: u64,
    /// The file's creation time in ns since the epoch (statx birth time; 0 where the file
    /// system does not keep one): a copy that gets a reused inode number still differs here.
    created_ns: u64,
    path: Vec<u8>,
}

impl Location {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.device.to_be_bytes());
        out.extend_from_slice(&self.inode.to_be_bytes());
        out.extend_from_slice(&self.created_ns.to_be_bytes());
        let len = u16::try_from(self.path.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&self.path[..usize::from(len)]);
    }

    /// Parses a location at the start of `bytes`; returns it and the bytes after it.
    fn decode(bytes: &[u8]) -> Option<(Self, &[u8])> {
        let u64_at = |at: usize| -> Option<u64> {
            Some(u64::from_be_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
        };
        let (device, inode, created_ns) = (u64_at(0)?, u64_at(8)?, u64_at(16)?);
        let len = usize::from(u16::from_be_bytes(bytes.get(24..26)?.try_into().ok()?));
        let path = bytes.get(26..26 + len)?.to_vec();
        Some((
            Self {
                device,
                inode,
                created_ns,
                path,
            },
            &bytes[26 + len..],
        ))
    }

    /// What differs between the recorded location and the file found, in words.
    fn differences(&self, found: &Self) -> Option<String> {
        if (self.device, self.inode, self.created_ns)
            != (found.device, found.inode, found.created_ns)
        {
            return Some(format!(
                "it was written as file {}:{} at {}, this is file {}:{} at {} — a copy or a \
                 restored backup",
                self.device,
                self.inode,
                String::from_utf8_lossy(&self.path),
                found.device,
                found.inode,
                String::from_utf8_lossy(&found.path),
            ));
        }
        if self.path != found.path {
            return Some(format!(
                "it was written at {} and is now at {}",
                String::from_utf8_lossy(&self.path),
                String::from_utf8_lossy(&found.path),
            ));
        }
        None
    }
}

/// The absolute path of `path` (its directory resolved; the file itself need not exist).
fn absolute(path: &Path) -> std::io::Result<Vec<u8>> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let full = fs::canonicalize(dir)?.join(name);
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(full.as_os_str().as_bytes().to_vec())
    }
    #[cfg(not(unix))]
    Ok(full.to_string_lossy().into_owned().into_bytes())
}

/// The location of the open `file` at `path`, and its link count.
fn locate(file: &File, path: &Path) -> std::io::Result<(Location, u64)> {
    let m = file.metadata()?;
    let created_ns = m
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| u64::try_from(d.as_nanos()).ok())
        .unwrap_or(0);
    #[cfg(unix)]
    let (device, inode, links) = {
        use std::os::unix::fs::MetadataExt;
        (m.dev(), m.ino(), m.nlink())
    };
    #[cfg(not(unix))]
    let (device, inode, links) = (0, 0, 1);
    let location = Location {
        device,
        inode,
        created_ns,
        path: absolute(path)?,
    };
    Ok((location, links))
}

/// The whole file: key ‖ location ‖ u64 next ‖ SHA-256.
fn encode(key: &[u8], location: &Location, next: u64) -> Zeroizing<Vec<u8>> {
    let mut out = Zeroizing::new(Vec::with_capacity(key.len() + 80 + location.path.len()));
    out.extend_from_slice(key);
    location.encode(&mut out);
    out.extend_from_slice(&next.to_be_bytes());
    let digest = Sha256::digest(&out[..]);
    out.extend_from_slice(&digest);
    out
}

/// A state file's contents, checked, before any tree is built.
struct Parsed {
    /// The bytes before the location: header, parameters and secrets, as stored.
    key: Zeroizing<Vec<u8>>,
    /// The same with the secrets unsealed (equal to `key` for an unsealed file, and for a
    /// sealed one parsed without its seal key).
    plain_key: Zeroizing<Vec<u8>>,
    /// Whether the secrets are sealed.
    sealed: bool,
    /// Where the file was last written; `None` for version 1.
    location: Option<Location>,
    next: u64,
    params: Params,
}

/// The scheme and parameters of a key, with its secrets.
enum Params {
    Hss {
        levels: Vec<Level>,
        id: Identifier,
        seed: Zeroizing<Vec<u8>>,
    },
    Xmss {
        params: &'static XmssParams,
        /// S_XMSS ‖ SK_PRF ‖ SEED.
        secrets: Zeroizing<Vec<u8>>,
    },
}

impl Params {
    /// Number of signatures.
    /// Bytes of each signature.
    fn signature_len(&self) -> usize {
        match self {
            Self::Hss { levels, .. } => crate::preset::hss_signature_len(levels),
            Self::Xmss { params, .. } => params.signature_len(),
        }
    }

    fn capacity(&self) -> u64 {
        match self {
            Self::Hss { levels, .. } => {
                let bits: u32 = levels.iter().map(|(l, _)| u32::from(l.h)).sum();
                1u64.checked_shl(bits).unwrap_or(u64::MAX)
            }
            Self::Xmss { params, .. } => params.signatures(),
        }
    }
}

/// Checks the file's bytes and reads its parameters (no tree is built).
fn parse(path: &Path, bytes: &[u8], seal: Option<&SealKey>) -> Result<Parsed, StateError> {
    let bad = |why| StateError::Corrupt(path.to_path_buf(), why);
    if bytes.len() < MAGIC.len() + 2 + 8 + 32 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(bad("no pqkit-hbs header"));
    }
    let (body, digest) = bytes.split_at(bytes.len() - 32);
    if Sha256::digest(body)[..] != digest[..] {
        return Err(bad("checksum mismatch"));
    }
    let at = MAGIC.len();
    let version = body[at];
    if version != VERSION && version != VERSION_1 {
        return Err(bad("unsupported version"));
    }
    let sealed = body[at + 1] & SEALED != 0;
    // The secrets as they are, unsealed when the seal key is given (lengths are the same).
    let mut plain = Zeroizing::new(body.to_vec());
    if sealed && let Some(seal) = seal {
        let end = secret_end(&plain).ok_or(bad("wrong length"))?;
        apply_seal(&mut plain[..end], seal);
    }
    let rest = &plain[at + 2..];
    let (params, key_len) = match body[at + 1] & !SEALED {
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
            let m = levels[0].0.m;
            let secrets = rest
                .get(1 + 8 * l..1 + 8 * l + 16 + m)
                .ok_or(bad("wrong length"))?;
            let mut id = [0u8; 16];
            id.copy_from_slice(&secrets[..16]);
            let seed = Zeroizing::new(secrets[16..].to_vec());
            (Params::Hss { levels, id, seed }, 1 + 8 * l + 16 + m)
        }
        kind @ (KIND_XMSS | KIND_XMSS_MT) => {
            let params = by_oid(u32_at(rest, 0)?, kind == KIND_XMSS_MT)?;
            let secrets = rest.get(4..4 + 3 * params.n).ok_or(bad("wrong length"))?;
            let secrets = Zeroizing::new(secrets.to_vec());
            (Params::Xmss { params, secrets }, 4 + 3 * params.n)
        }
        _ => return Err(bad("unsupported kind")),
    };
    let key_end = at + 2 + key_len;
    let after_key = &body[key_end..];
    let (location, tail) = if version == VERSION_1 {
        (None, after_key)
    } else {
        let (loc, tail) = Location::decode(after_key).ok_or(bad("wrong length"))?;
        (Some(loc), tail)
    };
    let next = u64::from_be_bytes(tail.try_into().map_err(|_| bad("wrong length"))?);
    let key = Zeroizing::new(body[..key_end].to_vec());
    let plain_key = Zeroizing::new(plain[..key_end].to_vec());
    Ok(Parsed {
        key,
        plain_key,
        sealed,
        location,
        next,
        params,
    })
}

/// Opens the signer of a parsed file, its trees from the cache file where it has them.
/// Returns it and whether the cache was usable.
fn open_signer(path: &Path, parsed: &Parsed, threads: usize) -> Result<(Signer, bool), StateError> {
    let cache = read_cache(path, &parsed.plain_key);
    let cached = cache.as_ref().is_some_and(|c| !c.is_empty());
    let cache = cache.unwrap_or_default();
    let signer = match &parsed.params {
        Params::Hss { levels, id, seed } => Signer::Hss(HssSigner::open(
            levels,
            *id,
            seed,
            parsed.next,
            threads,
            cache,
        )?),
        Params::Xmss { params, secrets } => {
            let n = params.n;
            Signer::Xmss(XmssSigner::open(
                params,
                &secrets[..n],
                &secrets[n..2 * n],
                &secrets[2 * n..],
                parsed.next,
                threads,
                cache,
            )?)
        }
    };
    Ok((signer, cached))
}

/// The state file's bytes, and the (device, inode, absolute path) and link count of the file
/// read — one open file, so they describe the same object.
/// A state file is opened by its own name and has no other: not through a symbolic link (a
/// rewrite would replace the link and leave the file it named as a second key), not with a
/// second hard link (the other name would keep the old inode).
fn one_name(path: &Path, links: u64) -> Result<(), StateError> {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        return Err(StateError::SymbolicLink(path.to_path_buf(), target));
    }
    if links > 1 {
        return Err(StateError::HardLinked {
            path: path.to_path_buf(),
            links,
        });
    }
    Ok(())
}

fn read_state(path: &Path) -> Result<(Zeroizing<Vec<u8>>, Location, u64), StateError> {
    use std::io::Read;
    let mut file = File::open(path).map_err(io(path))?;
    let (found, links) = locate(&file, path).map_err(io(path))?;
    let mut bytes = Zeroizing::new(Vec::new());
    file.read_to_end(&mut bytes).map_err(io(path))?;
    Ok((bytes, found, links))
}

/// Used and remaining signatures of the key in `path`, read without taking its lock or
/// building any tree (reserved values count as used).
///
/// # Errors
/// [`StateError::Corrupt`], I/O errors.
pub fn status(path: &Path) -> Result<Status, StateError> {
    let bytes = Zeroizing::new(fs::read(path).map_err(io(path))?);
    let parsed = parse(path, &bytes, None)?;
    let capacity = parsed.params.capacity();
    let used = parsed.next.min(capacity);
    Ok(Status {
        used,
        remaining: capacity - used,
        capacity,
        signature_len: parsed.params.signature_len(),
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

/// Writes the state `key ‖ location ‖ next` as `path` atomically and durably: a temporary
/// file created exclusively with mode 0600 beside it, its own device and inode recorded in
/// it (they survive the rename), fsync, rename, fsync of the directory.
fn persist_state(path: &Path, key: &[u8], next: u64, replace: bool) -> Result<(), StateError> {
    // A second name for the file (a hard-link snapshot taken while the key is open) would keep
    // the old inode when the rename replaces this name: a stale copy that looks like the
    // original. No write while one exists.
    #[cfg(unix)]
    if replace {
        use std::os::unix::fs::MetadataExt;
        let links = fs::metadata(path).map(|m| m.nlink()).unwrap_or(1);
        if links > 1 {
            return Err(StateError::HardLinked {
                path: path.to_path_buf(),
                links,
            });
        }
    }
    write_file(path, true, replace, |file| {
        let (location, _) = locate(file, path)?;
        Ok(encode(key, &location, next))
    })
}

/// Writes what `contents` makes (given the new file) as `path`: temporary file (0600,
/// exclusive), put in place by rename — or, without `replace`, by a hard link that fails if
/// `path` exists — and with `durable` the fsyncs of the file and the directory.
fn write_file(
    path: &Path,
    durable: bool,
    replace: bool,
    contents: impl FnOnce(&File) -> std::io::Result<Zeroizing<Vec<u8>>>,
) -> Result<(), StateError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    // A temporary file left by a process killed mid-write (same pid reused) is removed.
    let _ = fs::remove_file(&tmp);
    let result: std::io::Result<()> = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut f = options.open(&tmp)?;
        let bytes = contents(&f)?;
        f.write_all(&bytes)?;
        if durable {
            f.sync_all()?;
        }
        drop(f);
        if replace {
            fs::rename(&tmp, path)?;
        } else {
            match fs::hard_link(&tmp, path) {
                Ok(()) => fs::remove_file(&tmp)?,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(e),
                // A file system without hard links: the name is checked, then taken by rename
                // (under the key's lock; only another program could race it).
                Err(_) if fs::symlink_metadata(path).is_ok() => {
                    return Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists));
                }
                Err(_) => fs::rename(&tmp, path)?,
            }
        }
        if durable {
            File::open(&dir)?.sync_all()?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        if e.kind() == std::io::ErrorKind::AlreadyExists && !replace {
            return Err(StateError::Exists(path.to_path_buf()));
        }
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
        Self::create_hss(path, levels, threads, None)
    }

    /// As [`StatefulKey::create`], the SEED sealed under `seal` in the file ([`SealKey`]).
    ///
    /// # Errors
    /// As [`StatefulKey::create`].
    pub fn create_sealed(
        path: &Path,
        levels: &[Level],
        threads: usize,
        seal: &SealKey,
    ) -> Result<Self, StateError> {
        Self::create_hss(path, levels, threads, Some(seal))
    }

    fn create_hss(
        path: &Path,
        levels: &[Level],
        threads: usize,
        seal: Option<&SealKey>,
    ) -> Result<Self, StateError> {
        let m = levels.first().map_or(32, |(l, _)| l.m);
        let mut id = [0u8; 16];
        let seed = random(path, m)?;
        id.copy_from_slice(&random(path, 16)?);
        Self::create_with(path, hss_key(levels, &id, &seed), seal, || {
            Ok(Signer::Hss(HssSigner::generate(
                levels, id, &seed, threads,
            )?))
        })
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
        Self::create_with(path, hss_key(levels, &id, seed), None, || {
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
        Self::create_xmss_with(path, params, threads, None)
    }

    /// As [`StatefulKey::create_xmss`], the secrets sealed under `seal` ([`SealKey`]).
    ///
    /// # Errors
    /// As [`StatefulKey::create`].
    pub fn create_xmss_sealed(
        path: &Path,
        params: &'static XmssParams,
        threads: usize,
        seal: &SealKey,
    ) -> Result<Self, StateError> {
        Self::create_xmss_with(path, params, threads, Some(seal))
    }

    fn create_xmss_with(
        path: &Path,
        params: &'static XmssParams,
        threads: usize,
        seal: Option<&SealKey>,
    ) -> Result<Self, StateError> {
        let n = params.n;
        let (s_xmss, sk_prf, seed) = (random(path, n)?, random(path, n)?, random(path, n)?);
        Self::create_with(
            path,
            xmss_key(params, &s_xmss, &sk_prf, &seed),
            seal,
            || {
                Ok(Signer::Xmss(XmssSigner::generate(
                    params, &s_xmss, &sk_prf, &seed, threads,
                )?))
            },
        )
    }

    fn create_with(
        path: &Path,
        mut key: Zeroizing<Vec<u8>>,
        seal: Option<&SealKey>,
        signer: impl FnOnce() -> Result<Signer, StateError>,
    ) -> Result<Self, StateError> {
        let lock = lock(path)?;
        if fs::symlink_metadata(path).is_ok() {
            return Err(StateError::Exists(path.to_path_buf()));
        }
        let signer = signer()?;
        if seal.is_some() {
            key[MAGIC.len() + 1] |= SEALED;
        }
        let plain_key = key.clone();
        if let Some(seal) = seal {
            apply_seal(&mut key, seal);
        }
        persist_state(path, &key, 0, false)?;
        let mut me = Self {
            path: path.to_path_buf(),
            _lock: lock,
            key,
            plain_key,
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
    /// [`StateError::Locked`] when another signer holds the key;
    /// [`StateError::NotWhereRecorded`] for a copy, a restored backup, a moved file or a second
    /// hard link; [`StateError::Corrupt`]; I/O errors.
    pub fn open(path: &Path, threads: usize) -> Result<Self, StateError> {
        Self::open_with(path, threads, None)
    }

    /// As [`StatefulKey::open`], for a file whose secrets are sealed under `seal`
    /// ([`SealKey`]); an unsealed file opens as with [`StatefulKey::open`].
    ///
    /// # Errors
    /// As [`StatefulKey::open`].
    pub fn open_sealed(path: &Path, threads: usize, seal: &SealKey) -> Result<Self, StateError> {
        Self::open_with(path, threads, Some(seal))
    }

    fn open_with(path: &Path, threads: usize, seal: Option<&SealKey>) -> Result<Self, StateError> {
        let lock = lock(path)?;
        let (bytes, found, links) = read_state(path)?;
        one_name(path, links)?;
        let parsed = parse(path, &bytes, seal)?;
        if parsed.sealed && seal.is_none() {
            return Err(StateError::Sealed(path.to_path_buf()));
        }
        let why = match &parsed.location {
            None => Some(
                "it was written by an earlier pqkit that did not record where the file lives"
                    .to_owned(),
            ),
            Some(recorded) => recorded.differences(&found),
        };
        if let Some(why) = why {
            return Err(StateError::NotWhereRecorded {
                path: path.to_path_buf(),
                why,
            });
        }
        let (signer, cached) = open_signer(path, &parsed, threads)?;
        Ok(Self {
            path: path.to_path_buf(),
            _lock: lock,
            key: parsed.key,
            plain_key: parsed.plain_key,
            signer,
            next: parsed.next,
            reserved_end: parsed.next,
            dirty: !cached,
        })
    }

    /// Records the state file's present place (device, inode, path) as its own, so that
    /// [`StatefulKey::open`] accepts it after a copy, a restore or a move — and first moves
    /// its counter `skip` values on (capped at the capacity).
    ///
    /// # Security
    /// The risk is the caller's to weigh: if another copy of this key exists and signs, or the
    /// original signed after this copy was taken, the same one-time keys are used twice — which
    /// for LMS and XMSS can reveal enough to forge signatures. `skip` moves past one-time keys
    /// that may have been used since this copy was made.
    ///
    /// # Errors
    /// [`StateError::Locked`], [`StateError::Corrupt`], I/O errors.
    pub fn adopt(path: &Path, skip: u64) -> Result<Adoption, StateError> {
        let _lock = lock(path)?;
        let (bytes, found, links) = read_state(path)?;
        one_name(path, links)?;
        let mut parsed = parse(path, &bytes, None)?;
        // The file this one was copied from, still there and the same key: two live copies.
        if let Some(original) = parsed
            .location
            .as_ref()
            .map(|l| PathBuf::from(String::from_utf8_lossy(&l.path).into_owned()))
            && let Ok((other, other_found, _)) = read_state(&original)
            && (other_found.device, other_found.inode) != (found.device, found.inode)
            && let Ok(other) = parse(&original, &other, None)
            && other.key[MAGIC.len() + 1..] == parsed.key[MAGIC.len() + 1..]
        {
            return Err(StateError::OriginalExists {
                path: path.to_path_buf(),
                original,
                next: other.next,
            });
        }
        let recorded = parsed.location.as_ref().and_then(|r| r.differences(&found));
        let capacity = parsed.params.capacity();
        let next = parsed.next.saturating_add(skip).min(capacity);
        parsed.key[MAGIC.len()] = VERSION;
        persist_state(path, &parsed.key, next, true)?;
        Ok(Adoption {
            was: recorded,
            next_before: parsed.next,
            next,
            capacity,
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
            signature_len: self.signer.signature_len(),
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
        persist_state(&self.path, &self.key, end, true)?;
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
        let tag = cache_mac(&self.plain_key)
            .chain_update(&body)
            .finalize()
            .into_bytes();
        let mut out = Vec::with_capacity(CACHE_MAGIC.len() + 1 + body.len() + 32);
        out.extend_from_slice(CACHE_MAGIC);
        out.push(CACHE_VERSION);
        out.extend_from_slice(&body);
        out.extend_from_slice(&tag);
        write_file(&self.cache_path(), false, true, |_| Ok(Zeroizing::new(out)))?;
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
