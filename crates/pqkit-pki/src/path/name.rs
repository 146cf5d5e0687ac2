//! The name a leaf certificate must be valid for: a DNS name, an IP address or an e-mail
//! address, told apart by syntax, and matched against the leaf's subjectAltName as RFC 9525
//! (which obsoletes RFC 6125) and RFC 8398 say.
//!
//! DNS names and IP addresses are matched by rustls-webpki (`dNSName` with a left-most `*`
//! label, `iPAddress` by its octets; the subject's common name is never consulted, RFC 9525
//! §6.1). E-mail addresses are matched here against `rfc822Name` (RFC 5280 §4.2.1.6): the
//! local part exactly, the domain without regard to ASCII case; there is no wildcard.

use std::fmt;
use std::net::IpAddr;

use der::Decode;
use rustls_pki_types::{CertificateDer, DnsName, ServerName};
use x509_cert::Certificate;
use x509_cert::ext::pkix::SubjectAltName;
use x509_cert::ext::pkix::name::GeneralName;

/// Longest name accepted: a DNS name is at most 253 octets (RFC 1035 §2.3.4), an e-mail
/// address at most 254 (RFC 5321 §4.5.3.1.3 with the path's angle brackets).
const MAX_NAME: usize = 254;

/// The identity a leaf must present.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerName {
    /// A DNS name in the preferred name syntax (RFC 1034 §3.5; IDNs as A-labels), lower case.
    Dns(String),
    /// An IPv4 or IPv6 address.
    Ip(IpAddr),
    /// An e-mail address (RFC 5321 `Mailbox`): local part, `@`, domain (lower case).
    Email {
        /// The local part, compared exactly.
        local: String,
        /// The domain, a DNS name in lower case.
        domain: String,
    },
}

impl PeerName {
    /// Tells the kind apart by syntax: an IP address parses as one, an e-mail address has an
    /// `@`, anything else must be a DNS name.
    ///
    /// # Errors
    /// Why the text is none of the three, in words.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.len() > MAX_NAME {
            return Err(format!("{} bytes: longer than any name", text.len()));
        }
        if let Ok(ip) = text.parse::<IpAddr>() {
            return Ok(Self::Ip(ip));
        }
        if let Some((local, domain)) = text.rsplit_once('@') {
            if local.is_empty()
                || local.len() > 64
                || !local
                    .bytes()
                    .all(|b| b.is_ascii_graphic() && !b"@<>()[]\\,;:\"".contains(&b))
            {
                return Err(format!(
                    "{text:?}: the local part of an e-mail address must be 1 to 64 printable \
                     ASCII characters without @<>()[]\\,;:\" (RFC 5321 §4.1.2)"
                ));
            }
            return Ok(Self::Email {
                local: local.to_owned(),
                domain: dns_name(domain).map_err(|e| format!("{text:?}: {e}"))?,
            });
        }
        // A reference name may hold `_` (service labels; rustls allows it): no certificate
        // may present one (RFC 5280 §4.2.1.6), so it never matches, but it can be asked.
        dns_name(&text.replace('_', "a"))?;
        let bare = text.strip_suffix('.').unwrap_or(text);
        Ok(Self::Dns(bare.to_ascii_lowercase()))
    }

    /// webpki's form of a DNS name or an IP address.
    fn server_name(&self) -> Option<ServerName<'static>> {
        match self {
            Self::Dns(name) => DnsName::try_from(name.clone())
                .ok()
                .map(ServerName::DnsName),
            Self::Ip(ip) => Some(ServerName::IpAddress((*ip).into())),
            Self::Email { .. } => None,
        }
    }

    /// Whether the leaf (DER) presents this name in its subjectAltName.
    pub(crate) fn matches(&self, leaf: &[u8]) -> bool {
        if let Some(server_name) = self.server_name() {
            let der = CertificateDer::from(leaf);
            return webpki::EndEntityCert::try_from(&der)
                .is_ok_and(|ee| ee.verify_is_valid_for_subject_name(&server_name).is_ok());
        }
        let Self::Email { local, domain } = self else {
            return false;
        };
        let Ok(cert) = Certificate::from_der(leaf) else {
            return false;
        };
        let Ok(Some((_, san))) = cert.tbs_certificate.get::<SubjectAltName>() else {
            return false;
        };
        san.0.iter().any(|n| match n {
            GeneralName::Rfc822Name(m) => m
                .as_str()
                .rsplit_once('@')
                .is_some_and(|(l, d)| l == local && d.eq_ignore_ascii_case(domain)),
            _ => false,
        })
    }
}

impl fmt::Display for PeerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dns(name) => write!(f, "DNS name {name}"),
            Self::Ip(ip) => write!(f, "IP address {ip}"),
            Self::Email { local, domain } => write!(f, "e-mail address {local}@{domain}"),
        }
    }
}

/// A DNS name in the preferred name syntax (RFC 1034 §3.5, RFC 1123 §2.1: letters, digits and
/// hyphens, labels of 1 to 63 octets not starting or ending with a hyphen, at most 253 octets;
/// an internationalized name as its A-labels, RFC 5890), in lower case. A final dot is
/// dropped. No wildcard: a reference identity names one host.
///
/// # Errors
/// The rule the name breaks, in words.
pub fn dns_name(text: &str) -> Result<String, String> {
    let name = text.strip_suffix('.').unwrap_or(text);
    if name.is_empty() || name.len() > 253 {
        return Err(format!(
            "{text:?}: a DNS name has 1 to 253 characters (RFC 1035 §2.3.4)"
        ));
    }
    for label in name.split('.') {
        let ok = !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !ok {
            return Err(format!(
                "{text:?} is not a DNS name: each label is 1 to 63 letters, digits or hyphens, \
                 not starting or ending with a hyphen (RFC 1034 §3.5; internationalized names \
                 as A-labels \"xn--…\", RFC 5890)"
            ));
        }
        if let Some(ace) = label
            .get(..4)
            .filter(|p| p.eq_ignore_ascii_case("xn--"))
            .map(|_| &label[4..])
            && !punycode_decodes(ace)
        {
            return Err(format!(
                "{text:?}: the label {label:?} is not a valid A-label (RFC 5890 §2.3.2.1)"
            ));
        }
    }
    if name
        .rsplit('.')
        .next()
        .is_some_and(|tld| tld.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(format!(
            "{text:?}: a DNS name's last label is not all digits (RFC 1123 §2.1); an IP \
             address is written as one"
        ));
    }
    Ok(name.to_ascii_lowercase())
}

/// A dNSName for a subjectAltName: the preferred name syntax of [`dns_name`], with a
/// left-most `*` label allowed (RFC 9525 §6.3), and no IP address written as a name (it
/// belongs in iPAddress, RFC 5280 §4.2.1.6). Returns the name as given.
///
/// # Errors
/// The rule the name breaks, in words.
pub fn san_dns_name(text: &str) -> Result<String, String> {
    let bare = text.strip_prefix("*.").unwrap_or(text);
    if bare.contains('*') {
        return Err(format!(
            "{text:?}: a wildcard is only a whole left-most label (RFC 9525 §6.3)"
        ));
    }
    if bare.parse::<IpAddr>().is_ok() {
        return Err(format!(
            "{text:?} is an IP address; it belongs in iPAddress (RFC 5280 §4.2.1.6)"
        ));
    }
    dns_name(bare)?;
    Ok(text.to_owned())
}

/// A dNSName pqkit puts into a certificate or CSR it makes: [`san_dns_name`], and stricter than
/// what validation accepts from others — no final dot (RFC 5280 §4.2.1.6 asks for the
/// preferred name syntax, which has none) and a wildcard only over at least two labels
/// (`*.example.com`, not `*.com`: RFC 9525 §6.3 leaves wildcards over a public suffix to the
/// CA's policy, and pqkit has no public-suffix list, so it refuses the one case it can tell).
///
/// # Errors
/// The rule the name breaks, in words.
pub fn issued_dns_name(text: &str) -> Result<String, String> {
    let name = san_dns_name(text)?;
    if name.ends_with('.') {
        return Err(format!(
            "{text:?}: a subjectAltName dNSName has no final dot (RFC 5280 §4.2.1.6)"
        ));
    }
    if let Some(rest) = name.strip_prefix("*.")
        && !rest.contains('.')
    {
        return Err(format!(
            "{text:?}: a wildcard covers a name with at least two labels after it \
             (\"*.example.com\", not \"*.{rest}\")"
        ));
    }
    Ok(name)
}

/// Whether `ace` (an A-label after its `xn--`) is Punycode that decodes to a name with at
/// least one non-ASCII character (RFC 3492 §6.2; RFC 5890 §2.3.2.1). Labels are at most 63
/// octets, so every step is bounded.
fn punycode_decodes(ace: &str) -> bool {
    const BASE: u32 = 36;
    const TMIN: u32 = 1;
    const TMAX: u32 = 26;
    fn adapt(delta: u32, points: u32, first: bool) -> u32 {
        let mut delta = if first { delta / 700 } else { delta / 2 };
        delta += delta / points;
        let mut k = 0;
        while delta > ((BASE - TMIN) * TMAX) / 2 {
            delta /= BASE - TMIN;
            k += BASE;
        }
        k + ((BASE - TMIN + 1) * delta) / (delta + 38)
    }
    let (basic, rest) = match ace.rfind('-') {
        Some(d) => (&ace[..d], &ace[d + 1..]),
        None => ("", ace),
    };
    if rest.is_empty() || !basic.is_ascii() {
        return false;
    }
    let mut out: Vec<char> = basic.chars().collect();
    let (mut n, mut i, mut bias) = (128u32, 0u32, 72u32);
    let mut digits = rest.bytes().peekable();
    while digits.peek().is_some() {
        let old = i;
        let mut w = 1u32;
        let mut k = BASE;
        loop {
            let digit = match digits.next() {
                Some(c @ b'a'..=b'z') => u32::from(c - b'a'),
                Some(c @ b'A'..=b'Z') => u32::from(c - b'A'),
                Some(c @ b'0'..=b'9') => u32::from(c - b'0') + 26,
                _ => return false,
            };
            let Some(next) = digit.checked_mul(w).and_then(|d| i.checked_add(d)) else {
                return false;
            };
            i = next;
            let t = if k <= bias {
                TMIN
            } else if k >= bias + TMAX {
                TMAX
            } else {
                k - bias
            };
            if digit < t {
                break;
            }
            let Some(next) = w.checked_mul(BASE - t) else {
                return false;
            };
            w = next;
            k += BASE;
        }
        let points = u32::try_from(out.len() + 1).unwrap_or(u32::MAX);
        bias = adapt(i - old, points, old == 0);
        let Some(next) = n.checked_add(i / points) else {
            return false;
        };
        n = next;
        i %= points;
        let Some(c) = char::from_u32(n).filter(|c| !c.is_ascii()) else {
            return false;
        };
        out.insert(i as usize, c);
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {

    #[test]
    fn issued_names_have_no_final_dot_and_no_wildcard_over_one_label() {
        assert_eq!(issued_dns_name("localhost").as_deref(), Ok("localhost"));
        assert_eq!(
            issued_dns_name("*.example.com").as_deref(),
            Ok("*.example.com")
        );
        assert_eq!(
            issued_dns_name("device7.example").as_deref(),
            Ok("device7.example")
        );
        for bad in [
            "*.com",
            "example.com.",
            "*.example.com.",
            "*",
            "a.*.com",
            "10.0.0.1",
        ] {
            assert!(issued_dns_name(bad).is_err(), "{bad}");
        }
        // Validation of others' certificates stays as accepting as before.
        assert!(san_dns_name("example.com.").is_ok());
        assert!(san_dns_name("*.com").is_ok());
    }

    use super::*;

    #[test]
    fn kinds_are_told_apart_by_syntax() {
        assert_eq!(
            PeerName::parse("Example.COM."),
            Ok(PeerName::Dns("example.com".into()))
        );
        assert!(matches!(PeerName::parse("::1"), Ok(PeerName::Ip(_))));
        assert!(matches!(PeerName::parse("10.0.0.1"), Ok(PeerName::Ip(_))));
        assert_eq!(
            PeerName::parse("Foo@Example.com"),
            Ok(PeerName::Email {
                local: "Foo".into(),
                domain: "example.com".into()
            })
        );
        for bad in [
            "bad name!",
            "*.example.com",
            "-a.example",
            "a..b",
            "",
            "@example.com",
            "a@b@",
            "10.0.0.256",
            "xn--.example",
        ] {
            assert!(PeerName::parse(bad).is_err(), "{bad:?}");
        }
        assert!(dns_name(&"a".repeat(64)).is_err());
        assert!(dns_name("xn--nxasmq6b.example").is_ok());
        // RFC 3492 §7.1 (A) Arabic, and "bücher".
        assert!(punycode_decodes("egbpdaj6bu4bxfgehfvwxn"));
        assert!(punycode_decodes("bcher-kva"));
        assert!(!punycode_decodes("abc-"));
        assert!(!punycode_decodes("a!b"));
        assert!(dns_name("xn--abc-.example").is_err());
    }
}
