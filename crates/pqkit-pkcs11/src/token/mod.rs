//! The module's state behind the C interface: slots (one token directory each), sessions,
//! logins, object handles and the operations in progress. Every function here takes safe Rust
//! values; `abi` turns the caller's pointers into them and `CK_RV`s back.
//!
//! The parts: [`sessions`] (slots, tokens, sessions, logins and PINs), [`objects`] (handles,
//! attributes, search), [`operations`] (sign, verify, KEM and their keys) and [`keygen`] (key
//! pairs made or imported here).
//!
//! One lock guards the state; signing, verifying and key generation run outside it on a key
//! taken out for the operation, so many threads sign at once (CKF_OS_LOCKING_OK). Token
//! objects are read from disk at each use, so two processes on one token see each other's
//! objects; stateful keys sign through pqkit-hbs's state file, whose lock and
//! reserve-before-sign rule hold across processes.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cryptoki_sys::*;
use pqkit_core::catalogue;
use pqkit_core::prehash::{Hasher, PreHash};
use pqkit_core::sig::{Family, MuHasher, SigningKey, SigningRandomness, VerifyingKey};
use pqkit_hbs::state::{NewKey, SealKey, StateError, StatefulKey};
use sha2::Digest;
use zeroize::Zeroizing;

use crate::config::Config;
use crate::mech::{self, Mechanism, SignOp};
use crate::store::{Attributes, DataKey, Role, Store, StoreError};

mod keygen;
mod objects;
mod operations;
mod sessions;

pub use operations::ecdsa_raw_to_der;
pub(crate) use operations::{decapsulation_key, encapsulation_key, finish_sign, finish_verify};

thread_local! {
    /// The application this thread's calls come from: a `pqkit token serve` connection, or 0
    /// for the process that loaded the module.
    static APP: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Marks this thread's calls as application `app`'s (sessions it opens are its, and so is a
/// login in them).
pub(crate) fn set_app(app: u64) {
    APP.with(|a| a.set(app));
}

fn current_app() -> u64 {
    APP.with(std::cell::Cell::get)
}

/// A PKCS#11 return value other than CKR_OK.
pub(crate) type Rv = CK_RV;
pub(crate) type Result<T> = std::result::Result<T, Rv>;

/// The largest message kept whole for a multi-part operation, in bytes (see
/// [`Module::update`]); a single-part C_Sign passes its message as given.
pub const MAX_BUFFERED: usize = 256 << 20;

/// How long C_Sign waits for another process that holds a stateful key's lock.
const STATE_LOCK_PATIENCE: Duration = Duration::from_secs(30);

pub(crate) fn ulong(v: CK_ULONG) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}

pub(crate) fn boolean(v: bool) -> Vec<u8> {
    vec![u8::from(v)]
}

fn get_ulong(attrs: &Attributes, t: CK_ATTRIBUTE_TYPE) -> Result<Option<CK_ULONG>> {
    attrs
        .get(&t)
        .map(|v| {
            <[u8; 8]>::try_from(v.as_slice())
                .map(CK_ULONG::from_ne_bytes)
                .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)
        })
        .transpose()
}

fn get_bool(attrs: &Attributes, t: CK_ATTRIBUTE_TYPE) -> Result<Option<bool>> {
    attrs
        .get(&t)
        .map(|v| match v.as_slice() {
            [0] => Ok(false),
            [1] => Ok(true),
            _ => Err(CKR_ATTRIBUTE_VALUE_INVALID),
        })
        .transpose()
}

fn flag(attrs: &Attributes, t: CK_ATTRIBUTE_TYPE, default: bool) -> bool {
    get_bool(attrs, t).ok().flatten().unwrap_or(default)
}

/// Attributes never shown to, nor accepted from, a caller.
fn internal(t: CK_ATTRIBUTE_TYPE) -> bool {
    t == mech::CKA_PQKIT_STATE_FILE || t == mech::CKA_PQKIT_PKCS8
}

/// Attributes whose value is secret: returned only for non-sensitive, extractable keys.
fn secret_attribute(class: CK_OBJECT_CLASS, t: CK_ATTRIBUTE_TYPE) -> bool {
    matches!(class, CKO_PRIVATE_KEY | CKO_SECRET_KEY) && matches!(t, CKA_VALUE | CKA_SEED)
}

fn store_rv(e: StoreError) -> Rv {
    match e {
        StoreError::PinIncorrect => CKR_PIN_INCORRECT,
        StoreError::PinLocked => CKR_PIN_LOCKED,
        StoreError::UserPinNotInitialized => CKR_USER_PIN_NOT_INITIALIZED,
        StoreError::PinLength(_) => CKR_PIN_LEN_RANGE,
        StoreError::Invalid(_) => CKR_ARGUMENTS_BAD,
        StoreError::Token(..) => CKR_TOKEN_NOT_RECOGNIZED,
        StoreError::Io(..) | StoreError::Corrupt(..) => CKR_DEVICE_ERROR,
        StoreError::Ledger(_) => mech::CKR_PQKIT_LEDGER_UNREACHABLE,
    }
}

fn core_rv(e: pqkit_core::Error) -> Rv {
    use pqkit_core::Error as E;
    match e {
        E::InvalidLength { .. } => CKR_DATA_LEN_RANGE,
        E::InvalidKey(_) => CKR_KEY_TYPE_INCONSISTENT,
        E::InvalidCiphertext(_) => CKR_ENCRYPTED_DATA_INVALID,
        E::BadSignature => CKR_SIGNATURE_INVALID,
        E::ContextTooLong(_) => CKR_MECHANISM_PARAM_INVALID,
        E::Unsupported(_) => CKR_MECHANISM_INVALID,
        _ => CKR_FUNCTION_FAILED,
    }
}

/// A stateful key's refusal as its own return value (see [`mech::state_refusal`]).
fn state_rv(e: StateError) -> Rv {
    match e {
        StateError::Hbs(pqkit_hbs::Error::Exhausted) => CKR_KEY_EXHAUSTED,
        StateError::BehindLedger { .. } => mech::CKR_PQKIT_STATE_ROLLED_BACK,
        StateError::NotWhereRecorded { .. } | StateError::OriginalExists { .. } => {
            mech::CKR_PQKIT_STATE_MOVED
        }
        StateError::HardLinked { .. } | StateError::SymbolicLink(..) => {
            mech::CKR_PQKIT_STATE_LINKED
        }
        StateError::Corrupt(..) | StateError::Sealed(_) | StateError::Hbs(_) => {
            mech::CKR_PQKIT_STATE_DAMAGED
        }
        StateError::Io(_, e) if e.kind() == std::io::ErrorKind::NotFound => {
            mech::CKR_PQKIT_STATE_MISSING
        }
        StateError::NotInLedger { .. }
        | StateError::OtherLedger { .. }
        | StateError::Unregistered { .. }
        | StateError::Unadopted { .. }
        | StateError::LedgerChange { .. } => mech::CKR_PQKIT_STATE_NOT_IN_LEDGER,
        StateError::Ledger(_) => mech::CKR_PQKIT_LEDGER_UNREACHABLE,
        StateError::Locked(..) | StateError::Conflict { .. } | StateError::InUse(_) => {
            mech::CKR_PQKIT_STATE_BUSY
        }
        StateError::Io(..) | StateError::Exists(_) | StateError::Backwards { .. } => {
            mech::CKR_PQKIT_STATE_UNWRITABLE
        }
    }
}

/// Where an object lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Place {
    /// On disk in slot `.0`'s store, object id `.1`.
    Token(usize, u64),
    /// In memory, owned by a session.
    Session(usize),
}

struct SessionObject {
    session: CK_SESSION_HANDLE,
    attrs: Attributes,
}

/// The hedging of a pure or pre-hash signature (PKCS#11 3.2 CK_HEDGE_TYPE).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Hedge {
    Hedged,
    Deterministic,
}

impl Hedge {
    pub(crate) fn from_ck(v: CK_HEDGE_TYPE) -> Result<Self> {
        match v {
            CKH_HEDGE_PREFERRED | CKH_HEDGE_REQUIRED => Ok(Self::Hedged),
            CKH_DETERMINISTIC_REQUIRED => Ok(Self::Deterministic),
            _ => Err(CKR_MECHANISM_PARAM_INVALID),
        }
    }

    fn randomness(self) -> SigningRandomness<'static> {
        match self {
            Self::Hedged => SigningRandomness::Hedged,
            Self::Deterministic => SigningRandomness::Deterministic,
        }
    }
}

/// A mechanism's parameters, decoded by `abi`.
#[derive(Clone, Debug)]
pub(crate) struct SignParams {
    pub(crate) hedge: Hedge,
    pub(crate) context: Vec<u8>,
    /// CKM_HASH_ML_DSA / CKM_HASH_SLH_DSA: the hash the caller used.
    pub(crate) hash: Option<PreHash>,
}

impl Default for SignParams {
    fn default() -> Self {
        Self {
            hedge: Hedge::Hedged,
            context: Vec::new(),
            hash: None,
        }
    }
}

/// The key of an operation in progress.
enum OpKey {
    Sign(Arc<SigningKey>),
    Verify(VerifyingKey),
    /// A stateful key's state file, its signature size, the key its secrets are sealed under
    /// (derived from the token's data key), and its token (whose ledger records it).
    HbsSign(PathBuf, usize, Zeroizing<[u8; 32]>, Store),
    HbsVerify(pqkit_hbs::public::PublicKey),
}

/// What the data accumulates into.
enum Acc {
    Buffer(Zeroizing<Vec<u8>>),
    Hash(Hasher),
    Mu(MuHasher),
}

/// A sign or verify operation in progress.
pub(crate) struct Operation {
    mech: &'static Mechanism,
    key: OpKey,
    params: SignParams,
    acc: Acc,
    /// Whether C_SignUpdate / C_VerifyUpdate started it (C_Sign / C_Verify then refuse).
    multi_part: bool,
}

struct Session {
    slot: usize,
    /// The application that opened it (a `pqkit token serve` connection; 0 in process).
    app: u64,
    rw: bool,
    find: Option<Vec<CK_OBJECT_HANDLE>>,
    sign: Option<Operation>,
    verify: Option<Operation>,
}

struct Slot {
    dir: PathBuf,
    store: Option<Store>,
    /// Who is logged in, per application: one application's login opens nothing to another
    /// (`pqkit token serve` serves several).
    logins: HashMap<u64, (Role, DataKey)>,
}

/// The whole module state.
pub(crate) struct Module {
    slots: Vec<Slot>,
    sessions: HashMap<CK_SESSION_HANDLE, Session>,
    next_session: CK_SESSION_HANDLE,
    places: HashMap<CK_OBJECT_HANDLE, Place>,
    handles: HashMap<Place, CK_OBJECT_HANDLE>,
    session_objects: HashMap<CK_OBJECT_HANDLE, SessionObject>,
    next_handle: CK_OBJECT_HANDLE,
    /// Decoded signing keys by the SHA-256 of their PKCS#8: decoding checks each key (Falcon's
    /// NTRU equation, ML-DSA's expansion), too slow to repeat at every C_SignInit. Emptied at
    /// logout; the keys zeroize on drop.
    keys: HashMap<[u8; 32], Arc<SigningKey>>,
}

/// Most decoded keys kept at once.
const KEY_CACHE: usize = 64;

static MODULE: Mutex<Option<Module>> = Mutex::new(None);

/// The module state, or CKR_CRYPTOKI_NOT_INITIALIZED.
pub(crate) fn with<T>(f: impl FnOnce(&mut Module) -> Result<T>) -> Result<T> {
    let mut guard = lock();
    let module = guard.as_mut().ok_or(CKR_CRYPTOKI_NOT_INITIALIZED)?;
    f(module)
}

fn lock() -> MutexGuard<'static, Option<Module>> {
    // A panic while the lock was held left no half-done state that matters more than going on.
    MODULE.lock().unwrap_or_else(|p| p.into_inner())
}

/// C_Initialize: reads the configuration and opens each slot's store.
pub(crate) fn initialize() -> Result<()> {
    let mut guard = lock();
    if guard.is_some() {
        return Err(CKR_CRYPTOKI_ALREADY_INITIALIZED);
    }
    let config = Config::load().map_err(|_| CKR_GENERAL_ERROR)?;
    let slots = config
        .slots
        .into_iter()
        .map(|s| Slot {
            store: Store::open(&s.dir).ok(),
            dir: s.dir,
            logins: HashMap::new(),
        })
        .collect();
    *guard = Some(Module {
        slots,
        sessions: HashMap::new(),
        next_session: 1,
        places: HashMap::new(),
        handles: HashMap::new(),
        session_objects: HashMap::new(),
        next_handle: 1,
        keys: HashMap::new(),
    });
    Ok(())
}

/// C_Finalize.
pub(crate) fn finalize() -> Result<()> {
    lock()
        .take()
        .map(|_| ())
        .ok_or(CKR_CRYPTOKI_NOT_INITIALIZED)
}

/// Everything C_GetTokenInfo reports.
pub(crate) struct TokenFacts {
    pub(crate) label: String,
    pub(crate) serial: String,
    pub(crate) flags: CK_FLAGS,
    pub(crate) sessions: usize,
    pub(crate) rw_sessions: usize,
    pub(crate) min_pin_len: u64,
}

/// `made` with the caller's template added where it does not contradict (the caller may set
/// CKA_LABEL, CKA_ID, CKA_TOKEN, CKA_PRIVATE, usage flags, …; what the key is stays ours).
fn merge(mut made: Attributes, template: &Attributes) -> Attributes {
    for (t, v) in template {
        let fixed = matches!(
            *t,
            CKA_CLASS
                | CKA_KEY_TYPE
                | CKA_VALUE
                | CKA_SEED
                | CKA_PARAMETER_SET
                | CKA_EC_POINT
                | CKA_PUBLIC_KEY_INFO
                | CKA_LOCAL
                | CKA_KEY_GEN_MECHANISM
                | CKA_ALWAYS_SENSITIVE
                | CKA_NEVER_EXTRACTABLE
                | CKA_HSS_KEYS_REMAINING
        );
        if !fixed {
            made.insert(*t, v.clone());
        }
    }
    // A key that was ever extractable or not sensitive is not "always sensitive".
    if made.contains_key(&CKA_ALWAYS_SENSITIVE) {
        let sensitive = flag(&made, CKA_SENSITIVE, true);
        let extractable = flag(&made, CKA_EXTRACTABLE, false);
        made.insert(CKA_ALWAYS_SENSITIVE, boolean(sensitive));
        made.insert(CKA_NEVER_EXTRACTABLE, boolean(!extractable));
    }
    made
}

fn matches(attrs: &Attributes, template: &Attributes) -> bool {
    template
        .iter()
        .all(|(t, v)| !internal(*t) && attrs.get(t) == Some(v))
}

/// The value of an attribute of `class` that the object does not store: the defaults of
/// PKCS#11 3.2 §4.4 (storage objects), §4.6–§4.9 (certificates, keys) — CK_FALSE for the
/// usages a key does not have, empty for absent dates, names and lists,
/// CK_UNAVAILABLE_INFORMATION for a generation mechanism nobody recorded — so that a
/// consumer asking for every attribute of the class (pkcs11-tool, libp11) gets an answer;
/// `None` for an attribute the class does not have (CKR_ATTRIBUTE_TYPE_INVALID).
fn default_attribute(class: CK_OBJECT_CLASS, t: CK_ATTRIBUTE_TYPE) -> Option<Vec<u8>> {
    let key = matches!(class, CKO_PUBLIC_KEY | CKO_PRIVATE_KEY | CKO_SECRET_KEY);
    Some(match t {
        // Every storage object (§4.4).
        CKA_TOKEN | CKA_PRIVATE | CKA_COPYABLE => boolean(false),
        CKA_MODIFIABLE | CKA_DESTROYABLE => boolean(true),
        CKA_LABEL => Vec::new(),
        // Every key (§4.7).
        CKA_ID | CKA_START_DATE | CKA_END_DATE | CKA_ALLOWED_MECHANISMS if key => Vec::new(),
        CKA_DERIVE | CKA_LOCAL if key => boolean(false),
        CKA_KEY_GEN_MECHANISM if key => ulong(CK_UNAVAILABLE_INFORMATION),
        // Public keys (§4.8).
        CKA_SUBJECT if matches!(class, CKO_PUBLIC_KEY | CKO_PRIVATE_KEY) => Vec::new(),
        CKA_ENCRYPT | CKA_VERIFY | CKA_VERIFY_RECOVER | CKA_WRAP | CKA_TRUSTED
        | CKA_ENCAPSULATE
            if class == CKO_PUBLIC_KEY =>
        {
            boolean(false)
        }
        // Private keys (§4.9).
        CKA_DECRYPT
        | CKA_SIGN
        | CKA_SIGN_RECOVER
        | CKA_UNWRAP
        | CKA_WRAP_WITH_TRUSTED
        | CKA_ALWAYS_AUTHENTICATE
        | CKA_DECAPSULATE
            if class == CKO_PRIVATE_KEY =>
        {
            boolean(false)
        }
        // Certificates (§4.6).
        CKA_TRUSTED if class == CKO_CERTIFICATE => boolean(false),
        CKA_CERTIFICATE_CATEGORY | CKA_JAVA_MIDP_SECURITY_DOMAIN if class == CKO_CERTIFICATE => {
            ulong(0)
        }
        CKA_START_DATE
        | CKA_END_DATE
        | CKA_URL
        | CKA_HASH_OF_SUBJECT_PUBLIC_KEY
        | CKA_HASH_OF_ISSUER_PUBLIC_KEY
        | CKA_ID
            if class == CKO_CERTIFICATE =>
        {
            Vec::new()
        }
        _ => return None,
    })
}

/// The label a stateful key's seal key is derived under: one key per state file.
fn state_seal_label(file: &[u8]) -> Vec<u8> {
    [&b"pqkit-pkcs11 hbs state seal v1 "[..], file].concat()
}

/// The verifying key of a public-key object (not ML-KEM's: see [`encapsulation_key`]).
fn public_op_key(attrs: &Attributes) -> Result<OpKey> {
    let key_type = get_ulong(attrs, CKA_KEY_TYPE)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
    if matches!(key_type, CKK_HSS | CKK_XMSS | CKK_XMSSMT) {
        let spki = attrs.get(&CKA_PUBLIC_KEY_INFO);
        let pk = match (spki, attrs.get(&CKA_VALUE)) {
            (Some(spki), _) => pqkit_hbs::public::PublicKey::from_spki_der(spki),
            (None, Some(v)) if key_type == CKK_HSS => {
                pqkit_hbs::lms::HssPublicKey::from_bytes(v).map(pqkit_hbs::public::PublicKey::Hss)
            }
            _ => return Err(CKR_TEMPLATE_INCOMPLETE),
        }
        .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?;
        return Ok(OpKey::HbsVerify(pk));
    }
    let ec = attrs.get(&CKA_EC_PARAMS).map(Vec::as_slice);
    let kind = mech::kind_for(key_type, get_ulong(attrs, CKA_PARAMETER_SET)?, ec)
        .ok_or(CKR_ATTRIBUTE_VALUE_INVALID)?;
    let bytes = if ec.is_some() {
        let point = attrs.get(&CKA_EC_POINT).ok_or(CKR_TEMPLATE_INCOMPLETE)?;
        let octets: der::asn1::OctetString =
            der::Decode::from_der(point).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?;
        octets.as_bytes().to_vec()
    } else {
        attrs
            .get(&CKA_VALUE)
            .ok_or(CKR_TEMPLATE_INCOMPLETE)?
            .clone()
    };
    let alg = catalogue::signature(kind.name).map_err(core_rv)?;
    Ok(OpKey::Verify(
        alg.verifying_key(&bytes)
            .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?,
    ))
}
