//! pqkit as a PKCS#11 client: a private key named by an RFC 7512 `pkcs11:` URI, in any
//! token (pqkit's own, SoftHSM, a hardware module), used through the `cryptoki` crate.
//!
//! ```text
//! pkcs11:token=ca;object=root;type=private?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/run/pin
//! ```
//!
//! Path attributes used: `token`, `manufacturer`, `serial`, `model`, `slot-id`, `object`
//! (CKA_LABEL), `id` (CKA_ID, percent-encoded bytes), `type` (must be `private` if given).
//! Query attributes: `module-path`, `pin-value`, `pin-source` (`file:PATH`, or pqkit's
//! `env:NAME`). The key is found as a private-key object; its public key comes from the
//! private key's CKA_PUBLIC_KEY_INFO, or from the public-key object with the same CKA_ID (or
//! label): CKA_PUBLIC_KEY_INFO, else CKA_EC_PARAMS + CKA_EC_POINT or CKA_PARAMETER_SET +
//! CKA_VALUE.
//!
//! Signing maps each pqkit operation to a mechanism: ML-DSA → CKM_ML_DSA (context and hedging
//! in CK_SIGN_ADDITIONAL_CONTEXT), HashML-DSA → CKM_HASH_ML_DSA, external μ → pqkit's vendor
//! mechanism, SLH-DSA → CKM_SLH_DSA / CKM_HASH_SLH_DSA, Falcon → pqkit's vendor mechanism,
//! ECDSA → CKM_ECDSA over a digest computed here (the signature converted from r ‖ s to DER,
//! so any token's plain CKM_ECDSA serves), Ed25519 → CKM_EDDSA; HSS / XMSS / XMSS^MT →
//! CKM_HSS / CKM_XMSS / CKM_XMSSMT (the token keeps the state).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cryptoki::context::{CInitializeArgs, CInitializeFlags, Pkcs11};
use cryptoki::mechanism::dsa::{HashSignAdditionalContext, HedgeType, SignAdditionalContext};
use cryptoki::mechanism::vendor_defined::VendorDefinedMechanism;
use cryptoki::mechanism::{Mechanism, MechanismType};
use cryptoki::object::{Attribute, AttributeType, ObjectClass, ObjectHandle};
use cryptoki::session::{Session, UserType};
use cryptoki::slot::Slot;
use cryptoki::types::AuthPin;
use pqkit_core::prehash::PreHash;
use pqkit_core::sig::{Family, SignatureAlgorithm, SigningKey, SigningKeyImpl, SigningRandomness};
use zeroize::Zeroizing;

use crate::mech;

pub mod objects;
pub mod raw;

/// Errors of the client.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A `pkcs11:` URI that does not parse.
    #[error("bad pkcs11: URI: {0}")]
    Uri(String),
    /// No module was named (`module-path`, `--pkcs11-module` or `PQKIT_PKCS11_MODULE`).
    #[error(
        "no PKCS#11 module: give module-path in the URI, --pkcs11-module or PQKIT_PKCS11_MODULE"
    )]
    NoModule,
    /// The module failed.
    #[error("PKCS#11: {0}")]
    Pkcs11(#[from] cryptoki::error::Error),
    /// A call through the raw function list failed with this CK_RV.
    #[error("the token returned {}", rv_name(*.0))]
    Rv(cryptoki_sys::CK_RV),
    /// No token, or no key, matched the URI; or several did.
    #[error("{0}")]
    NotFound(String),
    /// The key's public part could not be read or is not a key pqkit knows.
    #[error("the token key's public key: {0}")]
    PublicKey(String),
    /// Reading the PIN failed.
    #[error("PIN: {0}")]
    Pin(String),
    /// An algorithm or object the token does not generate or hold.
    #[error("{0}")]
    Unsupported(String),
    /// A key or certificate to import that does not decode.
    #[error("{0}")]
    Malformed(String),
    /// pqkit's module forwards to `pqkit token serve` and nothing answers on its socket.
    #[error(
        "{}: no `pqkit token serve` answers on this socket (start it, or unset \
         PQKIT_PKCS11_REMOTE / the configuration's \"remote\")",
        .0.display()
    )]
    ServerUnreachable(PathBuf),
}

/// A parsed RFC 7512 URI (the attributes pqkit uses).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Uri {
    /// `token`: the token label.
    pub token: Option<String>,
    /// `manufacturer`.
    pub manufacturer: Option<String>,
    /// `serial`.
    pub serial: Option<String>,
    /// `model`.
    pub model: Option<String>,
    /// `slot-id`.
    pub slot_id: Option<u64>,
    /// `object`: CKA_LABEL.
    pub object: Option<String>,
    /// `id`: CKA_ID bytes.
    pub id: Option<Vec<u8>>,
    /// `module-path`.
    pub module_path: Option<PathBuf>,
    /// `pin-value` (RFC 7512 §2.3).
    pub pin_value: Option<Zeroizing<String>>,
    /// `pin-source`.
    pub pin_source: Option<String>,
}

/// `uri` with its `pin-value` hidden, for messages.
pub fn redacted(uri: &str) -> String {
    let Some((head, query)) = uri.split_once('?') else {
        return uri.to_owned();
    };
    let query: Vec<String> = query
        .split('&')
        .map(|q| {
            if q.starts_with("pin-value=") {
                "pin-value=(hidden)".to_owned()
            } else {
                q.to_owned()
            }
        })
        .collect();
    format!("{head}?{}", query.join("&"))
}

/// Whether `s` is a `pkcs11:` URI rather than a file name.
pub fn is_uri(s: &str) -> bool {
    s.starts_with("pkcs11:")
}

/// `value` as a path attribute of a `pkcs11:` URI (RFC 7512 §2.3 `pk11-pchar`): unreserved
/// characters and `:[]@!$'()*+,=` as they are, every other byte percent-encoded (so a `;`,
/// `/`, `?`, `%` or space in a label cannot end the attribute or change its meaning).
pub fn percent_encode(value: &[u8]) -> String {
    use std::fmt::Write;
    value
        .iter()
        .fold(String::with_capacity(value.len()), |mut out, &b| {
            if b.is_ascii_alphanumeric() || b"-._~:[]@!$'()*+,=".contains(&b) {
                out.push(char::from(b));
            } else {
                let _ = write!(out, "%{b:02X}");
            }
            out
        })
}

fn percent_decode(s: &str) -> Result<Vec<u8>, ClientError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| ClientError::Uri(format!("bad percent-escape in {s:?}")))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

impl Uri {
    /// Parses `pkcs11:path?query` (RFC 7512 §2.3).
    ///
    /// # Errors
    /// [`ClientError::Uri`] for another scheme, a bad escape, an unknown `type` or a repeated
    /// attribute.
    pub fn parse(s: &str) -> Result<Self, ClientError> {
        let rest = s
            .strip_prefix("pkcs11:")
            .ok_or_else(|| ClientError::Uri(format!("{s:?} does not start with pkcs11:")))?;
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        let mut uri = Self::default();
        let text = |v: &str| -> Result<String, ClientError> {
            String::from_utf8(percent_decode(v)?)
                .map_err(|_| ClientError::Uri(format!("{v:?} is not UTF-8")))
        };
        for part in path.split(';').filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| ClientError::Uri(format!("{part:?} has no '='")))?;
            // Each attribute at most once (RFC 7512 §2.3).
            fn once<T>(slot: &mut Option<T>, value: T, name: &str) -> Result<(), ClientError> {
                match slot.replace(value) {
                    None => Ok(()),
                    Some(_) => Err(ClientError::Uri(format!("{name} given twice"))),
                }
            }
            match k {
                "token" => once(&mut uri.token, text(v)?, k)?,
                "manufacturer" => once(&mut uri.manufacturer, text(v)?, k)?,
                "serial" => once(&mut uri.serial, text(v)?, k)?,
                "model" => once(&mut uri.model, text(v)?, k)?,
                "object" => once(&mut uri.object, text(v)?, k)?,
                "id" => once(&mut uri.id, percent_decode(v)?, k)?,
                "slot-id" => {
                    let id = text(v)?
                        .parse()
                        .map_err(|_| ClientError::Uri(format!("slot-id {v:?}")))?;
                    once(&mut uri.slot_id, id, k)?;
                }
                "type" if v == "private" => {}
                "type" => {
                    return Err(ClientError::Uri(format!(
                        "type={v}: pqkit signs with type=private objects"
                    )));
                }
                // Other path attributes (library-*, slot-description, …) narrow nothing here.
                _ => {}
            }
        }
        for part in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            match k {
                "module-path" => uri.module_path = Some(PathBuf::from(text(v)?)),
                "pin-value" => uri.pin_value = Some(Zeroizing::new(text(v)?)),
                "pin-source" => uri.pin_source = Some(text(v)?),
                _ => {}
            }
        }
        Ok(uri)
    }
}

/// How to reach a token when the URI does not say: the module and the PIN source.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The module (`--pkcs11-module`); else `PQKIT_PKCS11_MODULE`.
    pub module: Option<PathBuf>,
    /// Where the PIN comes from (`--pin-source`): `file:PATH`, `env:NAME`, or `none` (no
    /// login: public objects only); else `PQKIT_PKCS11_PIN`.
    pub pin_source: Option<String>,
}

/// Reads a PIN from `file:PATH` (first line) or `env:NAME`.
///
/// # Errors
/// [`ClientError::Pin`] for another form, a missing file or variable.
pub fn read_pin_source(source: &str) -> Result<Zeroizing<String>, ClientError> {
    if let Some(path) = source.strip_prefix("file:") {
        let text = Zeroizing::new(
            std::fs::read_to_string(path).map_err(|e| ClientError::Pin(format!("{path}: {e}")))?,
        );
        return Ok(Zeroizing::new(text.lines().next().unwrap_or("").to_owned()));
    }
    if let Some(name) = source.strip_prefix("env:") {
        return std::env::var(name)
            .map(Zeroizing::new)
            .map_err(|_| ClientError::Pin(format!("environment variable {name} is not set")));
    }
    Err(ClientError::Pin(format!(
        "{source:?}: give file:PATH or env:NAME"
    )))
}

/// A private key in a token, with an open, logged-in session.
pub struct TokenKey {
    session: Mutex<Session>,
    key: ObjectHandle,
    key_type: cryptoki_sys::CK_KEY_TYPE,
    /// The public key's SubjectPublicKeyInfo DER.
    spki: Vec<u8>,
    /// The public key's bytes, for pqkit-core (the SPKI's BIT STRING).
    public: Vec<u8>,
    slot: Slot,
    module_path: PathBuf,
    /// The raw function list, for CKM_HSS / CKM_XMSS (loaded at the first use).
    raw: std::sync::OnceLock<raw::RawModule>,
    // Keeps the module loaded while the session lives.
    _module: Pkcs11,
}

impl core::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TokenKey")
            .field("key_type", &self.key_type)
            .finish_non_exhaustive()
    }
}

fn module_path(uri: &Uri, options: &Options) -> Result<PathBuf, ClientError> {
    uri.module_path
        .clone()
        .or_else(|| options.module.clone())
        .or_else(|| std::env::var_os("PQKIT_PKCS11_MODULE").map(PathBuf::from))
        .ok_or(ClientError::NoModule)
}

fn pin(uri: &Uri, options: &Options) -> Result<Option<Zeroizing<String>>, ClientError> {
    if let Some(v) = &uri.pin_value {
        return Ok(Some(v.clone()));
    }
    if let Some(s) = uri.pin_source.as_ref().or(options.pin_source.as_ref()) {
        if s == "none" {
            return Ok(None);
        }
        return read_pin_source(s).map(Some);
    }
    Ok(std::env::var("PQKIT_PKCS11_PIN").ok().map(Zeroizing::new))
}

/// Loads and initialises a module (a module another part of the process already initialised
/// is fine).
///
/// # Errors
/// [`ClientError::Pkcs11`].
pub fn load_module(path: &Path) -> Result<Pkcs11, ClientError> {
    let module = Pkcs11::new(path)?;
    match module.initialize(CInitializeArgs::new(CInitializeFlags::OS_LOCKING_OK)) {
        Ok(())
        | Err(cryptoki::error::Error::Pkcs11(
            cryptoki::error::RvError::CryptokiAlreadyInitialized,
            _,
        )) => {}
        Err(e) => {
            // pqkit's own module in front of `pqkit token serve`: name the socket.
            let pqkit = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().contains("pqkit_pkcs11"));
            let socket = std::env::var_os("PQKIT_PKCS11_REMOTE")
                .map(PathBuf::from)
                .or_else(|| crate::config::Config::load().ok()?.remote);
            if let (true, Some(socket)) = (pqkit, socket)
                && std::os::unix::net::UnixStream::connect(&socket).is_err()
            {
                return Err(ClientError::ServerUnreachable(socket));
            }
            return Err(e.into());
        }
    }
    Ok(module)
}

fn trimmed(s: &str) -> &str {
    s.trim_end_matches([' ', '\0'])
}

/// The slot whose token matches the URI: exactly one.
///
/// # Errors
/// [`ClientError::NotFound`] for none or several.
pub fn find_slot(module: &Pkcs11, uri: &Uri) -> Result<Slot, ClientError> {
    let mut found = Vec::new();
    for slot in module.get_slots_with_token()? {
        if uri.slot_id.is_some_and(|id| id != slot.id()) {
            continue;
        }
        let info = module.get_token_info(slot)?;
        let ok = uri
            .token
            .as_deref()
            .is_none_or(|t| trimmed(info.label()) == t)
            && uri
                .manufacturer
                .as_deref()
                .is_none_or(|t| trimmed(info.manufacturer_id()) == t)
            && uri
                .serial
                .as_deref()
                .is_none_or(|t| trimmed(info.serial_number()) == t)
            && uri
                .model
                .as_deref()
                .is_none_or(|t| trimmed(info.model()) == t);
        if ok {
            found.push(slot);
        }
    }
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(ClientError::NotFound(
            "no token matches the pkcs11: URI".into(),
        )),
        _ => Err(ClientError::NotFound(format!(
            "{} tokens match the pkcs11: URI: add token= or serial=",
            found.len()
        ))),
    }
}

/// Opens a session on the URI's token, logged in as the user when a PIN is known.
///
/// # Errors
/// As [`load_module`], [`find_slot`]; a wrong PIN.
pub fn open_session(uri: &Uri, options: &Options) -> Result<(Pkcs11, Session), ClientError> {
    let module = load_module(&module_path(uri, options)?)?;
    let slot = find_slot(&module, uri)?;
    let session = module
        .open_rw_session(slot)
        .or_else(|_| module.open_ro_session(slot))?;
    if let Some(pin) = pin(uri, options)? {
        match session.login(UserType::User, Some(&AuthPin::from(pin.as_str()))) {
            Ok(())
            | Err(cryptoki::error::Error::Pkcs11(
                cryptoki::error::RvError::UserAlreadyLoggedIn,
                _,
            )) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok((module, session))
}

fn one_object(
    session: &Session,
    template: &[Attribute],
    what: &str,
) -> Result<ObjectHandle, ClientError> {
    let found = session.find_objects(template)?;
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(ClientError::NotFound(format!(
            "no {what} matches the pkcs11: URI (check object= and id=; private keys are visible \
             only after a login: give the PIN with --pin-source or PQKIT_PKCS11_PIN)"
        ))),
        _ => Err(ClientError::NotFound(format!(
            "{} {what}s match the pkcs11: URI: add object= or id=",
            found.len()
        ))),
    }
}

fn selector(uri: &Uri, class: ObjectClass) -> Vec<Attribute> {
    let mut t = vec![Attribute::Class(class)];
    if let Some(id) = &uri.id {
        t.push(Attribute::Id(id.clone()));
    }
    if let Some(label) = &uri.object {
        t.push(Attribute::Label(label.clone().into_bytes()));
    }
    t
}

fn attribute(session: &Session, h: ObjectHandle, t: AttributeType) -> Option<Attribute> {
    session.get_attributes(h, &[t]).ok()?.into_iter().next()
}

/// The SPKI of a public key read from its attributes.
fn spki_of(
    session: &Session,
    h: ObjectHandle,
    key_type: cryptoki_sys::CK_KEY_TYPE,
) -> Result<Vec<u8>, ClientError> {
    if let Some(Attribute::PublicKeyInfo(spki)) =
        attribute(session, h, AttributeType::PublicKeyInfo)
        && !spki.is_empty()
    {
        return Ok(spki);
    }
    let bad = |why: &str| ClientError::PublicKey(why.to_owned());
    let ck = key_type;
    let name = match ck {
        cryptoki_sys::CKK_EC | cryptoki_sys::CKK_EC_EDWARDS => {
            let Some(Attribute::EcParams(params)) = attribute(session, h, AttributeType::EcParams)
            else {
                return Err(bad("no CKA_EC_PARAMS"));
            };
            mech::kind_for(ck, None, Some(&params))
                .ok_or_else(|| bad("a curve pqkit does not offer"))?
                .name
        }
        _ => {
            let Some(Attribute::ParameterSet(set)) =
                attribute(session, h, AttributeType::ParameterSet)
            else {
                return Err(bad("no CKA_PARAMETER_SET"));
            };
            mech::kind_for(ck, Some(cryptoki_sys::CK_ULONG::from(*set)), None)
                .ok_or_else(|| bad("an unknown parameter set"))?
                .name
        }
    };
    let alg = pqkit_core::catalogue::signature(name).map_err(|e| bad(&e.to_string()))?;
    let public = match ck {
        cryptoki_sys::CKK_EC | cryptoki_sys::CKK_EC_EDWARDS => {
            let Some(Attribute::EcPoint(point)) = attribute(session, h, AttributeType::EcPoint)
            else {
                return Err(bad("no CKA_EC_POINT"));
            };
            // DER OCTET STRING (PKCS#11 3.2 §6.3.3); some tokens give the raw point.
            <der::asn1::OctetString as der::Decode>::from_der(&point)
                .map(|o| o.as_bytes().to_vec())
                .unwrap_or(point)
        }
        _ => match attribute(session, h, AttributeType::Value) {
            Some(Attribute::Value(v)) => v,
            _ => return Err(bad("no CKA_VALUE")),
        },
    };
    let vk = alg
        .verifying_key(&public)
        .map_err(|e| bad(&e.to_string()))?;
    pqkit_pki::key::spki_der(&vk).map_err(|e| bad(&e.to_string()))
}

/// The public key's bytes: the SPKI's BIT STRING.
fn spki_key_bytes(spki: &[u8]) -> Result<Vec<u8>, ClientError> {
    let info = <spki::SubjectPublicKeyInfoOwned as der::Decode>::from_der(spki)
        .map_err(|e| ClientError::PublicKey(e.to_string()))?;
    info.subject_public_key
        .as_bytes()
        .map(<[u8]>::to_vec)
        .ok_or_else(|| ClientError::PublicKey("unused bits".into()))
}

/// The SubjectPublicKeyInfo (DER) of the public-key object the URI names, read without a
/// login: public objects need none, and no PIN is asked for or spent.
///
/// # Errors
/// [`ClientError`]: a URI naming no object, no module or token, no public key that matches.
pub fn public_key_info(uri: &str, options: &Options) -> Result<Vec<u8>, ClientError> {
    let mut uri = Uri::parse(uri)?;
    if uri.id.is_none() && uri.object.is_none() {
        return Err(ClientError::Uri(
            "name the key with object= (label) or id=".into(),
        ));
    }
    uri.pin_value = None;
    uri.pin_source = Some("none".to_owned());
    let module_path = module_path(&uri, options)?;
    let (_module, session) = open_session(&uri, options)?;
    let slot = session.get_session_info()?.slot_id();
    let public = one_object(
        &session,
        &selector(&uri, ObjectClass::PUBLIC_KEY),
        "public key",
    )?;
    let key_type = match attribute(&session, public, AttributeType::KeyType) {
        Some(Attribute::KeyType(t)) => t.into(),
        _ => raw::RawModule::load(&module_path)
            .and_then(|raw| raw.attribute(slot.id(), public.handle(), cryptoki_sys::CKA_KEY_TYPE))
            .ok()
            .and_then(|v| v.try_into().ok())
            .map(cryptoki_sys::CK_KEY_TYPE::from_ne_bytes)
            .ok_or_else(|| ClientError::PublicKey("the public key has no CKA_KEY_TYPE".into()))?,
    };
    spki_of(&session, public, key_type)
}

impl TokenKey {
    /// Finds the URI's private key and its public key, and logs in.
    ///
    /// # Errors
    /// [`ClientError`] for every way it can fail, naming what did not match.
    pub fn open(uri: &str, options: &Options) -> Result<Self, ClientError> {
        let uri = Uri::parse(uri)?;
        if uri.id.is_none() && uri.object.is_none() {
            return Err(ClientError::Uri(
                "name the key with object= (label) or id=".into(),
            ));
        }
        let module_path = module_path(&uri, options)?;
        let (module, session) = open_session(&uri, options)?;
        let slot = session.get_session_info()?.slot_id();
        let key = one_object(
            &session,
            &selector(&uri, ObjectClass::PRIVATE_KEY),
            "private key",
        )?;
        // cryptoki has no KeyType for CKK_HSS / CKK_XMSS*: read the number itself then.
        let key_type = match attribute(&session, key, AttributeType::KeyType) {
            Some(Attribute::KeyType(t)) => t.into(),
            _ => raw::RawModule::load(&module_path)
                .and_then(|raw| raw.attribute(slot.id(), key.handle(), cryptoki_sys::CKA_KEY_TYPE))
                .ok()
                .and_then(|v| v.try_into().ok())
                .map(cryptoki_sys::CK_KEY_TYPE::from_ne_bytes)
                .ok_or_else(|| {
                    ClientError::PublicKey("the private key has no CKA_KEY_TYPE".into())
                })?,
        };
        let spki = match spki_of(&session, key, key_type) {
            Ok(spki) => spki,
            Err(_) => {
                let public = one_object(
                    &session,
                    &selector(&uri, ObjectClass::PUBLIC_KEY),
                    "public key",
                )?;
                spki_of(&session, public, key_type)?
            }
        };
        let public = spki_key_bytes(&spki)?;
        Ok(Self {
            session: Mutex::new(session),
            key,
            key_type,
            spki,
            public,
            slot,
            module_path,
            raw: std::sync::OnceLock::new(),
            _module: module,
        })
    }

    /// The public key's SubjectPublicKeyInfo (DER).
    pub fn spki(&self) -> &[u8] {
        &self.spki
    }

    /// Whether this is a stateful hash-based key (HSS, XMSS, XMSS^MT).
    pub fn is_stateful(&self) -> bool {
        matches!(
            self.key_type,
            cryptoki_sys::CKK_HSS | cryptoki_sys::CKK_XMSS | cryptoki_sys::CKK_XMSSMT
        )
    }

    /// A pqkit signing key over this token key (not for stateful keys: see
    /// [`TokenKey::sign_stateful`]).
    ///
    /// # Errors
    /// [`ClientError::PublicKey`] when the SPKI is not a pqkit signature algorithm.
    pub fn into_signing_key(self) -> Result<SigningKey, ClientError> {
        let vk = pqkit_pki::key::verifying_key_from_spki(&self.spki)
            .map_err(|e| ClientError::PublicKey(e.to_string()))?;
        let alg = vk.algorithm();
        alg.token_key(Box::new(Held { key: self, alg }))
            .map_err(|e| ClientError::PublicKey(e.to_string()))
    }

    /// A stateful key's one-time keys left (CKA_HSS_KEYS_REMAINING, PKCS#11 3.2 §6.64.2).
    ///
    /// # Errors
    /// [`ClientError::Rv`] when the token does not answer it.
    pub fn keys_remaining(&self) -> Result<u64, ClientError> {
        let v = self
            .raw()?
            .attribute(
                self.slot.id(),
                self.key.handle(),
                cryptoki_sys::CKA_HSS_KEYS_REMAINING,
            )
            .map_err(ClientError::Rv)?;
        Ok(u64::from_ne_bytes(v.try_into().map_err(|_| {
            ClientError::Rv(cryptoki_sys::CKR_ATTRIBUTE_VALUE_INVALID)
        })?))
    }

    /// Signs with a stateful key (CKM_HSS, CKM_XMSS, CKM_XMSSMT): the token reserves the
    /// index before it signs.
    ///
    /// # Errors
    /// [`ClientError::Pkcs11`]: CKR_KEY_EXHAUSTED when no one-time key is left.
    pub fn sign_stateful(&self, message: &[u8]) -> Result<Vec<u8>, ClientError> {
        let ty = match self.key_type {
            cryptoki_sys::CKK_HSS => cryptoki_sys::CKM_HSS,
            cryptoki_sys::CKK_XMSS => cryptoki_sys::CKM_XMSS,
            _ => cryptoki_sys::CKM_XMSSMT,
        };
        self.raw()?
            .sign(self.slot.id(), self.key.handle(), ty, message)
            .map_err(ClientError::Rv)
    }

    /// The module's raw function list, loaded once per key.
    fn raw(&self) -> Result<&raw::RawModule, ClientError> {
        if let Some(raw) = self.raw.get() {
            return Ok(raw);
        }
        let loaded = raw::RawModule::load(&self.module_path).map_err(ClientError::Rv)?;
        Ok(self.raw.get_or_init(|| loaded))
    }

    /// Signs with mechanism `ty`, no parameter.
    fn raw_sign(
        &self,
        ty: cryptoki_sys::CK_MECHANISM_TYPE,
        data: &[u8],
    ) -> Result<Vec<u8>, ClientError> {
        let m =
            Mechanism::VendorDefined(VendorDefinedMechanism::new::<u8>(mechanism_type(ty)?, None));
        self.sign_with(&m, data)
    }

    fn sign_with(&self, m: &Mechanism<'_>, data: &[u8]) -> Result<Vec<u8>, ClientError> {
        let session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        Ok(session.sign(m, self.key, data)?)
    }
}

/// A token key behind a pqkit-core signing key.
struct Held {
    key: TokenKey,
    alg: &'static SignatureAlgorithm,
}

fn hedge(r: SigningRandomness<'_>) -> Result<HedgeType, pqkit_core::Error> {
    match r {
        SigningRandomness::Hedged => Ok(HedgeType::Preferred),
        SigningRandomness::Deterministic => Ok(HedgeType::DeterministicRequired),
        SigningRandomness::Fixed(_) => Err(pqkit_core::Error::Unsupported(
            "a token draws its own randomness: fixed randomness is for known-answer tests",
        )),
    }
}

/// A mechanism type by number (vendor-defined ones included).
fn mechanism_type(ty: cryptoki_sys::CK_MECHANISM_TYPE) -> Result<MechanismType, ClientError> {
    Ok(if ty >= cryptoki_sys::CKM_VENDOR_DEFINED {
        MechanismType::new_vendor_defined(ty)?
    } else {
        MechanismType::try_from(ty)?
    })
}

fn hash_mechanism(hash: PreHash) -> Result<MechanismType, pqkit_core::Error> {
    mechanism_type(mech::hash_mechanism_of(hash)).map_err(|_| {
        pqkit_core::Error::Unsupported("a pre-hash the token's mechanisms do not name")
    })
}

/// A CK_RV's name, for the codes a stateful signature can end with.
fn rv_name(rv: cryptoki_sys::CK_RV) -> String {
    match rv {
        cryptoki_sys::CKR_KEY_EXHAUSTED => {
            "CKR_KEY_EXHAUSTED: every one-time key has been used".into()
        }
        cryptoki_sys::CKR_USER_NOT_LOGGED_IN => "CKR_USER_NOT_LOGGED_IN: give the PIN".into(),
        cryptoki_sys::CKR_KEY_HANDLE_INVALID => "CKR_KEY_HANDLE_INVALID".into(),
        cryptoki_sys::CKR_DEVICE_ERROR => "CKR_DEVICE_ERROR".into(),
        other => match mech::state_refusal(other) {
            Some(why) => format!("{why} (CK_RV {other:#x})"),
            None => format!("CK_RV {other:#x}"),
        },
    }
}

fn token_failed(e: ClientError) -> pqkit_core::Error {
    // pqkit-core errors carry static text; the token's own code goes to stderr for the user.
    eprintln!("pqkit: token: {e}");
    match e {
        ClientError::Pkcs11(cryptoki::error::Error::Pkcs11(
            cryptoki::error::RvError::UnknownErrorCode(cryptoki_sys::CKR_KEY_EXHAUSTED),
            _,
        )) => pqkit_core::Error::Unsupported("the token key is exhausted"),
        _ => pqkit_core::Error::Backend("PKCS#11 token"),
    }
}

impl SigningKeyImpl for Held {
    fn verifying_key(&self) -> &[u8] {
        &self.key.public
    }

    fn takes_randomness(&self) -> bool {
        false
    }

    fn seed(&self) -> Option<&[u8]> {
        None
    }

    fn expanded(&self) -> Option<Zeroizing<Vec<u8>>> {
        None
    }

    fn sign(
        &self,
        message: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, pqkit_core::Error> {
        let ctx = (!context.is_empty()).then_some(context);
        let k = &self.key;
        match self.alg.family {
            Family::MlDsa => k.sign_with(
                &Mechanism::MlDsa(SignAdditionalContext::new(hedge(randomness)?, ctx)),
                message,
            ),
            Family::SlhDsa => k.sign_with(
                &Mechanism::SlhDsa(SignAdditionalContext::new(hedge(randomness)?, ctx)),
                message,
            ),
            Family::Falcon => k.raw_sign(mech::CKM_PQKIT_FALCON, message),
            Family::Ed25519 => k.sign_with(
                &Mechanism::Eddsa(cryptoki::mechanism::eddsa::EddsaParams::new(
                    cryptoki::mechanism::eddsa::EddsaSignatureScheme::Pure,
                )),
                message,
            ),
            Family::Ecdsa => {
                // The whole message into the token (CKM_ECDSA_SHA*, type A); a token without
                // the hashing mechanism gets the digest (CKM_ECDSA, type B).
                let hash =
                    mech::ecdsa_hash(self.alg).ok_or(pqkit_core::Error::Backend("ECDSA hash"))?;
                let m = match hash {
                    PreHash::Sha256 => Mechanism::EcdsaSha256,
                    PreHash::Sha384 => Mechanism::EcdsaSha384,
                    _ => Mechanism::EcdsaSha512,
                };
                return match k.sign_with(&m, message) {
                    Ok(raw) => crate::token::ecdsa_raw_to_der(&raw)
                        .ok_or(pqkit_core::Error::Backend("PKCS#11 token ECDSA signature")),
                    Err(ClientError::Pkcs11(cryptoki::error::Error::Pkcs11(
                        cryptoki::error::RvError::MechanismInvalid,
                        _,
                    ))) => self.sign_prehashed(hash, &hash.digest(message), &[], randomness),
                    Err(e) => Err(token_failed(e)),
                };
            }
            Family::Rsa => {
                return Err(pqkit_core::Error::Unsupported(
                    "RSA keys in a token are not offered",
                ));
            }
            Family::CompositeMlDsa => {
                return Err(pqkit_core::Error::Unsupported(
                    "composite ML-DSA keys in a token are not offered",
                ));
            }
        }
        .map_err(token_failed)
    }

    fn sign_prehashed(
        &self,
        hash: PreHash,
        digest: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, pqkit_core::Error> {
        let ctx = (!context.is_empty()).then_some(context);
        let k = &self.key;
        match self.alg.family {
            Family::MlDsa => k.sign_with(
                &Mechanism::HashMlDsa(HashSignAdditionalContext::new(
                    hedge(randomness)?,
                    ctx,
                    hash_mechanism(hash)?,
                )),
                digest,
            ),
            Family::SlhDsa => k.sign_with(
                &Mechanism::HashSlhDsa(HashSignAdditionalContext::new(
                    hedge(randomness)?,
                    ctx,
                    hash_mechanism(hash)?,
                )),
                digest,
            ),
            Family::Ecdsa => {
                let raw = k
                    .sign_with(&Mechanism::Ecdsa, digest)
                    .map_err(token_failed)?;
                return crate::token::ecdsa_raw_to_der(&raw)
                    .ok_or(pqkit_core::Error::Backend("PKCS#11 token ECDSA signature"));
            }
            _ => {
                return Err(pqkit_core::Error::Unsupported(
                    "this algorithm has no pre-hash variant",
                ));
            }
        }
        .map_err(token_failed)
    }

    fn sign_mu(
        &self,
        mu: &[u8; pqkit_core::sig::MU_SIZE],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, pqkit_core::Error> {
        if self.alg.family != Family::MlDsa {
            return Err(pqkit_core::Error::Unsupported(
                "external μ is defined for ML-DSA only",
            ));
        }
        let hedge = match hedge(randomness)? {
            HedgeType::DeterministicRequired => cryptoki_sys::CKH_DETERMINISTIC_REQUIRED,
            _ => cryptoki_sys::CKH_HEDGE_PREFERRED,
        };
        let param = cryptoki_sys::CK_SIGN_ADDITIONAL_CONTEXT {
            hedgeVariant: hedge,
            pContext: std::ptr::null_mut(),
            ulContextLen: 0,
        };
        let m = Mechanism::VendorDefined(VendorDefinedMechanism::new(
            mechanism_type(mech::CKM_PQKIT_ML_DSA_EXTERNAL_MU).map_err(token_failed)?,
            Some(&param),
        ));
        self.key.sign_with(&m, mu).map_err(token_failed)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn rfc_7512_examples_parse() {
        let u = Uri::parse("pkcs11:token=The%20Software%20PKCS%2311%20Softtoken;manufacturer=Snake%20Oil,%20Inc.;model=1.0;object=my-certificate;type=private;id=%69%95%3E%5C%F4%BD%EC%91?pin-value=1234&module-path=/usr/lib/m.so").unwrap();
        assert_eq!(u.token.as_deref(), Some("The Software PKCS#11 Softtoken"));
        assert_eq!(u.manufacturer.as_deref(), Some("Snake Oil, Inc."));
        assert_eq!(u.object.as_deref(), Some("my-certificate"));
        assert_eq!(
            u.id.as_deref(),
            Some(&[0x69, 0x95, 0x3e, 0x5c, 0xf4, 0xbd, 0xec, 0x91][..])
        );
        assert_eq!(u.pin_value.as_deref().map(String::as_str), Some("1234"));
        assert_eq!(u.module_path.as_deref(), Some(Path::new("/usr/lib/m.so")));
        assert_eq!(
            redacted("pkcs11:token=a?pin-value=1234&module-path=/m.so"),
            "pkcs11:token=a?pin-value=(hidden)&module-path=/m.so"
        );
        // Printed URIs parse back to the same label and token, whatever they hold.
        for label in ["a;b", "100% sure", "x/y?z", "é", "plain-label_1.0"] {
            let uri = format!(
                "pkcs11:token={};object={}",
                percent_encode(b"my token"),
                percent_encode(label.as_bytes())
            );
            let u = Uri::parse(&uri).unwrap();
            assert_eq!(u.object.as_deref(), Some(label), "{uri}");
            assert_eq!(u.token.as_deref(), Some("my token"), "{uri}");
        }
        assert_eq!(percent_encode(b"a;b c"), "a%3Bb%20c");
        for bad in [
            "file:x",
            "pkcs11:id=%zz",
            "pkcs11:object=a;object=b",
            "pkcs11:type=cert",
            "pkcs11:token",
        ] {
            assert!(Uri::parse(bad).is_err(), "{bad}");
        }
    }
}
