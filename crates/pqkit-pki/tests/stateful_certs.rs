//! RFC 9802 certificates: an HSS root CA (its key in a pqkit-hbs state file) issues a
//! firmware-signing certificate for an XMSS^MT key and a TLS-client certificate for an
//! ML-DSA-65 key; each verifies under the root, a changed certificate does not, and every
//! certificate the root signs spends one of its one-time keys.

use std::path::PathBuf;

use der::{Decode, Encode};
use pqkit_hbs::ledger::hazmat::in_memory;
use pqkit_hbs::params::{LMS, OTS};
use pqkit_hbs::public::{HSS_OID, PublicKey, XMSS_MT_OID};
use pqkit_hbs::state::StatefulKey;
use pqkit_pki::cert::{self, CertRequest, Profile};
use pqkit_pki::stateful_ca;
use x509_cert::Certificate;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pqkit-pki-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    dir
}

#[test]
fn an_hss_root_issues_a_firmware_signing_certificate() {
    let dir = scratch("hss-ca");
    // LMS_SHA256_M32_H5 / LMOTS_SHA256_N32_W8, two levels.
    let level = (&LMS[0], &OTS[3]);
    let mut ca =
        StatefulKey::create(&dir.join("ca.hss"), &[level, level], in_memory(), 2).expect("CA key");
    let root =
        stateful_ca::issue_self_signed(&CertRequest::new(Profile::RootCa, "HSS root"), &mut ca)
            .expect("root");
    cert::verify_signed_by(&root, &root).expect("the root verifies under itself");

    // The firmware-signing key: XMSS^MT.
    let fw = pqkit_hbs::xmss::XmssSigner::generate(
        pqkit_hbs::xmss::by_name("XMSSMT-SHA2_20/4_256").expect("set"),
        &[1; 32],
        &[2; 32],
        &[3; 32],
        2,
    )
    .expect("firmware key");
    let fw_public = PublicKey::Xmss(fw.public_key());
    let request = CertRequest::new(Profile::CodeSigning, "firmware signing");
    let leaf = stateful_ca::issue(
        &request,
        &fw_public.to_spki_der().expect("spki"),
        &root,
        &mut ca,
    )
    .expect("firmware certificate");
    cert::verify_signed_by(&leaf, &root).expect("the firmware certificate verifies");

    let parsed = Certificate::from_der(&leaf).expect("DER");
    assert_eq!(parsed.signature_algorithm.oid, HSS_OID);
    assert!(
        parsed.signature_algorithm.parameters.is_none(),
        "RFC 9802: parameters absent"
    );
    let spki = &parsed.tbs_certificate.subject_public_key_info;
    assert_eq!(spki.algorithm.oid, XMSS_MT_OID);
    let spki_der = spki.to_der().expect("spki");
    assert_eq!(PublicKey::from_spki_der(&spki_der).expect("key"), fw_public);

    // An ML-DSA-65 TLS client under the same root.
    let mldsa = pqkit_core::catalogue::signature("ML-DSA-65")
        .expect("alg")
        .generate()
        .expect("key");
    let client_spki = pqkit_pki::key::spki_der(&mldsa.verifying_key()).expect("spki");
    let client = stateful_ca::issue(
        &CertRequest::new(Profile::Client, "client"),
        &client_spki,
        &root,
        &mut ca,
    )
    .expect("client certificate");
    cert::verify_signed_by(&client, &root).expect("the client certificate verifies");

    // A changed byte in the signed part, and a certificate under another HSS key, fail.
    let mut bad = leaf.clone();
    let at = bad.len() / 3;
    bad[at] ^= 1;
    assert!(cert::verify_signed_by(&bad, &root).is_err());
    let mut other =
        StatefulKey::create(&dir.join("other.hss"), &[level], in_memory(), 1).expect("other");
    let other_root =
        stateful_ca::issue_self_signed(&CertRequest::new(Profile::RootCa, "other"), &mut other)
            .expect("other root");
    assert!(cert::verify_signed_by(&leaf, &other_root).is_err());
    // The wrong state file for the CA certificate is refused before any one-time key is used.
    let used = other.status().used;
    assert!(stateful_ca::issue(&request, &client_spki, &root, &mut other).is_err());
    assert_eq!(other.status().used, used);
    // Three certificates, three one-time keys.
    assert_eq!(ca.status().used, 3);
}
