//! Which clients `pqkit proxy` lets through, once their chain has validated: an allow-list of
//! identities by subjectAltName (RFC 5280 §4.2.1.6) or by key pin (SHA-256 of the
//! SubjectPublicKeyInfo, RFC 7469 §2.4). A client on no list is refused with the alert
//! access_denied (through [`pqkit_rustls::verify::ClientPolicy`]).

use std::net::IpAddr;

use pqkit_rustls::verify::ClientPolicy;

/// Identities admitted: a client is admitted when any subjectAltName of its end-entity
/// certificate, or its key's pin, is on a list — or when [`AllowList::any`] is set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList {
    /// Every client whose chain validates (`--allow-all`).
    pub any: bool,
    /// dNSName entries, compared without regard to ASCII case; no wildcards.
    pub dns: Vec<String>,
    /// uniformResourceIdentifier entries (a SPIFFE ID, say), compared exactly.
    pub uri: Vec<String>,
    /// iPAddress entries.
    pub ip: Vec<IpAddr>,
    /// SHA-256 pins of SubjectPublicKeyInfo DER (32 bytes each).
    pub spki_sha256: Vec<[u8; 32]>,
}

impl AllowList {
    /// True when nothing would be admitted (no list and not [`AllowList::any`]).
    pub fn is_empty(&self) -> bool {
        !self.any
            && self.dns.is_empty()
            && self.uri.is_empty()
            && self.ip.is_empty()
            && self.spki_sha256.is_empty()
    }

    /// Parses a pin given as 64 hex digits (as `pqkit x509 show` prints it) or as base64 (as
    /// RFC 7469 and `openssl … | base64` give it).
    ///
    /// # Errors
    /// When `text` is neither, or is not 32 bytes.
    pub fn parse_pin(text: &str) -> Result<[u8; 32], String> {
        let text = text.trim();
        let bytes = hex::decode(text).ok().or_else(|| {
            use base64ct::Encoding as _;
            base64ct::Base64::decode_vec(text).ok()
        });
        bytes
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .ok_or_else(|| {
                format!(
                    "{text:?} is not a SHA-256 pin: 64 hex digits or 44 base64 characters \
                     (32 bytes)"
                )
            })
    }
}

impl ClientPolicy for AllowList {
    fn admit(&self, end_entity: &[u8]) -> Result<(), String> {
        if self.any {
            return Ok(());
        }
        let d = pqkit_pki::describe::describe(end_entity, None)
            .map_err(|e| format!("client certificate: {e}"))?;
        let on_list = d
            .subject_alt_names
            .iter()
            .any(|san| match san.split_once(':') {
                Some(("DNS", name)) => self.dns.iter().any(|a| a.eq_ignore_ascii_case(name)),
                Some(("URI", uri)) => self.uri.iter().any(|a| a == uri),
                Some(("IP", ip)) => ip.parse::<IpAddr>().is_ok_and(|ip| self.ip.contains(&ip)),
                _ => false,
            });
        let pinned = hex::decode(&d.spki_sha256)
            .ok()
            .and_then(|p| <[u8; 32]>::try_from(p).ok())
            .is_some_and(|pin| self.spki_sha256.contains(&pin));
        if on_list || pinned {
            return Ok(());
        }
        Err(format!(
            "client certificate \"{}\" (subjectAltName {}; SPKI SHA-256 {}) is not on the \
             allow-list",
            d.subject,
            if d.subject_alt_names.is_empty() {
                "none".to_owned()
            } else {
                d.subject_alt_names.join(", ")
            },
            d.spki_sha256
        ))
    }
}
