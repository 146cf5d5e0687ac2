//! Certificate chains that break one rule of RFC 5280 path validation each, built here with
//! x509-cert so that every field can be set wrong on purpose — the table behind
//! `tests/path_validation.rs` and its OpenSSL fixtures (`tests/data/paths`).

use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use const_oid::ObjectIdentifier;
use const_oid::db::rfc5280;
use der::asn1::{BitString, Ia5String, OctetString};
use der::{AnyRef, Encode, Tag};
use pqkit_core::sig::{SignatureAlgorithm, SigningKey};
use pqkit_pki::path::Purpose;
use spki::AlgorithmIdentifierOwned;
use x509_cert::ext::Extension;
use x509_cert::ext::pkix::constraints::name::{GeneralSubtree, NameConstraints};
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectAltName, SubjectKeyIdentifier,
};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::time::{Time, Validity};
use x509_cert::{Certificate, TbsCertificate, Version};

/// 2025-01-01T00:00:00Z: every certificate's notBefore unless a case says otherwise.
pub(crate) const NOT_BEFORE: u64 = 1_735_689_600;
/// 2035-01-01T00:00:00Z.
pub(crate) const NOT_AFTER: u64 = 2_051_222_400;
/// 2026-06-01T00:00:00Z: the time every case is validated at.
pub(crate) const AT: u64 = 1_780_272_000;
/// 2026-01-01T00:00:00Z: notAfter of an expired certificate.
pub(crate) const EXPIRED: u64 = 1_767_225_600;
/// 2027-01-01T00:00:00Z: notBefore of a certificate not yet valid.
pub(crate) const FUTURE: u64 = 1_798_761_600;

/// An OID no validator knows, for an unknown critical extension.
const UNKNOWN_EXTENSION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.55555.1");

/// How one certificate is made.
#[derive(Clone)]
pub(crate) struct Spec {
    pub(crate) cn: &'static str,
    /// basicConstraints (cA, pathLenConstraint); `None`: no extension.
    pub(crate) basic: Option<(bool, Option<u8>)>,
    pub(crate) key_usage: Option<KeyUsage>,
    pub(crate) eku: Option<Vec<ObjectIdentifier>>,
    pub(crate) dns: Vec<&'static str>,
    /// A permitted DNS subtree (name constraints).
    pub(crate) permitted_dns: Option<&'static str>,
    pub(crate) unknown_critical: bool,
    pub(crate) not_before: u64,
    pub(crate) not_after: u64,
    /// The issuer name written into the certificate instead of the issuer's subject.
    pub(crate) issuer_name: Option<&'static str>,
    /// The algorithm written into the TBSCertificate's signature field instead of the real one.
    pub(crate) tbs_algorithm: Option<&'static SignatureAlgorithm>,
    /// Flip a bit of the signature.
    pub(crate) bad_signature: bool,
}

impl Spec {
    pub(crate) fn ca(cn: &'static str) -> Self {
        Self {
            cn,
            basic: Some((true, None)),
            key_usage: Some(KeyUsage(KeyUsages::KeyCertSign | KeyUsages::CRLSign)),
            eku: None,
            dns: Vec::new(),
            permitted_dns: None,
            unknown_critical: false,
            not_before: NOT_BEFORE,
            not_after: NOT_AFTER,
            issuer_name: None,
            tbs_algorithm: None,
            bad_signature: false,
        }
    }

    pub(crate) fn leaf(cn: &'static str, eku: ObjectIdentifier) -> Self {
        Self {
            basic: Some((false, None)),
            key_usage: Some(KeyUsage(KeyUsages::DigitalSignature.into())),
            eku: Some(vec![eku]),
            dns: vec!["localhost"],
            ..Self::ca(cn)
        }
    }

    fn name(&self) -> String {
        format!("CN={},O=pqkit path tests", self.cn)
    }
}

/// A certificate and its key.
pub(crate) struct Issued {
    pub(crate) der: Vec<u8>,
    pub(crate) key: SigningKey,
    pub(crate) name: String,
}

/// Issues `spec` for a fresh key of `alg`, signed by `issuer` (self-signed when `None`).
pub(crate) fn issue(
    spec: &Spec,
    alg: &'static SignatureAlgorithm,
    issuer: Option<&Issued>,
) -> Issued {
    let key = alg.generate().expect("key");
    let subject = spec.name();
    let (issuer_name, signer) = match issuer {
        Some(i) => (i.name.clone(), &i.key),
        None => (subject.clone(), &key),
    };
    let issuer_name = spec.issuer_name.map_or(issuer_name, |n| n.to_owned());
    let signature_algorithm = algorithm(signer.algorithm().signature_algorithm_id);
    let tbs_algorithm = spec.tbs_algorithm.map_or_else(
        || signature_algorithm.clone(),
        |a| algorithm(a.signature_algorithm_id),
    );
    let vk = key.verifying_key();
    let spki = pqkit_pki::key::spki(&vk).expect("spki");
    // A positive serial from the key: unique per certificate, nonzero first byte.
    let mut serial = [0u8; 8];
    serial.copy_from_slice(&vk.as_bytes()[..8]);
    serial[0] = (serial[0] & 0x7f) | 0x01;
    let tbs = TbsCertificate {
        version: Version::V3,
        serial_number: SerialNumber::new(&serial).expect("serial"),
        signature: tbs_algorithm,
        issuer: Name::from_str(&issuer_name).expect("issuer"),
        validity: Validity {
            not_before: time(spec.not_before),
            not_after: time(spec.not_after),
        },
        subject: Name::from_str(&subject).expect("subject"),
        subject_public_key_info: spki,
        issuer_unique_id: None,
        subject_unique_id: None,
        extensions: Some(extensions(
            spec,
            vk.as_bytes(),
            signer.verifying_key().as_bytes(),
        )),
    };
    let tbs_der = tbs.to_der().expect("tbs");
    let mut signature = signer.sign(&tbs_der, &[]).expect("sign");
    if spec.bad_signature {
        let n = signature.len() / 2;
        signature[n] ^= 0x04;
    }
    let der = Certificate {
        tbs_certificate: tbs,
        signature_algorithm,
        signature: BitString::from_bytes(&signature).expect("bits"),
    }
    .to_der()
    .expect("certificate");
    Issued {
        der,
        key,
        name: subject,
    }
}

/// The key identifier of a public key: the first 20 bytes of its SHA-256 (RFC 7093 §2 (1)).
fn key_id(public_key: &[u8]) -> OctetString {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, public_key);
    OctetString::new(&digest.as_ref()[..20]).expect("key id")
}

fn extensions(spec: &Spec, public_key: &[u8], issuer_key: &[u8]) -> Vec<Extension> {
    let mut out = Vec::new();
    if let Some((ca, path_len)) = spec.basic {
        out.push(ext(
            &BasicConstraints {
                ca,
                path_len_constraint: path_len,
            },
            true,
        ));
    }
    if let Some(ku) = spec.key_usage {
        out.push(ext(&ku, true));
    }
    out.push(ext(&SubjectKeyIdentifier(key_id(public_key)), false));
    out.push(ext(
        &AuthorityKeyIdentifier {
            key_identifier: Some(key_id(issuer_key)),
            authority_cert_issuer: None,
            authority_cert_serial_number: None,
        },
        false,
    ));
    if let Some(eku) = &spec.eku {
        out.push(ext(&ExtendedKeyUsage(eku.clone()), false));
    }
    if !spec.dns.is_empty() {
        let names = spec
            .dns
            .iter()
            .map(|d| GeneralName::DnsName(Ia5String::new(d).expect("dns")))
            .collect();
        out.push(ext(&SubjectAltName(names), false));
    }
    if let Some(dns) = spec.permitted_dns {
        out.push(ext(
            &NameConstraints {
                permitted_subtrees: Some(vec![GeneralSubtree {
                    base: GeneralName::DnsName(Ia5String::new(dns).expect("dns")),
                    minimum: 0,
                    maximum: None,
                }]),
                excluded_subtrees: None,
            },
            true,
        ));
    }
    if spec.unknown_critical {
        out.push(Extension {
            extn_id: UNKNOWN_EXTENSION,
            critical: true,
            extn_value: OctetString::new(vec![0x05, 0x00]).expect("value"),
        });
    }
    out
}

fn ext<T: const_oid::AssociatedOid + Encode>(value: &T, critical: bool) -> Extension {
    Extension {
        extn_id: T::OID,
        critical,
        extn_value: OctetString::new(value.to_der().expect("der")).expect("octets"),
    }
}

fn algorithm(contents: &[u8]) -> AlgorithmIdentifierOwned {
    AnyRef::new(Tag::Sequence, contents)
        .expect("any")
        .decode_as()
        .expect("algorithm")
}

fn time(unix: u64) -> Time {
    Time::try_from(UNIX_EPOCH + Duration::from_secs(unix)).expect("time")
}

/// The validation time of every case.
pub(crate) fn at() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(AT)
}

/// One case: a chain, its trust anchors, the purpose it is validated for, and the rule pqkit
/// must name (`None`: the path validates).
pub(crate) struct Case {
    pub(crate) name: &'static str,
    /// Leaf first, then intermediates.
    pub(crate) chain: Vec<Vec<u8>>,
    pub(crate) anchors: Vec<Vec<u8>>,
    pub(crate) purpose: Purpose,
    pub(crate) expect: Option<&'static str>,
}

/// Builds every case with `alg` for every certificate (except where a case mixes).
pub(crate) fn cases(alg: &'static SignatureAlgorithm) -> Vec<Case> {
    let server = rfc5280::ID_KP_SERVER_AUTH;
    let mut out = Vec::new();
    let mut add = |name, chain: Vec<&Issued>, anchors: Vec<&Issued>, purpose, expect| {
        out.push(Case {
            name,
            chain: chain.iter().map(|c| c.der.clone()).collect(),
            anchors: anchors.iter().map(|c| c.der.clone()).collect(),
            purpose,
            expect,
        });
    };
    let root = issue(&Spec::ca("root"), alg, None);
    let int = issue(&Spec::ca("intermediate"), alg, Some(&root));
    let leaf = |spec: Spec, by: &Issued| issue(&spec, alg, Some(by));
    // A root made from `spec`, an intermediate under it and a serverAuth leaf under that.
    let path_under = |spec: Spec| {
        let root = issue(&spec, alg, None);
        let int = issue(&Spec::ca("intermediate"), alg, Some(&root));
        let leaf = issue(&Spec::leaf("leaf", server), alg, Some(&int));
        (root, int, leaf)
    };
    let good = leaf(Spec::leaf("leaf", server), &int);

    add(
        "good",
        vec![&good, &int],
        vec![&root],
        Purpose::ServerAuth,
        None,
    );
    add(
        "good-any-purpose",
        vec![&good, &int],
        vec![&root],
        Purpose::Any,
        None,
    );
    add(
        "good-intermediates-out-of-order",
        vec![&good, &int, &root],
        vec![&root],
        Purpose::ServerAuth,
        None,
    );

    // basicConstraints: an end-entity certificate issues the leaf.
    let ee_issuer = leaf(Spec::leaf("not a CA", server), &root);
    let by_ee = leaf(Spec::leaf("leaf", server), &ee_issuer);
    add(
        "issuer-not-a-ca",
        vec![&by_ee, &ee_issuer],
        vec![&root],
        Purpose::ServerAuth,
        Some("NotACa"),
    );
    let no_bc_issuer = issue(
        &Spec {
            basic: None,
            key_usage: None,
            ..Spec::ca("no basicConstraints")
        },
        alg,
        Some(&root),
    );
    let by_no_bc = leaf(Spec::leaf("leaf", server), &no_bc_issuer);
    add(
        "issuer-without-basic-constraints",
        vec![&by_no_bc, &no_bc_issuer],
        vec![&root],
        Purpose::ServerAuth,
        Some("NotACa"),
    );

    // Name chaining.
    let wrong_issuer = leaf(
        Spec {
            issuer_name: Some("CN=nobody,O=pqkit path tests"),
            ..Spec::leaf("leaf", server)
        },
        &int,
    );
    add(
        "issuer-name-matches-no-ca",
        vec![&wrong_issuer, &int],
        vec![&root],
        Purpose::ServerAuth,
        Some("UnknownIssuer"),
    );
    add(
        "intermediate-missing",
        vec![&good],
        vec![&root],
        Purpose::ServerAuth,
        Some("UnknownIssuer"),
    );
    let other_root = issue(&Spec::ca("other root"), alg, None);
    add(
        "wrong-trust-anchor",
        vec![&good, &int],
        vec![&other_root],
        Purpose::ServerAuth,
        Some("UnknownIssuer"),
    );

    // Critical extensions.
    let critical_leaf = leaf(
        Spec {
            unknown_critical: true,
            ..Spec::leaf("leaf", server)
        },
        &int,
    );
    add(
        "leaf-unknown-critical-extension",
        vec![&critical_leaf, &int],
        vec![&root],
        Purpose::ServerAuth,
        Some("UnknownCriticalExtension"),
    );
    let critical_int = issue(
        &Spec {
            unknown_critical: true,
            ..Spec::ca("intermediate")
        },
        alg,
        Some(&root),
    );
    let under_critical = leaf(Spec::leaf("leaf", server), &critical_int);
    add(
        "intermediate-unknown-critical-extension",
        vec![&under_critical, &critical_int],
        vec![&root],
        Purpose::ServerAuth,
        Some("UnknownCriticalExtension"),
    );
    let (anchor, middle, end) = path_under(Spec {
        unknown_critical: true,
        ..Spec::ca("root")
    });
    add(
        "root-unknown-critical-extension",
        vec![&end, &middle],
        vec![&anchor],
        Purpose::ServerAuth,
        Some("UnknownCriticalExtension"),
    );

    // Validity.
    let expired = leaf(
        Spec {
            not_after: EXPIRED,
            ..Spec::leaf("leaf", server)
        },
        &int,
    );
    add(
        "leaf-expired",
        vec![&expired, &int],
        vec![&root],
        Purpose::ServerAuth,
        Some("Expired"),
    );
    let future = leaf(
        Spec {
            not_before: FUTURE,
            ..Spec::leaf("leaf", server)
        },
        &int,
    );
    add(
        "leaf-not-yet-valid",
        vec![&future, &int],
        vec![&root],
        Purpose::ServerAuth,
        Some("NotYetValid"),
    );
    let expired_int = issue(
        &Spec {
            not_after: EXPIRED,
            ..Spec::ca("intermediate")
        },
        alg,
        Some(&root),
    );
    let under_expired = leaf(Spec::leaf("leaf", server), &expired_int);
    add(
        "intermediate-expired",
        vec![&under_expired, &expired_int],
        vec![&root],
        Purpose::ServerAuth,
        Some("Expired"),
    );
    let (anchor, middle, end) = path_under(Spec {
        not_after: EXPIRED,
        ..Spec::ca("root")
    });
    add(
        "root-expired",
        vec![&end, &middle],
        vec![&anchor],
        Purpose::ServerAuth,
        Some("Expired"),
    );

    // keyUsage.
    let no_cert_sign = issue(
        &Spec {
            key_usage: Some(KeyUsage(KeyUsages::DigitalSignature.into())),
            ..Spec::ca("intermediate")
        },
        alg,
        Some(&root),
    );
    let under_no_cert_sign = leaf(Spec::leaf("leaf", server), &no_cert_sign);
    add(
        "intermediate-without-keycertsign",
        vec![&under_no_cert_sign, &no_cert_sign],
        vec![&root],
        Purpose::ServerAuth,
        Some("NoKeyCertSign"),
    );
    let (anchor, middle, end) = path_under(Spec {
        key_usage: Some(KeyUsage(KeyUsages::DigitalSignature.into())),
        ..Spec::ca("root")
    });
    add(
        "root-without-keycertsign",
        vec![&end, &middle],
        vec![&anchor],
        Purpose::ServerAuth,
        Some("NoKeyCertSign"),
    );
    let no_digital_signature = leaf(
        Spec {
            key_usage: Some(KeyUsage(KeyUsages::NonRepudiation.into())),
            ..Spec::leaf("leaf", server)
        },
        &int,
    );
    add(
        "leaf-without-digitalsignature",
        vec![&no_digital_signature, &int],
        vec![&root],
        Purpose::ServerAuth,
        Some("NoDigitalSignature"),
    );

    // pathLenConstraint: int0 (pathLen 0) -> int1 -> leaf.
    let len0 = issue(
        &Spec {
            basic: Some((true, Some(0))),
            ..Spec::ca("intermediate pathlen 0")
        },
        alg,
        Some(&root),
    );
    let below_len0 = issue(&Spec::ca("intermediate below"), alg, Some(&len0));
    let leaf_below_len0 = leaf(Spec::leaf("leaf", server), &below_len0);
    add(
        "path-length-exceeded",
        vec![&leaf_below_len0, &below_len0, &len0],
        vec![&root],
        Purpose::ServerAuth,
        Some("PathLenExceeded"),
    );
    let leaf_at_len0 = leaf(Spec::leaf("leaf", server), &len0);
    add(
        "path-length-zero-with-leaf",
        vec![&leaf_at_len0, &len0],
        vec![&root],
        Purpose::ServerAuth,
        None,
    );

    // extendedKeyUsage.
    let client_leaf = leaf(Spec::leaf("leaf", rfc5280::ID_KP_CLIENT_AUTH), &int);
    add(
        "client-leaf-for-server",
        vec![&client_leaf, &int],
        vec![&root],
        Purpose::ServerAuth,
        Some("WrongPurpose"),
    );
    add(
        "client-leaf-for-client",
        vec![&client_leaf, &int],
        vec![&root],
        Purpose::ClientAuth,
        None,
    );
    add(
        "server-leaf-for-code-signing",
        vec![&good, &int],
        vec![&root],
        Purpose::CodeSigning,
        Some("WrongPurpose"),
    );
    let no_eku = leaf(
        Spec {
            eku: None,
            ..Spec::leaf("leaf", server)
        },
        &int,
    );
    add(
        "leaf-without-eku",
        vec![&no_eku, &int],
        vec![&root],
        Purpose::ServerAuth,
        None,
    );
    let client_int = issue(
        &Spec {
            eku: Some(vec![rfc5280::ID_KP_CLIENT_AUTH]),
            ..Spec::ca("intermediate")
        },
        alg,
        Some(&root),
    );
    let under_client_int = leaf(Spec::leaf("leaf", server), &client_int);
    add(
        "intermediate-eku-excludes-purpose",
        vec![&under_client_int, &client_int],
        vec![&root],
        Purpose::ServerAuth,
        Some("WrongPurpose"),
    );

    // Signatures.
    let bad_sig = leaf(
        Spec {
            bad_signature: true,
            ..Spec::leaf("leaf", server)
        },
        &int,
    );
    add(
        "leaf-bad-signature",
        vec![&bad_sig, &int],
        vec![&root],
        Purpose::ServerAuth,
        Some("BadSignature"),
    );
    let other = pqkit_core::catalogue::signatures()
        .iter()
        .copied()
        .find(|a| a.family == alg.family && a.signature_algorithm_id != alg.signature_algorithm_id)
        .expect("a sibling algorithm");
    let mismatch = leaf(
        Spec {
            tbs_algorithm: Some(other),
            ..Spec::leaf("leaf", server)
        },
        &int,
    );
    add(
        "signature-algorithm-mismatch",
        vec![&mismatch, &int],
        vec![&root],
        Purpose::ServerAuth,
        Some("SignatureAlgorithmMismatch"),
    );

    // The trust anchor's own constraints, as OpenSSL applies them.
    let (anchor, middle, end) = path_under(Spec {
        basic: Some((true, Some(0))),
        ..Spec::ca("root pathlen 0")
    });
    add(
        "root-path-length-exceeded",
        vec![&end, &middle],
        vec![&anchor],
        Purpose::ServerAuth,
        Some("PathLenExceeded"),
    );
    // Without basicConstraints: not a CA — unless its keyUsage has keyCertSign (OpenSSL's
    // X509_check_ca tolerates that in a trust anchor).
    let root_no_bc = issue(
        &Spec {
            basic: None,
            key_usage: None,
            ..Spec::ca("root without basicConstraints")
        },
        alg,
        None,
    );
    let leaf_of_no_bc = leaf(Spec::leaf("leaf", server), &root_no_bc);
    add(
        "root-without-basic-constraints",
        vec![&leaf_of_no_bc],
        vec![&root_no_bc],
        Purpose::ServerAuth,
        Some("NotACa"),
    );
    let root_ku_only = issue(
        &Spec {
            basic: None,
            ..Spec::ca("root with keyCertSign only")
        },
        alg,
        None,
    );
    let leaf_of_ku_only = leaf(Spec::leaf("leaf", server), &root_ku_only);
    // OpenSSL without -x509_strict takes keyCertSign for a CA; RFC 5280 §4.2.1.9 and
    // x509-limbo (rfc5280::root-missing-basic-constraints) do not.
    add(
        "root-keycertsign-without-basic-constraints",
        vec![&leaf_of_ku_only],
        vec![&root_ku_only],
        Purpose::ServerAuth,
        Some("NotACa"),
    );
    let root_client_eku = issue(
        &Spec {
            eku: Some(vec![rfc5280::ID_KP_CLIENT_AUTH]),
            ..Spec::ca("root for clients")
        },
        alg,
        None,
    );
    let leaf_of_client_root = leaf(Spec::leaf("leaf", server), &root_client_eku);
    add(
        "root-eku-excludes-purpose",
        vec![&leaf_of_client_root],
        vec![&root_client_eku],
        Purpose::ServerAuth,
        Some("WrongPurpose"),
    );
    // A trust anchor presented as the chain: for any purpose its own checks; for a purpose,
    // a trusted self-signed end-entity certificate validates and a CA does not.
    add(
        "root-alone-any-purpose",
        vec![&root],
        vec![&root],
        Purpose::Any,
        None,
    );
    add(
        "root-alone-for-server",
        vec![&root],
        vec![&root],
        Purpose::ServerAuth,
        Some("CaAsLeaf"),
    );
    let self_signed = issue(&Spec::leaf("self-signed", server), alg, None);
    add(
        "trusted-self-signed-leaf",
        vec![&self_signed],
        vec![&self_signed],
        Purpose::ServerAuth,
        None,
    );

    // Name constraints.
    let constrained = issue(
        &Spec {
            permitted_dns: Some("example.com"),
            ..Spec::ca("constrained intermediate")
        },
        alg,
        Some(&root),
    );
    let outside = leaf(Spec::leaf("leaf", server), &constrained);
    add(
        "name-outside-constraints",
        vec![&outside, &constrained],
        vec![&root],
        Purpose::ServerAuth,
        Some("NameConstraints"),
    );
    let inside = leaf(
        Spec {
            dns: vec!["www.example.com"],
            ..Spec::leaf("leaf", server)
        },
        &constrained,
    );
    add(
        "name-inside-constraints",
        vec![&inside, &constrained],
        vec![&root],
        Purpose::ServerAuth,
        None,
    );
    out
}
