//! Decoders of files users hand pqkit: PEM and DER, PKCS#8 private keys, SPKI public keys,
//! certificate chains (through the path validator), CSRs.

use std::time::{Duration, UNIX_EPOCH};

use pqkit_pki::path::{Purpose, TrustAnchors};
use pqkit_pki::{csr, key, pem};
use rustls_pki_types::CertificateDer;

/// PEM text (any label) and the PEM-or-DER sniffing every reader uses.
pub(crate) fn pem_der(data: &[u8]) {
    for label in [
        pem::CERTIFICATE,
        pem::PRIVATE_KEY,
        pem::PUBLIC_KEY,
        pem::CERTIFICATE_REQUEST,
    ] {
        let _ = pem::decode_pem_or_der(data, label);
    }
    if let Ok(text) = core::str::from_utf8(data) {
        let _ = pem::decode_all(text, pem::CERTIFICATE);
    }
}

/// A PKCS#8 document as a signing key, a decapsulation key, and its algorithm. A key that
/// loads signs or refuses to, without hanging (the load checks and the bounded signers), and
/// never makes a signature its own verifying key rejects (an expanded-only ML-DSA key whose t0
/// is damaged is refused when it is loaded).
pub(crate) fn pkcs8_key(data: &[u8]) {
    let _ = key::pkcs8_algorithm(data);
    if let Ok(k) = key::signing_key_from_pkcs8(data)
        && let Ok(sig) = k.sign(b"fuzz", &[])
    {
        k.verifying_key()
            .verify(b"fuzz", &[], &sig)
            .expect("a signature from a key that loaded verifies");
    }
    if let Ok(dk) = key::decapsulation_key_from_pkcs8(data) {
        let (ct, ss) = dk.encapsulation_key().encapsulate().expect("encapsulate");
        assert!(dk.decapsulate(&ct).expect("decapsulate") == ss);
    }
}

/// An SPKI of any algorithm, and the same bytes as an RFC 9802 stateful key.
pub(crate) fn spki(data: &[u8]) {
    let _ = key::public_key_from_spki(data);
    let _ = pqkit_hbs::public::PublicKey::from_spki_der(data);
}

/// Concatenated DER certificates: the last is trusted, the others are the chain (leaf first);
/// the path is validated for every purpose, and the trust anchors alone are checked.
pub(crate) fn certificate_path(data: &[u8]) {
    let Ok(certs) = pem::decode_pem_or_der(data, pem::CERTIFICATE) else {
        return;
    };
    let Some((anchor, chain)) = certs.split_last() else {
        return;
    };
    let Ok(anchors) = TrustAnchors::new(std::slice::from_ref(anchor)) else {
        return;
    };
    let chain: Vec<CertificateDer<'_>> = if chain.is_empty() {
        vec![CertificateDer::from(&anchor[..])]
    } else {
        chain.iter().map(|c| CertificateDer::from(&c[..])).collect()
    };
    let at = UNIX_EPOCH + Duration::from_secs(1_780_272_000);
    for purpose in [Purpose::ServerAuth, Purpose::CodeSigning, Purpose::Any] {
        let _ = anchors.verify(&chain, purpose, at);
    }
    let _ = pqkit_pki::path::check_can_issue(anchor, true, at);
}

/// A PKCS#10 request: decoded and its signature verified.
pub(crate) fn csr(data: &[u8]) {
    let _ = csr::verify(data);
}

/// A CMS SignedData (DER or BER): described, then verified with the OpenSSL 3.5 hackathon
/// trust anchor (the corpus holds that provider's ML-DSA-44 SignedData, Bouncy Castle's BER
/// one, and pqkit's own), attached content, codeSigning or any purpose.
pub(crate) fn cms_signed_data(data: &[u8]) {
    use pqkit_pki::cms::{self, Require, VerifyOptions};
    use pqkit_pki::path::Policy;
    static ANCHORS: std::sync::OnceLock<TrustAnchors> = std::sync::OnceLock::new();
    let anchors = ANCHORS.get_or_init(|| {
        let ta = include_bytes!("../../crates/pqkit-pki/tests/data/cms-hackathon/ossl35/ta.der");
        TrustAnchors::new(&[ta.to_vec()]).expect("the hackathon trust anchor")
    });
    let _ = cms::describe(data);
    let at = UNIX_EPOCH + Duration::from_secs(1_785_542_400);
    for purpose in [Purpose::CodeSigning, Purpose::Any] {
        let options = VerifyOptions {
            anchors,
            policy: Policy::new(purpose, at),
            certificates: Vec::new(),
            signers: Vec::new(),
            require: Require::Any,
            tsa_anchors: None,
        };
        let _ = cms::verify(data, None, &options);
        let _ = cms::verify(data, Some(&mut &b"detached content"[..]), &options);
    }
}
