//! libpqkit_pkcs11.so driven through its C interface by the `cryptoki` crate (and, for bad
//! arguments, by raw calls), with pqkit-core as the independent verifier of what it signs.

#![allow(clippy::unwrap_used, missing_docs, unsafe_code)]

mod common;

use common::*;
use cryptoki::error::{Error, RvError};
use cryptoki::mechanism::dsa::{HashSignAdditionalContext, HedgeType, SignAdditionalContext};
use cryptoki::mechanism::{Mechanism, MechanismType};
use cryptoki::object::{Attribute, AttributeType, KeyType, ObjectClass};
use cryptoki::session::UserType;
use cryptoki::types::AuthPin;
use pqkit_core::catalogue;

fn rv(e: Error) -> RvError {
    match e {
        Error::Pkcs11(rv, _) => rv,
        other => panic!("not a PKCS#11 error: {other}"),
    }
}

#[test]
fn ml_dsa_slh_dsa_and_falcon_sign_what_pqkit_verifies_and_the_reverse() {
    let t = token();
    let s = t.user_session();
    for (name, key_type, set) in [
        ("ML-DSA-65", KeyType::ML_DSA, cryptoki_sys::CKP_ML_DSA_65),
        (
            "SLH-DSA-SHA2-128f",
            KeyType::SLH_DSA,
            cryptoki_sys::CKP_SLH_DSA_SHA2_128F,
        ),
    ] {
        let (public, private) = generate(&s, key_type, set, name);
        let vk = verifying_key(&s, public, name);
        let pure = |ctx: Option<&'static [u8]>, h| match key_type {
            KeyType::ML_DSA => Mechanism::MlDsa(SignAdditionalContext::new(h, ctx)),
            _ => Mechanism::SlhDsa(SignAdditionalContext::new(h, ctx)),
        };
        // Pure, with and without a context, hedged and deterministic: pqkit verifies.
        for (ctx, hedge) in [
            (None, HedgeType::Preferred),
            (Some(&b"ctx"[..]), HedgeType::DeterministicRequired),
        ] {
            let sig = s.sign(&pure(ctx, hedge), private, b"message").unwrap();
            vk.verify(b"message", ctx.unwrap_or_default(), &sig)
                .unwrap();
            assert!(
                vk.verify(b"messagf", ctx.unwrap_or_default(), &sig)
                    .is_err()
            );
        }
        // Multi-part (type A: the whole message streams into the token).
        let big = vec![0x5a; 3 << 20];
        s.sign_init(&pure(None, HedgeType::Preferred), private)
            .unwrap();
        for chunk in big.chunks(1 << 20) {
            s.sign_update(chunk).unwrap();
        }
        let sig = s.sign_final().unwrap();
        vk.verify(&big, &[], &sig).unwrap();
        // HashML-DSA / HashSLH-DSA from a digest made outside (type B).
        let digest = pqkit_core::prehash::PreHash::Sha512.digest(&big);
        let m = HashSignAdditionalContext::new(HedgeType::Preferred, None, MechanismType::SHA512);
        let m = match key_type {
            KeyType::ML_DSA => Mechanism::HashMlDsa(m),
            _ => Mechanism::HashSlhDsa(m),
        };
        let sig = s.sign(&m, private, &digest).unwrap();
        vk.verify_prehashed(pqkit_core::prehash::PreHash::Sha512, &digest, &[], &sig)
            .unwrap();
        // The token verifies pqkit's signatures.
        let key = catalogue::signature(name).unwrap().generate().unwrap();
        let theirs = import_public(&s, &key.verifying_key());
        let sig = key.sign(b"from pqkit", &[]).unwrap();
        s.verify(
            &pure(None, HedgeType::Preferred),
            theirs,
            b"from pqkit",
            &sig,
        )
        .unwrap();
        let mut bad = sig.clone();
        bad[7] ^= 1;
        assert_eq!(
            rv(s.verify(
                &pure(None, HedgeType::Preferred),
                theirs,
                b"from pqkit",
                &bad
            )
            .unwrap_err()),
            RvError::SignatureInvalid
        );
    }
}

#[test]
fn external_mu_signs_what_the_message_would() {
    let t = token();
    let s = t.user_session();
    let (public, private) = generate(
        &s,
        KeyType::ML_DSA,
        cryptoki_sys::CKP_ML_DSA_44,
        "ML-DSA-44",
    );
    let vk = verifying_key(&s, public, "ML-DSA-44");
    let mu = vk.external_mu(b"the message", b"v1").unwrap();
    let sig = sign_raw(
        &s,
        private,
        pqkit_pkcs11::mech::CKM_PQKIT_ML_DSA_EXTERNAL_MU,
        &mu,
    );
    vk.verify(b"the message", b"v1", &sig).unwrap();
}

#[test]
fn ml_kem_encapsulates_and_decapsulates_to_one_secret() {
    let t = token();
    let s = t.user_session();
    for set in [
        cryptoki_sys::CKP_ML_KEM_512,
        cryptoki_sys::CKP_ML_KEM_768,
        cryptoki_sys::CKP_ML_KEM_1024,
    ] {
        let (public, private) = generate(&s, KeyType::ML_KEM, set, "ML-KEM");
        let template = [
            Attribute::Class(ObjectClass::SECRET_KEY),
            Attribute::KeyType(KeyType::GENERIC_SECRET),
            Attribute::Extractable(true),
            Attribute::Sensitive(false),
        ];
        let (ct, a) = s
            .encapsulate_key(&Mechanism::MlKem, public, &template)
            .unwrap();
        let b = s
            .decapsulate_key(&Mechanism::MlKem, private, &template, &ct)
            .unwrap();
        let value = |h| match s.get_attributes(h, &[AttributeType::Value]).unwrap().pop() {
            Some(Attribute::Value(v)) => v,
            other => panic!("{other:?}"),
        };
        assert_eq!(value(a), value(b));
        assert_eq!(value(a).len(), 32);
        // pqkit decapsulates what the token encapsulated to a pqkit key.
        let Attribute::Value(ek) = s
            .get_attributes(public, &[AttributeType::Value])
            .unwrap()
            .pop()
            .unwrap()
        else {
            panic!()
        };
        let alg = catalogue::kems()
            .iter()
            .find(|k| k.encapsulation_key_size == ek.len())
            .unwrap();
        let dk = alg.generate().unwrap();
        let theirs = s
            .create_object(&[
                Attribute::Class(ObjectClass::PUBLIC_KEY),
                Attribute::KeyType(KeyType::ML_KEM),
                Attribute::ParameterSet(pset(set)),
                Attribute::Value(dk.encapsulation_key().as_bytes().to_vec()),
            ])
            .unwrap();
        let (ct, a) = s
            .encapsulate_key(&Mechanism::MlKem, theirs, &template)
            .unwrap();
        assert_eq!(dk.decapsulate(&ct).unwrap().as_bytes(), &value(a)[..]);
    }
}

#[test]
fn a_private_key_never_shows_its_secret() {
    let t = token();
    let s = t.user_session();
    let (_, private) = generate(&s, KeyType::ML_DSA, cryptoki_sys::CKP_ML_DSA_65, "secret");
    for ty in [AttributeType::Value, AttributeType::Seed] {
        let found = s.get_attributes(private, &[ty]).unwrap_or_default();
        assert!(found.is_empty(), "{ty:?} was returned");
    }
    // The vendor PKCS#8 attribute and the store's internals are invisible, and the file on disk
    // holds no key in the clear: the token directory never contains the seed's PKCS#8 OID
    // followed by key bytes in plaintext (every private object is sealed).
    let found = s
        .get_attributes(
            private,
            &[AttributeType::VendorDefined(
                pqkit_pkcs11::mech::CKA_PQKIT_PKCS8,
            )],
        )
        .unwrap_or_default();
    assert!(found.is_empty());
    let Attribute::Sensitive(true) = s
        .get_attributes(private, &[AttributeType::Sensitive])
        .unwrap()
        .pop()
        .unwrap()
    else {
        panic!()
    };
    let Attribute::Extractable(false) = s
        .get_attributes(private, &[AttributeType::Extractable])
        .unwrap()
        .pop()
        .unwrap()
    else {
        panic!()
    };
}

#[test]
fn wrong_pins_are_refused_then_locked() {
    let t = fresh_token("lockout", 3);
    let s = t.session();
    // Shorter than the token's shortest PIN (8): refused, and not an attempt.
    for _ in 0..5 {
        assert_eq!(
            rv(s.login(UserType::User, Some(&AuthPin::from("1234")))
                .unwrap_err()),
            RvError::PinLenRange
        );
    }
    assert_eq!(t.module.get_token_info(t.slot).unwrap().min_pin_length(), 8);
    let wrong = AuthPin::from("00000000");
    assert_eq!(
        rv(s.login(UserType::User, Some(&wrong)).unwrap_err()),
        RvError::PinIncorrect
    );
    assert_eq!(
        rv(s.login(UserType::User, Some(&wrong)).unwrap_err()),
        RvError::PinIncorrect
    );
    assert_eq!(
        rv(s.login(UserType::User, Some(&wrong)).unwrap_err()),
        RvError::PinLocked
    );
    assert_eq!(
        rv(s.login(UserType::User, Some(&AuthPin::from(USER_PIN)))
            .unwrap_err()),
        RvError::PinLocked
    );
    let info = t.module.get_token_info(t.slot).unwrap();
    assert!(info.user_pin_locked());
    // The SO sets a new user PIN; the user logs in with it.
    s.login(UserType::So, Some(&AuthPin::from(SO_PIN))).unwrap();
    assert_eq!(
        rv(s.init_pin(&AuthPin::from("5678")).unwrap_err()),
        RvError::PinLenRange
    );
    s.init_pin(&AuthPin::from("56789012")).unwrap();
    s.logout().unwrap();
    s.login(UserType::User, Some(&AuthPin::from("56789012")))
        .unwrap();
}

#[test]
fn hss_in_the_token_counts_down_and_stops_at_exhaustion() {
    let t = token();
    let s = t.user_session();
    // One LMS_SHA256_M32_H5 tree with LMOTS_SHA256_N32_W8: 32 signatures.
    let (public, private) = generate_hss(&t, &[5], 4, "hss-small");
    let pk = hss_public(&s, public);
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..32u64 {
        let msg = i.to_be_bytes();
        let sig = sign_hss(&t, private, &msg).unwrap();
        pk.verify(&msg, &sig).unwrap();
        assert!(seen.insert(pk.counter(&sig).unwrap()));
        assert_eq!(keys_remaining(&t, private), 31 - i);
    }
    assert_eq!(
        sign_hss(&t, private, b"one more"),
        Err(cryptoki_sys::CKR_KEY_EXHAUSTED)
    );
    // The state files in the token directory are sealed: none opens, or signs, on its own.
    let hbs = fixture().dir.join("main").join("hbs");
    let mut states = 0;
    for entry in std::fs::read_dir(&hbs).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "state") {
            states += 1;
            let err = pqkit_hbs::state::StatefulKey::open(
                &entry.path(),
                pqkit_hbs::ledger::hazmat::in_memory(),
                1,
            )
            .err()
            .unwrap();
            assert!(
                matches!(
                    err,
                    pqkit_hbs::state::StateError::Sealed(_)
                        | pqkit_hbs::state::StateError::Locked(..)
                ),
                "{err}"
            );
        }
    }
    assert!(states > 0);
    // The token verifies its own signatures too, and refuses a damaged one.
    let (p2, k2) = generate_hss(&t, &[5], 4, "hss-verify");
    let mut sig = sign_hss(&t, k2, b"m").unwrap();
    raw()
        .verify(t.slot.id(), p2.handle(), cryptoki_sys::CKM_HSS, b"m", &sig)
        .unwrap();
    sig[40] ^= 1;
    assert_eq!(
        raw().verify(t.slot.id(), p2.handle(), cryptoki_sys::CKM_HSS, b"m", &sig),
        Err(cryptoki_sys::CKR_SIGNATURE_INVALID)
    );
}

#[test]
fn eight_threads_sign_two_hundred_times_each_with_no_index_reused() {
    let t = token();
    let s = t.user_session();
    let (public, _) = generate_hss(&t, &[10, 5], 3, "hss-threads");
    let pk = hss_public(&s, public);
    let sigs: Vec<(Vec<u8>, Vec<u8>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..8)
            .map(|w| {
                let t = &t;
                scope.spawn(move || {
                    let s = t.user_session();
                    let key = find_private(&s, "hss-threads");
                    (0..200)
                        .map(|i| {
                            let msg = format!("worker {w} message {i}").into_bytes();
                            let sig = sign_hss(t, key, &msg).unwrap();
                            (msg, sig)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    assert_eq!(sigs.len(), 1600);
    let mut seen = std::collections::BTreeSet::new();
    for (msg, sig) in &sigs {
        pk.verify(msg, sig).unwrap();
        assert!(
            seen.insert(pk.counter(sig).unwrap()),
            "an index was used twice"
        );
    }
}

#[test]
fn eddsa_and_xmss_keys_sign_in_the_token() {
    let t = token();
    let s = t.user_session();
    let (public, private) = s
        .generate_key_pair(
            &Mechanism::EccEdwardsKeyPairGen,
            &[
                Attribute::Token(true),
                Attribute::Label(b"ed".to_vec()),
                Attribute::EcParams(pqkit_pkcs11::mech::ED25519_PARAMS.to_vec()),
            ],
            &[Attribute::Token(true), Attribute::Label(b"ed".to_vec())],
        )
        .unwrap();
    let eddsa = Mechanism::Eddsa(cryptoki::mechanism::eddsa::EddsaParams::new(
        cryptoki::mechanism::eddsa::EddsaSignatureScheme::Pure,
    ));
    let sig = s.sign(&eddsa, private, b"ed25519 in the token").unwrap();
    verifying_key(&s, public, "Ed25519")
        .verify(b"ed25519 in the token", &[], &sig)
        .unwrap();
    s.verify(&eddsa, public, b"ed25519 in the token", &sig)
        .unwrap();

    // XMSS-SHA2_10_256 (RFC 8391 OID 0x00000001): 1024 signatures.
    let common = vec![
        (cryptoki_sys::CKA_TOKEN, vec![1u8]),
        (cryptoki_sys::CKA_LABEL, b"xmss".to_vec()),
    ];
    let mut private = common.clone();
    private.push((cryptoki_sys::CKA_PARAMETER_SET, 1u64.to_ne_bytes().to_vec()));
    let (p, k) = raw()
        .generate_key_pair(
            t.slot.id(),
            cryptoki_sys::CKM_XMSS_KEY_PAIR_GEN,
            common,
            private,
        )
        .unwrap();
    // SAFETY: handles the module just returned.
    let (p, k) = unsafe {
        (
            cryptoki::object::ObjectHandle::new_from_raw(p),
            cryptoki::object::ObjectHandle::new_from_raw(k),
        )
    };
    let pk = hss_public(&s, p);
    for i in 0..3u64 {
        let msg = i.to_be_bytes();
        let sig = raw()
            .sign(t.slot.id(), k.handle(), cryptoki_sys::CKM_XMSS, &msg)
            .unwrap();
        pk.verify(&msg, &sig).unwrap();
        assert_eq!(pk.counter(&sig).unwrap(), i);
    }
    assert_eq!(keys_remaining(&t, k), 1021);
}

/// A multi-part SLH-DSA signature keeps the message whole (it is hashed twice), at most
/// `MAX_BUFFERED` bytes: one more is CKR_DATA_LEN_RANGE, and that error, like any but
/// CKR_BUFFER_TOO_SMALL, ends the operation (PKCS#11 3.2 §5.13).
#[test]
fn multi_part_buffers_are_bounded_and_errors_end_the_operation() {
    let t = token();
    let s = t.user_session();
    let (_public, private) = generate(
        &s,
        KeyType::SLH_DSA,
        cryptoki_sys::CKP_SLH_DSA_SHA2_128F,
        "bounded",
    );
    let mech = Mechanism::SlhDsa(SignAdditionalContext::new(HedgeType::Preferred, None));
    s.sign_init(&mech, private).unwrap();
    let chunk = vec![0u8; 16 << 20];
    for _ in 0..pqkit_pkcs11::MAX_BUFFERED / chunk.len() {
        s.sign_update(&chunk).unwrap();
    }
    assert!(matches!(
        s.sign_update(&[0]),
        Err(Error::Pkcs11(RvError::DataLenRange, _))
    ));
    assert!(
        matches!(
            s.sign_final(),
            Err(Error::Pkcs11(RvError::OperationNotInitialized, _))
        ),
        "the failed update ended the operation"
    );
    // A new C_SignInit starts afresh (no CKR_OPERATION_ACTIVE).
    s.sign_init(&mech, private).unwrap();
    s.sign_update(b"part").unwrap();
    s.sign_final().unwrap();
}

/// A key in the token, opened by its RFC 7512 URI, signs through the RustCrypto `signature`
/// traits like a key in memory: third-party code generic over `Signer` uses it unchanged, and
/// the matching `Verifier` accepts what it signed.
#[test]
fn a_token_key_signs_through_the_rustcrypto_traits() {
    use pqkit_core::rustcrypto::Signature;
    use pqkit_pkcs11::client::{Options, TokenKey};
    use signature::{Keypair, RandomizedSigner, Signer, Verifier};

    fn sign_generic<S: Signer<Sig>, Sig>(signer: &S, message: &[u8]) -> Sig {
        signer.sign(message)
    }

    /// A generator the randomized form must leave alone: the token draws its own randomness
    /// inside its boundary.
    struct Untouched;
    impl signature::rand_core::TryRng for Untouched {
        type Error = std::convert::Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            unreachable!("a token key used the caller's generator")
        }
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            unreachable!("a token key used the caller's generator")
        }
        fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Self::Error> {
            unreachable!("a token key used the caller's generator")
        }
    }
    impl signature::rand_core::TryCryptoRng for Untouched {}

    let t = token();
    let s = t.user_session();
    generate(
        &s,
        KeyType::ML_DSA,
        cryptoki_sys::CKP_ML_DSA_65,
        "rustcrypto-signer",
    );
    let pin = std::env::temp_dir().join(format!("pqkit-p11-pin-{}", std::process::id()));
    std::fs::write(&pin, USER_PIN).unwrap();
    let options = Options {
        module: Some(module_path()),
        pin_source: Some(format!("file:{}", pin.display())),
    };
    let key = TokenKey::open("pkcs11:token=main;object=rustcrypto-signer", &options)
        .and_then(TokenKey::into_signing_key)
        .unwrap();
    std::fs::remove_file(&pin).unwrap();
    assert_eq!(key.algorithm().name, "ML-DSA-65");
    let vk = Keypair::verifying_key(&key);
    let sig: Signature = sign_generic(&key, b"signed inside the boundary");
    assert_eq!(sig.as_bytes().len(), 3309);
    Verifier::verify(&vk, b"signed inside the boundary", &sig).unwrap();
    assert!(Verifier::verify(&vk, b"another message", &sig).is_err());
    // With a context string, and through the randomized form.
    let signer = key.with_context(b"release").unwrap();
    let sig = sign_generic(&signer, b"v2");
    vk.with_context(b"release")
        .unwrap()
        .verify(b"v2", &sig)
        .unwrap();
    assert!(Verifier::verify(&vk, b"v2", &sig).is_err());
    let a = key.sign_with_rng(&mut Untouched, b"m");
    let b = key.sign_with_rng(&mut Untouched, b"m");
    Verifier::verify(&vk, b"m", &a).unwrap();
    Verifier::verify(&vk, b"m", &b).unwrap();
    assert_ne!(a, b, "the token hedges with its own randomness");
    // No PKCS#8 form leaves the token, through the encoding traits either.
    use pqkit_pki::rustcrypto::PrivateKey;
    use pqkit_pki::rustcrypto::pkcs8::EncodePrivateKey;
    assert!(PrivateKey::Signing(key).to_pkcs8_der().is_err());
}
