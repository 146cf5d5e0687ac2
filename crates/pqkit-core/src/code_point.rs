//! TLS code points (IANA TLS registries, RFC 8446 §4.2.7 and §4.2.3): a leaf module that
//! every algorithm file and the catalogue use.

/// A TLS code point: its value, its IANA spelling and the document that assigns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlsCodePoint {
    /// The 16-bit value on the wire.
    pub value: u16,
    /// The name as the IANA registry (or the draft) spells it.
    pub iana: &'static str,
    /// The RFC or draft that assigns it.
    pub source: &'static str,
}

impl TlsCodePoint {
    /// A code point of oqs-provider's (`oqs-template/generate.yml`), in the private-use range.
    pub const fn oqs_provider(value: u16, name: &'static str) -> Self {
        Self {
            value,
            iana: name,
            source: "oqs-provider (private use)",
        }
    }
}
