//! Every catalogue signature algorithm through the PKI: a root CA and a leaf issued from a CSR,
//! encoded, decoded and verified; then every key, signature, certificate and CSR decoder fed
//! every truncation and 100 over-long inputs — each must return an error, never panic.
//! ML-KEM keys (RFC 9935) get the same sweep for their SPKI and PKCS#8 decoders.

use std::net::IpAddr;
use std::time::Duration;

use pqkit_core::catalogue;
use pqkit_core::sig::{Family, SignatureAlgorithm};
use pqkit_pki::cert::{self, CertRequest, Issuer, Profile};
use pqkit_pki::csr;
use pqkit_pki::key::{self, KeyFormat};
use pqkit_pki::pem;

/// `input` cut to every shorter length, then extended by 1..=100 bytes (alternately 0xA5 and
/// zeros, so that decoders which ignore trailing zero padding are caught too).
/// Asserts that `decode` returns an error for every bad length of `input`: every truncation
/// (as a slice, so that megabyte inputs cost no copies) and 100 extensions.
fn sweep<T>(what: &str, alg: &str, input: &[u8], decode: impl Fn(&[u8]) -> Result<T, String>) {
    let refuse = |bad: &[u8]| {
        assert!(
            decode(bad).is_err(),
            "{alg}: {what} of {} bytes (valid: {}) was accepted",
            bad.len(),
            input.len()
        );
    };
    for n in 0..input.len() {
        refuse(&input[..n]);
    }
    let mut long = input.to_vec();
    for extra in 1..=100usize {
        long.truncate(input.len());
        long.resize(input.len() + extra, if extra % 2 == 0 { 0 } else { 0xA5 });
        refuse(&long);
    }
}

fn e<T>(r: Result<T, pqkit_pki::Error>) -> Result<(), String> {
    r.map(|_| ()).map_err(|e| e.to_string())
}

fn chain_and_sweep(alg: &'static SignatureAlgorithm) {
    let name = alg.name;
    // Root CA, self-signed.
    let root_key = alg.generate().expect("root key");
    let root = cert::issue_self_signed(&CertRequest::new(Profile::RootCa, "root"), &root_key)
        .expect("root certificate");
    // Leaf: CSR → PEM → verified → issued by the root.
    let leaf_key = alg.generate().expect("leaf key");
    let dns = vec!["device.example".to_owned()];
    let ips = vec![IpAddr::from([127, 0, 0, 1]), "::1".parse().expect("ip")];
    let request = csr::create(&leaf_key, "CN=device 7,O=pqkit", &dns, &ips).expect("CSR");
    let request_pem = pem::encode(pem::CERTIFICATE_REQUEST, &request).expect("pem");
    let request = pem::decode_all(&request_pem, pem::CERTIFICATE_REQUEST)
        .expect("decode")
        .remove(0);
    let verified = csr::verify(&request).expect("CSR verifies");
    assert_eq!(verified.public_key, leaf_key.verifying_key(), "{name}");
    assert_eq!((&verified.dns_names, &verified.ip_addresses), (&dns, &ips));
    assert_eq!(verified.subject.to_string(), "CN=device 7,O=pqkit");
    let issuer = Issuer {
        certificate: &root,
        key: &root_key,
    };
    let leaf = csr::issue(
        &verified,
        Profile::Server,
        Duration::from_secs(3600),
        issuer,
    )
    .expect("leaf certificate");
    // Encode as a PEM chain, decode, verify each link.
    let chain_pem = pem::encode(pem::CERTIFICATE, &leaf).expect("pem")
        + &pem::encode(pem::CERTIFICATE, &root).expect("pem");
    let chain = pem::decode_all(&chain_pem, pem::CERTIFICATE).expect("decode chain");
    assert_eq!(chain, vec![leaf.clone(), root.clone()], "{name}");
    cert::verify_signed_by(&chain[0], &chain[1]).expect("leaf signed by root");
    cert::verify_signed_by(&chain[1], &chain[1]).expect("root self-signed");
    assert!(
        cert::verify_signed_by(&chain[1], &chain[0]).is_err(),
        "{name}: root is not signed by the leaf"
    );
    // A CSR with a flipped signature bit is refused.
    let mut forged = request.clone();
    let last = forged.len() - 1;
    forged[last] ^= 0x01;
    assert!(csr::verify(&forged).is_err(), "{name}: forged CSR accepted");

    // The sweep.
    let spki = key::spki_der(&leaf_key.verifying_key()).expect("spki");
    sweep("SPKI", name, &spki, |b| e(key::verifying_key_from_spki(b)));
    sweep("SPKI (any kind)", name, &spki, |b| {
        e(key::public_key_from_spki(b))
    });
    for format in [KeyFormat::Seed, KeyFormat::Expanded, KeyFormat::Both] {
        if alg.family != Family::MlDsa && format != KeyFormat::Seed {
            continue; // one form only
        }
        let pkcs8 = key::signing_key_to_pkcs8(&leaf_key, format).expect("pkcs8");
        let back = key::signing_key_from_pkcs8(&pkcs8).expect("pkcs8 decodes");
        // Bytes, not algorithms: an RSA PKCS#8 file does not say PSS or PKCS#1.
        assert_eq!(
            back.verifying_key().as_bytes(),
            leaf_key.verifying_key().as_bytes(),
            "{name}"
        );
        sweep("PKCS#8", name, &pkcs8, |b| {
            e(key::signing_key_from_pkcs8(b))
        });
    }
    let raw = leaf_key.verifying_key();
    sweep("raw verifying key", name, raw.as_bytes(), |b| {
        alg.verifying_key(b).map(|_| ()).map_err(|e| e.to_string())
    });
    // The leaf certificate's signature, checked under the root's key.
    let parsed: x509_cert::Certificate = der::Decode::from_der(&leaf).expect("x509");
    let tbs = der::Encode::to_der(&parsed.tbs_certificate).expect("tbs");
    let signature = parsed.signature.raw_bytes();
    let root_vk = root_key.verifying_key();
    root_vk
        .verify(&tbs, &[], signature)
        .expect("certificate signature");
    sweep("signature", name, signature, |b| {
        root_vk.verify(&tbs, &[], b).map_err(|e| e.to_string())
    });
    sweep("certificate", name, &leaf, |b| {
        e(cert::verify_signed_by(b, &root))
    });
    sweep("issuer certificate", name, &root, |b| {
        e(cert::verify_signed_by(&leaf, b))
    });
    sweep("CSR", name, &request, |b| e(csr::verify(b)));
}

fn run(filter: impl Fn(&SignatureAlgorithm) -> bool) {
    let algs: Vec<_> = catalogue::signatures()
        .iter()
        .copied()
        .filter(|a| filter(a))
        .collect();
    assert!(!algs.is_empty());
    for alg in algs {
        chain_and_sweep(alg);
    }
}

fn is_slh_dsa_sha2(a: &SignatureAlgorithm) -> bool {
    a.family == Family::SlhDsa && a.name.contains("SHA2")
}

fn is_slh_dsa_shake(a: &SignatureAlgorithm) -> bool {
    a.family == Family::SlhDsa && a.name.contains("SHAKE")
}

#[test]
fn ml_dsa() {
    run(|a| a.family == Family::MlDsa);
}

#[test]
fn slh_dsa_sha2() {
    run(is_slh_dsa_sha2);
}

#[test]
fn slh_dsa_shake() {
    run(is_slh_dsa_shake);
}

#[test]
fn falcon() {
    run(|a| a.family == Family::Falcon);
}

#[test]
fn classical() {
    run(|a| !a.family.is_post_quantum());
}

/// The 18 composite ML-DSA sets (draft-ietf-lamps-pq-composite-sigs-19).
#[test]
fn composite_ml_dsa() {
    run(|a| a.family == Family::CompositeMlDsa);
}

/// The six tests above together cover the whole catalogue.
#[test]
fn every_catalogue_signature_algorithm_is_covered() {
    for a in catalogue::signatures() {
        assert!(
            matches!(
                a.family,
                Family::MlDsa | Family::Falcon | Family::CompositeMlDsa
            ) || is_slh_dsa_sha2(a)
                || is_slh_dsa_shake(a)
                || !a.family.is_post_quantum(),
            "{} is in no test",
            a.name
        );
    }
}

/// Every KEM of the catalogue (ML-KEM, and BIKE, FrodoKEM and Classic McEliece from liboqs):
/// its SPKI, raw encapsulation key, ciphertext and PKCS#8 in every form, at every bad length.
#[test]
fn kem_key_decoders() {
    for kem in catalogue::kems() {
        let dk = kem.generate().expect("key");
        let ek = dk.encapsulation_key();
        let (ct, _) = ek.encapsulate().expect("encapsulate");
        sweep("ciphertext", kem.name, &ct, |b| {
            dk.decapsulate(b).map(|_| ()).map_err(|e| e.to_string())
        });
        let spki = key::encapsulation_key_spki_der(ek).expect("spki");
        sweep("SPKI", kem.name, &spki, |b| e(key::public_key_from_spki(b)));
        sweep("raw encapsulation key", kem.name, ek.as_bytes(), |b| {
            kem.encapsulation_key(b)
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        let formats: &[KeyFormat] = if kem.seed_size > 0 {
            &[KeyFormat::Seed, KeyFormat::Expanded, KeyFormat::Both]
        } else {
            &[KeyFormat::Expanded]
        };
        for &format in formats {
            let pkcs8 = key::decapsulation_key_to_pkcs8(&dk, format).expect("pkcs8");
            let back = key::decapsulation_key_from_pkcs8(&pkcs8).expect("decodes");
            assert_eq!(back.encapsulation_key().as_bytes(), ek.as_bytes());
            sweep("PKCS#8", kem.name, &pkcs8, |b| {
                e(key::decapsulation_key_from_pkcs8(b))
            });
        }
    }
}
