//! The rules rustls-webpki does not check, applied to each path it builds: keyUsage (RFC 5280
//! §4.2.1.3, §6.1.4 (n)), the maximum depth, the certificate profile of RFC 5280 §4 that
//! strict validators enforce, and under [`Profile::WebPki`] the CA/Browser Forum Baseline
//! Requirements' rules for TLS server certificates (BR §7.1).
//!
//! Each check names the section it comes from. A path that breaks one is rejected and webpki
//! goes on to try another path, so a bad cross-certificate does not hide a good path.

use std::net::IpAddr;

use const_oid::ObjectIdentifier;
use const_oid::db::rfc5280 as oids;
use der::Decode;
use der::asn1::UintRef;
use x509_cert::Certificate;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    AuthorityInfoAccessSyntax, AuthorityKeyIdentifier, ExtendedKeyUsage, KeyUsages,
    NameConstraints, SubjectAltName, SubjectKeyIdentifier,
};

use super::{ChainView, PathError, Policy, Position, Profile, Rule, basic_constraints, key_usage};

/// A rule of the profile, with where it is written.
fn broke(detail: impl Into<String>) -> Rule {
    Rule::Nonconforming {
        detail: detail.into(),
    }
}

/// Checks of the leaf alone, made before any path is built.
pub(super) fn check_leaf(view: &ChainView, policy: &Policy) -> Result<(), PathError> {
    let leaf = &view.leaf().cert;
    let fail = |rule| view.error(0, rule);
    certificate(leaf, false, policy.profile).map_err(fail)?;
    // §4.2.1.10: name constraints only in a CA certificate.
    if extension(leaf, oids::ID_CE_NAME_CONSTRAINTS).is_some() && !is_ca(leaf) {
        return Err(fail(broke(
            "has nameConstraints but is not a CA certificate (RFC 5280 §4.2.1.10)",
        )));
    }
    // §4.2.1.3: keyCertSign only with cA TRUE.
    if let Some(ku) = key_usage(leaf).map_err(|e| fail(e.rule))?
        && ku.0.contains(KeyUsages::KeyCertSign)
        && !is_ca(leaf)
    {
        return Err(fail(broke(
            "asserts keyCertSign without basicConstraints cA TRUE (RFC 5280 §4.2.1.3)",
        )));
    }
    if policy.profile == Profile::WebPki {
        webpki_leaf(leaf).map_err(fail)?;
    }
    Ok(())
}

/// Checks of one path: `path` is the leaf, the intermediates in order, then the trust anchor
/// (absent when the leaf is itself trusted).
pub(super) fn check_path(
    view: &ChainView,
    path: &[Position],
    policy: &Policy,
) -> Result<(), PathError> {
    // The leaf may sign only if its keyUsage (when present) allows it.
    if policy.wanted().next().is_some()
        && let Some(ku) = key_usage(&view.leaf().cert)?
        && !ku.0.contains(KeyUsages::DigitalSignature)
    {
        return Err(view.error(0, Rule::NoDigitalSignature));
    }
    let anchored = path.len() > 1 && matches!(path[path.len() - 1], Position::Anchor(_));
    let intermediates = if anchored {
        &path[1..path.len() - 1]
    } else {
        &path[1..]
    };
    for &p in intermediates {
        if let Some(ku) = key_usage(&view.at(p).cert)?
            && !ku.0.contains(KeyUsages::KeyCertSign)
        {
            return Err(view.error_at(p, Rule::NoKeyCertSign));
        }
    }
    if let Some(max) = policy.max_depth {
        let counted: Vec<Position> = intermediates
            .iter()
            .copied()
            .filter(|&p| !self_issued(&view.at(p).cert))
            .collect();
        if counted.len() > max {
            return Err(view.error_at(counted[max], Rule::TooDeep { max }));
        }
    }
    for &p in &path[1..] {
        let cert = &view.at(p).cert;
        let fail = |rule| view.error_at(p, rule);
        let is_anchor = matches!(p, Position::Anchor(_));
        certificate(cert, is_anchor, policy.profile).map_err(fail)?;
        issuer(cert, is_anchor, policy).map_err(fail)?;
    }
    // §4.2.1.1: every certificate but a self-signed one names its issuer's key — a trust
    // anchor that another CA issued (a cross-signed root) included.
    for &p in path
        .iter()
        .filter(|_| path.len() > 1 && policy.key_identifiers)
    {
        let cert = &view.at(p).cert;
        if extension(cert, oids::ID_CE_AUTHORITY_KEY_IDENTIFIER).is_some() {
            continue;
        }
        // Self-signed: its own key verifies its signature, whatever its issuer name says.
        let der = &view.at(p).der;
        let self_signed = matches!(p, Position::Anchor(_))
            && (self_issued(cert) || crate::signature::verify_signed_by(der, der).is_ok());
        if !self_signed {
            return Err(view.error_at(
                p,
                broke(
                    "has no authorityKeyIdentifier, which every certificate but a self-signed \
                     one carries (RFC 5280 §4.2.1.1)",
                ),
            ));
        }
    }
    Ok(())
}

/// The CRLs given, as RFC 5280 §5 has them: a cRLNumber that is not critical (§5.2.3), no
/// unknown critical extension (§5.2), and — when a certificate given or trusted is the CRL's
/// issuer and has keyUsage — cRLSign in it (§4.2.1.3). A CRL that breaks one is refused
/// rather than trusted or ignored: it was asked for.
pub(super) fn check_crls(view: &ChainView, policy: &Policy) -> Result<(), PathError> {
    for (i, der) in policy.crls.iter().enumerate() {
        let fail = |detail: String| PathError {
            certificate: format!("CRL {i}"),
            rule: broke(detail),
        };
        let crl = x509_cert::crl::CertificateList::from_der(der)
            .map_err(|e| fail(format!("does not decode: {e}")))?;
        let tbs = &crl.tbs_cert_list;
        if tbs.this_update.to_system_time() > policy.time {
            return Err(fail(format!(
                "is not valid yet: issued for {} (RFC 5280 §5.1.2.4)",
                tbs.this_update
            )));
        }
        let exts = tbs.crl_extensions.as_deref().unwrap_or_default();
        match exts.iter().find(|e| e.extn_id == oids::ID_CE_CRL_NUMBER) {
            None => return Err(fail("has no cRLNumber (RFC 5280 §5.2.3)".to_owned())),
            Some(e) if e.critical => {
                return Err(fail(
                    "marks cRLNumber critical, which it must not be (RFC 5280 §5.2.3)".to_owned(),
                ));
            }
            Some(_) => {}
        }
        const KNOWN: [ObjectIdentifier; 5] = [
            oids::ID_CE_CRL_NUMBER,
            oids::ID_CE_AUTHORITY_KEY_IDENTIFIER,
            oids::ID_CE_ISSUING_DISTRIBUTION_POINT,
            oids::ID_CE_ISSUER_ALT_NAME,
            oids::ID_CE_DELTA_CRL_INDICATOR,
        ];
        if let Some(e) = exts
            .iter()
            .find(|e| e.critical && !KNOWN.contains(&e.extn_id))
        {
            return Err(fail(format!(
                "has a critical extension pqkit does not process ({}) (RFC 5280 §5.2)",
                e.extn_id
            )));
        }
        for (_, c) in view.all() {
            if c.cert.tbs_certificate.subject == tbs.issuer
                && let Some(ku) = key_usage(&c.cert)?
                && !ku.0.contains(KeyUsages::CRLSign)
            {
                return Err(fail(format!(
                    "is issued by \"{}\", whose keyUsage lacks cRLSign (RFC 5280 §4.2.1.3)",
                    tbs.issuer
                )));
            }
        }
    }
    Ok(())
}

/// The raw extension with this OID, if present.
fn extension(cert: &Certificate, oid: ObjectIdentifier) -> Option<&x509_cert::ext::Extension> {
    cert.tbs_certificate
        .extensions
        .iter()
        .flatten()
        .find(|e| e.extn_id == oid)
}

fn self_issued(cert: &Certificate) -> bool {
    cert.tbs_certificate.subject == cert.tbs_certificate.issuer
}

fn is_ca(cert: &Certificate) -> bool {
    basic_constraints(cert)
        .ok()
        .flatten()
        .is_some_and(|bc| bc.ca)
}

/// RFC 5280 §4.1 and §4.2 rules every certificate on a path keeps (a trust anchor's serial
/// number excepted: roots with serial number 0 are still trusted, and it names nothing a
/// path depends on).
fn certificate(cert: &Certificate, is_anchor: bool, profile: Profile) -> Result<(), Rule> {
    let tbs = &cert.tbs_certificate;
    // §4.1.2.2: a positive serial number of at most 20 octets.
    let serial = tbs.serial_number.as_bytes();
    if !is_anchor && serial.len() > 20 + usize::from(serial.first() == Some(&0)) {
        return Err(broke(
            "its serial number is longer than 20 octets (RFC 5280 §4.1.2.2)",
        ));
    }
    if !is_anchor
        && (serial.first().is_some_and(|b| b & 0x80 != 0) || serial.iter().all(|b| *b == 0))
    {
        return Err(broke(
            "its serial number is not a positive integer (RFC 5280 §4.1.2.2)",
        ));
    }
    // §4.1.2.4: the issuer is never empty.
    if tbs.issuer.0.is_empty() {
        return Err(broke("its issuer name is empty (RFC 5280 §4.1.2.4)"));
    }
    // §4.2: one instance of each extension.
    let exts = tbs.extensions.as_deref().unwrap_or_default();
    for (i, e) in exts.iter().enumerate() {
        if exts[..i].iter().any(|o| o.extn_id == e.extn_id) {
            return Err(broke(format!(
                "has the extension {} twice (RFC 5280 §4.2)",
                e.extn_id
            )));
        }
    }
    // Extensions that must not be critical, and ones that must be.
    for (oid, name, section) in [
        (
            oids::ID_CE_AUTHORITY_KEY_IDENTIFIER,
            "authorityKeyIdentifier",
            "§4.2.1.1",
        ),
        (
            oids::ID_CE_SUBJECT_KEY_IDENTIFIER,
            "subjectKeyIdentifier",
            "§4.2.1.2",
        ),
        (
            oids::ID_PE_AUTHORITY_INFO_ACCESS,
            "authorityInfoAccess",
            "§4.2.2.1",
        ),
    ] {
        if extension(cert, oid).is_some_and(|e| e.critical) {
            return Err(broke(format!(
                "marks {name} critical, which it must not be (RFC 5280 {section})"
            )));
        }
    }
    if extension(cert, oids::ID_CE_POLICY_CONSTRAINTS).is_some_and(|e| !e.critical) {
        return Err(broke(
            "does not mark policyConstraints critical (RFC 5280 §4.2.1.11)",
        ));
    }
    if let Some(e) = extension(cert, oids::ID_CE_NAME_CONSTRAINTS) {
        if !e.critical && profile == Profile::Rfc5280 {
            return Err(broke(
                "does not mark nameConstraints critical (RFC 5280 §4.2.1.10; the CA/Browser \
                 Forum allows it: --profile webpki)",
            ));
        }
        let nc = NameConstraints::from_der(e.extn_value.as_bytes())
            .map_err(|_| broke("its nameConstraints does not decode (RFC 5280 §4.2.1.10)"))?;
        name_constraints(&nc)?;
    }
    if let Some(e) = extension(cert, oids::ID_PE_AUTHORITY_INFO_ACCESS) {
        let aia = AuthorityInfoAccessSyntax::from_der(e.extn_value.as_bytes());
        if !aia.is_ok_and(|a| !a.0.is_empty()) {
            return Err(broke(
                "its authorityInfoAccess is empty or does not decode (RFC 5280 §4.2.2.1)",
            ));
        }
    }
    // §4.2.1.6: a subjectAltName that decodes, critical when the subject is empty, whose
    // dNSName and iPAddress entries are well formed.
    if let Some(e) = extension(cert, oids::ID_CE_SUBJECT_ALT_NAME) {
        let san = SubjectAltName::from_der(e.extn_value.as_bytes())
            .map_err(|_| broke("its subjectAltName does not decode (RFC 5280 §4.2.1.6)"))?;
        if san.0.is_empty() {
            return Err(broke("its subjectAltName is empty (RFC 5280 §4.2.1.6)"));
        }
        if tbs.subject.0.is_empty() && !e.critical {
            return Err(broke(
                "has an empty subject and a subjectAltName not marked critical (RFC 5280 \
                 §4.2.1.6)",
            ));
        }
        for name in &san.0 {
            match name {
                GeneralName::DnsName(d) => {
                    super::san_dns_name(d.as_str())
                        .map_err(|e| broke(format!("has a bad dNSName: {e}")))?;
                }
                GeneralName::IpAddress(ip) if ![4, 16].contains(&ip.as_bytes().len()) => {
                    return Err(broke(
                        "has an iPAddress subjectAltName that is neither 4 nor 16 octets (RFC \
                         5280 §4.2.1.6)",
                    ));
                }
                GeneralName::Rfc822Name(m) if !m.as_str().contains('@') => {
                    return Err(broke(format!(
                        "has an rfc822Name subjectAltName {:?} that is no e-mail address (RFC \
                         5280 §4.2.1.6)",
                        m.as_str()
                    )));
                }
                _ => {}
            }
        }
    }
    if profile == Profile::WebPki {
        webpki_certificate(cert)?;
    }
    Ok(())
}

/// RFC 5280 rules for a certificate that issues (an intermediate or the trust anchor).
fn issuer(cert: &Certificate, is_anchor: bool, policy: &Policy) -> Result<(), Rule> {
    let tbs = &cert.tbs_certificate;
    // §4.1.2.6: a CA's subject is never empty.
    if tbs.subject.0.is_empty() {
        return Err(broke(
            "is a CA certificate with an empty subject (RFC 5280 §4.1.2.6)",
        ));
    }
    // §4.2.1.9: basicConstraints in a CA certificate is critical.
    if let Some(e) = extension(cert, oids::ID_CE_BASIC_CONSTRAINTS)
        && !e.critical
    {
        return Err(broke(
            "is a CA certificate whose basicConstraints is not critical (RFC 5280 §4.2.1.9)",
        ));
    }
    // §4.2.1.2: every CA certificate carries a subjectKeyIdentifier.
    if policy.key_identifiers
        && extension(cert, oids::ID_CE_SUBJECT_KEY_IDENTIFIER).is_none()
        && tbs.version == x509_cert::Version::V3
    {
        return Err(broke(
            "is a CA certificate without subjectKeyIdentifier (RFC 5280 §4.2.1.2)",
        ));
    }
    if policy.profile == Profile::WebPki {
        webpki_issuer(cert, is_anchor)?;
    }
    Ok(())
}

/// §4.2.1.10: name constraints that say something, each base well formed for its kind.
fn name_constraints(nc: &NameConstraints) -> Result<(), Rule> {
    let empty = |t: &Option<Vec<_>>| t.as_ref().is_none_or(Vec::is_empty);
    if empty(&nc.permitted_subtrees) && empty(&nc.excluded_subtrees) {
        return Err(broke(
            "has nameConstraints with neither permitted nor excluded subtrees (RFC 5280 \
             §4.2.1.10)",
        ));
    }
    if [&nc.permitted_subtrees, &nc.excluded_subtrees]
        .iter()
        .any(|t| t.as_ref().is_some_and(Vec::is_empty))
    {
        return Err(broke(
            "has nameConstraints with an empty list of subtrees (RFC 5280 §4.2.1.10: SIZE \
             (1..MAX))",
        ));
    }
    for subtree in nc
        .permitted_subtrees
        .iter()
        .chain(&nc.excluded_subtrees)
        .flatten()
    {
        let bad = match &subtree.base {
            GeneralName::DnsName(d) => {
                let d = d.as_str();
                d.contains('*')
                    || d.starts_with('.')
                    || (!d.is_empty() && super::dns_name(d).is_err())
            }
            GeneralName::IpAddress(ip) => {
                let b = ip.as_bytes();
                let (addr, mask) = b.split_at(b.len() / 2);
                ![8, 32].contains(&b.len()) || !contiguous_mask(mask) || addr.is_empty()
            }
            GeneralName::Rfc822Name(m) => {
                let m = m.as_str();
                let domain = m.rsplit_once('@').map_or(m, |(_, d)| d);
                let domain = domain.strip_prefix('.').unwrap_or(domain);
                m.matches('@').count() > 1 || super::dns_name(domain).is_err()
            }
            _ => false,
        };
        if bad {
            return Err(broke(
                "has a name constraint whose base is not a well-formed name of its kind (RFC \
                 5280 §4.2.1.10)",
            ));
        }
    }
    Ok(())
}

/// A network mask: ones, then zeros.
fn contiguous_mask(mask: &[u8]) -> bool {
    let bits: u128 = mask.iter().fold(0, |acc, b| (acc << 8) | u128::from(*b));
    let full = if mask.len() >= 16 {
        u128::MAX
    } else {
        (1u128 << (mask.len() * 8)) - 1
    };
    // The inverse within the mask's width is zeros then ones: adding one carries through.
    let inverted = !bits & full;
    inverted & inverted.wrapping_add(1) == 0
}

/// id-dsa 1.2.840.10040.4.1; id-ecPublicKey 1.2.840.10045.2.1; rsaEncryption
/// 1.2.840.113549.1.1.1; secp256r1, secp384r1, secp521r1.
const ID_DSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10040.4.1");
const ID_EC: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const CURVES: [ObjectIdentifier; 3] = [
    ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7"),
    ObjectIdentifier::new_unwrap("1.3.132.0.34"),
    ObjectIdentifier::new_unwrap("1.3.132.0.35"),
];
/// anyExtendedKeyUsage 2.5.29.37.0 (RFC 5280 §4.2.1.12).
const ANY_EKU: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.37.0");

/// BR §6.1.5, §6.1.6, §7.1.3.1: RSA keys of at least 2048 bits whose modulus is a whole number
/// of octets; ECDSA keys on P-256, P-384 or P-521 by name; no DSA. Other algorithms (the
/// post-quantum ones) are pqkit's to allow; the BRs do not name them yet.
fn webpki_key(cert: &Certificate) -> Result<(), Rule> {
    let spki = &cert.tbs_certificate.subject_public_key_info;
    let oid = spki.algorithm.oid;
    if oid == ID_DSA {
        return Err(broke(
            "has a DSA key, which the CA/Browser Forum does not allow (BR §6.1.5)",
        ));
    }
    if oid == ID_EC {
        let named = spki
            .algorithm
            .parameters
            .as_ref()
            .and_then(|p| p.decode_as::<ObjectIdentifier>().ok());
        if !named.is_some_and(|c| CURVES.contains(&c)) {
            return Err(broke(
                "has an ECDSA key that is not on P-256, P-384 or P-521 named by OID (BR \
                 §6.1.5, §7.1.3.1.2)",
            ));
        }
    }
    if oid == RSA {
        let bits = spki.subject_public_key.raw_bytes();
        let modulus = rsa_modulus_bits(bits);
        match modulus {
            Some(n) if n >= 2048 && n % 8 == 0 => {}
            _ => {
                return Err(broke(
                    "has an RSA key shorter than 2048 bits or whose modulus is not a whole \
                     number of octets (BR §6.1.5)",
                ));
            }
        }
    }
    Ok(())
}

/// The bit length of an RSAPublicKey's modulus (RFC 8017 §A.1.1).
fn rsa_modulus_bits(rsa_public_key: &[u8]) -> Option<usize> {
    let mut reader = der::SliceReader::new(rsa_public_key).ok()?;
    let n: UintRef<'_> = der::Reader::sequence(&mut reader, |r| {
        let n = UintRef::decode(r)?;
        let _e = UintRef::decode(r)?;
        Ok(n)
    })
    .ok()?;
    let bytes = n.as_bytes();
    let first = *bytes.first()?;
    Some(bytes.len() * 8 - first.leading_zeros() as usize)
}

/// BR rules for every certificate: v3, the key rules.
fn webpki_certificate(cert: &Certificate) -> Result<(), Rule> {
    if cert.tbs_certificate.version != x509_cert::Version::V3 {
        return Err(broke("is not an X.509 v3 certificate (BR §7.1.1)"));
    }
    webpki_key(cert)
}

/// BR rules for an issuing certificate: a root has no extendedKeyUsage (BR §7.1.2.1.2); an
/// authorityKeyIdentifier in a root has only keyIdentifier, equal to its
/// subjectKeyIdentifier (BR §7.1.2.1.3).
fn webpki_issuer(cert: &Certificate, is_anchor: bool) -> Result<(), Rule> {
    if !is_anchor {
        return Ok(());
    }
    if extension(cert, oids::ID_CE_EXT_KEY_USAGE).is_some() {
        return Err(broke(
            "is a root CA certificate with extendedKeyUsage (BR §7.1.2.1.2)",
        ));
    }
    if let Ok(Some((_, aki))) = cert.tbs_certificate.get::<AuthorityKeyIdentifier>() {
        let ski = cert
            .tbs_certificate
            .get::<SubjectKeyIdentifier>()
            .ok()
            .flatten()
            .map(|(_, s)| s.0);
        let ok = aki.authority_cert_issuer.is_none()
            && aki.authority_cert_serial_number.is_none()
            && aki.key_identifier.is_some()
            && aki.key_identifier == ski;
        if !ok {
            return Err(broke(
                "is a root CA certificate whose authorityKeyIdentifier is not its \
                 subjectKeyIdentifier alone (BR §7.1.2.1.3)",
            ));
        }
    }
    Ok(())
}

/// BR rules for a subscriber (leaf) certificate.
fn webpki_leaf(leaf: &Certificate) -> Result<(), Rule> {
    if is_ca(leaf) {
        return Err(broke(
            "is a CA certificate (basicConstraints cA) presented as a subscriber certificate \
             (BR §7.1.2.7.8)",
        ));
    }
    // §7.1.2.7.10: extendedKeyUsage present, not critical, without anyExtendedKeyUsage.
    match leaf.tbs_certificate.get::<ExtendedKeyUsage>() {
        Ok(Some((critical, eku))) => {
            if critical {
                return Err(broke("marks extendedKeyUsage critical (BR §7.1.2.7.10)"));
            }
            if eku.0.contains(&ANY_EKU) {
                return Err(broke(
                    "has anyExtendedKeyUsage in a subscriber certificate (BR §7.1.2.7.10)",
                ));
            }
        }
        Ok(None) => {
            return Err(broke(
                "has no extendedKeyUsage, which a subscriber certificate must have (BR \
                 §7.1.2.7.10)",
            ));
        }
        Err(_) => return Err(broke("its extendedKeyUsage does not decode")),
    }
    // §7.1.2.7.12: a subjectAltName, critical only when the subject is empty.
    let san = match leaf.tbs_certificate.get::<SubjectAltName>() {
        Ok(Some((critical, san))) => {
            if critical && !leaf.tbs_certificate.subject.0.is_empty() {
                return Err(broke(
                    "marks subjectAltName critical while its subject is not empty (BR \
                     §7.1.2.7.12)",
                ));
            }
            san
        }
        _ => {
            return Err(broke(
                "has no subjectAltName, which a subscriber certificate must have (BR \
                 §7.1.2.7.12)",
            ));
        }
    };
    for name in &san.0 {
        if let GeneralName::DnsName(d) = name {
            let d = d.as_str();
            let bare = d.strip_prefix("*.").unwrap_or(d);
            // A wildcard covers names under a registrable domain, never a public suffix
            // (BR §3.2.2.6).
            if d.starts_with("*.") && !bare.contains('.') {
                return Err(broke(format!(
                    "has a wildcard {d:?} directly under a top-level domain (BR §3.2.2.6)"
                )));
            }
        }
    }
    // §7.1.4.3: a commonName, when present, is one of the subjectAltName entries, byte for
    // byte (an IP address in its canonical text: dotted quad, RFC 5952).
    for cn in common_names(leaf) {
        let in_san = san.0.iter().any(|n| match n {
            GeneralName::DnsName(d) => d.as_str() == cn,
            GeneralName::IpAddress(ip) => ip_text(ip.as_bytes()).is_some_and(|t| t == cn),
            _ => false,
        });
        if !in_san {
            return Err(broke(format!(
                "has a commonName {cn:?} that is not one of its subjectAltName entries, \
                 written as there (BR §7.1.4.3)"
            )));
        }
    }
    Ok(())
}

/// The subject's commonName values as text.
fn common_names(cert: &Certificate) -> Vec<String> {
    let mut out = Vec::new();
    for rdn in &cert.tbs_certificate.subject.0 {
        for atv in rdn.0.iter() {
            if atv.oid == const_oid::db::rfc4519::CN {
                let text = der::asn1::Utf8StringRef::try_from(&atv.value)
                    .map(|s| s.as_str().to_owned())
                    .or_else(|_| {
                        der::asn1::PrintableStringRef::try_from(&atv.value)
                            .map(|s| s.as_str().to_owned())
                    })
                    .or_else(|_| {
                        der::asn1::Ia5StringRef::try_from(&atv.value).map(|s| s.as_str().to_owned())
                    })
                    .unwrap_or_else(|_| String::from_utf8_lossy(atv.value.value()).into_owned());
                out.push(text);
            }
        }
    }
    out
}

/// An iPAddress's canonical text: dotted decimal, or RFC 5952 for IPv6.
fn ip_text(octets: &[u8]) -> Option<String> {
    match octets.len() {
        4 => Some(IpAddr::from(<[u8; 4]>::try_from(octets).ok()?).to_string()),
        16 => Some(IpAddr::from(<[u8; 16]>::try_from(octets).ok()?).to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::contiguous_mask;

    #[test]
    fn masks() {
        assert!(contiguous_mask(&[255, 255, 255, 0]));
        assert!(contiguous_mask(&[0, 0, 0, 0]));
        assert!(contiguous_mask(&[255; 16]));
        assert!(!contiguous_mask(&[255, 0, 255, 0]));
        assert!(!contiguous_mask(&[0, 255, 255, 255]));
    }
}
