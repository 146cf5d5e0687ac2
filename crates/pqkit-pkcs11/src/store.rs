//! The token on disk: a directory whose private objects are sealed under the PINs.
//!
//! Contract:
//! - `token.json` is the header: label, serial, the Argon2id parameters (RFC 9106), and the
//!   token's data key (32 random bytes) sealed twice with AES-256-GCM — once under
//!   Argon2id(SO PIN, salt_so), once under Argon2id(user PIN, salt_user). A wrong PIN is the
//!   AEAD tag that does not verify; nothing else about a PIN is stored. The header also keeps
//!   the failed-login counters: at `max_pin_attempts` failures in a row the PIN is locked
//!   (CKR_PIN_LOCKED, CKF_USER_PIN_LOCKED) until the SO sets a new user PIN (C_InitPIN) or the
//!   token is initialised again.
//! - `objects/<id>.obj` is one object: "PQKIT-P11-OBJ\0" ‖ u8 version ‖ u8 private ‖ u64 id ‖
//!   body. A public object's body is its attributes ‖ SHA-256 of everything before it; a
//!   private object's body is a 12-byte nonce ‖ AES-256-GCM(data key, attributes) with
//!   everything before the body as associated data, so an object cannot be moved to another
//!   id or made public. Attributes: u32 count ‖ (u64 type ‖ u32 length ‖ value) × count.
//! - Every write is atomic: a temporary file created 0600 with O_EXCL, fsync, rename over the
//!   target, fsync of the directory. A crash leaves the old file or the new one, never a torn
//!   one; a damaged or truncated file is an error for that object only.
//! - `hbs/` holds the state files of stateful keys (pqkit-hbs: reserve before sign, one signer
//!   at a time across processes).
//! - Header updates (counters, PINs) happen under an exclusive lock on `token.lock`, so two
//!   processes never lose each other's failed attempts.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use pqkit_hbs::ledger::{Ledger, LedgerError, LedgerSpec};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// Size of the token's data key and of each PIN-derived key, in bytes (AES-256).
pub const KEY_SIZE: usize = 32;
const OBJECT_MAGIC: &[u8; 14] = b"PQKIT-P11-OBJ\0";
/// Version 2: public objects carry an HMAC under a key derived from the data key.
const OBJECT_VERSION: u8 = 2;
/// Version 1: public objects with a checksum only (read; authenticated at the first login).
const OBJECT_VERSION_1: u8 = 1;
const HEADER_VERSION: u32 = 1;
/// Largest object file read, in bytes (a certificate chain or an SLH-DSA key is far smaller).
const MAX_OBJECT_SIZE: u64 = 16 << 20;

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An I/O error on a file of the token.
    #[error("{0}: {1}")]
    Io(PathBuf, io::Error),
    /// A file of the token that does not decode or whose checksum or tag fails.
    #[error("{0}: damaged ({1})")]
    Corrupt(PathBuf, &'static str),
    /// The PIN did not unseal the data key (one more failed attempt was counted).
    #[error("incorrect PIN")]
    PinIncorrect,
    /// Too many failed attempts: the PIN is locked.
    #[error("the PIN is locked after too many failed attempts")]
    PinLocked,
    /// No user PIN has been set (C_InitPIN has not run).
    #[error("the user PIN is not initialised")]
    UserPinNotInitialized,
    /// The directory has no token, or already has one.
    #[error("{0}: {1}")]
    Token(PathBuf, &'static str),
    /// A PIN shorter than the token's minimum or longer than 255 bytes (not counted as a
    /// failed login).
    #[error("a PIN of this token must be {0} to 255 bytes")]
    PinLength(u32),
    /// Argon2id parameters or a label the token cannot take.
    #[error("{0}")]
    Invalid(&'static str),
    /// The reservation ledger of the token's stateful keys failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

fn io_err(path: &Path) -> impl Fn(io::Error) -> StoreError + '_ {
    move |e| StoreError::Io(path.to_path_buf(), e)
}

/// Argon2id parameters (RFC 9106 §4): memory in KiB, passes, lanes.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Kdf {
    /// Memory, in KiB.
    pub memory_kib: u32,
    /// Passes over memory (t).
    pub passes: u32,
    /// Lanes (p).
    pub lanes: u32,
}

impl Default for Kdf {
    /// RFC 9106 §4, second recommended option (64 MiB, t = 3), with one lane: a login costs a
    /// fraction of a second and 64 MiB per guess.
    fn default() -> Self {
        Self {
            memory_kib: 64 * 1024,
            passes: 3,
            lanes: 1,
        }
    }
}

/// The bounds of the Argon2id parameters a token takes, when made and whenever `token.json`
/// is read: a copied-in header cannot make a login take hours or allocate without bound.
pub const KDF_MEMORY_KIB: std::ops::RangeInclusive<u32> = 1024..=(4 << 20);
/// Passes over memory (t).
pub const KDF_PASSES: std::ops::RangeInclusive<u32> = 1..=32;
/// Lanes (p).
pub const KDF_LANES: std::ops::RangeInclusive<u32> = 1..=16;

impl Kdf {
    /// Checks the parameters: memory 1 MiB to 4 GiB, 1 to 32 passes, 1 to 16 lanes
    /// ([`KDF_MEMORY_KIB`], [`KDF_PASSES`], [`KDF_LANES`]), and what Argon2id itself accepts.
    ///
    /// # Errors
    /// [`StoreError::Invalid`].
    pub fn check(&self) -> Result<(), StoreError> {
        if !KDF_MEMORY_KIB.contains(&self.memory_kib)
            || !KDF_PASSES.contains(&self.passes)
            || !KDF_LANES.contains(&self.lanes)
        {
            return Err(StoreError::Invalid(
                "Argon2id takes 1024 KiB to 4 GiB of memory, 1 to 32 passes and 1 to 16 lanes",
            ));
        }
        argon2::Params::new(self.memory_kib, self.passes, self.lanes, Some(KEY_SIZE))
            .map(|_| ())
            .map_err(|_| StoreError::Invalid("Argon2id parameters out of range"))
    }

    fn derive(&self, pin: &[u8], salt: &[u8]) -> Result<Zeroizing<[u8; KEY_SIZE]>, StoreError> {
        let params = argon2::Params::new(self.memory_kib, self.passes, self.lanes, Some(KEY_SIZE))
            .map_err(|_| StoreError::Corrupt(PathBuf::from("token.json"), "Argon2id parameters"))?;
        let argon =
            argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
        let mut out = Zeroizing::new([0u8; KEY_SIZE]);
        argon
            .hash_password_into(pin, salt, &mut out[..])
            .map_err(|_| StoreError::Corrupt(PathBuf::from("token.json"), "Argon2id input"))?;
        Ok(out)
    }
}

/// The data key sealed under one PIN.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Sealed {
    /// Argon2id salt, hex (16 bytes).
    salt: String,
    /// nonce ‖ AES-256-GCM(PIN key, data key), hex.
    key: String,
}

/// `token.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Header {
    version: u32,
    label: String,
    serial: String,
    kdf: Kdf,
    max_pin_attempts: u32,
    so: Sealed,
    user: Option<Sealed>,
    failed_so: u32,
    failed_user: u32,
    /// The reservation ledger of the token's stateful keys (a `--ledger` value); absent:
    /// `$PQKIT_HBS_LEDGER`, else the default SQLite ledger of the user running the module.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ledger: Option<String>,
    /// The shortest PIN this token takes, in bytes (tokens made before it was recorded: 4).
    #[serde(default = "legacy_min_pin_len")]
    min_pin_len: u32,
    /// Whether every public object carries its tag (false for tokens of an earlier pqkit until
    /// the first user login tags them).
    #[serde(default)]
    public_authenticated: bool,
}

fn legacy_min_pin_len() -> u32 {
    4
}

/// Who logs in (PKCS#11 CKU_SO / CKU_USER).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The security officer: initialises the user PIN.
    SecurityOfficer,
    /// The user: uses private objects.
    User,
}

/// What the header says, for C_GetTokenInfo.
#[derive(Clone, Debug)]
pub struct TokenInfo {
    /// The token label (at most 32 bytes in CK_TOKEN_INFO).
    pub label: String,
    /// The serial number (16 hex digits).
    pub serial: String,
    /// Whether a user PIN exists.
    pub user_pin_initialized: bool,
    /// Failed user logins in a row.
    pub failed_user: u32,
    /// Failed SO logins in a row.
    pub failed_so: u32,
    /// Failures that lock a PIN.
    pub max_pin_attempts: u32,
    /// The shortest PIN the token takes, in bytes.
    pub min_pin_len: u32,
}

/// The token's data key, unsealed by a login. Zeroized on drop.
#[derive(Clone)]
pub struct DataKey(Zeroizing<[u8; KEY_SIZE]>);

impl DataKey {
    /// A 32-byte key for one purpose, HMAC-SHA-256(data key, `label`): e.g. the seal of a
    /// stateful key's state file. Zeroize the result after use.
    pub fn derive(&self, label: &[u8]) -> [u8; 32] {
        let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &self.0[..]);
        let tag = aws_lc_rs::hmac::sign(&key, label);
        let mut out = [0u8; 32];
        out.copy_from_slice(tag.as_ref());
        out
    }
}

impl core::fmt::Debug for DataKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("DataKey(..)")
    }
}

/// An object's attributes: type → value bytes (CK_ULONG values in native byte order, as the
/// C interface passes them).
pub type Attributes = BTreeMap<u64, Vec<u8>>;

/// One token directory.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// Options of [`Store::init`].
#[derive(Clone, Debug)]
pub struct InitOptions {
    /// Argon2id parameters for both PINs.
    pub kdf: Kdf,
    /// Failed logins in a row that lock a PIN.
    pub max_pin_attempts: u32,
    /// The reservation ledger of the token's stateful keys (`etcd://…` or an SQLite path);
    /// `None`: `$PQKIT_HBS_LEDGER` or the default, resolved where the module runs.
    pub ledger: Option<String>,
    /// The shortest PIN the token takes, in bytes ([`DEFAULT_MIN_PIN_LEN`]; at least 4).
    pub min_pin_len: u32,
}

/// The shortest PIN a new token takes by default, in bytes: a copied token directory can be
/// attacked offline at Argon2id's cost per guess, and 10^4 guesses of a 4-digit PIN cost
/// minutes.
pub const DEFAULT_MIN_PIN_LEN: u32 = 8;

impl Default for InitOptions {
    fn default() -> Self {
        Self {
            kdf: Kdf::default(),
            max_pin_attempts: 10,
            ledger: None,
            min_pin_len: DEFAULT_MIN_PIN_LEN,
        }
    }
}

/// A PIN of `min..=255` bytes.
fn check_pin(pin: &[u8], min: u32) -> Result<(), StoreError> {
    let min = usize::try_from(min).unwrap_or(usize::MAX);
    if (min..=255).contains(&pin.len()) {
        Ok(())
    } else {
        Err(StoreError::PinLength(
            u32::try_from(min).unwrap_or(u32::MAX),
        ))
    }
}

fn random<const N: usize>() -> Zeroizing<[u8; N]> {
    let mut out = Zeroizing::new([0u8; N]);
    // AWS-LC's generator; failure is not recoverable here.
    aws_lc_rs::rand::fill(&mut out[..]).expect("AWS-LC random number generator");
    out
}

fn aead(key: &[u8; KEY_SIZE]) -> LessSafeKey {
    LessSafeKey::new(UnboundKey::new(&AES_256_GCM, key).expect("AES-256 key is 32 bytes"))
}

/// nonce ‖ AES-256-GCM(key, plaintext) with `aad`.
fn seal(key: &[u8; KEY_SIZE], aad: &[u8], plaintext: &[u8]) -> Vec<u8> {
    let nonce = random::<NONCE_LEN>();
    let mut out = nonce.to_vec();
    let mut body = plaintext.to_vec();
    aead(key)
        .seal_in_place_append_tag(
            Nonce::assume_unique_for_key(*nonce),
            Aad::from(aad),
            &mut body,
        )
        .expect("AES-GCM sealing of a bounded buffer");
    out.extend_from_slice(&body);
    body.iter_mut().for_each(|b| *b = 0);
    out
}

/// The plaintext of [`seal`], or `None` when the tag does not verify.
fn open(key: &[u8; KEY_SIZE], aad: &[u8], sealed: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
    if sealed.len() < NONCE_LEN + AES_256_GCM.tag_len() {
        return None;
    }
    let (nonce, body) = sealed.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
    let mut body = Zeroizing::new(body.to_vec());
    let len = aead(key)
        .open_in_place(nonce, Aad::from(aad), &mut body)
        .ok()?
        .len();
    body.truncate(len);
    Some(body)
}

/// Writes `bytes` to `path` atomically: temporary file (0600, O_EXCL), fsync, rename, fsync of
/// the directory.
///
/// # Errors
/// [`StoreError::Io`]; the target is unchanged then.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", hex::encode(*random::<8>())));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(io_err(path))
}

/// Encodes attributes: u32 count ‖ (u64 type ‖ u32 length ‖ value) × count.
pub(crate) fn encode_attributes(attrs: &Attributes) -> Zeroizing<Vec<u8>> {
    let mut out = Zeroizing::new(Vec::new());
    out.extend_from_slice(&u32::try_from(attrs.len()).unwrap_or(u32::MAX).to_be_bytes());
    for (t, v) in attrs {
        out.extend_from_slice(&t.to_be_bytes());
        out.extend_from_slice(&u32::try_from(v.len()).unwrap_or(u32::MAX).to_be_bytes());
        out.extend_from_slice(v);
    }
    out
}

/// Decodes [`encode_attributes`]; `None` for anything malformed.
pub(crate) fn decode_attributes(mut bytes: &[u8]) -> Option<Attributes> {
    fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        let (head, tail) = bytes.split_at_checked(n)?;
        *bytes = tail;
        Some(head)
    }
    let count = u32::from_be_bytes(take(&mut bytes, 4)?.try_into().ok()?);
    let mut attrs = Attributes::new();
    for _ in 0..count {
        let t = u64::from_be_bytes(take(&mut bytes, 8)?.try_into().ok()?);
        let len = u32::from_be_bytes(take(&mut bytes, 4)?.try_into().ok()?);
        let v = take(&mut bytes, usize::try_from(len).ok()?)?;
        if attrs.insert(t, v.to_vec()).is_some() {
            return None;
        }
    }
    bytes.is_empty().then_some(attrs)
}

impl Store {
    /// Creates a token in `dir` (created 0700 if missing; it must hold no token yet), with its
    /// SO PIN and, optionally, its user PIN.
    ///
    /// # Errors
    /// [`StoreError::Token`] when `dir` already holds a token; [`StoreError::PinLength`];
    /// I/O errors.
    pub fn init(
        dir: &Path,
        label: &str,
        so_pin: &[u8],
        user_pin: Option<&[u8]>,
        options: &InitOptions,
    ) -> Result<Self, StoreError> {
        if !(4..=255).contains(&options.min_pin_len) {
            return Err(StoreError::Invalid("the shortest PIN is 4 to 255 bytes"));
        }
        check_pin(so_pin, options.min_pin_len)?;
        if let Some(pin) = user_pin {
            check_pin(pin, options.min_pin_len)?;
        }
        options.kdf.check()?;
        if let Some(spec) = &options.ledger {
            LedgerSpec::parse(spec)?;
        }
        if label.len() > 32 {
            // CK_TOKEN_INFO.label is 32 bytes: a longer label could not be found by its name.
            return Err(StoreError::Invalid("a token label is at most 32 bytes"));
        }
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io_err(dir))?;
        let store = Self {
            dir: dir.to_path_buf(),
        };
        let _lock = store.lock()?;
        if store.header_path().exists() {
            return Err(StoreError::Token(
                dir.to_path_buf(),
                "already holds a token",
            ));
        }
        for sub in ["objects", "hbs"] {
            fs::DirBuilder::new()
                .mode(0o700)
                .create(dir.join(sub))
                .or_else(|e| {
                    if e.kind() == io::ErrorKind::AlreadyExists {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })
                .map_err(io_err(dir))?;
        }
        let data_key = random::<KEY_SIZE>();
        let header = Header {
            version: HEADER_VERSION,
            label: label.to_owned(),
            serial: hex::encode(*random::<8>()),
            kdf: options.kdf,
            max_pin_attempts: options.max_pin_attempts.max(1),
            so: seal_data_key(&options.kdf, so_pin, &data_key)?,
            user: user_pin
                .map(|pin| seal_data_key(&options.kdf, pin, &data_key))
                .transpose()?,
            failed_so: 0,
            failed_user: 0,
            ledger: options.ledger.clone(),
            min_pin_len: options.min_pin_len,
            public_authenticated: true,
        };
        store.write_header(&header)?;
        Ok(store)
    }

    /// Opens the token in `dir`.
    ///
    /// # Errors
    /// [`StoreError::Token`] when `dir` holds no token; [`StoreError::Corrupt`].
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let store = Self {
            dir: dir.to_path_buf(),
        };
        store.read_header()?;
        Ok(store)
    }

    /// The token's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The directory of stateful keys' state files.
    pub fn hbs_dir(&self) -> PathBuf {
        self.dir.join("hbs")
    }

    /// Opens the reservation ledger of the token's stateful keys: the one `token.json` names,
    /// else `$PQKIT_HBS_LEDGER`, else the default SQLite ledger (pqkit-hbs `LedgerSpec`).
    ///
    /// # Errors
    /// [`StoreError::Ledger`]: a ledger that cannot be reached or opened; header errors.
    pub fn ledger(&self) -> Result<Ledger, StoreError> {
        let header = self.read_header()?;
        let spec = LedgerSpec::resolve(header.ledger.as_deref())?;
        Ok(Ledger::open(&spec)?)
    }

    fn header_path(&self) -> PathBuf {
        self.dir.join("token.json")
    }

    fn lock(&self) -> Result<File, StoreError> {
        let path = self.dir.join("token.lock");
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(io_err(&path))?;
        f.lock().map_err(io_err(&path))?;
        Ok(f)
    }

    fn read_header(&self) -> Result<Header, StoreError> {
        let path = self.header_path();
        let bytes = match fs::read(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::Token(
                    self.dir.clone(),
                    "holds no token (no token.json)",
                ));
            }
            r => r.map_err(io_err(&path))?,
        };
        let header: Header = serde_json::from_slice(&bytes)
            .map_err(|_| StoreError::Corrupt(path.clone(), "token.json does not parse"))?;
        if header.version != HEADER_VERSION {
            return Err(StoreError::Corrupt(path, "unknown header version"));
        }
        if header.kdf.check().is_err() {
            return Err(StoreError::Corrupt(
                path,
                "Argon2id parameters out of bounds (1024 KiB to 4 GiB, 1 to 32 passes, 1 to 16 \
                 lanes)",
            ));
        }
        if !(4..=255).contains(&header.min_pin_len) {
            return Err(StoreError::Corrupt(
                path,
                "a shortest PIN outside 4 to 255 bytes",
            ));
        }
        Ok(header)
    }

    fn write_header(&self, header: &Header) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec_pretty(header).expect("the header serialises");
        write_atomic(&self.header_path(), &bytes)
    }

    /// The header's public facts.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn info(&self) -> Result<TokenInfo, StoreError> {
        let h = self.read_header()?;
        Ok(TokenInfo {
            label: h.label,
            serial: h.serial,
            user_pin_initialized: h.user.is_some(),
            failed_user: h.failed_user,
            failed_so: h.failed_so,
            max_pin_attempts: h.max_pin_attempts,
            min_pin_len: h.min_pin_len,
        })
    }

    /// Unseals the data key with `pin`. A failure counts one attempt; a success resets the
    /// count.
    ///
    /// # Errors
    /// [`StoreError::PinIncorrect`], [`StoreError::PinLocked`] (also for the right PIN once
    /// locked), [`StoreError::UserPinNotInitialized`], I/O errors.
    pub fn login(&self, role: Role, pin: &[u8]) -> Result<DataKey, StoreError> {
        let _lock = self.lock()?;
        let mut h = self.read_header()?;
        let (sealed, failed) = match role {
            Role::SecurityOfficer => (Some(&h.so), h.failed_so),
            Role::User => (h.user.as_ref(), h.failed_user),
        };
        let sealed = sealed.ok_or(StoreError::UserPinNotInitialized)?;
        if failed >= h.max_pin_attempts {
            return Err(StoreError::PinLocked);
        }
        // A PIN of a length no PIN of this token has is not a guess worth counting.
        check_pin(pin, h.min_pin_len)?;
        // Ok(None) is a wrong PIN; an Argon2id that cannot run (no memory) is not counted.
        let key = unseal_data_key(&h.kdf, pin, sealed)?;
        let counter = match role {
            Role::SecurityOfficer => &mut h.failed_so,
            Role::User => &mut h.failed_user,
        };
        match key {
            Some(key) => {
                let mut changed = *counter != 0;
                *counter = 0;
                if role == Role::User && !h.public_authenticated {
                    self.authenticate_public_objects(&key)?;
                    h.public_authenticated = true;
                    changed = true;
                }
                if changed {
                    self.write_header(&h)?;
                }
                Ok(key)
            }
            None => {
                *counter += 1;
                let locked = *counter >= h.max_pin_attempts;
                self.write_header(&h)?;
                Err(if locked {
                    StoreError::PinLocked
                } else {
                    StoreError::PinIncorrect
                })
            }
        }
    }

    /// Seals the data key under a new PIN for `role` (C_InitPIN for the user by the SO,
    /// C_SetPIN by either) and clears that role's failed attempts.
    ///
    /// # Errors
    /// [`StoreError::PinLength`], I/O errors.
    pub fn set_pin(&self, role: Role, key: &DataKey, pin: &[u8]) -> Result<(), StoreError> {
        let _lock = self.lock()?;
        let mut h = self.read_header()?;
        check_pin(pin, h.min_pin_len)?;
        let sealed = seal_data_key(&h.kdf, pin, &key.0)?;
        match role {
            Role::SecurityOfficer => {
                h.so = sealed;
                h.failed_so = 0;
            }
            Role::User => {
                h.user = Some(sealed);
                h.failed_user = 0;
            }
        }
        self.write_header(&h)
    }

    /// Erases every object and stateful key and starts over with a new data key, SO PIN and
    /// label, no user PIN (C_InitToken). The SO PIN must be the current one.
    ///
    /// # Errors
    /// As [`Store::login`]; I/O errors.
    pub fn reinitialize(&self, so_pin: &[u8], label: &str) -> Result<(), StoreError> {
        self.login(Role::SecurityOfficer, so_pin)?;
        let _lock = self.lock()?;
        let h = self.read_header()?;
        for sub in ["objects", "hbs"] {
            let dir = self.dir.join(sub);
            for entry in fs::read_dir(&dir).map_err(io_err(&dir))?.flatten() {
                fs::remove_file(entry.path()).map_err(io_err(&entry.path()))?;
            }
        }
        let data_key = random::<KEY_SIZE>();
        let header = Header {
            label: label.to_owned(),
            so: seal_data_key(&h.kdf, so_pin, &data_key)?,
            user: None,
            failed_so: 0,
            failed_user: 0,
            public_authenticated: true,
            ..h
        };
        self.write_header(&header)
    }

    fn object_path(&self, id: u64) -> PathBuf {
        self.dir.join("objects").join(format!("{id:016x}.obj"))
    }

    /// The ids of the objects on disk, in order.
    ///
    /// # Errors
    /// I/O errors on the objects directory.
    pub fn object_ids(&self) -> Result<Vec<u64>, StoreError> {
        let dir = self.dir.join("objects");
        let mut ids: Vec<u64> = fs::read_dir(&dir)
            .map_err(io_err(&dir))?
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let hex = name.strip_suffix(".obj")?;
                (hex.len() == 16).then(|| u64::from_str_radix(hex, 16).ok())?
            })
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// What is wrong in the token's directory, as far as it can be seen without the PIN:
    /// object files that do not decode (or whose public attributes fail their checksum),
    /// state files of stateful keys that are damaged or not pqkit's, and temporary files left
    /// by writes that did not finish (a killed process). One line each, naming the file.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Ok(ids) = self.object_ids() {
            for id in ids {
                if let Err(e) = self.read_object(id, None) {
                    out.push(format!("damaged object: {e}"));
                }
            }
        }
        let hbs = self.hbs_dir();
        if let Ok(entries) = fs::read_dir(&hbs) {
            let mut states: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "state"))
                .collect();
            states.sort();
            for state in states {
                if let Err(e) = pqkit_hbs::state::inspect(&state) {
                    out.push(format!("damaged stateful key: {e}"));
                }
                for left in pqkit_hbs::state::leftovers(&state) {
                    out.push(format!(
                        "{}: a temporary file of a write that did not finish (the key's next \
                         signature removes it)",
                        left.display()
                    ));
                }
            }
        }
        for dir in [self.dir.clone(), self.dir.join("objects")] {
            if let Ok(entries) = fs::read_dir(&dir) {
                for e in entries.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.starts_with('.') && name.ends_with(".tmp") {
                        out.push(format!(
                            "{}: a temporary file of a write that did not finish",
                            e.path().display()
                        ));
                    }
                }
            }
        }
        out
    }

    /// A fresh object id (random, not in use).
    pub fn new_id(&self) -> u64 {
        loop {
            let id = u64::from_be_bytes(*random::<8>()) >> 1;
            if !self.object_path(id).exists() {
                return id;
            }
        }
    }

    fn object_header(id: u64, private: bool) -> Vec<u8> {
        let mut head = OBJECT_MAGIC.to_vec();
        head.push(OBJECT_VERSION);
        head.push(u8::from(private));
        head.extend_from_slice(&id.to_be_bytes());
        head
    }

    /// The tag of a public object: HMAC-SHA-256 under a key derived from the data key, over
    /// the object's header and attributes — only a logged-in user can make one.
    fn public_tag(key: &DataKey, content: &[u8]) -> [u8; 32] {
        let k = Zeroizing::new(key.derive(b"pqkit-pkcs11 public object v2"));
        let hmac = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &k[..]);
        let mut out = [0u8; 32];
        out.copy_from_slice(aws_lc_rs::hmac::sign(&hmac, content).as_ref());
        out
    }

    /// Writes object `id` atomically: sealed under the data key when `private`; a public one
    /// with its checksum and its tag under the data key (a public object cannot be written,
    /// nor replaced unseen, without a login).
    ///
    /// # Errors
    /// I/O errors (the old object, if any, is unchanged).
    pub fn write_object(
        &self,
        id: u64,
        attrs: &Attributes,
        private: bool,
        key: &DataKey,
    ) -> Result<(), StoreError> {
        let head = Self::object_header(id, private);
        let plain = encode_attributes(attrs);
        let mut out = head.clone();
        if private {
            out.extend_from_slice(&seal(&key.0, &head, &plain));
        } else {
            out.extend_from_slice(&plain);
            let tag = Self::public_tag(key, &out);
            let sum = Sha256::digest(&out);
            out.extend_from_slice(&sum);
            out.extend_from_slice(&tag);
        }
        write_atomic(&self.object_path(id), &out)
    }

    /// Reads object `id`. Returns `Ok(None)` for a private object when `key` is `None` (not
    /// logged in). A public object's checksum is checked always, its tag when `key` is given
    /// (logged in): without a login a public object replaced by someone who can write the
    /// directory cannot be told from the token's own.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] for a damaged, truncated or moved file, a private object that
    /// does not open under `key`, a public object whose tag is not the data key's (replaced)
    /// or that an earlier pqkit wrote after the token's public objects were authenticated;
    /// I/O errors.
    pub fn read_object(
        &self,
        id: u64,
        key: Option<&DataKey>,
    ) -> Result<Option<(bool, Attributes)>, StoreError> {
        let path = self.object_path(id);
        let mut bytes = Vec::new();
        File::open(&path)
            .and_then(|f| f.take(MAX_OBJECT_SIZE + 1).read_to_end(&mut bytes))
            .map_err(io_err(&path))?;
        let corrupt = |why| StoreError::Corrupt(path.clone(), why);
        let head_len = OBJECT_MAGIC.len() + 2 + 8;
        if bytes.len() < head_len || !bytes.starts_with(OBJECT_MAGIC) {
            return Err(corrupt("not an object file"));
        }
        let version = bytes[OBJECT_MAGIC.len()];
        if version != OBJECT_VERSION && version != OBJECT_VERSION_1 {
            return Err(corrupt("unknown object version"));
        }
        let private = match bytes[OBJECT_MAGIC.len() + 1] {
            0 => false,
            1 => true,
            _ => return Err(corrupt("bad object flags")),
        };
        if bytes[head_len - 8..head_len] != id.to_be_bytes() {
            return Err(corrupt("the object's id is not its file name's"));
        }
        let (head, body) = bytes.split_at(head_len);
        let plain = if private {
            let Some(key) = key else {
                return Ok(None);
            };
            open(&key.0, head, body).ok_or(corrupt("sealed object does not open (damaged)"))?
        } else {
            let trailer = if version == OBJECT_VERSION { 64 } else { 32 };
            let (content, rest) = bytes
                .split_at_checked(bytes.len().saturating_sub(trailer))
                .filter(|(c, _)| c.len() >= head_len)
                .ok_or(corrupt("truncated"))?;
            if Sha256::digest(content).as_slice() != &rest[..32] {
                return Err(corrupt("checksum mismatch"));
            }
            if let Some(key) = key {
                if version == OBJECT_VERSION_1 {
                    return Err(corrupt(
                        "a public object without a tag, written after the token's public objects \
                         were authenticated (planted?)",
                    ));
                }
                let tag = Self::public_tag(key, content);
                if aws_lc_rs::constant_time::verify_slices_are_equal(&tag, &rest[32..]).is_err() {
                    return Err(corrupt(
                        "a public object this token's user did not write (replaced?)",
                    ));
                }
            }
            Zeroizing::new(content[head_len..].to_vec())
        };
        let attrs = decode_attributes(&plain).ok_or(corrupt("attributes do not decode"))?;
        Ok(Some((private, attrs)))
    }

    /// Tags the public objects an earlier pqkit wrote without one (version 1), once, at the
    /// first user login after the upgrade; from then on an untagged public object is refused.
    fn authenticate_public_objects(&self, key: &DataKey) -> Result<(), StoreError> {
        for id in self.object_ids()? {
            let path = self.object_path(id);
            let Ok(bytes) = fs::read(&path) else {
                continue;
            };
            if bytes.get(OBJECT_MAGIC.len()) == Some(&OBJECT_VERSION_1)
                && bytes.get(OBJECT_MAGIC.len() + 1) == Some(&0)
                && let Ok(Some((false, attrs))) = self.read_object(id, None)
            {
                self.write_object(id, &attrs, false, key)?;
            }
        }
        Ok(())
    }

    /// Removes object `id`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn delete_object(&self, id: u64) -> Result<(), StoreError> {
        let path = self.object_path(id);
        fs::remove_file(&path).map_err(io_err(&path))?;
        File::open(self.dir.join("objects"))
            .and_then(|d| d.sync_all())
            .map_err(io_err(&path))
    }
}

fn seal_data_key(kdf: &Kdf, pin: &[u8], data_key: &[u8; KEY_SIZE]) -> Result<Sealed, StoreError> {
    let salt = random::<16>();
    let kek = kdf.derive(pin, &salt[..])?;
    Ok(Sealed {
        salt: hex::encode(*salt),
        key: hex::encode(seal(&kek, b"pqkit token data key", data_key)),
    })
}

/// The data key sealed under `pin`: `Ok(None)` for a PIN that does not open it; an error when
/// Argon2id cannot run (a login that could not try the PIN counts no failure).
fn unseal_data_key(kdf: &Kdf, pin: &[u8], sealed: &Sealed) -> Result<Option<DataKey>, StoreError> {
    let header = || StoreError::Corrupt(PathBuf::from("token.json"), "a sealed data key");
    let salt = hex::decode(&sealed.salt).map_err(|_| header())?;
    let body = hex::decode(&sealed.key).map_err(|_| header())?;
    let kek = kdf.derive(pin, &salt)?;
    let Some(plain) = open(&kek, b"pqkit token data key", &body) else {
        return Ok(None);
    };
    let key: [u8; KEY_SIZE] = plain.as_slice().try_into().map_err(|_| header())?;
    Ok(Some(DataKey(Zeroizing::new(key))))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn fast() -> InitOptions {
        InitOptions {
            kdf: Kdf {
                memory_kib: 1024,
                passes: 1,
                lanes: 1,
            },
            max_pin_attempts: 3,
            ledger: None,
            min_pin_len: 4,
        }
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "pqkit-store-{name}-{}-{}",
            std::process::id(),
            hex::encode(*random::<4>())
        ));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn wrong_pins_lock_and_the_so_resets() {
        let dir = temp("pins");
        let store = Store::init(&dir, "t", b"so-pin-1", Some(b"1234"), &fast()).unwrap();
        assert!(store.login(Role::User, b"1234").is_ok());
        assert!(matches!(
            store.login(Role::User, b"0000"),
            Err(StoreError::PinIncorrect)
        ));
        assert!(matches!(
            store.login(Role::User, b"0000"),
            Err(StoreError::PinIncorrect)
        ));
        // The third failure locks; the right PIN is refused from then on.
        assert!(matches!(
            store.login(Role::User, b"0000"),
            Err(StoreError::PinLocked)
        ));
        assert!(matches!(
            store.login(Role::User, b"1234"),
            Err(StoreError::PinLocked)
        ));
        let so = store.login(Role::SecurityOfficer, b"so-pin-1").unwrap();
        store.set_pin(Role::User, &so, b"5678").unwrap();
        assert!(store.login(Role::User, b"5678").is_ok());
        fs::remove_dir_all(dir).unwrap();
    }

    /// A PIN shorter than the token's minimum is refused without counting; a header whose
    /// Argon2id parameters are out of bounds (copied in: `passes` 2^32 − 1 would hang a login,
    /// a huge `memory_kib` fail it) is damaged, and no login attempt is counted.
    #[test]
    fn short_pins_and_unbounded_kdf_parameters_count_no_attempt() {
        let dir = temp("bounds");
        let options = InitOptions {
            min_pin_len: 8,
            ..fast()
        };
        assert!(matches!(
            Store::init(&dir, "t", b"so-pin-1", Some(b"1234"), &options),
            Err(StoreError::PinLength(8))
        ));
        let store = Store::init(&dir, "t", b"so-pin-12", Some(b"12345678"), &options).unwrap();
        for _ in 0..5 {
            assert!(matches!(
                store.login(Role::User, b"1234"),
                Err(StoreError::PinLength(8))
            ));
        }
        assert_eq!(store.info().unwrap().failed_user, 0);
        assert_eq!(store.info().unwrap().min_pin_len, 8);
        let header = dir.join("token.json");
        let good = fs::read_to_string(&header).unwrap();
        for (field, value) in [("passes", "4294967295"), ("memory_kib", "4294967295")] {
            let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
            v["kdf"][field] = serde_json::from_str(value).unwrap();
            fs::write(&header, v.to_string()).unwrap();
            let start = std::time::Instant::now();
            assert!(matches!(
                store.login(Role::User, b"12345678"),
                Err(StoreError::Corrupt(..))
            ));
            assert!(start.elapsed() < std::time::Duration::from_secs(2));
        }
        fs::write(&header, &good).unwrap();
        assert_eq!(store.info().unwrap().failed_user, 0);
        assert!(store.login(Role::User, b"12345678").is_ok());
        fs::remove_dir_all(dir).unwrap();
    }

    /// A public object rewritten by someone who can write the directory but has no PIN — its
    /// attributes changed and its checksum recomputed — reads as before without a login (the
    /// limit), and is refused once the user is logged in: its tag is not the data key's. An
    /// untagged (version 1) object is tagged at the first login of a token an earlier pqkit
    /// made, and refused when planted later.
    #[test]
    fn a_replaced_public_object_is_refused_when_logged_in() {
        let dir = temp("replaced");
        let store = Store::init(
            &dir,
            "t",
            b"so-pin-1",
            Some(b"12345678"),
            &InitOptions {
                min_pin_len: 8,
                ..fast()
            },
        )
        .unwrap();
        let key = store.login(Role::User, b"12345678").unwrap();
        let id = store.new_id();
        let attrs: Attributes = [(3u64, b"ca".to_vec()), (0x11, vec![1; 32])].into();
        store.write_object(id, &attrs, false, &key).unwrap();
        assert!(store.read_object(id, Some(&key)).is_ok());
        let path = store.object_path(id);
        let good = fs::read(&path).unwrap();
        let head_len = OBJECT_MAGIC.len() + 2 + 8;
        let forged_attrs: Attributes = [(3u64, b"ca".to_vec()), (0x11, vec![2; 32])].into();
        let mut forged = good[..head_len].to_vec();
        forged.extend_from_slice(&encode_attributes(&forged_attrs));
        let sum = Sha256::digest(&forged);
        forged.extend_from_slice(&sum);
        forged.extend_from_slice(&good[good.len() - 32..]);
        fs::write(&path, &forged).unwrap();
        assert_eq!(
            store.read_object(id, None).unwrap().unwrap().1,
            forged_attrs,
            "without a login the checksum is all there is"
        );
        assert!(matches!(
            store.read_object(id, Some(&key)),
            Err(StoreError::Corrupt(_, why)) if why.contains("did not write")
        ));
        // An untagged object planted in a token whose public objects are tagged: refused.
        let mut planted = good[..head_len].to_vec();
        planted[OBJECT_MAGIC.len()] = OBJECT_VERSION_1;
        planted.extend_from_slice(&encode_attributes(&forged_attrs));
        let sum = Sha256::digest(&planted);
        planted.extend_from_slice(&sum);
        fs::write(&path, &planted).unwrap();
        assert!(store.read_object(id, Some(&key)).is_err());
        // A token of an earlier pqkit: its untagged objects are tagged at the first login.
        let mut header: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.join("token.json")).unwrap()).unwrap();
        header
            .as_object_mut()
            .unwrap()
            .remove("public_authenticated");
        fs::write(dir.join("token.json"), header.to_string()).unwrap();
        let key = store.login(Role::User, b"12345678").unwrap();
        assert_eq!(
            store.read_object(id, Some(&key)).unwrap().unwrap().1,
            forged_attrs
        );
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn damage_to_one_object_loses_no_other() {
        let dir = temp("damage");
        let store = Store::init(&dir, "t", b"so-pin-1", Some(b"1234"), &fast()).unwrap();
        let key = store.login(Role::User, b"1234").unwrap();
        let attrs: Attributes = [(3u64, b"label".to_vec()), (0x11, vec![7; 40])].into();
        let ids: Vec<u64> = (0..4).map(|_| store.new_id()).collect();
        for (i, id) in ids.iter().enumerate() {
            store.write_object(*id, &attrs, i % 2 == 0, &key).unwrap();
        }
        // A flipped byte in every position of object 0 (private) and 1 (public), and every
        // truncation: each is an error, and the other objects still read.
        for victim in &ids[..2] {
            let path = store.object_path(*victim);
            let good = fs::read(&path).unwrap();
            for i in 0..good.len() {
                let mut bad = good.clone();
                bad[i] ^= 0x01;
                fs::write(&path, &bad).unwrap();
                assert!(
                    store.read_object(*victim, Some(&key)).is_err(),
                    "flip at {i}"
                );
            }
            for len in 0..good.len() {
                fs::write(&path, &good[..len]).unwrap();
                assert!(
                    store.read_object(*victim, Some(&key)).is_err(),
                    "truncated to {len}"
                );
            }
            fs::write(&path, &good).unwrap();
        }
        for id in &ids {
            assert_eq!(
                store.read_object(*id, Some(&key)).unwrap().unwrap().1,
                attrs
            );
        }
        // Private objects stay closed without the key; public ones read.
        assert!(store.read_object(ids[0], None).unwrap().is_none());
        assert!(store.read_object(ids[1], None).unwrap().is_some());
        // No plaintext of a private object on disk.
        let raw = fs::read(store.object_path(ids[0])).unwrap();
        assert!(!raw.windows(5).any(|w| w == b"label"));
        fs::remove_dir_all(dir).unwrap();
    }
}
