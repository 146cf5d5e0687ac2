//! The state file's bytes, where it lives, and how it is written.
//!
//! Layout (version 3), big-endian: "PQKIT-HBS\0" ‖ u8 version ‖ u8 kind ‖ key ‖ binding ‖
//! location ‖ SHA-256 of all before it (32, the fixed part's digest) ‖ counter slot 0 ‖ counter
//! slot 1, where
//! - kind 1 (HSS) has key = u8 L ‖ (u32 LMS type ‖ u32 LM-OTS type) × L ‖ I (16) ‖ SEED (m);
//!   kinds 2 (XMSS) and 3 (XMSS^MT) have key = u32 OID ‖ S_XMSS (n) ‖ SK_PRF (n) ‖ SEED (n);
//!   bit 0x80 of the kind marks sealed secrets;
//! - binding = u16 length ‖ the public key (RFC 8554 §6.1 / RFC 8391 §4.1.7) ‖ u64 first ‖
//!   u64 end (the counter values this file may use: first..end) ‖ the ledger's id (16) ‖
//!   u8 flags (bit 0: the ledger is shared by several signers);
//! - location = u64 device ‖ u64 inode ‖ u64 creation time (ns) ‖ u16 length ‖ the absolute
//!   path's bytes;
//! - a counter slot = u64 sequence ‖ u64 next ‖ SHA-256("pqkit-hbs counter slot v1" ‖ the
//!   fixed part's digest ‖ sequence ‖ next) (48 bytes). The slot with the highest sequence whose
//!   digest verifies holds `next`.
//!
//! The whole file is written once (key generation, `adopt`, a sector), through a temporary
//! file put in place by a hard link or a rename. A reservation then rewrites only a counter
//! slot in place — the one the current sequence does not use — and `fdatasync`s: one flush
//! instead of a temporary file, a rename and two flushes, no new name, no new inode, no space
//! needed on the disk. A write torn by a crash leaves its slot failing its digest and the other
//! slot, the previous counter, valid; the ledger was not moved before the write was durable.
//!
//! Version 2 (key ‖ location ‖ u64 next ‖ SHA-256) has no binding, version 1 neither binding
//! nor location: both are read, and sign only after `adopt` records them in a ledger.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use super::StateError;
use super::layout::secret_end;
use super::seal::{SealKey, apply_seal};
use crate::hss::Level;
use crate::ledger::{LedgerId, RecordId};
use crate::lms::{Identifier, u32_at};
use crate::params::{lms_by_code, ots_by_code};
use crate::xmss::{XmssParams, by_oid};

pub(super) use super::layout::{
    KIND_HSS, KIND_XMSS, KIND_XMSS_MT, MAGIC, SEALED, VERSION, VERSION_1, VERSION_2,
};
/// Largest state file read, in bytes (a state file is under 400 bytes and a path).
const MAX_STATE_SIZE: u64 = 128 << 10;
const FLAG_SHARED: u8 = 1;
/// The ledger id of a file no ledger records yet (a sector released by `split`): it signs
/// only after `adopt`.
pub(super) const UNBOUND: LedgerId = LedgerId([0; 16]);

pub(super) fn hss_key(levels: &[Level], id: &Identifier, seed: &[u8]) -> Zeroizing<Vec<u8>> {
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

pub(super) fn xmss_key(
    params: &XmssParams,
    s_xmss: &[u8],
    sk_prf: &[u8],
    seed: &[u8],
) -> Zeroizing<Vec<u8>> {
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

/// Which key range a file signs with and which ledger records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Binding {
    /// The key's public key (RFC 8554 §6.1 / RFC 8391 §4.1.7).
    pub(super) public: Vec<u8>,
    /// The first counter value this file may use.
    pub(super) first: u64,
    /// One past the last counter value this file may use.
    pub(super) end: u64,
    /// The ledger that holds the range's record.
    pub(super) ledger: LedgerId,
    /// Whether that ledger hands out ranges to several signers (copies of this file sign).
    pub(super) shared: bool,
}

impl Binding {
    /// The name of this range's record.
    pub(super) fn record(&self) -> RecordId {
        RecordId::new(&self.public, self.first, self.end)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let len = u16::try_from(self.public.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&self.public[..usize::from(len)]);
        out.extend_from_slice(&self.first.to_be_bytes());
        out.extend_from_slice(&self.end.to_be_bytes());
        out.extend_from_slice(&self.ledger.0);
        out.push(if self.shared { FLAG_SHARED } else { 0 });
    }

    fn decode(bytes: &[u8]) -> Option<(Self, &[u8])> {
        let len = usize::from(u16::from_be_bytes(bytes.get(..2)?.try_into().ok()?));
        let public = bytes.get(2..2 + len)?.to_vec();
        let rest = &bytes[2 + len..];
        let first = u64::from_be_bytes(rest.get(..8)?.try_into().ok()?);
        let end = u64::from_be_bytes(rest.get(8..16)?.try_into().ok()?);
        let ledger = LedgerId(rest.get(16..32)?.try_into().ok()?);
        let flags = *rest.get(32)?;
        if flags & !FLAG_SHARED != 0 || first > end {
            return None;
        }
        Some((
            Self {
                public,
                first,
                end,
                ledger,
                shared: flags & FLAG_SHARED != 0,
            },
            &rest[33..],
        ))
    }
}

/// Where a state file lives: the file system object and the name it was written under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Location {
    device: u64,
    inode: u64,
    /// The file's creation time in ns since the epoch (statx birth time; 0 where the file
    /// system does not keep one): a copy that gets a reused inode number still differs here.
    created_ns: u64,
    pub(super) path: Vec<u8>,
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

    /// Whether both name the same file system object.
    pub(super) fn same_object(&self, other: &Self) -> bool {
        (self.device, self.inode) == (other.device, other.inode)
    }

    /// What differs between the recorded location and the file found, in words.
    pub(super) fn differences(&self, found: &Self) -> Option<String> {
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

/// Bytes of a counter slot.
const SLOT_LEN: usize = 48;

/// A counter slot: sequence ‖ next ‖ its digest under the fixed part's.
fn slot(fixed_digest: &[u8; 32], seq: u64, next: u64) -> [u8; SLOT_LEN] {
    let mut out = [0u8; SLOT_LEN];
    out[..8].copy_from_slice(&seq.to_be_bytes());
    out[8..16].copy_from_slice(&next.to_be_bytes());
    let digest = Sha256::new()
        .chain_update(b"pqkit-hbs counter slot v1")
        .chain_update(fixed_digest)
        .chain_update(seq.to_be_bytes())
        .chain_update(next.to_be_bytes())
        .finalize();
    out[16..].copy_from_slice(&digest);
    out
}

/// A slot's (sequence, next) when its digest verifies.
fn read_slot(fixed_digest: &[u8; 32], bytes: &[u8]) -> Option<(u64, u64)> {
    let seq = u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?);
    let next = u64::from_be_bytes(bytes.get(8..16)?.try_into().ok()?);
    (bytes.len() == SLOT_LEN && slot(fixed_digest, seq, next)[..] == bytes[..])
        .then_some((seq, next))
}

/// The whole file: key ‖ binding ‖ location ‖ SHA-256 ‖ slot 0 (sequence 1, `next`) ‖ slot 1
/// (empty: it fails its digest).
fn encode(key: &[u8], binding: &Binding, location: &Location, next: u64) -> Zeroizing<Vec<u8>> {
    let mut out = Zeroizing::new(Vec::with_capacity(
        key.len() + 64 + 2 * SLOT_LEN + 64 + binding.public.len() + location.path.len(),
    ));
    out.extend_from_slice(key);
    binding.encode(&mut out);
    location.encode(&mut out);
    let digest: [u8; 32] = Sha256::digest(&out[..]).into();
    out.extend_from_slice(&digest);
    out.extend_from_slice(&slot(&digest, 1, next));
    out.extend_from_slice(&[0u8; SLOT_LEN]);
    out
}

/// A state file's contents, checked, before any tree is built.
pub(super) struct Parsed {
    /// The bytes before the binding: header, parameters and secrets, as stored (the version
    /// byte is the file's).
    pub(super) key: Zeroizing<Vec<u8>>,
    /// The same with the secrets unsealed (equal to `key` for an unsealed file, and for a
    /// sealed one parsed without its seal key).
    pub(super) plain_key: Zeroizing<Vec<u8>>,
    /// Whether the secrets are sealed.
    pub(super) sealed: bool,
    /// The range and ledger; `None` before version 3.
    pub(super) binding: Option<Binding>,
    /// Where the file was last written; `None` for version 1.
    pub(super) location: Option<Location>,
    pub(super) next: u64,
    /// Where `next` is kept (version 3).
    pub(super) counter: Counter,
    pub(super) params: Params,
}

/// Where a version-3 file keeps its counter: the slots' offset, the fixed part's digest and
/// the sequence of the slot in use.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counter {
    pub(super) seq: u64,
    pub(super) fixed_digest: [u8; 32],
    pub(super) slots_at: u64,
}

/// A version-3 state file open for its reservations: each [`SlotWriter::write`] rewrites the
/// counter slot not in use and flushes it (see the module docs).
pub(super) struct SlotWriter {
    file: File,
    path: PathBuf,
    counter: Counter,
}

impl SlotWriter {
    /// Opens the state file at `path` for writing its slots, checking that it is the file
    /// `found` describes (the one just read) and keeps `counter`.
    pub(super) fn open(
        path: &Path,
        found: &Location,
        counter: Counter,
    ) -> Result<Self, StateError> {
        let mut options = OpenOptions::new();
        options.write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let file = options
            .open(path)
            .map_err(|e| StateError::Io(path.to_path_buf(), e))?;
        let (now, _) = locate(&file, path).map_err(|e| StateError::Io(path.to_path_buf(), e))?;
        if !now.same_object(found) {
            return Err(StateError::NotWhereRecorded {
                path: path.to_path_buf(),
                why: "it was replaced while it was being opened".to_owned(),
                ledger: String::from("its ledger"),
            });
        }
        Ok(Self {
            file,
            path: path.to_path_buf(),
            counter,
        })
    }

    /// Writes `next` into the slot the current sequence does not use and flushes it. Refused
    /// while the file has a second name (a hard link would keep the old counter under it).
    pub(super) fn write(&mut self, next: u64) -> Result<(), StateError> {
        use std::os::unix::fs::FileExt;
        let io = |e| StateError::Io(self.path.clone(), e);
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let links = self.file.metadata().map_err(io)?.nlink();
            if links > 1 {
                return Err(StateError::HardLinked {
                    path: self.path.clone(),
                    links,
                });
            }
        }
        let seq = self.counter.seq + 1;
        let bytes = slot(&self.counter.fixed_digest, seq, next);
        let at = self.counter.slots_at + (seq % 2) * SLOT_LEN as u64;
        self.file.write_all_at(&bytes, at).map_err(io)?;
        self.file.sync_data().map_err(io)?;
        self.counter.seq = seq;
        Ok(())
    }
}

impl Parsed {
    /// The counter values the file may use: the binding's range, or the whole key.
    pub(super) fn range(&self) -> (u64, u64) {
        self.binding
            .as_ref()
            .map_or((0, self.params.capacity()), |b| (b.first, b.end))
    }
}

/// The scheme and parameters of a key, with its secrets.
pub(super) enum Params {
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
    /// Bytes of each signature.
    pub(super) fn signature_len(&self) -> usize {
        match self {
            Self::Hss { levels, .. } => crate::hss::hss_signature_len(levels),
            Self::Xmss { params, .. } => params.signature_len(),
        }
    }

    /// Number of signatures of the whole key.
    pub(super) fn capacity(&self) -> u64 {
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
pub(super) fn parse(
    path: &Path,
    bytes: &[u8],
    seal: Option<&SealKey>,
) -> Result<Parsed, StateError> {
    let bad = |why| StateError::Corrupt(path.to_path_buf(), why);
    if bytes.len() < MAGIC.len() + 2 + 8 + 32 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(bad("no pqkit-hbs header"));
    }
    let at = MAGIC.len();
    let version = bytes[at];
    if !(VERSION_1..=VERSION).contains(&version) {
        return Err(bad("unsupported version"));
    }
    // Version 3: fixed part ‖ its digest ‖ two counter slots; earlier: body ‖ u64 next ‖ digest.
    let (body, counter, slot_next) = if version == VERSION {
        let slots_at = bytes
            .len()
            .checked_sub(2 * SLOT_LEN + 32)
            .ok_or(bad("wrong length"))?;
        let (fixed, rest) = bytes.split_at(slots_at);
        let digest: [u8; 32] = Sha256::digest(fixed).into();
        if rest[..32] != digest {
            return Err(bad("checksum mismatch"));
        }
        let best = [&rest[32..32 + SLOT_LEN], &rest[32 + SLOT_LEN..]]
            .iter()
            .filter_map(|s| read_slot(&digest, s))
            .max_by_key(|(seq, _)| *seq)
            .ok_or(bad("no counter slot verifies"))?;
        (
            fixed,
            Counter {
                seq: best.0,
                fixed_digest: digest,
                slots_at: u64::try_from(slots_at + 32).unwrap_or(u64::MAX),
            },
            Some(best.1),
        )
    } else {
        let (body, digest) = bytes.split_at(bytes.len() - 32);
        if Sha256::digest(body)[..] != digest[..] {
            return Err(bad("checksum mismatch"));
        }
        (body, Counter::default(), None)
    };
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
    let mut tail = body.get(key_end..).ok_or(bad("wrong length"))?;
    let binding = if version >= VERSION {
        let (b, t) = Binding::decode(tail).ok_or(bad("damaged ledger binding"))?;
        if b.end > params.capacity() {
            return Err(bad("a range beyond the key's capacity"));
        }
        tail = t;
        Some(b)
    } else {
        None
    };
    let location = if version >= VERSION_2 {
        let (loc, t) = Location::decode(tail).ok_or(bad("wrong length"))?;
        tail = t;
        Some(loc)
    } else {
        None
    };
    let next = match slot_next {
        Some(next) if tail.is_empty() => next,
        Some(_) => return Err(bad("wrong length")),
        None => u64::from_be_bytes(tail.try_into().map_err(|_| bad("wrong length"))?),
    };
    let key = Zeroizing::new(body[..key_end].to_vec());
    let plain_key = Zeroizing::new(plain[..key_end].to_vec());
    Ok(Parsed {
        key,
        plain_key,
        sealed,
        binding,
        location,
        next,
        counter,
        params,
    })
}

/// A state file is opened by its own name and has no other: not through a symbolic link (a
/// rewrite would replace the link and leave the file it named as a second key), not with a
/// second hard link (the other name would keep the old inode).
pub(super) fn one_name(path: &Path, links: u64) -> Result<(), StateError> {
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

/// Opens `path` for reading without following a symbolic link and without blocking on a FIFO,
/// and checks it is a regular file.
fn open_regular(path: &Path) -> Result<File, StateError> {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        return Err(StateError::SymbolicLink(path.to_path_buf(), target));
    }
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|e| StateError::Io(path.to_path_buf(), e))?;
    let meta = file
        .metadata()
        .map_err(|e| StateError::Io(path.to_path_buf(), e))?;
    if !meta.is_file() {
        return Err(StateError::Corrupt(
            path.to_path_buf(),
            "not a regular file (a FIFO, device or directory is no state file)",
        ));
    }
    if meta.len() > MAX_STATE_SIZE {
        return Err(StateError::Corrupt(
            path.to_path_buf(),
            "larger than any state file (128 KiB)",
        ));
    }
    Ok(file)
}

/// The state file's bytes, where the file read lives and its link count — one open file, so
/// they describe the same object.
pub(super) fn read_state(path: &Path) -> Result<(Zeroizing<Vec<u8>>, Location, u64), StateError> {
    let file = open_regular(path)?;
    let (found, links) = locate(&file, path).map_err(|e| StateError::Io(path.to_path_buf(), e))?;
    let mut bytes = Zeroizing::new(Vec::new());
    file.take(MAX_STATE_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| StateError::Io(path.to_path_buf(), e))?;
    Ok((bytes, found, links))
}

/// The state file's bytes, without where it lives (for reading a state without its lock).
pub(super) fn read_bytes(path: &Path) -> Result<Zeroizing<Vec<u8>>, StateError> {
    let file = open_regular(path)?;
    let mut bytes = Zeroizing::new(Vec::new());
    file.take(MAX_STATE_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| StateError::Io(path.to_path_buf(), e))?;
    Ok(bytes)
}

/// Writes the whole state file `key ‖ binding ‖ location ‖ next` as `path` atomically and
/// durably: a temporary file created exclusively with mode 0600 beside it, its own device and
/// inode recorded in it (they survive the rename), fsync, rename (or, without `replace`, a hard
/// link that fails if `path` exists), fsync of the directory.
pub(super) fn persist_state(
    path: &Path,
    key: &[u8],
    binding: &Binding,
    next: u64,
    replace: bool,
) -> Result<(Location, Counter), StateError> {
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
    let mut written = None;
    write_file(path, true, replace, |file| {
        let (location, _) = locate(file, path)?;
        let bytes = encode(key, binding, &location, next);
        let slots_at = bytes.len() - 2 * SLOT_LEN;
        let mut fixed_digest = [0u8; 32];
        fixed_digest.copy_from_slice(&bytes[slots_at - 32..slots_at]);
        let counter = Counter {
            seq: 1,
            fixed_digest,
            slots_at: u64::try_from(slots_at).unwrap_or(u64::MAX),
        };
        written = Some((location, counter));
        Ok(bytes)
    })?;
    written.ok_or_else(|| StateError::Io(path.to_path_buf(), std::io::Error::other("not written")))
}

/// The temporary file a write of `path` goes through: `<path>.tmp-<pid>`.
fn temporary(path: &Path) -> PathBuf {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    PathBuf::from(tmp)
}

/// Writes what `contents` makes (given the new file) as `path`: temporary file (0600,
/// exclusive), put in place by rename — or, without `replace`, by a hard link that fails if
/// `path` exists — and with `durable` the fsyncs of the file and the directory.
pub(super) fn write_file(
    path: &Path,
    durable: bool,
    replace: bool,
    contents: impl FnOnce(&File) -> std::io::Result<Zeroizing<Vec<u8>>>,
) -> Result<(), StateError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = temporary(path);
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

/// Temporary files of `path`'s writes left by processes that died before putting them in
/// place: `<path>.tmp-*` and `<path>.cache.tmp-*` (regular files only).
pub fn leftovers(path: &Path) -> Vec<PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    let prefixes = [format!("{name}.tmp-"), format!("{name}.cache.tmp-")];
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            prefixes.iter().any(|p| n.starts_with(p.as_str()))
                && e.file_type().is_ok_and(|t| t.is_file())
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// Removes [`leftovers`] — called under the key's lock, when no write of this key can be in
/// progress. Each is overwritten with zeros first (its secrets, and those of any other name a
/// hard link gave it), then unlinked. Returns how many were removed.
pub(super) fn sweep_leftovers(path: &Path) -> usize {
    let mut removed = 0;
    for tmp in leftovers(path) {
        let mut options = OpenOptions::new();
        options.write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        if let Ok(mut f) = options.open(&tmp)
            && f.metadata().is_ok_and(|m| m.is_file())
        {
            let len = f.metadata().map_or(0, |m| m.len());
            let zeros = vec![0u8; usize::try_from(len.min(MAX_STATE_SIZE)).unwrap_or(0)];
            let _ = f.write_all(&zeros).and_then(|()| f.sync_data());
        }
        if fs::remove_file(&tmp).is_ok() {
            removed += 1;
        }
    }
    removed
}
