//! A stateful signing key on disk that never hands out a one-time key twice.
//!
//! The state file holds the parameters, the secrets, the key's public key, the range of counter
//! values it may use, the ledger that records it, where the file lives, and `next`: every
//! counter value below `next` has been handed out (or skipped). Anything kept only in the
//! state file can be rolled back with it — a restored backup, a temporary file renamed into
//! place, a hard link taken while it was being rewritten — so every reservation is also
//! recorded in a [`Ledger`] the file cannot roll back (see [`crate::ledger`]).
//!
//! **Reserving** (one value, or with [`StatefulKey::reserve`] a range), before any signature
//! in it leaves [`StatefulKey::sign`]:
//! 1. the ledger's mark for the key is read; a mark above the file's `next` means the file is
//!    older than what the key has handed out, and it is refused ([`StateError::BehindLedger`]);
//! 2. the advanced `next` is written to a temporary file, fsynced, renamed over the state file,
//!    and the directory fsynced;
//! 3. the ledger's mark is moved to the same value, from the value read in 1 (a
//!    compare-and-swap, durable when it returns).
//!
//! A crash between 2 and 3 leaves the file ahead of the ledger, which is safe: no signature
//! used those values. A persist or ledger write that fails (read-only directory, full disk,
//! unreachable ledger) is an error, and no signature is made. So a file can only sign with a
//! value that is above every value the ledger has seen handed out: a restored backup, an old
//! temporary file moved into place (by `mv` after a SIGKILL, or a hard link raced against the
//! rename) or a copy moved back is refused until [`StatefulKey::adopt`] moves it past the
//! mark — forward only.
//!
//! **Opening** ([`StatefulKey::open`]) also refuses a file the ledger has no record of
//! ([`StateError::NotInLedger`]), one recorded in another ledger ([`StateError::OtherLedger`]:
//! the ledger was lost or replaced, or a wrong `--ledger`), one written before ledgers
//! ([`StateError::Unregistered`]), and — for a ledger of one signer — one that is not where it
//! was last written ([`StateError::NotWhereRecorded`]): the file records its device, inode,
//! creation time and absolute path, so a copy, a move or a second hard link is caught even
//! where the ledger is not. Every state file is created 0600, exclusively (`O_EXCL`: a
//! symbolic link in its place is never followed); no reservation is written while the file
//! has a second hard link.
//!
//! **Temporary files** (`<state>.tmp-<pid>`) left by a killed process are complete states.
//! Renaming one into place never yields a state that signs a used value: it is either behind
//! the ledger (refused) or the reservation that was being written (its values were never
//! used, and are skipped). Opening a key removes such leftovers under its lock, overwriting
//! them with zeros first ([`leftovers`] lists them without a lock).
//!
//! **Key generation** ([`NewKey`]) is all or nothing: the key is generated in memory, the
//! ledger record is made, then the state file is put in place by a hard link that fails if the
//! name exists; a failed write removes the record. [`StatefulKey::discard`] removes a key that
//! never signed (a caller whose other outputs failed).
//!
//! **Several signers**: with a shared ledger (etcd), copies of one state file on several
//! machines sign with one key. Each reservation takes the next range from the ledger's mark by
//! transaction, the file's `next` is not used, and the location check does not apply (the copies
//! are meant). A signer stops when its lease lapses ([`crate::ledger::LedgerError::LeaseLapsed`]).
//! **Sectors** ([`StatefulKey::split`], draft-ietf-pquip-hbs-state §6) serve sites that cannot
//! share a ledger: the remaining range is spent in this file and split into files with disjoint
//! ranges, released to be adopted, each at one site, into that site's ledger.
//!
//! One process at a time per state file: [`StatefulKey::open`] takes an exclusive lock on
//! `<state>.lock` (flock) and a second opener gets [`StateError::Locked`] after retrying for
//! 200 ms. The lock file is created 0600 and removed when the key is released. Reading the
//! state ([`status`], [`inspect`]) takes no lock and writes nothing. Exhaustion is an error,
//! never a wrap-around.
//!
//! What this cannot see: a whole file system or virtual machine rolled back to a snapshot
//! that holds the SQLite ledger too (both come back older, consistent with each other): keep
//! the ledger out of restorable snapshots, or use an etcd ledger, whose leases make a resumed
//! signer stop; an etcd cluster restored from its own backup (its marks go back with it, and
//! shared state files keep no counter). A lost ledger is seen ([`StateError::OtherLedger`]),
//! and `adopt --ledger-lost` then trusts the state file.
//!
//! The trees are not secret and not state: `<state>.cache` keeps them so that opening a key
//! computes no leaves. It is MACed with a key derived from the signing key; a cache that is
//! missing, stale, damaged or not this key's is ignored and the trees are computed.
//!
//! Sealed files ([`SealKey`], used by pqkit's PKCS#11 token): the secrets are stored XORed
//! with a stream of the seal key and the public header; such a file opens only with
//! [`StatefulKey::open_sealed`] ([`StateError::Sealed`] otherwise).
//!
//! The file's layout is in `file.rs`.

mod cache;
mod file;
mod layout;
mod lock;
mod reserve;
mod seal;

use std::collections::VecDeque;
use std::ops::Range;
use std::path::{Path, PathBuf};

use rand_core::{OsRng, RngCore};
use zeroize::Zeroizing;

pub use file::leftovers;
pub use seal::SealKey;

/// Whether `bytes` (a file's first bytes) start like a state file: its 10-byte magic
/// `PQKIT-HBS\0`. For tools that take a key or a state file in one argument; opening the
/// file ([`StatefulKey::open`]) still checks everything.
pub fn looks_like_state_file(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

use crate::hss::{HssSigner, Level};
use crate::ledger::{Advance, Ledger, LedgerError, LedgerId, LiveCheck, RecordId};
use crate::lms::Identifier;
use crate::public::PublicKey;
use crate::signer::Signer;
use crate::xmss::{XmssParams, XmssSigner};
use file::{Binding, MAGIC, Params, Parsed, VERSION};
use lock::Lock;
use reserve::{Reserver, Worker};

/// Errors of a state file.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Another process (or another key object here) holds the key.
    #[error(
        "{0}: the key is in use by another signer (lock {1} is held); try again when it is done \
         (a signer that died releases its lock)"
    )]
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
         {path} --ledger {ledger}` (it explains the risk first)"
    )]
    NotWhereRecorded {
        /// The file opened.
        path: PathBuf,
        /// What differs.
        why: String,
        /// The ledger it was opened with.
        ledger: String,
    },
    /// The ledger records that the key handed out one-time keys beyond this file's counter:
    /// the file is older than the key (a restored backup, a leftover temporary file moved
    /// into place, a copy moved back).
    #[error(
        "{path}: this state file is older than the key: its next one-time key is {next}, but \
         the ledger {ledger} records that one-time keys below {high_water} have been handed \
         out. It is a restored backup, a leftover temporary file moved into place, or an older \
         copy; signing from it would use one-time keys a second time, so nothing was signed. If \
         it is now the key's only state file, move it past the mark: `pqkit hbs adopt --state \
         {path} --ledger {ledger} --skip-to {high_water}`"
    )]
    BehindLedger {
        /// The state file.
        path: PathBuf,
        /// The file's counter (or the value asked for).
        next: u64,
        /// The ledger's mark.
        high_water: u64,
        /// The ledger.
        ledger: String,
    },
    /// The ledger the file is bound to has no record of its key.
    #[error(
        "{path}: the ledger {ledger} has no record of this key, so it cannot tell whether this \
         file is the key's latest state; nothing was signed. If the ledger was lost and this is \
         the key's only, latest state file, `pqkit hbs adopt --state {path} --ledger {ledger}` \
         records it again"
    )]
    NotInLedger {
        /// The state file.
        path: PathBuf,
        /// The ledger.
        ledger: String,
    },
    /// The file's reservations are recorded in another ledger than the one given.
    #[error(
        "{path}: this key's reservations are recorded in ledger {bound}, but {ledger} is ledger \
         {given}: either another ledger is named (`--ledger`, PQKIT_HBS_LEDGER) or the key's \
         ledger was lost or replaced; nothing was signed. Name the key's ledger; only if it is \
         lost for good, `pqkit hbs adopt --state {path} --ledger {ledger} --ledger-lost` records \
         the key in this one"
    )]
    OtherLedger {
        /// The state file.
        path: PathBuf,
        /// The id of the ledger the file names.
        bound: LedgerId,
        /// The ledger given.
        ledger: String,
        /// Its id.
        given: LedgerId,
    },
    /// A file written by a pqkit before reservation ledgers.
    #[error(
        "{path}: written by an earlier pqkit, before reservations were recorded in a ledger \
         (its next one-time key is {next}); nothing was signed. If it is the key's only, latest \
         state file, `pqkit hbs adopt --state {path} --ledger {ledger}` records it"
    )]
    Unregistered {
        /// The state file.
        path: PathBuf,
        /// Its counter.
        next: u64,
        /// The ledger it was opened with.
        ledger: String,
    },
    /// A sector (or a key released from its ledger) that no ledger records yet: it signs
    /// where it is adopted.
    #[error(
        "{path}: a sector of a key, released by the machine that split it: it signs only once \
         it is adopted at the one site that signs with it (`pqkit hbs adopt --state {path} \
         --ledger LEDGER --yes`)"
    )]
    Unadopted {
        /// The state file.
        path: PathBuf,
    },
    /// `adopt` into another ledger than the one the key is recorded in, not asked for.
    #[error(
        "{path}: this key is recorded in ledger {bound}; adopting it into {ledger} would leave \
         that record behind, and a copy still recorded there could sign the same one-time keys. \
         Only if ledger {bound} is lost for good, give --ledger-lost{}",
        if *.shared { " and --skip-to past every one-time key its signers could have used (its \
                       mark)" } else { "" }
    )]
    LedgerChange {
        /// The state file.
        path: PathBuf,
        /// The id of the ledger the key is recorded in.
        bound: LedgerId,
        /// The ledger given.
        ledger: String,
        /// Whether the key was shared (its file keeps no counter).
        shared: bool,
    },
    /// The ledger's mark moved while this process reserved: another file of the same key
    /// signs through the same ledger.
    #[error(
        "{path}: another signer moved this key's mark in the ledger {ledger} while this one \
         reserved; a second copy of the key is signing. Nothing was signed"
    )]
    Conflict {
        /// The state file.
        path: PathBuf,
        /// The ledger.
        ledger: String,
    },
    /// `adopt` asked to move the counter back.
    #[error(
        "{path}: refusing to move the counter back to {asked}: the state file's counter is \
         {floor} (adopt only moves forward)"
    )]
    Backwards {
        /// The state file.
        path: PathBuf,
        /// The value asked for.
        asked: u64,
        /// The file's counter.
        floor: u64,
    },
    /// `adopt` of a copy whose original is still there: two live copies of one key.
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
    /// The key has signed (or reserved), so it cannot be discarded.
    #[error("{0}: the key has reserved one-time keys; it is not discarded")]
    InUse(PathBuf),
    /// The ledger failed; nothing was signed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// A signing error (exhaustion among them).
    #[error(transparent)]
    Hbs(#[from] crate::Error),
}

/// How far [`StatefulKey::adopt`] moves the counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdoptTo {
    /// This many values past the file's counter (`--skip N`; 0 keeps it).
    Skip(u64),
    /// To this value (`--skip-to N`), which may not be below the file's counter nor the
    /// ledger's mark.
    At(u64),
}

/// What [`StatefulKey::adopt`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adoption {
    /// What was recorded differently (the place, the ledger, the format), in words; empty
    /// when nothing was.
    pub was: Vec<String>,
    /// The counter before.
    pub next_before: u64,
    /// The ledger's mark before (`None`: no record).
    pub high_water_before: Option<u64>,
    /// The counter now.
    pub next: u64,
    /// One past the last counter value of the file's range.
    pub end: u64,
}

/// Used and remaining one-time keys of a state file's range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// Counter values handed out or skipped.
    pub used: u64,
    /// Counter values still available.
    pub remaining: u64,
    /// Total signatures of the range (of the key, for a whole key).
    pub capacity: u64,
    /// Size of each signature, in bytes (RFC 8554 §6.4 / RFC 8391 §4.1.8, §4.2.4).
    pub signature_len: usize,
}

/// What a state file says, read without its lock ([`inspect`]).
#[derive(Clone, Debug)]
pub struct StateInfo {
    /// Used and remaining, from the file's counter.
    pub status: Status,
    /// The file's counter.
    pub next: u64,
    /// The counter values the file may use: `first..end`.
    pub first: u64,
    /// One past the last.
    pub end: u64,
    /// The format version (3 now; 1 and 2 must be adopted).
    pub version: u8,
    /// Whether the secrets are sealed (a token's key).
    pub sealed: bool,
    /// The public key, where the file records it (version 3).
    pub public_key: Option<PublicKey>,
    /// The ledger that records it and whether it is shared (version 3).
    pub ledger: Option<(LedgerId, bool)>,
    /// The name of its record in that ledger (version 3).
    pub record: Option<RecordId>,
}

/// A signing key bound to its state file and ledger. Not `Clone`: one object per key,
/// signing through `&mut self`.
pub struct StatefulKey {
    path: PathBuf,
    _lock: Lock,
    /// The state file's bytes before its binding with the secrets unsealed: the tree cache's
    /// MAC key comes from it.
    plain_key: Zeroizing<Vec<u8>>,
    binding: Binding,
    ledger_name: String,
    live: Option<LiveCheck>,
    /// The state file and the ledger; `None` while the worker holds them.
    reserver: Option<Reserver>,
    /// The thread that reserves ahead ([`StatefulKey::set_ahead`]).
    worker: Option<Worker>,
    /// Ranges reserved and not yet signed from, in order.
    queued: VecDeque<Range<u64>>,
    signer: Signer,
    /// The next counter value to use.
    next: u64,
    /// Values in `next..current_end` are reserved for this process.
    current_end: u64,
    /// The highest value reserved so far (for a ledger of one signer, the `next` on disk).
    reserved_end: u64,
    /// Whether the trees changed since the cache file was written (or it was unusable).
    dirty: bool,
    /// How many values [`StatefulKey::sign`] reserves when none is left.
    batch: u64,
    /// Whether the next batch is reserved in the background while this one is signed.
    ahead: bool,
}

/// How many batches [`StatefulKey::set_ahead`] keeps reserved beyond the one being signed:
/// with a ledger of one signer (a local write each), and with a shared one (a round trip to the
/// cluster for all the batches asked for meanwhile).
const AHEAD: usize = 2;
const AHEAD_SHARED: usize = 4;

/// The files a key keeps beside its state file: `<state>.lock` and `<state>.cache`. No other
/// output may be written there.
pub fn companion_files(path: &Path) -> [PathBuf; 2] {
    [lock::lock_path(path), cache::cache_path(path)]
}

/// `len` bytes from the OS RNG.
fn random(path: &Path, len: usize) -> Result<Zeroizing<Vec<u8>>, StateError> {
    let mut out = Zeroizing::new(vec![0u8; len]);
    OsRng
        .try_fill_bytes(&mut out)
        .map_err(|e| StateError::Io(path.to_path_buf(), std::io::Error::other(e.to_string())))?;
    Ok(out)
}

/// Opens the signer of a parsed file at counter value `at`, its trees from the cache file
/// where it has them. Returns it and whether the cache was usable.
fn open_signer(
    path: &Path,
    parsed: &Parsed,
    at: u64,
    threads: usize,
) -> Result<(Signer, bool), StateError> {
    let cache = cache::read_cache(path, &parsed.plain_key);
    let cached = cache.as_ref().is_some_and(|c| !c.is_empty());
    let cache = cache.unwrap_or_default();
    let signer = match &parsed.params {
        Params::Hss { levels, id, seed } => {
            Signer::Hss(HssSigner::open(levels, *id, seed, at, threads, cache)?)
        }
        Params::Xmss { params, secrets } => {
            let n = params.n;
            Signer::Xmss(XmssSigner::open(
                params,
                &secrets[..n],
                &secrets[n..2 * n],
                &secrets[2 * n..],
                at,
                threads,
                cache,
            )?)
        }
    };
    Ok((signer, cached))
}

/// What the state file in `path` says, read without taking its lock or building any tree.
///
/// # Errors
/// [`StateError::Corrupt`], I/O errors.
pub fn inspect(path: &Path) -> Result<StateInfo, StateError> {
    let bytes = file::read_bytes(path)?;
    let parsed = file::parse(path, &bytes, None)?;
    let (first, end) = parsed.range();
    let used_to = parsed.next.clamp(first, end);
    let public_key = match &parsed.binding {
        Some(b) => Some(decode_public(path, &parsed, &b.public)?),
        None => None,
    };
    Ok(StateInfo {
        status: Status {
            used: used_to - first,
            remaining: end - used_to,
            capacity: end - first,
            signature_len: parsed.params.signature_len(),
        },
        next: parsed.next,
        first,
        end,
        version: parsed.key[MAGIC.len()],
        sealed: parsed.sealed,
        public_key,
        ledger: parsed.binding.as_ref().map(|b| (b.ledger, b.shared)),
        record: parsed.binding.as_ref().map(Binding::record),
    })
}

/// Used and remaining signatures of the state file in `path` (its own counter; a file of a
/// shared ledger does not follow the ledger's mark), read without its lock.
///
/// # Errors
/// As [`inspect`].
pub fn status(path: &Path) -> Result<Status, StateError> {
    Ok(inspect(path)?.status)
}

/// The public key of the state file in `path`: recorded in it (version 3), or computed from
/// its secrets on `threads` threads (earlier versions; the trees come from the cache file
/// when it has them). Takes no lock and writes nothing.
///
/// # Errors
/// As [`inspect`]; [`StateError::Sealed`] for an earlier version's sealed file.
pub fn public_key(path: &Path, threads: usize) -> Result<PublicKey, StateError> {
    let bytes = file::read_bytes(path)?;
    let parsed = file::parse(path, &bytes, None)?;
    if let Some(b) = &parsed.binding {
        return decode_public(path, &parsed, &b.public);
    }
    if parsed.sealed {
        return Err(StateError::Sealed(path.to_path_buf()));
    }
    Ok(open_signer(path, &parsed, parsed.next, threads)?
        .0
        .public_key())
}

fn decode_public(path: &Path, parsed: &Parsed, bytes: &[u8]) -> Result<PublicKey, StateError> {
    let bad = || StateError::Corrupt(path.to_path_buf(), "the recorded public key");
    match &parsed.params {
        Params::Hss { .. } => crate::lms::HssPublicKey::from_bytes(bytes)
            .map(PublicKey::Hss)
            .map_err(|_| bad()),
        Params::Xmss { params, .. } => {
            crate::xmss::XmssPublicKey::from_bytes(bytes, params.multi_tree)
                .map(PublicKey::Xmss)
                .map_err(|_| bad())
        }
    }
}

/// A key generated in memory, holding its state file's lock, not yet on disk:
/// [`NewKey::commit`] records it in a ledger and writes its state file, or does neither.
pub struct NewKey {
    path: PathBuf,
    lock: Lock,
    key: Zeroizing<Vec<u8>>,
    plain_key: Zeroizing<Vec<u8>>,
    signer: Signer,
}

impl NewKey {
    /// Takes the lock of `path` and checks that no state file is there.
    fn claim(path: &Path) -> Result<Lock, StateError> {
        let lock = lock::lock(path)?;
        if std::fs::symlink_metadata(path).is_ok() {
            return Err(StateError::Exists(path.to_path_buf()));
        }
        Ok(lock)
    }

    /// Generates an HSS key with `levels` (1–8), the top I and SEED from the OS RNG, on
    /// `threads` threads, for the state file `path` (which must not exist).
    ///
    /// # Errors
    /// [`StateError::Exists`], [`StateError::Locked`], I/O errors, parameter errors.
    pub fn hss(path: &Path, levels: &[Level], threads: usize) -> Result<Self, StateError> {
        let m = levels.first().map_or(32, |(l, _)| l.m);
        let seed = random(path, m)?;
        let mut id = [0u8; 16];
        id.copy_from_slice(&random(path, 16)?);
        Self::hss_from_seed(path, levels, id, &seed, threads)
    }

    /// As [`NewKey::hss`], from a given top I and SEED (m bytes).
    ///
    /// # Errors
    /// As [`NewKey::hss`].
    pub fn hss_from_seed(
        path: &Path,
        levels: &[Level],
        id: Identifier,
        seed: &[u8],
        threads: usize,
    ) -> Result<Self, StateError> {
        let lock = Self::claim(path)?;
        let signer = Signer::Hss(HssSigner::generate(levels, id, seed, threads)?);
        let key = file::hss_key(levels, &id, seed);
        Ok(Self {
            path: path.to_path_buf(),
            lock,
            plain_key: key.clone(),
            key,
            signer,
        })
    }

    /// Generates an XMSS or XMSS^MT key (S_XMSS, SK_PRF, SEED from the OS RNG) on `threads`
    /// threads, for the state file `path` (which must not exist).
    ///
    /// # Errors
    /// As [`NewKey::hss`].
    pub fn xmss(
        path: &Path,
        params: &'static XmssParams,
        threads: usize,
    ) -> Result<Self, StateError> {
        let n = params.n;
        let (s_xmss, sk_prf, seed) = (random(path, n)?, random(path, n)?, random(path, n)?);
        let lock = Self::claim(path)?;
        let signer = Signer::Xmss(XmssSigner::generate(
            params, &s_xmss, &sk_prf, &seed, threads,
        )?);
        let key = file::xmss_key(params, &s_xmss, &sk_prf, &seed);
        Ok(Self {
            path: path.to_path_buf(),
            lock,
            plain_key: key.clone(),
            key,
            signer,
        })
    }

    /// Seals the secrets under `seal` in the file to be written ([`SealKey`]).
    #[must_use]
    pub fn sealed(mut self, seal: &SealKey) -> Self {
        self.key[MAGIC.len() + 1] |= file::SEALED;
        self.plain_key = self.key.clone();
        seal::apply_seal(&mut self.key, seal);
        self
    }

    /// The public key.
    pub fn public_key(&self) -> PublicKey {
        self.signer.public_key()
    }

    /// Records the key in `ledger` (mark 0) and writes its state file; when the state file
    /// cannot be written, the record is removed again. The tree cache is written too (a cache
    /// that cannot be written costs only time).
    ///
    /// # Errors
    /// [`StateError::Exists`] (a file appeared), ledger and I/O errors: nothing is left then.
    pub fn commit(self, mut ledger: Ledger) -> Result<StatefulKey, StateError> {
        let binding = Binding {
            public: self.signer.public_key().to_bytes(),
            first: 0,
            end: self.signer.capacity(),
            ledger: ledger.id(),
            shared: ledger.shared(),
        };
        let record = binding.record();
        let note = format!("created for {}", self.path.display());
        if ledger.advance(&record, None, 0, &note)? != Advance::Done {
            return Err(StateError::Conflict {
                path: self.path,
                ledger: ledger.name().to_owned(),
            });
        }
        let writer = file::persist_state(&self.path, &self.key, &binding, 0, false)
            .and_then(|(location, counter)| file::SlotWriter::open(&self.path, &location, counter));
        let writer = match writer {
            Ok(w) => w,
            Err(e) => {
                let _ = std::fs::remove_file(&self.path);
                let _ = ledger.forget(&record, 0);
                return Err(e);
            }
        };
        let shared = ledger.shared();
        let mut key = StatefulKey::new(
            Reserver::new(
                self.path,
                self.key,
                binding,
                ledger,
                0,
                Some(0),
                (!shared).then_some(writer),
            ),
            self.lock,
            self.plain_key,
            self.signer,
            0,
            true,
        );
        let _ = key.save_cache();
        Ok(key)
    }
}

impl std::fmt::Debug for NewKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewKey")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl StatefulKey {
    /// Generates a new HSS key ([`NewKey::hss`]) and commits it to `ledger`.
    ///
    /// # Errors
    /// As [`NewKey::hss`] and [`NewKey::commit`].
    pub fn create(
        path: &Path,
        levels: &[Level],
        ledger: Ledger,
        threads: usize,
    ) -> Result<Self, StateError> {
        NewKey::hss(path, levels, threads)?.commit(ledger)
    }

    /// Generates a new XMSS / XMSS^MT key ([`NewKey::xmss`]) and commits it to `ledger`.
    ///
    /// # Errors
    /// As [`StatefulKey::create`].
    pub fn create_xmss(
        path: &Path,
        params: &'static XmssParams,
        ledger: Ledger,
        threads: usize,
    ) -> Result<Self, StateError> {
        NewKey::xmss(path, params, threads)?.commit(ledger)
    }

    /// Opens a key's state file, taking its lock, checks it against `ledger` (see the module
    /// docs), and takes the trees of the current path from the cache file — or computes them
    /// on `threads` threads. Leftover temporary files of the key are removed.
    ///
    /// # Errors
    /// [`StateError::Locked`]; [`StateError::BehindLedger`], [`StateError::NotInLedger`],
    /// [`StateError::OtherLedger`], [`StateError::Unregistered`],
    /// [`StateError::NotWhereRecorded`], [`StateError::HardLinked`],
    /// [`StateError::SymbolicLink`]; [`StateError::Corrupt`]; ledger and I/O errors.
    pub fn open(path: &Path, ledger: Ledger, threads: usize) -> Result<Self, StateError> {
        Self::open_with(path, ledger, threads, None)
    }

    /// As [`StatefulKey::open`], for a file whose secrets are sealed under `seal`
    /// ([`SealKey`]); an unsealed file opens as with [`StatefulKey::open`].
    ///
    /// # Errors
    /// As [`StatefulKey::open`].
    pub fn open_sealed(
        path: &Path,
        ledger: Ledger,
        threads: usize,
        seal: &SealKey,
    ) -> Result<Self, StateError> {
        Self::open_with(path, ledger, threads, Some(seal))
    }

    fn open_with(
        path: &Path,
        mut ledger: Ledger,
        threads: usize,
        seal: Option<&SealKey>,
    ) -> Result<Self, StateError> {
        let lock = lock::lock(path)?;
        file::sweep_leftovers(path);
        let (bytes, found, links) = file::read_state(path)?;
        file::one_name(path, links)?;
        let parsed = file::parse(path, &bytes, seal)?;
        if parsed.sealed && seal.is_none() {
            return Err(StateError::Sealed(path.to_path_buf()));
        }
        let Some(binding) = parsed.binding.clone() else {
            return Err(StateError::Unregistered {
                path: path.to_path_buf(),
                next: parsed.next,
                ledger: ledger.name().to_owned(),
            });
        };
        if binding.ledger == file::UNBOUND {
            return Err(StateError::Unadopted {
                path: path.to_path_buf(),
            });
        }
        if binding.ledger != ledger.id() {
            return Err(StateError::OtherLedger {
                path: path.to_path_buf(),
                bound: binding.ledger,
                ledger: ledger.name().to_owned(),
                given: ledger.id(),
            });
        }
        if !binding.shared
            && let Some(why) = parsed.location.as_ref().and_then(|r| r.differences(&found))
        {
            return Err(StateError::NotWhereRecorded {
                path: path.to_path_buf(),
                why,
                ledger: ledger.name().to_owned(),
            });
        }
        let record = binding.record();
        let high_water = ledger
            .high_water(&record)?
            .ok_or_else(|| StateError::NotInLedger {
                path: path.to_path_buf(),
                ledger: ledger.name().to_owned(),
            })?;
        let start = if binding.shared {
            high_water.max(parsed.next)
        } else if high_water > parsed.next {
            return Err(StateError::BehindLedger {
                path: path.to_path_buf(),
                next: parsed.next,
                high_water,
                ledger: ledger.name().to_owned(),
            });
        } else {
            parsed.next
        }
        .max(binding.first);
        let (signer, cached) = open_signer(path, &parsed, start, threads)?;
        let writer = if binding.shared {
            None
        } else {
            Some(file::SlotWriter::open(path, &found, parsed.counter)?)
        };
        if signer.public_key().to_bytes() != binding.public {
            return Err(StateError::Corrupt(
                path.to_path_buf(),
                "its secrets do not give the public key it records (wrong seal key, or damaged)",
            ));
        }
        Ok(Self::new(
            Reserver::new(
                path.to_path_buf(),
                parsed.key,
                binding,
                ledger,
                parsed.next,
                Some(high_water),
                writer,
            ),
            lock,
            parsed.plain_key,
            signer,
            start,
            !cached,
        ))
    }

    /// Makes the state file in `path` the key's again after a copy, a restore, a move, a lost
    /// ledger or an earlier pqkit: records its present place, binds it to `ledger` (making the
    /// key's record there when it has none), and moves its counter as `to` says — never back,
    /// and never below the ledger's mark. Earlier versions' files are rewritten in the present
    /// format (their public key computed on `threads` threads).
    ///
    /// # Security
    /// The risk is the caller's to weigh: if another copy of this key exists and signs, or the
    /// key signed beyond this file's counter where no ledger saw it, the same one-time keys
    /// are used twice — which for LMS and XMSS can reveal enough to forge signatures. `to`
    /// moves past one-time keys that may have been used.
    ///
    /// A key recorded in another ledger moves into `ledger` only with `ledger_lost` (its old
    /// record stays behind: a copy still recorded there could sign the same one-time keys),
    /// and a key that several signers shared only to a position given with [`AdoptTo::At`]
    /// (its file keeps no counter).
    ///
    /// # Errors
    /// [`StateError::BehindLedger`] when the counter would stay below the ledger's mark;
    /// [`StateError::LedgerChange`]; [`StateError::Backwards`]; [`StateError::OriginalExists`];
    /// [`StateError::Locked`], [`StateError::Corrupt`], ledger and I/O errors.
    pub fn adopt(
        path: &Path,
        mut ledger: Ledger,
        to: AdoptTo,
        ledger_lost: bool,
        threads: usize,
    ) -> Result<Adoption, StateError> {
        let _lock = lock::lock(path)?;
        file::sweep_leftovers(path);
        let (bytes, found, links) = file::read_state(path)?;
        file::one_name(path, links)?;
        let parsed = file::parse(path, &bytes, None)?;
        // Moving a key out of the ledger that records it leaves that record behind: only when
        // it is lost, said so; a shared key's file keeps no counter, so a position is needed.
        if let Some(b) = &parsed.binding
            && b.ledger != file::UNBOUND
            && b.ledger != ledger.id()
            && (!ledger_lost || (b.shared && !matches!(to, AdoptTo::At(_))))
        {
            return Err(StateError::LedgerChange {
                path: path.to_path_buf(),
                bound: b.ledger,
                ledger: ledger.name().to_owned(),
                shared: b.shared,
            });
        }
        // The file this one was copied from, still there and the same key: two live copies.
        if let Some(original) = parsed
            .location
            .as_ref()
            .map(|l| PathBuf::from(String::from_utf8_lossy(&l.path).into_owned()))
            && let Ok((other, other_found, _)) = file::read_state(&original)
            && !other_found.same_object(&found)
            && let Ok(other) = file::parse(&original, &other, None)
            && other.key[MAGIC.len() + 1..] == parsed.key[MAGIC.len() + 1..]
            && other.range() == parsed.range()
            && !parsed
                .binding
                .as_ref()
                .is_some_and(|b| b.shared || b.ledger == file::UNBOUND)
        {
            return Err(StateError::OriginalExists {
                path: path.to_path_buf(),
                original,
                next: other.next,
            });
        }
        let mut was = Vec::new();
        match &parsed.location {
            Some(recorded) => was.extend(recorded.differences(&found)),
            None => was.push("it recorded no place (an earlier pqkit's file)".to_owned()),
        }
        let (first, end) = parsed.range();
        let public = match &parsed.binding {
            Some(b) => {
                if b.ledger == file::UNBOUND {
                    was.push(format!(
                        "a sector released by the machine that split it, now recorded in {}",
                        ledger.name()
                    ));
                } else if b.ledger != ledger.id() {
                    was.push(format!(
                        "it was recorded in ledger {}, now in {} ({})",
                        b.ledger,
                        ledger.id(),
                        ledger.name()
                    ));
                }
                b.public.clone()
            }
            None if parsed.sealed => return Err(StateError::Sealed(path.to_path_buf())),
            None => {
                was.push("it was in no ledger (an earlier pqkit's file)".to_owned());
                open_signer(path, &parsed, parsed.next, threads)?
                    .0
                    .public_key()
                    .to_bytes()
            }
        };
        let binding = Binding {
            public,
            first,
            end,
            ledger: ledger.id(),
            shared: ledger.shared(),
        };
        let record = binding.record();
        let high_water = ledger.high_water(&record)?;
        let floor = if binding.shared {
            parsed.next.max(high_water.unwrap_or(0))
        } else {
            parsed.next
        };
        let target = match to {
            AdoptTo::Skip(n) => floor.saturating_add(n),
            AdoptTo::At(n) => n,
        }
        .min(end);
        if target < floor {
            return Err(StateError::Backwards {
                path: path.to_path_buf(),
                asked: target,
                floor,
            });
        }
        if let Some(mark) = high_water
            && target < mark
        {
            return Err(StateError::BehindLedger {
                path: path.to_path_buf(),
                next: target,
                high_water: mark,
                ledger: ledger.name().to_owned(),
            });
        }
        let mut key = parsed.key.clone();
        key[MAGIC.len()] = VERSION;
        // The file first, then the ledger: a crash between leaves the file ahead (safe).
        file::persist_state(path, &key, &binding, target, true)?;
        let note = format!("adopted at {}", path.display());
        let moved = match high_water {
            Some(mark) if mark == target => Advance::Done,
            from => ledger.advance(&record, from, target, &note)?,
        };
        if moved != Advance::Done {
            return Err(StateError::Conflict {
                path: path.to_path_buf(),
                ledger: ledger.name().to_owned(),
            });
        }
        Ok(Adoption {
            was,
            next_before: parsed.next,
            high_water_before: high_water,
            next: target,
            end,
        })
    }

    fn new(
        reserver: Reserver,
        lock: Lock,
        plain_key: Zeroizing<Vec<u8>>,
        signer: Signer,
        start: u64,
        dirty: bool,
    ) -> Self {
        Self {
            path: reserver.file.path.clone(),
            _lock: lock,
            plain_key,
            binding: reserver.file.binding.clone(),
            ledger_name: reserver.book.ledger.name().to_owned(),
            live: reserver.book.ledger.live_check(),
            reserver: Some(reserver),
            worker: None,
            queued: VecDeque::new(),
            signer,
            next: start,
            current_end: start,
            reserved_end: start,
            dirty,
            batch: 1,
            ahead: false,
        }
    }

    /// The public key.
    pub fn public_key(&self) -> PublicKey {
        self.signer.public_key()
    }

    /// The state file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The name of the ledger that records the key (its SQLite path or etcd URL).
    pub fn ledger_name(&self) -> &str {
        &self.ledger_name
    }

    /// The counter values this file may use: `first..end` (the whole key, or a sector).
    pub fn range(&self) -> Range<u64> {
        self.binding.first..self.binding.end
    }

    /// Used and remaining signatures of the file's range (reserved values count as used).
    pub fn status(&self) -> Status {
        let (first, end) = (self.binding.first, self.binding.end);
        let used_to = self.reserved_end.clamp(first, end);
        Status {
            used: used_to - first,
            remaining: end - used_to,
            capacity: end - first,
            signature_len: self.signer.signature_len(),
        }
    }

    /// Bytes of tree nodes the signer keeps in memory.
    pub fn cache_bytes(&self) -> usize {
        self.signer.cache_bytes()
    }

    /// Stops the worker that reserves ahead, queueing the ranges it took; the first error it
    /// met is returned (the ranges before it stay queued).
    fn settle(&mut self) -> Result<(), StateError> {
        let Some(worker) = self.worker.take() else {
            return Ok(());
        };
        let (reserver, results) = worker.stop();
        self.reserver = reserver;
        let mut first_error = None;
        for result in results {
            match result {
                Ok(range) => self.take_range(range),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Queues a range reserved (by the worker or by [`StatefulKey::reserve`]).
    fn take_range(&mut self, range: Range<u64>) {
        self.reserved_end = self.reserved_end.max(range.end);
        self.queued.push_back(range);
    }

    /// The state file and the ledger, once no worker holds them.
    fn reserver(&mut self) -> Result<&mut Reserver, StateError> {
        self.settle()?;
        self.reserver.as_mut().ok_or_else(|| {
            StateError::Io(
                self.path.clone(),
                std::io::Error::other("the reservation thread died"),
            )
        })
    }

    /// Reserves `count` more counter values (at least one; fewer at the end of the range) in
    /// the state file and the ledger, so the next signatures need no write each. With a shared
    /// ledger, the next free range is taken.
    ///
    /// # Errors
    /// [`crate::Error::Exhausted`] when none is left; [`StateError::BehindLedger`] and
    /// [`StateError::Conflict`] when another file of the key signs through this ledger; ledger
    /// and I/O errors (nothing reserved then).
    pub fn reserve(&mut self, count: u64) -> Result<(), StateError> {
        let range = self.reserver()?.take(count)?;
        self.take_range(range);
        Ok(())
    }

    /// Makes [`StatefulKey::sign`] reserve `count` values (at least one) whenever none is left,
    /// instead of one: one state-file and ledger write per `count` signatures. Values still
    /// reserved when the key is dropped are skipped for good.
    pub fn set_batch(&mut self, count: u64) {
        self.batch = count.max(1);
    }

    /// With `on`, threads of this key's reserve the next batches (two beyond the one being
    /// signed; four on a shared ledger, where the batches asked for while the cluster answers
    /// go to it in one transaction) while [`StatefulKey::sign`] signs, so that the state
    /// file's and the ledger's writes take no time from signing when a batch takes longer to
    /// sign than to reserve. Up to three batches (five) are skipped when the key is dropped; an
    /// error of a reservation made ahead is returned by the signature that needs its values.
    pub fn set_ahead(&mut self, on: bool) {
        self.ahead = on;
    }

    /// The next range to sign from: queued, from the worker, or reserved now.
    fn next_range(&mut self) -> Result<Range<u64>, StateError> {
        if let Some(range) = self.queued.pop_front() {
            return Ok(range);
        }
        if !self.ahead {
            let batch = self.batch;
            return self.reserver()?.take(batch);
        }
        if self.worker.is_none()
            && let Some(reserver) = self.reserver.take()
        {
            match Worker::start(reserver) {
                Ok(w) => self.worker = Some(w),
                // No thread: reserve here, one batch at a time.
                Err(reserver) => {
                    self.reserver = Some(*reserver);
                    self.ahead = false;
                    return self.next_range();
                }
            }
        }
        let batch = self.batch;
        let worker = self.worker.as_mut().ok_or_else(|| {
            StateError::Io(
                self.path.clone(),
                std::io::Error::other("the reservation thread died"),
            )
        })?;
        let depth = if self.binding.shared {
            AHEAD_SHARED
        } else {
            AHEAD
        };
        while worker.outstanding <= depth {
            worker.request(batch);
        }
        worker.next().unwrap_or(Err(crate::Error::Exhausted.into()))
    }

    /// Signs `message` with the next unused counter value; reserves first (one value, or the
    /// batch of [`StatefulKey::set_batch`]) when none is reserved. With a shared ledger, signs
    /// only while the signer's lease is alive.
    ///
    /// # Errors
    /// [`crate::Error::Exhausted`]; the errors of [`StatefulKey::reserve`] (no signature is
    /// made); [`LedgerError::LeaseLapsed`].
    pub fn sign(&mut self, message: &[u8]) -> Result<Vec<u8>, StateError> {
        while self.next >= self.current_end {
            let range = self.next_range()?;
            self.reserved_end = self.reserved_end.max(range.end);
            // A ledger of one signer hands out consecutive ranges; a shared one, any range
            // after the mark. Either way the values left in the current one are given up.
            self.next = range.start;
            self.current_end = range.end;
            let depth = if self.binding.shared {
                AHEAD_SHARED
            } else {
                AHEAD
            };
            if let Some(worker) = self.worker.as_mut()
                && worker.outstanding < depth
                && self.reserved_end < self.binding.end
            {
                worker.request(self.batch);
            }
        }
        if let Some(live) = &self.live {
            live()?;
        }
        let counter = self.next;
        self.next += 1;
        self.dirty = true;
        Ok(self.signer.sign_index(counter, message)?)
    }

    /// Splits what is left of this file's range into `outputs.len()` sector files (new state
    /// files, none of which may exist) with disjoint ranges, starting at multiples of a top-level
    /// one-time key's span where the ranges are large enough (draft-ietf-pquip-hbs-state §6),
    /// each signing under the same public key. This file's range is spent first, in the file
    /// and the ledger: it signs no more. The sectors are released: this ledger records each as
    /// spent, and each file signs only once adopted ([`StatefulKey::adopt`]) where it will sign,
    /// in that site's ledger — so the machine that split the key keeps nothing that signs. A
    /// sector copied to two sites is beyond what any ledger of either can see. Returns each
    /// sector's range.
    ///
    /// # Errors
    /// [`StateError::Exists`] for an output that exists; [`crate::Error::Exhausted`] when fewer
    /// values are left than sectors asked for; [`StateError::Sealed`] for a token's key; the
    /// errors of [`StatefulKey::reserve`].
    pub fn split(&mut self, outputs: &[PathBuf]) -> Result<Vec<Range<u64>>, StateError> {
        let span = self.span();
        let (next, end) = (self.next, self.binding.end);
        let reserver = self.reserver()?;
        if reserver.file.key[MAGIC.len() + 1] & file::SEALED != 0 {
            return Err(StateError::Sealed(reserver.file.path.clone()));
        }
        for out in outputs {
            if std::fs::symlink_metadata(out).is_ok() {
                return Err(StateError::Exists(out.clone()));
            }
        }
        let n = u64::try_from(outputs.len()).unwrap_or(u64::MAX);
        let shared = reserver.file.binding.shared;
        // This object's unused values (and a queued range) are this file's to give: it signs
        // no more. A shared ledger's mark says where the rest starts.
        let start = if shared { reserver.book.mark()? } else { next };
        let left = end.saturating_sub(start.max(reserver.file.binding.first));
        if n == 0 || left < n {
            return Err(crate::Error::Exhausted.into());
        }
        let rest = end
            - if shared {
                start
            } else {
                reserver.file.disk_next
            };
        let spent = if rest > 0 {
            reserver.take(rest)?
        } else {
            end..end
        };
        let start = if shared { spent.start } else { start };
        let bounds = sector_bounds(start, end, n, span);
        let (key, public, ledger) = (
            &reserver.file.key,
            &reserver.file.binding.public,
            &mut reserver.book.ledger,
        );
        let mut ranges = Vec::with_capacity(outputs.len());
        for (i, (out, range)) in outputs.iter().zip(bounds).enumerate() {
            // Released: this ledger records the sector as spent (it signs no more here), and
            // the file is in no ledger until it is adopted where it will sign.
            let binding = Binding {
                public: public.clone(),
                first: range.start,
                end: range.end,
                ledger: file::UNBOUND,
                shared: false,
            };
            let record = binding.record();
            let note = format!("sector {} of {n} released: {}", i + 1, out.display());
            let _sector_lock = lock::lock(out)?;
            if ledger.advance(&record, None, range.end, &note)? != Advance::Done {
                return Err(StateError::Conflict {
                    path: out.clone(),
                    ledger: ledger.name().to_owned(),
                });
            }
            file::persist_state(out, key, &binding, range.start, false)?;
            ranges.push(range);
        }
        self.queued.clear();
        self.next = end;
        self.current_end = end;
        self.reserved_end = end;
        Ok(ranges)
    }

    /// The counter values one top-level one-time key covers.
    fn span(&self) -> u64 {
        match &self.signer {
            Signer::Hss(s) => s.capacity() >> s.top_height(),
            Signer::Xmss(s) => s.capacity() >> s.top_height(),
        }
    }

    /// Removes a key that never reserved a one-time key: its state file, cache and ledger
    /// record (a `keygen` whose other outputs could not be written).
    ///
    /// # Errors
    /// [`StateError::InUse`] when the key reserved values; ledger and I/O errors.
    pub fn discard(mut self) -> Result<(), StateError> {
        let first = self.binding.first;
        let in_use = StateError::InUse(self.path.clone());
        if self.binding.shared || self.reserved_end != first {
            return Err(in_use);
        }
        let reserver = self.reserver()?;
        if reserver.file.disk_next != first
            || reserver.book.mark()? != first
            || reserver.book.ledger.forget(&reserver.book.record, first)? != Advance::Done
        {
            return Err(in_use);
        }
        self.dirty = false;
        let _ = std::fs::remove_file(self.cache_path());
        std::fs::remove_file(&self.path).map_err(|e| StateError::Io(self.path.clone(), e))
    }

    /// The cache file, `<state>.cache`.
    pub fn cache_path(&self) -> PathBuf {
        cache::cache_path(&self.path)
    }

    /// Writes the trees in memory to the cache file (atomically, not fsynced: a lost cache
    /// costs only time). Done at key generation and when a key that signed is dropped.
    ///
    /// # Errors
    /// I/O errors.
    pub fn save_cache(&mut self) -> Result<(), StateError> {
        let out = cache::encode_cache(&self.plain_key, &self.signer.save_cache());
        file::write_file(&self.cache_path(), false, true, |_| Ok(Zeroizing::new(out)))?;
        self.dirty = false;
        Ok(())
    }
}

/// `n` ranges covering `start..end`, as equal as they can be, each boundary moved to a
/// multiple of `span` when every range is at least `span` long.
fn sector_bounds(start: u64, end: u64, n: u64, span: u64) -> Vec<Range<u64>> {
    let total = u128::from(end - start);
    let cut = |i: u64| -> u64 {
        let ideal = u128::from(start) + total * u128::from(i) / u128::from(n);
        u64::try_from(ideal).unwrap_or(end)
    };
    let aligned = span > 1 && (end - start) / n >= span.saturating_mul(2);
    let mut cuts: Vec<u64> = (0..=n).map(cut).collect();
    if aligned {
        for c in cuts
            .iter_mut()
            .take(usize::try_from(n).unwrap_or(0))
            .skip(1)
        {
            *c = (*c).div_ceil(span).saturating_mul(span).min(end);
        }
    }
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

impl Drop for StatefulKey {
    /// Stops the worker that reserves ahead (it writes the state file, under this key's lock),
    /// then saves the cache when the trees changed; a failure only costs the
    /// next open time.
    fn drop(&mut self) {
        let _ = self.settle();
        if self.dirty {
            let _ = self.save_cache();
        }
    }
}

impl std::fmt::Debug for StatefulKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatefulKey")
            .field("path", &self.path)
            .field("ledger", &self.ledger_name)
            .field("next", &self.next)
            .field("reserved_end", &self.reserved_end)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::sector_bounds;

    #[test]
    fn sectors_cover_the_range_disjointly_and_align() {
        let r = sector_bounds(3, 1024, 4, 32);
        assert_eq!(r.first().map(|r| r.start), Some(3));
        assert_eq!(r.last().map(|r| r.end), Some(1024));
        for w in r.windows(2) {
            assert_eq!(w[0].end, w[1].start);
            assert_eq!(w[1].start % 32, 0);
        }
        let small = sector_bounds(0, 5, 5, 1024);
        assert_eq!(small, vec![0..1, 1..2, 2..3, 3..4, 4..5]);
    }
}
