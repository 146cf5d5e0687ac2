//! A test token set-up shared by the integration tests: two token directories (one for PIN
//! lockout), a configuration naming them, and the module loaded once per test process.

#![allow(dead_code, unreachable_pub, missing_docs, clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::OnceLock;

use cryptoki::context::Pkcs11;
use cryptoki::mechanism::vendor_defined::VendorDefinedMechanism;
use cryptoki::mechanism::{Mechanism, MechanismType};
use cryptoki::object::{Attribute, AttributeType, KeyType, ObjectClass, ObjectHandle};
use cryptoki::session::{Session, UserType};
use cryptoki::slot::Slot;
use cryptoki::types::AuthPin;
use pqkit_core::sig::VerifyingKey;
use pqkit_pkcs11::store::{InitOptions, Kdf, Store};

pub const SO_PIN: &str = "so-secret";
pub const USER_PIN: &str = "12345678";

/// The module built with the test binary: target/<profile>/deps/libpqkit_pkcs11.so (where
/// `cargo test` leaves it), else target/<profile>/libpqkit_pkcs11.so.
pub fn module_path() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let candidates = [
        deps.join("libpqkit_pkcs11.so"),
        deps.parent().unwrap().join("libpqkit_pkcs11.so"),
    ];
    candidates
        .iter()
        .find(|c| c.exists())
        .cloned()
        .unwrap_or_else(|| panic!("libpqkit_pkcs11.so not built: looked for {candidates:?}"))
}

/// Argon2id light enough for tests (the default costs 64 MiB per login); stateful keys'
/// reservations in a ledger of this test process, not the user's.
pub fn fast(attempts: u32) -> InitOptions {
    InitOptions {
        kdf: Kdf {
            memory_kib: 1024,
            passes: 1,
            lanes: 1,
        },
        max_pin_attempts: attempts,
        ledger: Some(
            std::env::temp_dir()
                .join(format!("pqkit-p11-ledger-{}.sqlite3", std::process::id()))
                .display()
                .to_string(),
        ),
        ..InitOptions::default()
    }
}

pub struct Fixture {
    pub dir: PathBuf,
    pub module: Pkcs11,
}

/// Creates the tokens and the configuration, points PQKIT_PKCS11_CONF at it and loads the
/// module, once per process.
pub fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        // A child process of a test uses its parent's tokens.
        if let Ok(conf) = std::env::var("PQKIT_P11_TEST_PARENT_CONF") {
            // SAFETY: set before the module reads it, in a child with no other test thread.
            unsafe { std::env::set_var("PQKIT_PKCS11_CONF", &conf) };
            let module = pqkit_pkcs11::client::load_module(&module_path()).unwrap();
            return Fixture {
                dir: PathBuf::from(conf),
                module,
            };
        }
        let dir = std::env::temp_dir().join(format!("pqkit-p11-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut config = pqkit_pkcs11::config::Config::default();
        for (label, attempts) in [("main", 10), ("lockout", 3)] {
            let tdir = dir.join(label);
            Store::init(
                &tdir,
                label,
                SO_PIN.as_bytes(),
                Some(USER_PIN.as_bytes()),
                &fast(attempts),
            )
            .unwrap();
            config
                .slots
                .push(pqkit_pkcs11::config::SlotConfig { dir: tdir });
        }
        let conf = dir.join("pkcs11.json");
        config.save_to(&conf).unwrap();
        // SAFETY: set once, before the module (and any other thread of this test) reads it.
        unsafe { std::env::set_var("PQKIT_PKCS11_CONF", &conf) };
        let module = pqkit_pkcs11::client::load_module(&module_path()).unwrap();
        Fixture { dir, module }
    })
}

pub struct Token {
    pub module: Pkcs11,
    pub slot: Slot,
}

impl Token {
    pub fn session(&self) -> Session {
        self.module.open_rw_session(self.slot).unwrap()
    }

    pub fn user_session(&self) -> Session {
        let s = self.session();
        match s.login(UserType::User, Some(&AuthPin::from(USER_PIN))) {
            Ok(()) => {}
            Err(cryptoki::error::Error::Pkcs11(
                cryptoki::error::RvError::UserAlreadyLoggedIn,
                _,
            )) => {}
            Err(e) => panic!("login: {e}"),
        }
        s
    }
}

pub fn fresh_token(label: &str, _attempts: u32) -> Token {
    let f = fixture();
    for slot in f.module.get_slots_with_token().unwrap() {
        if f.module.get_token_info(slot).unwrap().label().trim_end() == label {
            return Token {
                module: f.module.clone(),
                slot,
            };
        }
    }
    panic!("no token {label}");
}

pub fn token() -> Token {
    fresh_token("main", 10)
}

pub fn generate(
    s: &Session,
    key_type: KeyType,
    set: u64,
    label: &str,
) -> (ObjectHandle, ObjectHandle) {
    let mechanism = match key_type {
        KeyType::ML_DSA => Mechanism::MlDsaKeyPairGen,
        KeyType::SLH_DSA => Mechanism::SlhDsaKeyPairGen,
        _ => Mechanism::MlKemKeyPairGen,
    };
    s.generate_key_pair(
        &mechanism,
        &[
            Attribute::Token(true),
            Attribute::ParameterSet(pset(set)),
            Attribute::Label(label.into()),
        ],
        &[Attribute::Token(true), Attribute::Label(label.into())],
    )
    .unwrap()
}

pub fn raw_mechanism(ty: u64) -> Mechanism<'static> {
    let t = if ty >= cryptoki_sys::CKM_VENDOR_DEFINED {
        MechanismType::new_vendor_defined(ty).unwrap()
    } else {
        MechanismType::try_from(ty).unwrap()
    };
    Mechanism::VendorDefined(VendorDefinedMechanism::new::<u8>(t, None))
}

pub fn sign_raw(s: &Session, key: ObjectHandle, ty: u64, data: &[u8]) -> Vec<u8> {
    s.sign(&raw_mechanism(ty), key, data).unwrap()
}

/// pqkit's verifying key from the token's public-key object (its SPKI).
pub fn verifying_key(s: &Session, public: ObjectHandle, _what: &str) -> VerifyingKey {
    let Some(Attribute::PublicKeyInfo(spki)) = s
        .get_attributes(public, &[AttributeType::PublicKeyInfo])
        .unwrap()
        .pop()
    else {
        panic!("no CKA_PUBLIC_KEY_INFO")
    };
    pqkit_pki::key::verifying_key_from_spki(&spki).unwrap()
}

/// A pqkit verifying key as a session public-key object.
pub fn import_public(s: &Session, vk: &VerifyingKey) -> ObjectHandle {
    let kind = pqkit_pkcs11::mech::kind_of(vk.algorithm().name).unwrap();
    s.create_object(&[
        Attribute::Class(ObjectClass::PUBLIC_KEY),
        Attribute::KeyType(KeyType::try_from(kind.key_type).unwrap()),
        Attribute::ParameterSet(pset(kind.parameter_set)),
        Attribute::Value(vk.as_bytes().to_vec()),
    ])
    .unwrap()
}

/// An HSS key pair: one LMS_SHA256_M32_H<h> tree per level (LMS type codes of RFC 8554
/// Table 2: H5 = 5, H10 = 6, …) and LM-OTS type `ots` (1 = W1 … 4 = W8).
pub fn generate_hss(
    t: &Token,
    heights: &[u32],
    ots: u64,
    label: &str,
) -> (ObjectHandle, ObjectHandle) {
    let lms: Vec<u64> = heights.iter().map(|h| u64::from(h / 5 + 4)).collect();
    let ulongs = |v: &[u64]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
    let common = vec![
        (cryptoki_sys::CKA_TOKEN, vec![1u8]),
        (cryptoki_sys::CKA_LABEL, label.as_bytes().to_vec()),
    ];
    let mut private = common.clone();
    private.extend([
        (
            cryptoki_sys::CKA_HSS_LEVELS,
            ulongs(&[heights.len() as u64]),
        ),
        (cryptoki_sys::CKA_HSS_LMS_TYPES, ulongs(&lms)),
        (
            cryptoki_sys::CKA_HSS_LMOTS_TYPES,
            ulongs(&vec![ots; heights.len()]),
        ),
    ]);
    let (p, s) = raw()
        .generate_key_pair(
            t.slot.id(),
            cryptoki_sys::CKM_HSS_KEY_PAIR_GEN,
            common,
            private,
        )
        .unwrap();
    // SAFETY: handles the module just returned.
    unsafe { (ObjectHandle::new_from_raw(p), ObjectHandle::new_from_raw(s)) }
}

/// The module's raw function list (for mechanisms cryptoki has no type for).
pub fn raw() -> &'static pqkit_pkcs11::client::raw::RawModule {
    static R: OnceLock<pqkit_pkcs11::client::raw::RawModule> = OnceLock::new();
    fixture();
    R.get_or_init(|| pqkit_pkcs11::client::raw::RawModule::load(&module_path()).unwrap())
}

/// A stateful signature through the raw function list.
pub fn sign_hss(t: &Token, key: ObjectHandle, data: &[u8]) -> Result<Vec<u8>, u64> {
    raw().sign(t.slot.id(), key.handle(), cryptoki_sys::CKM_HSS, data)
}

pub fn hss_public(s: &Session, public: ObjectHandle) -> pqkit_hbs::public::PublicKey {
    let Some(Attribute::PublicKeyInfo(spki)) = s
        .get_attributes(public, &[AttributeType::PublicKeyInfo])
        .unwrap()
        .pop()
    else {
        panic!("no CKA_PUBLIC_KEY_INFO")
    };
    pqkit_hbs::public::PublicKey::from_spki_der(&spki).unwrap()
}

pub fn keys_remaining(t: &Token, private: ObjectHandle) -> u64 {
    let v = raw()
        .attribute(
            t.slot.id(),
            private.handle(),
            cryptoki_sys::CKA_HSS_KEYS_REMAINING,
        )
        .unwrap();
    u64::from_ne_bytes(v.try_into().unwrap())
}

pub fn find_private(s: &Session, label: &str) -> ObjectHandle {
    let found = s
        .find_objects(&[
            Attribute::Class(ObjectClass::PRIVATE_KEY),
            Attribute::Label(label.into()),
        ])
        .unwrap();
    assert_eq!(found.len(), 1, "{label}");
    found[0]
}

/// A CKA_PARAMETER_SET value.
pub fn pset(v: u64) -> cryptoki::object::ParameterSetType {
    cryptoki::object::ParameterSetType::try_from(cryptoki::types::Ulong::from(v)).unwrap()
}
