//! A certificate in words ([`describe`]): subject, issuer, validity, the key's and the
//! signature's algorithms by their catalogue names, and the extensions a person checks
//! (RFC 5280 §4.2.1.3 keyUsage, §4.2.1.6 subjectAltName, §4.2.1.9 basicConstraints,
//! §4.2.1.12 extendedKeyUsage) — what `pqkit x509 show` and `x509 verify` print.

use der::Decode;
use pqkit_core::catalogue;
use x509_cert::Certificate;

use crate::error::Error;

/// Name of the catalogue algorithm behind an `AlgorithmIdentifier`, or its OID.
fn algorithm_name(
    id: &spki::AlgorithmIdentifierOwned,
    spki_id: &spki::AlgorithmIdentifierOwned,
    key_len: usize,
    signature: bool,
) -> String {
    let contents = |a: &spki::AlgorithmIdentifierOwned| crate::key::algorithm_contents(a).ok();
    let found = match (contents(id), contents(spki_id)) {
        // The signer's key is known when the file holds the issuer; else the signature
        // algorithm identifier alone names it (RSA sizes cannot be told apart then).
        (Some(s), Some(k)) if signature => catalogue::signature_by_algorithms(&s, &k, key_len)
            .or_else(|| {
                catalogue::signatures()
                    .iter()
                    .copied()
                    .find(|a| a.signature_algorithm_id == s.as_slice())
            }),
        (_, Some(k)) => catalogue::signature_by_spki_algorithm(&k, key_len),
        _ => None,
    };
    found.map_or_else(|| id.oid.to_string(), |a| a.name.to_owned())
}

/// A certificate in words: what `pqkit x509 show` prints (and, as JSON, `--json`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Description {
    /// The subject, RFC 4514 string.
    pub subject: String,
    /// The issuer, RFC 4514 string.
    pub issuer: String,
    /// The serial number, hex.
    pub serial: String,
    /// notBefore.
    pub not_before: String,
    /// notAfter.
    pub not_after: String,
    /// The subject key's algorithm, by its catalogue name (else the OID).
    pub public_key_algorithm: String,
    /// The subject key's length, in bytes.
    pub public_key_bytes: usize,
    /// The signature's algorithm, by its catalogue name (else the OID).
    pub signature_algorithm: String,
    /// The signature's length, in bytes.
    pub signature_bytes: usize,
    /// The DER certificate's length, in bytes.
    pub certificate_bytes: usize,
    /// subjectAltName entries as OpenSSL prints them ("DNS:…", "IP:…", "URI:…", "email:…").
    pub subject_alt_names: Vec<String>,
    /// SHA-256 of the DER SubjectPublicKeyInfo, lowercase hex (64 characters): the key's pin,
    /// as in RFC 7469 §2.4 (which gives it in base64) and `pqkit proxy --allow-spki-sha256`.
    pub spki_sha256: String,
    /// basicConstraints cA.
    pub ca: bool,
    /// basicConstraints as OpenSSL prints it ("CA:TRUE, pathlen:0"), when present.
    pub basic_constraints: Option<String>,
    /// keyUsage bits by their RFC 5280 §4.2.1.3 names.
    pub key_usage: Vec<String>,
    /// extendedKeyUsage purposes by name (RFC 5280 §4.2.1.12), else by OID.
    pub extended_key_usage: Vec<String>,
}

/// A stateful key's name, when `spki` is an HSS, XMSS or XMSS^MT key (RFC 9802 puts the
/// parameters in the key, not the AlgorithmIdentifier).
fn stateful_name(spki: &spki::SubjectPublicKeyInfoOwned) -> Option<String> {
    use der::Encode;
    if !crate::stateful::is_stateful(&spki.algorithm) {
        return None;
    }
    let der = spki.to_der().ok()?;
    pqkit_hbs::public::PublicKey::from_spki_der(&der)
        .ok()
        .map(|k| k.name())
}

/// SHA-256 of `spki`'s DER encoding (32 bytes): the pin of RFC 7469 §2.4.
///
/// # Errors
/// When `spki` does not encode.
pub fn spki_sha256(spki: &spki::SubjectPublicKeyInfoOwned) -> Result<[u8; 32], der::Error> {
    use der::Encode;
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &spki.to_der()?);
    let mut pin = [0u8; 32];
    pin.copy_from_slice(digest.as_ref());
    Ok(pin)
}

/// Describes the DER certificate `der`; `issuer_spki`, the issuer's key when known, names the
/// signature algorithm exactly (an RSA or HSS signature's parameters are in the key).
///
/// # Errors
/// [`Error::Malformed`] for bytes that do not decode as a certificate or an extension.
pub fn describe(
    der: &[u8],
    issuer_spki: Option<&spki::SubjectPublicKeyInfoOwned>,
) -> Result<Description, Error> {
    let bad = |e: der::Error| Error::malformed("certificate", e);
    use x509_cert::ext::pkix::{
        BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAltName, name::GeneralName,
    };
    let cert = Certificate::from_der(der).map_err(bad)?;
    let tbs = &cert.tbs_certificate;
    let spki = &tbs.subject_public_key_info;
    let key_len = spki.subject_public_key.raw_bytes().len();
    let signer = issuer_spki.unwrap_or(spki);
    let spki_sha256 = spki_sha256(spki).map_err(bad)?;
    let mut sans = Vec::new();
    if let Some((_, san)) = tbs.get::<SubjectAltName>().map_err(bad)? {
        for n in san.0 {
            sans.push(match n {
                GeneralName::DnsName(d) => format!("DNS:{}", d.as_str()),
                GeneralName::IpAddress(ip) => match <[u8; 4]>::try_from(ip.as_bytes()) {
                    Ok(v4) => format!("IP:{}", std::net::Ipv4Addr::from(v4)),
                    Err(_) => match <[u8; 16]>::try_from(ip.as_bytes()) {
                        Ok(v6) => format!("IP:{}", std::net::Ipv6Addr::from(v6)),
                        Err(_) => format!(
                            "IP:{}",
                            ip.as_bytes()
                                .iter()
                                .map(|b| format!("{b:02x}"))
                                .collect::<String>()
                        ),
                    },
                },
                GeneralName::Rfc822Name(m) => format!("email:{}", m.as_str()),
                GeneralName::UniformResourceIdentifier(u) => format!("URI:{}", u.as_str()),
                GeneralName::DirectoryName(n) => format!("DirName:{n}"),
                GeneralName::RegisteredId(oid) => format!("Registered ID:{oid}"),
                GeneralName::OtherName(o) => format!("othername:{}", o.type_id),
                GeneralName::EdiPartyName(_) => "EdiPartyName".to_owned(),
            });
        }
    }
    let bc = tbs
        .get::<BasicConstraints>()
        .map_err(bad)?
        .map(|(_, bc)| bc);
    let ca = bc.as_ref().is_some_and(|bc| bc.ca);
    let basic_constraints = bc.map(|bc| {
        let mut text = format!("CA:{}", if bc.ca { "TRUE" } else { "FALSE" });
        if let Some(n) = bc.path_len_constraint {
            text.push_str(&format!(", pathlen:{n}"));
        }
        text
    });
    let key_usage = tbs
        .get::<KeyUsage>()
        .map_err(bad)?
        .map(|(_, ku)| {
            ku.0.into_iter()
                .map(key_usage_name)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let extended_key_usage = tbs
        .get::<ExtendedKeyUsage>()
        .map_err(bad)?
        .map(|(_, eku)| eku.0.iter().map(eku_name).collect())
        .unwrap_or_default();
    Ok(Description {
        subject: tbs.subject.to_string(),
        issuer: tbs.issuer.to_string(),
        serial: tbs.serial_number.to_string(),
        not_before: tbs.validity.not_before.to_string(),
        not_after: tbs.validity.not_after.to_string(),
        public_key_algorithm: stateful_name(spki)
            .unwrap_or_else(|| algorithm_name(&spki.algorithm, &spki.algorithm, key_len, false)),
        public_key_bytes: key_len,
        signature_algorithm: match stateful_name(signer) {
            Some(name) if signer.algorithm.oid == cert.signature_algorithm.oid => name,
            // Without the issuer's key, RFC 9802's OID names only the scheme.
            _ if crate::stateful::is_stateful(&cert.signature_algorithm) => {
                let oid = cert.signature_algorithm.oid;
                match oid {
                    pqkit_hbs::public::HSS_OID => "HSS".to_owned(),
                    pqkit_hbs::public::XMSS_OID => "XMSS".to_owned(),
                    _ => "XMSS^MT".to_owned(),
                }
            }
            _ => algorithm_name(
                &cert.signature_algorithm,
                &signer.algorithm,
                signer.subject_public_key.raw_bytes().len(),
                true,
            ),
        },
        signature_bytes: cert.signature.raw_bytes().len(),
        certificate_bytes: der.len(),
        subject_alt_names: sans,
        spki_sha256: spki_sha256.iter().map(|b| format!("{b:02x}")).collect(),
        ca,
        basic_constraints,
        key_usage,
        extended_key_usage,
    })
}

/// A keyUsage bit by its name in RFC 5280 §4.2.1.3.
fn key_usage_name(bit: x509_cert::ext::pkix::KeyUsages) -> &'static str {
    use x509_cert::ext::pkix::KeyUsages as K;
    match bit {
        K::DigitalSignature => "digitalSignature",
        K::NonRepudiation => "contentCommitment",
        K::KeyEncipherment => "keyEncipherment",
        K::DataEncipherment => "dataEncipherment",
        K::KeyAgreement => "keyAgreement",
        K::KeyCertSign => "keyCertSign",
        K::CRLSign => "cRLSign",
        K::EncipherOnly => "encipherOnly",
        K::DecipherOnly => "decipherOnly",
    }
}

/// An extendedKeyUsage purpose by its RFC 5280 §4.2.1.12 name, else its OID.
fn eku_name(oid: &der::asn1::ObjectIdentifier) -> String {
    let arcs: Vec<u32> = oid.arcs().collect();
    match arcs.as_slice() {
        [1, 3, 6, 1, 5, 5, 7, 3, n] => match n {
            1 => "serverAuth".to_owned(),
            2 => "clientAuth".to_owned(),
            3 => "codeSigning".to_owned(),
            4 => "emailProtection".to_owned(),
            8 => "timeStamping".to_owned(),
            9 => "OCSPSigning".to_owned(),
            _ => oid.to_string(),
        },
        [2, 5, 29, 37, 0] => "anyExtendedKeyUsage".to_owned(),
        _ => oid.to_string(),
    }
}
