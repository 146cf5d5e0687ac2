//! pqkit's keys behind RustCrypto's `pkcs8` 0.11 / `spki` 0.8 traits: code generic over
//! `DecodePrivateKey` and `EncodePublicKey` reads and writes every catalogue key in the forms
//! pqkit's own files use, and RustCrypto's ML-DSA (`ml-dsa` 0.1) reads pqkit's ML-DSA keys and
//! pqkit reads its, through the same traits.

use pqkit_core::catalogue;
use pqkit_pki::key::{self, KeyFormat, PublicKey};
use pqkit_pki::rustcrypto::PrivateKey;
use pqkit_pki::rustcrypto::pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding};
use pqkit_pki::rustcrypto::spki::{DecodePublicKey, EncodePublicKey};

/// Third-party code: any key type with PKCS#8, through PEM.
fn reread<K: DecodePrivateKey + EncodePrivateKey>(key: &K) -> K {
    let pem = key.to_pkcs8_pem(LineEnding::LF).expect("PEM");
    assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"));
    K::from_pkcs8_pem(&pem).expect("read back")
}

/// Third-party code: any public key type with SPKI.
fn reread_public<K: DecodePublicKey + EncodePublicKey>(key: &K) -> K {
    let der = key.to_public_key_der().expect("SPKI");
    K::from_public_key_der(der.as_bytes()).expect("read back")
}

/// The same key; the same algorithm too, but for RSA: rsaEncryption (RFC 8017 A.1) does not
/// say which padding, and a PKCS#1 v1.5 key reads back as RSA-PSS, as pqkit's files do.
fn same_key(got: &pqkit_core::sig::VerifyingKey, want: &pqkit_core::sig::VerifyingKey) {
    let (g, w) = (got.algorithm(), want.algorithm());
    assert_eq!(got.as_bytes(), want.as_bytes(), "{}", w.name);
    assert_eq!(g.name, w.name.replace("RSA-PKCS1-", "RSA-PSS-"));
}

#[test]
fn every_catalogue_key_round_trips_through_the_traits() {
    for alg in catalogue::signatures() {
        let key = alg.generate().expect("generate");
        let vk = key.verifying_key();
        let ours = key::signing_key_to_pkcs8(&key, KeyFormat::Seed).expect("pqkit's PKCS#8");
        let private = PrivateKey::Signing(key);
        let der = private.to_pkcs8_der().expect("PKCS#8");
        assert_eq!(
            der.as_bytes(),
            &ours[..],
            "{}: the same bytes as pqkit's files",
            alg.name
        );
        let back = reread(&private).into_signing_key().expect("a signing key");
        same_key(&back.verifying_key(), &vk);
        let spki = PublicKey::Verifying(vk.clone());
        assert_eq!(
            spki.to_public_key_der().expect("SPKI").as_bytes(),
            &key::spki_der(&vk).expect("pqkit's SPKI")[..]
        );
        match reread_public(&spki) {
            PublicKey::Verifying(k) => same_key(&k, &vk),
            PublicKey::Encapsulation(_) => panic!("{}: read back as a KEM key", alg.name),
        }
    }
    for alg in catalogue::kems() {
        let key = alg.generate().expect("generate");
        let ek = key.encapsulation_key().as_bytes().to_vec();
        let ours = key::decapsulation_key_to_pkcs8(&key, KeyFormat::Seed).expect("PKCS#8");
        let spki_ours =
            key::encapsulation_key_spki_der(key.encapsulation_key()).expect("pqkit's SPKI");
        let private = PrivateKey::Decapsulation(key);
        assert_eq!(
            private.to_pkcs8_der().expect("PKCS#8").as_bytes(),
            &ours[..],
            "{}",
            alg.name
        );
        let back = reread(&private)
            .into_decapsulation_key()
            .expect("a decapsulation key");
        assert_eq!(back.encapsulation_key().as_bytes(), &ek[..], "{}", alg.name);
        let spki = PublicKey::Encapsulation(back.encapsulation_key().clone());
        assert_eq!(
            spki.to_public_key_der().expect("SPKI").as_bytes(),
            &spki_ours[..],
            "{}",
            alg.name
        );
        match reread_public(&spki) {
            PublicKey::Encapsulation(k) => assert_eq!(k.as_bytes(), &ek[..], "{}", alg.name),
            PublicKey::Verifying(_) => panic!("{}: read back as a signature key", alg.name),
        }
    }
}

/// A key read from the expanded or the both form (RFC 9881 §6, RFC 9935 §6) has no seed or
/// keeps it: either way it is written back, in the form it can.
#[test]
fn keys_read_in_every_form_write_back() {
    let key = catalogue::signature("ML-DSA-65")
        .and_then(|a| a.generate())
        .expect("key");
    let kem = catalogue::kem("ML-KEM-768")
        .and_then(|a| a.generate())
        .expect("kem");
    for format in [KeyFormat::Seed, KeyFormat::Expanded, KeyFormat::Both] {
        let der = key::signing_key_to_pkcs8(&key, format).expect("PKCS#8");
        let back = PrivateKey::from_pkcs8_der(&der).expect("read");
        let written = back.to_pkcs8_der().expect("written back");
        let want = match format {
            KeyFormat::Expanded => KeyFormat::Expanded,
            _ => KeyFormat::Seed,
        };
        assert_eq!(
            written.as_bytes(),
            &key::signing_key_to_pkcs8(&key, want).expect("PKCS#8")[..],
            "{format:?}"
        );
        let der = key::decapsulation_key_to_pkcs8(&kem, format).expect("PKCS#8");
        let back = PrivateKey::from_pkcs8_der(&der).expect("read");
        assert_eq!(
            back.to_pkcs8_der().expect("written back").as_bytes(),
            &key::decapsulation_key_to_pkcs8(&kem, want).expect("PKCS#8")[..],
            "ML-KEM {format:?}"
        );
    }
}

/// Errors come as the traits' kinds: an algorithm outside the catalogue is `OidUnknown`
/// (generic code may then try another key type), bad DER `Asn1`.
#[test]
fn an_unknown_algorithm_is_oid_unknown() {
    use pqkit_pki::rustcrypto::pkcs8;
    use pqkit_pki::rustcrypto::spki;
    let key = catalogue::signature("ML-DSA-44")
        .and_then(|a| a.generate())
        .expect("key");
    // id-ml-dsa-44 is 2.16.840.1.101.3.4.3.17; its last arc made 127.
    let oid = [
        0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11,
    ];
    let renamed = |der: &[u8]| {
        let at = der
            .windows(oid.len())
            .position(|w| w == oid)
            .expect("the OID");
        let mut der = der.to_vec();
        der[at + oid.len() - 1] = 0x7f;
        der
    };
    let unknown: spki::ObjectIdentifier = "2.16.840.1.101.3.4.3.127".parse().expect("OID");
    let der = PrivateKey::Signing(key).to_pkcs8_der().expect("PKCS#8");
    match PrivateKey::from_pkcs8_der(&renamed(der.as_bytes())) {
        Err(pkcs8::Error::PublicKey(spki::Error::OidUnknown { oid })) => assert_eq!(oid, unknown),
        other => panic!("{other:?}"),
    }
    let vk = catalogue::signature("ML-DSA-44")
        .and_then(|a| a.generate())
        .expect("key")
        .verifying_key();
    let spki_der = PublicKey::Verifying(vk).to_public_key_der().expect("SPKI");
    match PublicKey::from_public_key_der(&renamed(spki_der.as_bytes())) {
        Err(spki::Error::OidUnknown { oid }) => assert_eq!(oid, unknown),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        PrivateKey::from_pkcs8_der(b"\x30\x01\x00"),
        Err(pkcs8::Error::Asn1(_))
    ));
}

#[test]
fn malformed_input_is_an_error_never_a_panic() {
    let key = catalogue::signature("ML-DSA-44")
        .and_then(|a| a.generate())
        .expect("key");
    let der = PrivateKey::Signing(key).to_pkcs8_der().expect("PKCS#8");
    let bytes = der.as_bytes();
    for cut in 0..bytes.len() {
        assert!(
            PrivateKey::from_pkcs8_der(&bytes[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    for i in 0..bytes.len() {
        let mut flipped = bytes.to_vec();
        flipped[i] ^= 0x01;
        // Some flips land in the seed and give another valid key; none may panic.
        let _ = PrivateKey::from_pkcs8_der(&flipped);
    }
    // The same for an ML-KEM key and a public key.
    let kem = catalogue::kem("ML-KEM-512")
        .and_then(|a| a.generate())
        .expect("kem");
    let spki = PublicKey::Encapsulation(kem.encapsulation_key().clone())
        .to_public_key_der()
        .expect("SPKI");
    let kem_der = PrivateKey::Decapsulation(kem)
        .to_pkcs8_der()
        .expect("PKCS#8");
    for (i, bytes) in [kem_der.as_bytes(), spki.as_bytes()]
        .into_iter()
        .enumerate()
    {
        for cut in 0..bytes.len() {
            let _ = PrivateKey::from_pkcs8_der(&bytes[..cut]);
            assert!(
                PublicKey::from_public_key_der(&bytes[..cut]).is_err() || i == 0,
                "cut at {cut}"
            );
        }
        for j in 0..bytes.len() {
            let mut flipped = bytes.to_vec();
            flipped[j] ^= 0x01;
            let _ = PrivateKey::from_pkcs8_der(&flipped);
            let _ = PublicKey::from_public_key_der(&flipped);
        }
    }
    assert!(PublicKey::from_public_key_der(b"\x30\x03\x02\x01\x00").is_err());
    assert!(
        PrivateKey::from_pkcs8_pem(
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
        )
        .is_err()
    );
}

/// RustCrypto's ML-DSA and pqkit read each other's PKCS#8 (RFC 9881 seed form) and SPKI
/// through the traits, to the same keys.
#[test]
fn rustcrypto_ml_dsa_reads_pqkit_keys_and_the_reverse() {
    macro_rules! both_ways {
        ($name:expr, $p:ty) => {{
            let key = catalogue::signature($name)
                .and_then(|a| a.generate())
                .expect($name);
            let vk = key.verifying_key();
            let der = PrivateKey::Signing(key).to_pkcs8_der().expect("PKCS#8");
            // pqkit → ml-dsa.
            let theirs =
                ml_dsa::SigningKey::<$p>::from_pkcs8_der(der.as_bytes()).expect("ml-dsa reads");
            let their_vk = signature::Keypair::verifying_key(&theirs);
            assert_eq!(their_vk.encode().as_slice(), vk.as_bytes(), "{}", $name);
            let spki = PublicKey::Verifying(vk.clone())
                .to_public_key_der()
                .expect("SPKI");
            let their_public = ml_dsa::VerifyingKey::<$p>::from_public_key_der(spki.as_bytes())
                .expect("ml-dsa reads SPKI");
            assert_eq!(their_public.encode().as_slice(), vk.as_bytes());
            // ml-dsa → pqkit.
            let their_der = theirs.to_pkcs8_der().expect("ml-dsa writes");
            assert_eq!(
                their_der.as_bytes(),
                der.as_bytes(),
                "{}: the same seed-form bytes",
                $name
            );
            let ours = PrivateKey::from_pkcs8_der(their_der.as_bytes())
                .expect("pqkit reads")
                .into_signing_key()
                .expect("signing");
            assert_eq!(ours.verifying_key(), vk);
            let their_spki = their_vk.to_public_key_der().expect("ml-dsa SPKI");
            assert_eq!(their_spki.as_bytes(), spki.as_bytes(), "{}", $name);
        }};
    }
    both_ways!("ML-DSA-44", ml_dsa::MlDsa44);
    both_ways!("ML-DSA-65", ml_dsa::MlDsa65);
    both_ways!("ML-DSA-87", ml_dsa::MlDsa87);
}
