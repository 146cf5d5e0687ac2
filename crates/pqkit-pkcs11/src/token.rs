//! The module's state behind the C interface: slots (one token directory each), sessions,
//! logins, object handles and the operations in progress. Every function here takes safe Rust
//! values; `abi` turns the caller's pointers into them and `CK_RV`s back.
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

impl Module {
    /// The number of slots (slot ids are 0..n).
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
    }

    fn slot(&self, id: CK_SLOT_ID) -> Result<&Slot> {
        usize::try_from(id)
            .ok()
            .and_then(|i| self.slots.get(i))
            .ok_or(CKR_SLOT_ID_INVALID)
    }

    /// Whether slot `id` holds a token, and the directory it is configured with.
    pub(crate) fn slot_info(&self, id: CK_SLOT_ID) -> Result<(bool, PathBuf)> {
        let slot = self.slot(id)?;
        Ok((slot.store.is_some(), slot.dir.clone()))
    }

    fn store(&self, id: CK_SLOT_ID) -> Result<&Store> {
        self.slot(id)?.store.as_ref().ok_or(CKR_TOKEN_NOT_PRESENT)
    }

    /// C_GetTokenInfo.
    pub(crate) fn token_info(&self, id: CK_SLOT_ID) -> Result<TokenFacts> {
        let info = self.store(id)?.info().map_err(store_rv)?;
        let mut flags = CKF_RNG | CKF_LOGIN_REQUIRED | CKF_TOKEN_INITIALIZED;
        if info.user_pin_initialized {
            flags |= CKF_USER_PIN_INITIALIZED;
        }
        let left = |failed: u32| info.max_pin_attempts.saturating_sub(failed);
        if left(info.failed_user) == 0 {
            flags |= CKF_USER_PIN_LOCKED;
        } else if left(info.failed_user) == 1 {
            flags |= CKF_USER_PIN_FINAL_TRY;
        } else if info.failed_user > 0 {
            flags |= CKF_USER_PIN_COUNT_LOW;
        }
        if left(info.failed_so) == 0 {
            flags |= CKF_SO_PIN_LOCKED;
        } else if left(info.failed_so) == 1 {
            flags |= CKF_SO_PIN_FINAL_TRY;
        } else if info.failed_so > 0 {
            flags |= CKF_SO_PIN_COUNT_LOW;
        }
        let slot = usize::try_from(id).map_err(|_| CKR_SLOT_ID_INVALID)?;
        let mine = self.sessions.values().filter(|s| s.slot == slot);
        Ok(TokenFacts {
            label: info.label,
            serial: info.serial,
            flags,
            sessions: mine.clone().count(),
            rw_sessions: mine.filter(|s| s.rw).count(),
            min_pin_len: u64::from(info.min_pin_len),
        })
    }

    /// C_InitToken: erases the token and sets its SO PIN and label.
    pub(crate) fn init_token(&mut self, id: CK_SLOT_ID, so_pin: &[u8], label: &str) -> Result<()> {
        let slot_index = usize::try_from(id).map_err(|_| CKR_SLOT_ID_INVALID)?;
        if self.sessions.values().any(|s| s.slot == slot_index) {
            return Err(CKR_SESSION_EXISTS);
        }
        self.store(id)?
            .reinitialize(so_pin, label)
            .map_err(store_rv)?;
        self.forget_slot_objects(slot_index);
        if let Some(slot) = self.slots.get_mut(slot_index) {
            slot.logins.clear();
        }
        Ok(())
    }

    fn forget_slot_objects(&mut self, slot: usize) {
        let gone: Vec<CK_OBJECT_HANDLE> = self
            .places
            .iter()
            .filter(|(_, p)| matches!(p, Place::Token(s, _) | Place::Session(s) if *s == slot))
            .map(|(h, _)| *h)
            .collect();
        for h in gone {
            if let Some(p) = self.places.remove(&h) {
                self.handles.remove(&p);
            }
            self.session_objects.remove(&h);
        }
    }

    /// C_OpenSession.
    pub(crate) fn open_session(
        &mut self,
        id: CK_SLOT_ID,
        flags: CK_FLAGS,
    ) -> Result<CK_SESSION_HANDLE> {
        if flags & CKF_SERIAL_SESSION == 0 {
            return Err(CKR_SESSION_PARALLEL_NOT_SUPPORTED);
        }
        self.store(id)?;
        let slot = usize::try_from(id).map_err(|_| CKR_SLOT_ID_INVALID)?;
        let rw = flags & CKF_RW_SESSION != 0;
        let app = current_app();
        if !rw
            && matches!(
                self.slots[slot].logins.get(&app),
                Some((Role::SecurityOfficer, _))
            )
        {
            return Err(CKR_SESSION_READ_WRITE_SO_EXISTS);
        }
        let handle = self.next_session;
        self.next_session += 1;
        self.sessions.insert(
            handle,
            Session {
                slot,
                app,
                rw,
                find: None,
                sign: None,
                verify: None,
            },
        );
        Ok(handle)
    }

    fn session(&mut self, h: CK_SESSION_HANDLE) -> Result<&mut Session> {
        self.sessions.get_mut(&h).ok_or(CKR_SESSION_HANDLE_INVALID)
    }

    /// C_CloseSession: its session objects go with it; the last session of a slot logs out.
    pub(crate) fn close_session(&mut self, h: CK_SESSION_HANDLE) -> Result<()> {
        let session = self.sessions.remove(&h).ok_or(CKR_SESSION_HANDLE_INVALID)?;
        let mine: Vec<_> = self
            .session_objects
            .iter()
            .filter(|(_, o)| o.session == h)
            .map(|(k, _)| *k)
            .collect();
        for k in mine {
            self.session_objects.remove(&k);
            if let Some(p) = self.places.remove(&k) {
                self.handles.remove(&p);
            }
        }
        if !self
            .sessions
            .values()
            .any(|s| s.slot == session.slot && s.app == session.app)
        {
            self.slots[session.slot].logins.remove(&session.app);
            self.keys.clear();
        }
        Ok(())
    }

    /// C_CloseAllSessions.
    pub(crate) fn close_all_sessions(&mut self, id: CK_SLOT_ID) -> Result<()> {
        self.slot(id)?;
        let slot = usize::try_from(id).map_err(|_| CKR_SLOT_ID_INVALID)?;
        let mine: Vec<_> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.slot == slot)
            .map(|(h, _)| *h)
            .collect();
        for h in mine {
            self.close_session(h)?;
        }
        Ok(())
    }

    /// C_GetSessionInfo: (slot, state, flags).
    pub(crate) fn session_info(
        &mut self,
        h: CK_SESSION_HANDLE,
    ) -> Result<(CK_SLOT_ID, CK_STATE, CK_FLAGS)> {
        let s = self.session(h)?;
        let (slot, rw, app) = (s.slot, s.rw, s.app);
        let state = match (self.slots[slot].logins.get(&app), rw) {
            (Some((Role::SecurityOfficer, _)), _) => CKS_RW_SO_FUNCTIONS,
            (Some((Role::User, _)), true) => CKS_RW_USER_FUNCTIONS,
            (Some((Role::User, _)), false) => CKS_RO_USER_FUNCTIONS,
            (None, true) => CKS_RW_PUBLIC_SESSION,
            (None, false) => CKS_RO_PUBLIC_SESSION,
        };
        let flags = CKF_SERIAL_SESSION | if rw { CKF_RW_SESSION } else { 0 };
        Ok((slot as CK_SLOT_ID, state, flags))
    }

    /// The slot and the store of a session.
    fn session_store(&mut self, h: CK_SESSION_HANDLE) -> Result<(usize, Store)> {
        let slot = self.session(h)?.slot;
        let store = self.slots[slot].store.clone().ok_or(CKR_DEVICE_REMOVED)?;
        Ok((slot, store))
    }

    /// C_Login. The PIN check runs Argon2id (a fraction of a second) under the module lock.
    pub(crate) fn login(
        &mut self,
        h: CK_SESSION_HANDLE,
        user: CK_USER_TYPE,
        pin: &[u8],
    ) -> Result<()> {
        let (slot, store) = self.session_store(h)?;
        let app = self.session(h)?.app;
        let role = match user {
            CKU_SO => Role::SecurityOfficer,
            CKU_USER => Role::User,
            CKU_CONTEXT_SPECIFIC => return Err(CKR_OPERATION_NOT_INITIALIZED),
            _ => return Err(CKR_USER_TYPE_INVALID),
        };
        match self.slots[slot].logins.get(&app) {
            Some((r, _)) if *r == role => return Err(CKR_USER_ALREADY_LOGGED_IN),
            Some(_) => return Err(CKR_USER_ANOTHER_ALREADY_LOGGED_IN),
            None => {}
        }
        if role == Role::SecurityOfficer
            && self
                .sessions
                .values()
                .any(|s| s.slot == slot && s.app == app && !s.rw)
        {
            return Err(CKR_SESSION_READ_ONLY_EXISTS);
        }
        let key = store.login(role, pin).map_err(store_rv)?;
        self.slots[slot].logins.insert(app, (role, key));
        Ok(())
    }

    /// The signing key of a private-key object (decoded once while logged in).
    fn private_op_key(
        &mut self,
        attrs: &Attributes,
        store: &Store,
        session: CK_SESSION_HANDLE,
    ) -> Result<OpKey> {
        if let Some(file) = attrs.get(&mech::CKA_PQKIT_STATE_FILE) {
            let path = store.hbs_dir().join(String::from_utf8_lossy(file).as_ref());
            let status = pqkit_hbs::state::status(&path).map_err(state_rv)?;
            let data_key = self.user_key(session).ok_or(CKR_USER_NOT_LOGGED_IN)?;
            let seal = Zeroizing::new(data_key.derive(&state_seal_label(file)));
            return Ok(OpKey::HbsSign(
                path,
                status.signature_len,
                seal,
                store.clone(),
            ));
        }
        let der = attrs
            .get(&mech::CKA_PQKIT_PKCS8)
            .ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
        let digest: [u8; 32] = sha2::Sha256::digest(der).into();
        if let Some(key) = self.keys.get(&digest) {
            return Ok(OpKey::Sign(key.clone()));
        }
        let key = Arc::new(
            pqkit_pki::key::signing_key_from_pkcs8(der).map_err(|_| CKR_KEY_TYPE_INCONSISTENT)?,
        );
        if self.keys.len() >= KEY_CACHE {
            self.keys.clear();
        }
        self.keys.insert(digest, key.clone());
        Ok(OpKey::Sign(key))
    }

    /// C_Logout.
    pub(crate) fn logout(&mut self, h: CK_SESSION_HANDLE) -> Result<()> {
        self.keys.clear();
        let (slot, app) = {
            let s = self.session(h)?;
            (s.slot, s.app)
        };
        self.slots[slot]
            .logins
            .remove(&app)
            .map(|_| ())
            .ok_or(CKR_USER_NOT_LOGGED_IN)
    }

    /// C_InitPIN: the SO sets the user PIN.
    pub(crate) fn init_pin(&mut self, h: CK_SESSION_HANDLE, pin: &[u8]) -> Result<()> {
        let (slot, store) = self.session_store(h)?;
        let app = self.session(h)?.app;
        let Some((Role::SecurityOfficer, key)) = self.slots[slot].logins.get(&app) else {
            return Err(CKR_USER_NOT_LOGGED_IN);
        };
        store.set_pin(Role::User, key, pin).map_err(store_rv)
    }

    /// C_SetPIN: the logged-in role (the user when none is) changes its own PIN.
    pub(crate) fn set_pin(&mut self, h: CK_SESSION_HANDLE, old: &[u8], new: &[u8]) -> Result<()> {
        let (slot, store) = self.session_store(h)?;
        if !self.session(h)?.rw {
            return Err(CKR_SESSION_READ_ONLY);
        }
        let app = self.session(h)?.app;
        let role = self.slots[slot]
            .logins
            .get(&app)
            .map_or(Role::User, |(r, _)| *r);
        let key = store.login(role, old).map_err(store_rv)?;
        store.set_pin(role, &key, new).map_err(store_rv)
    }

    /// The data key of the user logged in for `session`'s application, if one is.
    fn user_key(&self, session: CK_SESSION_HANDLE) -> Option<&DataKey> {
        let s = self.sessions.get(&session)?;
        match self.slots.get(s.slot)?.logins.get(&s.app) {
            Some((Role::User, key)) => Some(key),
            _ => None,
        }
    }

    fn handle_for(&mut self, place: Place) -> CK_OBJECT_HANDLE {
        if let Some(h) = self.handles.get(&place) {
            return *h;
        }
        let h = self.next_handle;
        self.next_handle += 1;
        self.places.insert(h, place);
        self.handles.insert(place, h);
        h
    }

    /// The attributes of object `h` as the session may see them: `None` when it does not
    /// exist or is private and the user is not logged in.
    fn read(&mut self, session: CK_SESSION_HANDLE, h: CK_OBJECT_HANDLE) -> Result<Attributes> {
        let slot = self.session(session)?.slot;
        match self.places.get(&h).copied() {
            Some(Place::Token(s, id)) if s == slot => {
                let store = self.slots[slot].store.as_ref().ok_or(CKR_DEVICE_REMOVED)?;
                match store.read_object(id, self.user_key(session)) {
                    Ok(Some((_, attrs))) => Ok(attrs),
                    Ok(None) => Err(CKR_OBJECT_HANDLE_INVALID),
                    Err(StoreError::Io(_, e)) if e.kind() == std::io::ErrorKind::NotFound => {
                        Err(CKR_OBJECT_HANDLE_INVALID)
                    }
                    Err(e) => Err(store_rv(e)),
                }
            }
            Some(Place::Session(s)) if s == slot => {
                let o = self
                    .session_objects
                    .get(&h)
                    .ok_or(CKR_OBJECT_HANDLE_INVALID)?;
                if flag(&o.attrs, CKA_PRIVATE, false) && self.user_key(session).is_none() {
                    return Err(CKR_OBJECT_HANDLE_INVALID);
                }
                Ok(o.attrs.clone())
            }
            _ => Err(CKR_OBJECT_HANDLE_INVALID),
        }
    }

    /// Stores a new object; token objects need a read/write session and a user login (public
    /// ones too: their tag is made with the data key), session objects a login when private.
    fn insert(
        &mut self,
        session: CK_SESSION_HANDLE,
        attrs: Attributes,
    ) -> Result<CK_OBJECT_HANDLE> {
        let s = self.session(session)?;
        let (slot, rw) = (s.slot, s.rw);
        let private = flag(&attrs, CKA_PRIVATE, false);
        if private && self.user_key(session).is_none() {
            return Err(CKR_USER_NOT_LOGGED_IN);
        }
        if flag(&attrs, CKA_TOKEN, false) {
            if !rw {
                return Err(CKR_SESSION_READ_ONLY);
            }
            let key = self
                .user_key(session)
                .ok_or(CKR_USER_NOT_LOGGED_IN)?
                .clone();
            let store = self.slots[slot].store.clone().ok_or(CKR_DEVICE_REMOVED)?;
            let id = attrs
                .get(&mech::CKA_PQKIT_STATE_FILE)
                .and_then(|f| {
                    std::str::from_utf8(f)
                        .ok()?
                        .strip_suffix(".state")?
                        .parse()
                        .ok()
                })
                .unwrap_or_else(|| store.new_id());
            store
                .write_object(id, &attrs, private, &key)
                .map_err(store_rv)?;
            Ok(self.handle_for(Place::Token(slot, id)))
        } else {
            let h = self.next_handle;
            self.next_handle += 1;
            self.places.insert(h, Place::Session(slot));
            self.session_objects
                .insert(h, SessionObject { session, attrs });
            Ok(h)
        }
    }

    /// C_CreateObject: certificates, public keys, private keys (by CKA_SEED / CKA_VALUE for
    /// ML-DSA, ML-KEM and SLH-DSA, or by CKA_PQKIT_PKCS8 for any key pqkit reads), data and
    /// secret keys.
    pub(crate) fn create_object(
        &mut self,
        session: CK_SESSION_HANDLE,
        template: Attributes,
    ) -> Result<CK_OBJECT_HANDLE> {
        let class = get_ulong(&template, CKA_CLASS)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
        if template.keys().any(|t| *t == mech::CKA_PQKIT_STATE_FILE) {
            return Err(CKR_ATTRIBUTE_TYPE_INVALID);
        }
        let attrs = match class {
            CKO_CERTIFICATE => {
                let ty =
                    get_ulong(&template, CKA_CERTIFICATE_TYPE)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
                if ty != CKC_X_509 {
                    return Err(CKR_ATTRIBUTE_VALUE_INVALID);
                }
                let der = template.get(&CKA_VALUE).ok_or(CKR_TEMPLATE_INCOMPLETE)?;
                <x509_cert::Certificate as der::Decode>::from_der(der)
                    .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?;
                let mut a = template.clone();
                a.entry(CKA_PRIVATE).or_insert_with(|| boolean(false));
                a
            }
            CKO_PRIVATE_KEY => private_key_from_template(&template)?,
            CKO_PUBLIC_KEY => public_key_from_template(&template)?,
            CKO_DATA | CKO_SECRET_KEY => {
                let mut a = template.clone();
                a.entry(CKA_PRIVATE)
                    .or_insert_with(|| boolean(class == CKO_SECRET_KEY));
                a
            }
            _ => return Err(CKR_ATTRIBUTE_VALUE_INVALID),
        };
        self.insert(session, attrs)
    }

    /// C_DestroyObject (a stateful key's state file goes with it).
    pub(crate) fn destroy_object(
        &mut self,
        session: CK_SESSION_HANDLE,
        h: CK_OBJECT_HANDLE,
    ) -> Result<()> {
        let attrs = self.read(session, h)?;
        match self.places.get(&h).copied() {
            Some(Place::Token(slot, id)) => {
                if !self.session(session)?.rw {
                    return Err(CKR_SESSION_READ_ONLY);
                }
                let store = self.slots[slot].store.clone().ok_or(CKR_DEVICE_REMOVED)?;
                store.delete_object(id).map_err(store_rv)?;
                if let Some(file) = attrs.get(&mech::CKA_PQKIT_STATE_FILE) {
                    let path = store.hbs_dir().join(String::from_utf8_lossy(file).as_ref());
                    for p in std::iter::once(path.clone())
                        .chain(pqkit_hbs::state::companion_files(&path))
                    {
                        let _ = std::fs::remove_file(p);
                    }
                }
            }
            _ => {
                self.session_objects.remove(&h);
            }
        }
        if let Some(p) = self.places.remove(&h) {
            self.handles.remove(&p);
        }
        Ok(())
    }

    /// C_GetAttributeValue for one attribute: `Ok(Some(value))`, `Ok(None)` for an attribute
    /// the object does not have, or CKR_ATTRIBUTE_SENSITIVE.
    pub(crate) fn attributes(
        &mut self,
        session: CK_SESSION_HANDLE,
        h: CK_OBJECT_HANDLE,
    ) -> Result<ObjectView> {
        let attrs = self.read(session, h)?;
        let slot = self.session(session)?.slot;
        let state_file = attrs.get(&mech::CKA_PQKIT_STATE_FILE).map(|f| {
            self.slots[slot]
                .store
                .as_ref()
                .map(|s| s.hbs_dir().join(String::from_utf8_lossy(f).as_ref()))
        });
        Ok(ObjectView {
            attrs,
            state_file: state_file.flatten(),
        })
    }

    /// C_SetAttributeValue: CKA_LABEL, CKA_ID, CKA_SUBJECT and CKA_APPLICATION may change.
    pub(crate) fn set_attributes(
        &mut self,
        session: CK_SESSION_HANDLE,
        h: CK_OBJECT_HANDLE,
        changes: Attributes,
    ) -> Result<()> {
        let mut attrs = self.read(session, h)?;
        for (t, v) in changes {
            if !matches!(t, CKA_LABEL | CKA_ID | CKA_SUBJECT | CKA_APPLICATION) {
                return Err(CKR_ATTRIBUTE_READ_ONLY);
            }
            if !flag(&attrs, CKA_MODIFIABLE, true) {
                return Err(CKR_ACTION_PROHIBITED);
            }
            attrs.insert(t, v);
        }
        match self.places.get(&h).copied() {
            Some(Place::Token(slot, id)) => {
                if !self.session(session)?.rw {
                    return Err(CKR_SESSION_READ_ONLY);
                }
                let store = self.slots[slot].store.clone().ok_or(CKR_DEVICE_REMOVED)?;
                let private = flag(&attrs, CKA_PRIVATE, false);
                let key = self
                    .user_key(session)
                    .ok_or(CKR_USER_NOT_LOGGED_IN)?
                    .clone();
                store
                    .write_object(id, &attrs, private, &key)
                    .map_err(store_rv)
            }
            _ => {
                if let Some(o) = self.session_objects.get_mut(&h) {
                    o.attrs = attrs;
                }
                Ok(())
            }
        }
    }

    /// C_FindObjectsInit: every visible object whose attributes equal the template's.
    pub(crate) fn find_init(
        &mut self,
        session: CK_SESSION_HANDLE,
        template: Attributes,
    ) -> Result<()> {
        let s = self.session(session)?;
        if s.find.is_some() {
            return Err(CKR_OPERATION_ACTIVE);
        }
        let slot = s.slot;
        if template.keys().any(|t| internal(*t)) {
            self.session(session)?.find = Some(Vec::new());
            return Ok(());
        }
        let store = self.slots[slot].store.clone().ok_or(CKR_DEVICE_REMOVED)?;
        let mut found = Vec::new();
        // A damaged object is skipped: the others stay usable.
        for id in store.object_ids().map_err(store_rv)? {
            if let Ok(Some((_, attrs))) = store.read_object(id, self.user_key(session))
                && matches(&attrs, &template)
            {
                found.push(self.handle_for(Place::Token(slot, id)));
            }
        }
        let logged_in = self.user_key(session).is_some();
        let mut session_found: Vec<_> = self
            .session_objects
            .iter()
            .filter(|(h, o)| {
                self.places.get(h) == Some(&Place::Session(slot))
                    && (logged_in || !flag(&o.attrs, CKA_PRIVATE, false))
                    && matches(&o.attrs, &template)
            })
            .map(|(h, _)| *h)
            .collect();
        session_found.sort_unstable();
        found.extend(session_found);
        found.reverse();
        self.session(session)?.find = Some(found);
        Ok(())
    }

    /// C_FindObjects: up to `max` more handles.
    pub(crate) fn find_next(
        &mut self,
        session: CK_SESSION_HANDLE,
        max: usize,
    ) -> Result<Vec<CK_OBJECT_HANDLE>> {
        let found = self
            .session(session)?
            .find
            .as_mut()
            .ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
        let n = max.min(found.len());
        Ok((0..n).filter_map(|_| found.pop()).collect())
    }

    /// C_FindObjectsFinal.
    pub(crate) fn find_final(&mut self, session: CK_SESSION_HANDLE) -> Result<()> {
        self.session(session)?
            .find
            .take()
            .map(|_| ())
            .ok_or(CKR_OPERATION_NOT_INITIALIZED)
    }

    /// Checks the session may use key `h` for `usage` (CKA_SIGN, CKA_VERIFY, …) with `m`, and
    /// returns its attributes and the slot's store.
    fn key_for(
        &mut self,
        session: CK_SESSION_HANDLE,
        h: CK_OBJECT_HANDLE,
        m: &Mechanism,
        usage: CK_ATTRIBUTE_TYPE,
    ) -> Result<(Attributes, Store)> {
        let attrs = self.read(session, h).map_err(|e| {
            if e == CKR_OBJECT_HANDLE_INVALID {
                CKR_KEY_HANDLE_INVALID
            } else {
                e
            }
        })?;
        if get_ulong(&attrs, CKA_KEY_TYPE)? != Some(m.key_type) {
            return Err(CKR_KEY_TYPE_INCONSISTENT);
        }
        if !flag(&attrs, usage, false) {
            return Err(CKR_KEY_FUNCTION_NOT_PERMITTED);
        }
        let (_, store) = self.session_store(session)?;
        Ok((attrs, store))
    }

    /// C_SignInit / C_VerifyInit.
    pub(crate) fn operation_init(
        &mut self,
        session: CK_SESSION_HANDLE,
        m: &'static Mechanism,
        params: SignParams,
        h: CK_OBJECT_HANDLE,
        verify: bool,
    ) -> Result<()> {
        let s = self.session(session)?;
        let busy = if verify {
            s.verify.is_some()
        } else {
            s.sign.is_some()
        };
        if busy {
            return Err(CKR_OPERATION_ACTIVE);
        }
        let op = m.sign.ok_or(CKR_MECHANISM_INVALID)?;
        let usage = if verify { CKA_VERIFY } else { CKA_SIGN };
        let (attrs, store) = self.key_for(session, h, m, usage)?;
        let class = get_ulong(&attrs, CKA_CLASS)?;
        let key = match (class, verify) {
            (Some(CKO_PRIVATE_KEY), false) => self.private_op_key(&attrs, &store, session)?,
            (Some(CKO_PUBLIC_KEY), true) => public_op_key(&attrs)?,
            _ => return Err(CKR_KEY_TYPE_INCONSISTENT),
        };
        // Pure ML-DSA starts buffered (C_Sign signs the message in one call); the first
        // C_SignUpdate turns it into μ's hash, so a long message streams (see `update`).
        let acc = match (op, &key) {
            (SignOp::HashThen(hash) | SignOp::EcdsaHash(hash), _) => Acc::Hash(hash.hasher()),
            _ => Acc::Buffer(Zeroizing::new(Vec::new())),
        };
        if op == SignOp::Digest && params.hash.is_none() {
            return Err(CKR_MECHANISM_PARAM_INVALID);
        }
        let operation = Operation {
            mech: m,
            key,
            params,
            acc,
            multi_part: false,
        };
        let s = self.session(session)?;
        if verify {
            s.verify = Some(operation);
        } else {
            s.sign = Some(operation);
        }
        Ok(())
    }

    /// The size of the signature the session's operation will make, in bytes.
    pub(crate) fn signature_len(&mut self, session: CK_SESSION_HANDLE) -> Result<usize> {
        let op = self
            .session(session)?
            .sign
            .as_ref()
            .ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
        Ok(match &op.key {
            OpKey::Sign(k) => {
                let alg = k.algorithm();
                match alg.family {
                    Family::Ecdsa => 2 * alg.signing_key_size,
                    _ => alg.signature_size,
                }
            }
            OpKey::HbsSign(_, len, ..) => *len,
            _ => return Err(CKR_OPERATION_NOT_INITIALIZED),
        })
    }

    /// Ends the session's sign or verify operation, if one is active: a C_Sign, C_SignUpdate,
    /// C_Verify… that fails ends it (PKCS#11 3.2 §5.13, §5.15), CKR_BUFFER_TOO_SMALL aside.
    pub(crate) fn end_operation(&mut self, session: CK_SESSION_HANDLE, verify: bool) {
        if let Ok(s) = self.session(session) {
            if verify {
                s.verify = None;
            } else {
                s.sign = None;
            }
        }
    }

    /// Feeds data to the session's sign or verify operation (C_SignUpdate / C_VerifyUpdate).
    /// A message the mechanism must see whole (SLH-DSA, Falcon, LMS/HSS, XMSS: the message is
    /// hashed twice or after a randomizer) is kept in memory up to [`MAX_BUFFERED`] bytes.
    /// An error ends the operation.
    pub(crate) fn update(
        &mut self,
        session: CK_SESSION_HANDLE,
        verify: bool,
        data: &[u8],
    ) -> Result<()> {
        let s = self.session(session)?;
        let slot = if verify { &mut s.verify } else { &mut s.sign };
        let result = Self::feed(slot, data);
        if result.is_err() {
            *slot = None;
        }
        result
    }

    fn feed(slot: &mut Option<Operation>, data: &[u8]) -> Result<()> {
        let op = slot.as_mut().ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
        op.multi_part = true;
        if let Acc::Buffer(buffered) = &op.acc
            && op.mech.sign == Some(SignOp::Message)
        {
            // FIPS 204 Algorithm 7 line 6 over the stream: μ = H(tr ‖ M′), M′ as it arrives.
            let mu = match &op.key {
                OpKey::Sign(k) if k.algorithm().family == Family::MlDsa => {
                    Some(k.verifying_key().mu_hasher(&op.params.context))
                }
                OpKey::Verify(k) if k.algorithm().family == Family::MlDsa => {
                    Some(k.mu_hasher(&op.params.context))
                }
                _ => None,
            };
            if let Some(mu) = mu {
                let mut mu = mu.map_err(core_rv)?;
                mu.update(buffered);
                op.acc = Acc::Mu(mu);
            }
        }
        if matches!(
            op.mech.sign,
            Some(SignOp::Digest | SignOp::Mu | SignOp::EcdsaDigest)
        ) {
            // A digest or μ is one value, not a stream (PKCS#11 3.2 §6.67.6).
            return Err(CKR_FUNCTION_NOT_SUPPORTED);
        }
        if let Acc::Buffer(b) = &op.acc
            && b.len().saturating_add(data.len()) > MAX_BUFFERED
        {
            return Err(CKR_DATA_LEN_RANGE);
        }
        op.acc.update(data);
        Ok(())
    }

    /// Takes the session's operation out (it ends here, whatever the outcome), for
    /// [`finish_sign`] / [`finish_verify`] outside the lock.
    pub(crate) fn take_operation(
        &mut self,
        session: CK_SESSION_HANDLE,
        verify: bool,
        single_part: Option<Vec<u8>>,
    ) -> Result<Operation> {
        let s = self.session(session)?;
        let slot = if verify { &mut s.verify } else { &mut s.sign };
        let mut op = slot.take().ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
        if let Some(data) = single_part {
            if op.multi_part {
                return Err(CKR_OPERATION_ACTIVE);
            }
            match &mut op.acc {
                // The whole message in one call: kept as given, not copied (a 10 MiB message
                // is one buffer from the C interface or the socket to the signer).
                Acc::Buffer(b) if b.is_empty() => *b = Zeroizing::new(data),
                acc => acc.update(&data),
            }
        }
        Ok(op)
    }

    /// C_GenerateKeyPair: (public, private) handles.
    pub(crate) fn generate_key_pair(
        &mut self,
        session: CK_SESSION_HANDLE,
        m: &'static Mechanism,
        public: Attributes,
        private: Attributes,
    ) -> Result<(CK_OBJECT_HANDLE, CK_OBJECT_HANDLE)> {
        if m.flags & CKF_GENERATE_KEY_PAIR == 0 {
            return Err(CKR_MECHANISM_INVALID);
        }
        if public.keys().chain(private.keys()).any(|t| internal(*t)) {
            return Err(CKR_ATTRIBUTE_TYPE_INVALID);
        }
        let (_, store) = self.session_store(session)?;
        if self.user_key(session).is_none() {
            return Err(CKR_USER_NOT_LOGGED_IN);
        }
        let stateful = matches!(m.key_type, CKK_HSS | CKK_XMSS | CKK_XMSSMT);
        // A stateful key's state file and ledger record, removed again when its objects
        // cannot be stored: a key no object names must not be left to sign.
        let (public_attrs, private_attrs, new_key) = if stateful {
            if !self.session(session)?.rw {
                return Err(CKR_SESSION_READ_ONLY);
            }
            let data_key = self
                .user_key(session)
                .ok_or(CKR_USER_NOT_LOGGED_IN)?
                .clone();
            let (a, b, key) = generate_stateful(m, &public, &private, &store, &data_key)?;
            (a, b, Some(key))
        } else {
            let (a, b) = generate(m, &public, &private)?;
            (a, b, None)
        };
        let discard = |key: Option<StatefulKey>| {
            if let Some(key) = key {
                let _ = key.discard();
            }
        };
        let (mut public_attrs, mut private_attrs) =
            (merge(public_attrs, &public), merge(private_attrs, &private));
        if stateful {
            // The state file outlives the process: a stateful key is always a token object,
            // whatever the template says.
            public_attrs.insert(CKA_TOKEN, boolean(true));
            private_attrs.insert(CKA_TOKEN, boolean(true));
        }
        let pub_h = match self.insert(session, public_attrs) {
            Ok(h) => h,
            Err(e) => {
                discard(new_key);
                return Err(e);
            }
        };
        let priv_h = match self.insert(session, private_attrs) {
            Ok(h) => h,
            Err(e) => {
                let _ = self.destroy_object(session, pub_h);
                discard(new_key);
                return Err(e);
            }
        };
        Ok((pub_h, priv_h))
    }

    /// The key of an encapsulation or decapsulation, checked for `usage`.
    pub(crate) fn kem_key(
        &mut self,
        session: CK_SESSION_HANDLE,
        h: CK_OBJECT_HANDLE,
        usage: CK_ATTRIBUTE_TYPE,
    ) -> Result<Attributes> {
        let m = mech::find(CKM_ML_KEM).ok_or(CKR_MECHANISM_INVALID)?;
        Ok(self.key_for(session, h, m, usage)?.0)
    }

    /// Creates the shared-secret object of C_EncapsulateKey / C_DecapsulateKey:
    /// CKO_SECRET_KEY, CKK_GENERIC_SECRET, CKA_VALUE = the 32-byte shared secret.
    pub(crate) fn shared_secret_object(
        &mut self,
        session: CK_SESSION_HANDLE,
        template: Attributes,
        secret: &[u8],
    ) -> Result<CK_OBJECT_HANDLE> {
        if template.keys().any(|t| internal(*t)) {
            return Err(CKR_ATTRIBUTE_TYPE_INVALID);
        }
        let mut attrs: Attributes = [
            (CKA_CLASS, ulong(CKO_SECRET_KEY)),
            (CKA_KEY_TYPE, ulong(CKK_GENERIC_SECRET)),
            (CKA_VALUE_LEN, ulong(secret.len() as CK_ULONG)),
            (CKA_TOKEN, boolean(false)),
            (CKA_PRIVATE, boolean(true)),
            (CKA_SENSITIVE, boolean(false)),
            (CKA_EXTRACTABLE, boolean(true)),
            (CKA_LOCAL, boolean(false)),
            (CKA_DERIVE, boolean(true)),
        ]
        .into();
        for (t, v) in template {
            if !matches!(t, CKA_CLASS | CKA_KEY_TYPE | CKA_VALUE | CKA_VALUE_LEN) {
                attrs.insert(t, v);
            }
        }
        attrs.insert(CKA_VALUE, secret.to_vec());
        self.insert(session, attrs)
    }
}

/// An object's attributes, and its state file if it is a stateful private key.
pub(crate) struct ObjectView {
    attrs: Attributes,
    state_file: Option<PathBuf>,
}

impl ObjectView {
    /// One attribute's value for the caller: `Ok(None)` when the object has none,
    /// `Err(CKR_ATTRIBUTE_SENSITIVE)` for a secret.
    pub(crate) fn get(&self, t: CK_ATTRIBUTE_TYPE) -> Result<Option<Vec<u8>>> {
        if internal(t) {
            return Ok(None);
        }
        let class = get_ulong(&self.attrs, CKA_CLASS)?.unwrap_or(CKO_DATA);
        if t == CKA_HSS_KEYS_REMAINING
            && let Some(path) = &self.state_file
        {
            let status = pqkit_hbs::state::status(path).map_err(state_rv)?;
            return Ok(Some(ulong(status.remaining as CK_ULONG)));
        }
        if secret_attribute(class, t) {
            let hidden = flag(&self.attrs, CKA_SENSITIVE, true)
                || !flag(&self.attrs, CKA_EXTRACTABLE, false);
            if hidden {
                return Err(CKR_ATTRIBUTE_SENSITIVE);
            }
        }
        match self.attrs.get(&t) {
            Some(v) => Ok(Some(v.clone())),
            None => Ok(default_attribute(class, t)),
        }
    }
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

fn matches(attrs: &Attributes, template: &Attributes) -> bool {
    template
        .iter()
        .all(|(t, v)| !internal(*t) && attrs.get(t) == Some(v))
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

/// The common attributes of a key pair made or imported here.
fn key_pair_attrs(
    kind: &mech::KeyKind,
    vk: &[u8],
    spki: Vec<u8>,
    pkcs8: Option<&[u8]>,
    mechanism: CK_MECHANISM_TYPE,
    kem: bool,
) -> (Attributes, Attributes) {
    let mut public: Attributes = [
        (CKA_CLASS, ulong(CKO_PUBLIC_KEY)),
        (CKA_KEY_TYPE, ulong(kind.key_type)),
        (CKA_TOKEN, boolean(false)),
        (CKA_PRIVATE, boolean(false)),
        (CKA_LOCAL, boolean(true)),
        (CKA_KEY_GEN_MECHANISM, ulong(mechanism)),
        (CKA_PUBLIC_KEY_INFO, spki.clone()),
    ]
    .into();
    let mut private: Attributes = [
        (CKA_PUBLIC_KEY_INFO, spki),
        (CKA_CLASS, ulong(CKO_PRIVATE_KEY)),
        (CKA_KEY_TYPE, ulong(kind.key_type)),
        (CKA_TOKEN, boolean(false)),
        (CKA_PRIVATE, boolean(true)),
        (CKA_SENSITIVE, boolean(true)),
        (CKA_EXTRACTABLE, boolean(false)),
        (CKA_ALWAYS_SENSITIVE, boolean(true)),
        (CKA_NEVER_EXTRACTABLE, boolean(true)),
        (CKA_LOCAL, boolean(true)),
        (CKA_KEY_GEN_MECHANISM, ulong(mechanism)),
    ]
    .into();
    if kem {
        public.insert(CKA_ENCAPSULATE, boolean(true));
        private.insert(CKA_DECAPSULATE, boolean(true));
    } else {
        public.insert(CKA_VERIFY, boolean(true));
        private.insert(CKA_SIGN, boolean(true));
    }
    match mech::ec_params_of(kind.name) {
        Some(params) => {
            // CKA_EC_POINT: the DER OCTET STRING of the point (PKCS#11 3.2 §6.3.3, §6.5.3).
            let point = der::asn1::OctetString::new(vk.to_vec())
                .ok()
                .and_then(|o| der::Encode::to_der(&o).ok())
                .unwrap_or_default();
            for a in [&mut public, &mut private] {
                a.insert(CKA_EC_PARAMS, params.to_vec());
            }
            public.insert(CKA_EC_POINT, point);
        }
        None => {
            for a in [&mut public, &mut private] {
                a.insert(CKA_PARAMETER_SET, ulong(kind.parameter_set));
            }
            public.insert(CKA_VALUE, vk.to_vec());
        }
    }
    if let Some(der) = pkcs8 {
        private.insert(mech::CKA_PQKIT_PKCS8, der.to_vec());
    }
    (public, private)
}

fn template_kind(
    m: &Mechanism,
    public: &Attributes,
    private: &Attributes,
) -> Result<&'static mech::KeyKind> {
    let either =
        |t| -> Result<Option<CK_ULONG>> { Ok(get_ulong(public, t)?.or(get_ulong(private, t)?)) };
    let ec = public
        .get(&CKA_EC_PARAMS)
        .or(private.get(&CKA_EC_PARAMS))
        .map(Vec::as_slice);
    let ec = match (m.key_type, ec) {
        (CKK_EC_EDWARDS, None) => Some(mech::ED25519_PARAMS),
        (_, ec) => ec,
    };
    let set = either(CKA_PARAMETER_SET)?;
    if matches!(m.key_type, CKK_EC | CKK_EC_EDWARDS) {
        mech::kind_for(m.key_type, None, ec).ok_or(CKR_CURVE_NOT_SUPPORTED)
    } else {
        let set = set.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
        mech::kind_for(m.key_type, Some(set), None).ok_or(CKR_ATTRIBUTE_VALUE_INVALID)
    }
}

fn generate(
    m: &'static Mechanism,
    public: &Attributes,
    private: &Attributes,
) -> Result<(Attributes, Attributes)> {
    let kind = template_kind(m, public, private)?;
    if m.key_type == CKK_ML_KEM {
        let alg = catalogue::kem(kind.name).map_err(core_rv)?;
        let dk = alg.generate().map_err(core_rv)?;
        let pkcs8 =
            pqkit_pki::key::decapsulation_key_to_pkcs8(&dk, pqkit_pki::key::KeyFormat::Seed)
                .map_err(|_| CKR_FUNCTION_FAILED)?;
        let ek = dk.encapsulation_key();
        let spki =
            pqkit_pki::key::encapsulation_key_spki_der(ek).map_err(|_| CKR_FUNCTION_FAILED)?;
        return Ok(key_pair_attrs(
            kind,
            ek.as_bytes(),
            spki,
            Some(&pkcs8),
            m.ty,
            true,
        ));
    }
    let alg = catalogue::signature(kind.name).map_err(core_rv)?;
    let key = alg.generate().map_err(core_rv)?;
    let pkcs8 = pqkit_pki::key::signing_key_to_pkcs8(&key, pqkit_pki::key::KeyFormat::Seed)
        .map_err(|_| CKR_FUNCTION_FAILED)?;
    let vk = key.verifying_key();
    let spki = pqkit_pki::key::spki_der(&vk).map_err(|_| CKR_FUNCTION_FAILED)?;
    Ok(key_pair_attrs(
        kind,
        vk.as_bytes(),
        spki,
        Some(&pkcs8),
        m.ty,
        false,
    ))
}

/// The LMS/LM-OTS types of each HSS level from CKA_HSS_LEVELS with CKA_HSS_LMS_TYPES /
/// CKA_HSS_LMOTS_TYPES (arrays of CK_ULONG) or CKA_HSS_LMS_TYPE / CKA_HSS_LMOTS_TYPE (one type
/// for every level) (PKCS#11 3.2 §6.64.3).
fn hss_levels(t: &Attributes) -> Result<Vec<pqkit_hbs::hss::Level>> {
    let levels = get_ulong(t, CKA_HSS_LEVELS)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
    let levels = usize::try_from(levels)
        .ok()
        .filter(|l| (1..=8).contains(l))
        .ok_or(CKR_ATTRIBUTE_VALUE_INVALID)?;
    let array = |many: CK_ATTRIBUTE_TYPE, one: CK_ATTRIBUTE_TYPE| -> Result<Vec<u32>> {
        let values: Vec<CK_ULONG> = match (t.get(&many), get_ulong(t, one)?) {
            (Some(v), _) => v
                .chunks(8)
                .map(|c| c.try_into().map(CK_ULONG::from_ne_bytes))
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?,
            (None, Some(v)) => vec![v; levels],
            (None, None) => return Err(CKR_TEMPLATE_INCOMPLETE),
        };
        if values.len() != levels {
            return Err(CKR_ATTRIBUTE_VALUE_INVALID);
        }
        values
            .into_iter()
            .map(|v| u32::try_from(v).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID))
            .collect()
    };
    let lms = array(CKA_HSS_LMS_TYPES, CKA_HSS_LMS_TYPE)?;
    let ots = array(CKA_HSS_LMOTS_TYPES, CKA_HSS_LMOTS_TYPE)?;
    lms.iter()
        .zip(&ots)
        .map(|(l, o)| {
            Ok((
                pqkit_hbs::params::lms_by_code(*l).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?,
                pqkit_hbs::params::ots_by_code(*o).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?,
            ))
        })
        .collect()
}

/// The label a stateful key's seal key is derived under: one key per state file.
fn state_seal_label(file: &[u8]) -> Vec<u8> {
    [&b"pqkit-pkcs11 hbs state seal v1 "[..], file].concat()
}

/// Generates an HSS / XMSS / XMSS^MT key whose state file (under the token's `hbs/`) keeps its
/// secrets sealed under a key derived from the token's data key: the file alone cannot sign.
fn generate_stateful(
    m: &'static Mechanism,
    public: &Attributes,
    private: &Attributes,
    store: &Store,
    data_key: &DataKey,
) -> Result<(Attributes, Attributes, StatefulKey)> {
    let mut both = public.clone();
    both.extend(private.iter().map(|(k, v)| (*k, v.clone())));
    let id = store.new_id();
    let file = format!("{id}.state");
    let path = store.hbs_dir().join(&file);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let seal = SealKey::new(data_key.derive(&state_seal_label(file.as_bytes())));
    let new = match m.key_type {
        CKK_HSS => NewKey::hss(&path, &hss_levels(&both)?, threads),
        _ => {
            let oid = get_ulong(&both, CKA_PARAMETER_SET)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
            let oid = u32::try_from(oid).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?;
            let params = pqkit_hbs::xmss::by_oid(oid, m.key_type == CKK_XMSSMT)
                .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?;
            NewKey::xmss(&path, params, threads)
        }
    }
    .map_err(state_rv)?;
    let ledger = store.ledger().map_err(store_rv)?;
    let key = new.sealed(&seal).commit(ledger).map_err(state_rv)?;
    let pk = key.public_key();
    let spki = pk.to_spki_der().map_err(|_| CKR_FUNCTION_FAILED)?;
    let remaining = key.status().remaining;
    let mut public: Attributes = [
        (CKA_CLASS, ulong(CKO_PUBLIC_KEY)),
        (CKA_KEY_TYPE, ulong(m.key_type)),
        (CKA_VALUE, pk.to_bytes()),
        (CKA_PUBLIC_KEY_INFO, spki.clone()),
        (CKA_VERIFY, boolean(true)),
        (CKA_LOCAL, boolean(true)),
        (CKA_KEY_GEN_MECHANISM, ulong(m.ty)),
    ]
    .into();
    let mut private: Attributes = [
        (CKA_CLASS, ulong(CKO_PRIVATE_KEY)),
        (CKA_KEY_TYPE, ulong(m.key_type)),
        (CKA_PRIVATE, boolean(true)),
        (CKA_SENSITIVE, boolean(true)),
        (CKA_EXTRACTABLE, boolean(false)),
        (CKA_ALWAYS_SENSITIVE, boolean(true)),
        (CKA_NEVER_EXTRACTABLE, boolean(true)),
        (CKA_SIGN, boolean(true)),
        (CKA_LOCAL, boolean(true)),
        (CKA_KEY_GEN_MECHANISM, ulong(m.ty)),
        (CKA_HSS_KEYS_REMAINING, ulong(remaining as CK_ULONG)),
        (mech::CKA_PQKIT_STATE_FILE, file.into_bytes()),
        (CKA_PUBLIC_KEY_INFO, spki.clone()),
    ]
    .into();
    if m.key_type != CKK_HSS {
        for a in [&mut public, &mut private] {
            a.insert(
                CKA_PARAMETER_SET,
                get_ulong(&both, CKA_PARAMETER_SET)?
                    .map(ulong)
                    .unwrap_or_default(),
            );
        }
    }
    Ok((public, private, key))
}

/// A private key from C_CreateObject: CKA_PQKIT_PKCS8, or CKA_KEY_TYPE + CKA_PARAMETER_SET with
/// CKA_SEED (ML-DSA ξ, ML-KEM d‖z) or CKA_VALUE (the expanded key).
fn private_key_from_template(t: &Attributes) -> Result<Attributes> {
    let pkcs8 = match t.get(&mech::CKA_PQKIT_PKCS8) {
        Some(der) => Zeroizing::new(der.clone()),
        None => {
            let key_type = get_ulong(t, CKA_KEY_TYPE)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
            let kind = mech::kind_for(
                key_type,
                get_ulong(t, CKA_PARAMETER_SET)?,
                t.get(&CKA_EC_PARAMS).map(Vec::as_slice),
            )
            .ok_or(CKR_ATTRIBUTE_VALUE_INVALID)?;
            let bad = |_| CKR_ATTRIBUTE_VALUE_INVALID;
            // The key is kept in the form it was given: its seed, or its expanded encoding.
            use pqkit_pki::key::KeyFormat;
            let (material, format) = match (t.get(&CKA_SEED), t.get(&CKA_VALUE)) {
                (Some(seed), _) => (seed, KeyFormat::Seed),
                (None, Some(value)) => (value, KeyFormat::Expanded),
                _ => return Err(CKR_TEMPLATE_INCOMPLETE),
            };
            let from_seed = format == KeyFormat::Seed;
            let der = if key_type == CKK_ML_KEM {
                let alg = catalogue::kem(kind.name).map_err(core_rv)?;
                let dk = if from_seed {
                    alg.generate_from_seed(material)
                } else {
                    alg.decapsulation_key_from_expanded(material)
                }
                .map_err(bad)?;
                pqkit_pki::key::decapsulation_key_to_pkcs8(&dk, format)
            } else {
                let alg = catalogue::signature(kind.name).map_err(core_rv)?;
                let key = if from_seed {
                    alg.signing_key_from_seed(material)
                } else {
                    alg.signing_key_from_expanded(material)
                }
                .map_err(bad)?;
                pqkit_pki::key::signing_key_to_pkcs8(&key, format)
            };
            der.map_err(|_| CKR_FUNCTION_FAILED)?
        }
    };
    let (private, _) = imported_pair(&pkcs8)?;
    let mut template = t.clone();
    template.remove(&mech::CKA_PQKIT_PKCS8);
    let mut attrs = merge(private, &template);
    // Imported: never "local", and only as sensitive as it always was from here on.
    attrs.insert(CKA_LOCAL, boolean(false));
    attrs.remove(&CKA_KEY_GEN_MECHANISM);
    Ok(attrs)
}

/// The private and public attributes of an imported PKCS#8 key.
fn imported_pair(pkcs8: &[u8]) -> Result<(Attributes, Attributes)> {
    let bad = |_| CKR_ATTRIBUTE_VALUE_INVALID;
    match pqkit_pki::key::pkcs8_algorithm(pkcs8).map_err(bad)? {
        pqkit_pki::key::Algorithm::Signature(alg) => {
            let kind = mech::kind_of(alg.name).ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
            let key = pqkit_pki::key::signing_key_from_pkcs8(pkcs8).map_err(bad)?;
            let vk = key.verifying_key();
            let spki = pqkit_pki::key::spki_der(&vk).map_err(|_| CKR_FUNCTION_FAILED)?;
            let (public, private) = key_pair_attrs(
                kind,
                vk.as_bytes(),
                spki,
                Some(pkcs8),
                CK_UNAVAILABLE_INFORMATION,
                false,
            );
            Ok((private, public))
        }
        pqkit_pki::key::Algorithm::Kem(alg) => {
            let kind = mech::kind_of(alg.name).ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
            let dk = pqkit_pki::key::decapsulation_key_from_pkcs8(pkcs8).map_err(bad)?;
            let ek = dk.encapsulation_key();
            let spki =
                pqkit_pki::key::encapsulation_key_spki_der(ek).map_err(|_| CKR_FUNCTION_FAILED)?;
            let (public, private) = key_pair_attrs(
                kind,
                ek.as_bytes(),
                spki,
                Some(pkcs8),
                CK_UNAVAILABLE_INFORMATION,
                true,
            );
            Ok((private, public))
        }
    }
}

/// A public key from C_CreateObject: CKA_KEY_TYPE with CKA_PARAMETER_SET and CKA_VALUE, or
/// CKA_EC_PARAMS and CKA_EC_POINT.
fn public_key_from_template(t: &Attributes) -> Result<Attributes> {
    let mut attrs = t.clone();
    // The key must decode (and, for ML-KEM, pass FIPS 203 §7.2's check) before it is stored.
    let usage = if get_ulong(t, CKA_KEY_TYPE)? == Some(CKK_ML_KEM) {
        if !t.contains_key(&CKA_VALUE) {
            return Err(CKR_TEMPLATE_INCOMPLETE);
        }
        encapsulation_key(t).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?;
        CKA_ENCAPSULATE
    } else {
        public_op_key(t)?;
        CKA_VERIFY
    };
    attrs.entry(CKA_PRIVATE).or_insert_with(|| boolean(false));
    attrs.entry(usage).or_insert_with(|| boolean(true));
    Ok(attrs)
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

/// The decapsulation key of a private-key object.
pub(crate) fn decapsulation_key(attrs: &Attributes) -> Result<pqkit_core::kem::DecapsulationKey> {
    let der = attrs
        .get(&mech::CKA_PQKIT_PKCS8)
        .ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
    pqkit_pki::key::decapsulation_key_from_pkcs8(der).map_err(|_| CKR_KEY_TYPE_INCONSISTENT)
}

/// The encapsulation key of a public-key object.
pub(crate) fn encapsulation_key(attrs: &Attributes) -> Result<pqkit_core::kem::EncapsulationKey> {
    let kind = mech::kind_for(CKK_ML_KEM, get_ulong(attrs, CKA_PARAMETER_SET)?, None)
        .ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
    let alg = catalogue::kem(kind.name).map_err(core_rv)?;
    let value = attrs.get(&CKA_VALUE).ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
    alg.encapsulation_key(value)
        .map_err(|_| CKR_KEY_TYPE_INCONSISTENT)
}

impl Acc {
    fn update(&mut self, data: &[u8]) {
        match self {
            Self::Buffer(b) => b.extend_from_slice(data),
            Self::Hash(h) => h.update(data),
            Self::Mu(h) => h.update(data),
        }
    }
}

/// ECDSA's DER signature (RFC 3279 §2.2.3) as PKCS#11's r ‖ s, each `n` bytes.
fn ecdsa_der_to_raw(der_sig: &[u8], n: usize) -> Result<Vec<u8>> {
    let mut reader = der::SliceReader::new(der_sig).map_err(|_| CKR_FUNCTION_FAILED)?;
    let (r, s) = der::Reader::sequence(&mut reader, |seq| {
        let r: der::asn1::UintRef<'_> = der::Decode::decode(seq)?;
        let s: der::asn1::UintRef<'_> = der::Decode::decode(seq)?;
        Ok((r.as_bytes().to_vec(), s.as_bytes().to_vec()))
    })
    .map_err(|_| CKR_FUNCTION_FAILED)?;
    let mut out = vec![0u8; 2 * n];
    if r.len() > n || s.len() > n {
        return Err(CKR_FUNCTION_FAILED);
    }
    out[n - r.len()..n].copy_from_slice(&r);
    out[2 * n - s.len()..].copy_from_slice(&s);
    Ok(out)
}

/// PKCS#11's ECDSA r ‖ s as DER (RFC 3279 §2.2.3).
pub fn ecdsa_raw_to_der(raw: &[u8]) -> Option<Vec<u8>> {
    if raw.is_empty() || !raw.len().is_multiple_of(2) {
        return None;
    }
    let (r, s) = raw.split_at(raw.len() / 2);
    let r = der::asn1::UintRef::new(r).ok()?;
    let s = der::asn1::UintRef::new(s).ok()?;
    let body = [der::Encode::to_der(&r).ok()?, der::Encode::to_der(&s).ok()?].concat();
    let mut out = vec![0x30];
    let len = der::Length::try_from(body.len()).ok()?;
    out.extend(der::Encode::to_der(&len).ok()?);
    out.extend(body);
    Some(out)
}

/// Makes the signature of an operation taken out of its session.
pub(crate) fn finish_sign(op: Operation) -> Result<Vec<u8>> {
    let Operation {
        mech,
        key,
        params,
        acc,
        ..
    } = op;
    let rnd = params.hedge.randomness();
    let op = mech.sign.ok_or(CKR_MECHANISM_INVALID)?;
    match key {
        OpKey::HbsSign(path, _, seal, store) => {
            let Acc::Buffer(message) = acc else {
                return Err(CKR_GENERAL_ERROR);
            };
            sign_stateful(&path, &message, &SealKey::new(*seal), &store)
        }
        OpKey::Sign(key) => {
            let alg = key.algorithm();
            let sig = match (op, acc) {
                (SignOp::Message, Acc::Mu(h)) => key.sign_mu(&h.finalize(), rnd),
                (SignOp::Message, Acc::Buffer(m)) => key.sign_with(&m, &params.context, rnd),
                (SignOp::Digest, Acc::Buffer(d)) => {
                    let hash = params.hash.ok_or(CKR_MECHANISM_PARAM_INVALID)?;
                    key.sign_prehashed(hash, &d, &params.context, rnd)
                }
                (SignOp::HashThen(hash), Acc::Hash(h)) => {
                    key.sign_prehashed(hash, &h.finalize(), &params.context, rnd)
                }
                (SignOp::Mu, Acc::Buffer(mu)) => {
                    let mu: &[u8; 64] = mu.as_slice().try_into().map_err(|_| CKR_DATA_LEN_RANGE)?;
                    key.sign_mu(mu, rnd)
                }
                (SignOp::EcdsaDigest, Acc::Buffer(d)) => {
                    let hash = mech::ecdsa_hash(alg).ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
                    if d.len() != hash.digest_size() {
                        return Err(CKR_DATA_LEN_RANGE);
                    }
                    key.sign_prehashed(hash, &d, &[], rnd)
                }
                (SignOp::EcdsaHash(hash), Acc::Hash(h)) => {
                    if Some(hash) != mech::ecdsa_hash(alg) {
                        // pqkit's ECDSA signs with the curve's own hash (P-256/SHA-256, …).
                        return Err(CKR_KEY_TYPE_INCONSISTENT);
                    }
                    key.sign_prehashed(hash, &h.finalize(), &[], rnd)
                }
                _ => return Err(CKR_MECHANISM_INVALID),
            }
            .map_err(core_rv)?;
            if alg.family == Family::Ecdsa {
                ecdsa_der_to_raw(&sig, alg.signing_key_size)
            } else {
                Ok(sig)
            }
        }
        _ => Err(CKR_KEY_TYPE_INCONSISTENT),
    }
}

/// Verifies a signature of an operation taken out of its session.
pub(crate) fn finish_verify(op: Operation, signature: &[u8]) -> Result<()> {
    let Operation {
        mech,
        key,
        params,
        acc,
        ..
    } = op;
    let op = mech.sign.ok_or(CKR_MECHANISM_INVALID)?;
    let bad = |_| CKR_SIGNATURE_INVALID;
    match key {
        OpKey::HbsVerify(pk) => {
            let Acc::Buffer(message) = acc else {
                return Err(CKR_GENERAL_ERROR);
            };
            pk.verify(&message, signature)
                .map_err(|_| CKR_SIGNATURE_INVALID)
        }
        OpKey::Verify(vk) => {
            let alg = vk.algorithm();
            let ecdsa_der;
            let signature = if alg.family == Family::Ecdsa {
                if signature.len() != 2 * alg.signing_key_size {
                    return Err(CKR_SIGNATURE_LEN_RANGE);
                }
                ecdsa_der = ecdsa_raw_to_der(signature).ok_or(CKR_SIGNATURE_INVALID)?;
                &ecdsa_der[..]
            } else {
                signature
            };
            match (op, acc) {
                (SignOp::Message, Acc::Mu(h)) => {
                    vk.verify_mu(&h.finalize(), signature).map_err(bad)
                }
                (SignOp::Message, Acc::Buffer(m)) => {
                    vk.verify(&m, &params.context, signature).map_err(bad)
                }
                (SignOp::Digest, Acc::Buffer(d)) => {
                    let hash = params.hash.ok_or(CKR_MECHANISM_PARAM_INVALID)?;
                    vk.verify_prehashed(hash, &d, &params.context, signature)
                        .map_err(bad)
                }
                (SignOp::HashThen(hash), Acc::Hash(h)) => vk
                    .verify_prehashed(hash, &h.finalize(), &params.context, signature)
                    .map_err(bad),
                (SignOp::Mu, Acc::Buffer(mu)) => {
                    let mu: &[u8; 64] = mu.as_slice().try_into().map_err(|_| CKR_DATA_LEN_RANGE)?;
                    vk.verify_mu(mu, signature).map_err(bad)
                }
                (SignOp::EcdsaDigest, Acc::Buffer(d)) => {
                    let hash = mech::ecdsa_hash(alg).ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
                    vk.verify_prehashed(hash, &d, &[], signature).map_err(bad)
                }
                (SignOp::EcdsaHash(hash), Acc::Hash(h)) => vk
                    .verify_prehashed(hash, &h.finalize(), &[], signature)
                    .map_err(bad),
                _ => Err(CKR_MECHANISM_INVALID),
            }
        }
        _ => Err(CKR_KEY_TYPE_INCONSISTENT),
    }
}

/// Signs with a stateful key: opens its state file (waiting while another signer, in this
/// process or another, holds it), reserves the next index on disk, signs, and releases it.
fn sign_stateful(
    path: &std::path::Path,
    message: &[u8],
    seal: &SealKey,
    store: &Store,
) -> Result<Vec<u8>> {
    static IN_PROCESS: Mutex<()> = Mutex::new(());
    let _one = IN_PROCESS.lock().unwrap_or_else(|p| p.into_inner());
    let deadline = Instant::now() + STATE_LOCK_PATIENCE;
    let mut key = loop {
        let ledger = store.ledger().map_err(store_rv)?;
        match StatefulKey::open_sealed(path, ledger, 1, seal) {
            Ok(k) => break k,
            Err(StateError::Locked(..)) if Instant::now() < deadline => continue,
            Err(e) => return Err(state_rv(e)),
        }
    };
    key.sign(message).map_err(state_rv)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ecdsa_signatures_convert_both_ways() {
        let alg = catalogue::signature("ECDSA-P256").unwrap();
        let key = alg.generate().unwrap();
        for _ in 0..32 {
            let sig = key.sign(b"m", &[]).unwrap();
            let raw = ecdsa_der_to_raw(&sig, 32).unwrap();
            assert_eq!(raw.len(), 64);
            assert_eq!(ecdsa_raw_to_der(&raw).unwrap(), sig);
        }
    }
}
