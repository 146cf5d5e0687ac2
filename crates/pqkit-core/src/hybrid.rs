//! Key-exchange groups: each KEM alone and the ECDHE hybrids, as data (ML-KEM's of RFC 10024
//! and draft-ietf-tls-mlkem; HQC's, BIKE's and eFrodoKEM's at oqs-provider's code points).
//!
//! A group is a KEM, an optional ECDH function and the order of their shares. The client share
//! is the ECDH share and the encapsulation key; the server share is the ECDH share and the
//! ciphertext; the shared secret is the two secrets concatenated in the order of the shares
//! (RFC 10024 §3, draft-ietf-tls-mlkem §3). Every length is checked exactly, the encapsulation
//! key passes the FIPS 203 §7.2 modulus check, and an all-zero X25519 output is rejected.

use zeroize::Zeroizing;

use crate::classical::{self, Ecdh, EcdhKey};
use crate::code_point::TlsCodePoint;
use crate::error::{Error, check_len};
use crate::kem::{DecapsulationKey, KemAlgorithm};
use crate::ml_kem::{ML_KEM_512, ML_KEM_768, ML_KEM_1024};

/// Which share comes first in the concatenation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareOrder {
    /// ECDH share first (SecP256r1MLKEM768, SecP384r1MLKEM1024).
    ClassicalFirst,
    /// ML-KEM share first (X25519MLKEM768).
    KemFirst,
}

/// A TLS key-exchange group built on a KEM (ML-KEM, BIKE, FrodoKEM), with or without an ECDH
/// half.
pub struct KeyExchangeGroup {
    /// IANA name, e.g. "X25519MLKEM768".
    pub name: &'static str,
    /// Other names users bring (case-insensitive).
    pub aliases: &'static [&'static str],
    /// The TLS named group.
    pub code_point: TlsCodePoint,
    /// The ECDH half, if hybrid.
    pub classical: Option<&'static Ecdh>,
    /// The KEM half.
    pub kem: &'static KemAlgorithm,
    /// The order of the halves in shares and secret.
    pub order: ShareOrder,
}

/// MLKEM512 (0x0200, draft-ietf-tls-mlkem).
pub static MLKEM512: KeyExchangeGroup = pure("MLKEM512", &ML_KEM_512);
/// MLKEM768 (0x0201, draft-ietf-tls-mlkem).
pub static MLKEM768: KeyExchangeGroup = pure("MLKEM768", &ML_KEM_768);
/// MLKEM1024 (0x0202, draft-ietf-tls-mlkem).
pub static MLKEM1024: KeyExchangeGroup = pure("MLKEM1024", &ML_KEM_1024);

/// SecP256r1MLKEM768 (0x11EB, RFC 10024): P-256 (65) ‖ ek (1184); P-256 (65) ‖ ct (1088).
pub static SECP256R1MLKEM768: KeyExchangeGroup = KeyExchangeGroup {
    name: "SecP256r1MLKEM768",
    aliases: &["P256MLKEM768", "secp256r1mlkem768"],
    code_point: TlsCodePoint {
        value: 0x11EB,
        iana: "SecP256r1MLKEM768",
        source: "RFC 10024",
    },
    classical: Some(&classical::P256),
    kem: &ML_KEM_768,
    order: ShareOrder::ClassicalFirst,
};

/// X25519MLKEM768 (0x11EC, RFC 10024): ek (1184) ‖ X25519 (32); ct (1088) ‖ X25519 (32).
pub static X25519MLKEM768: KeyExchangeGroup = KeyExchangeGroup {
    name: "X25519MLKEM768",
    aliases: &["x25519_mlkem768"],
    code_point: TlsCodePoint {
        value: 0x11EC,
        iana: "X25519MLKEM768",
        source: "RFC 10024",
    },
    classical: Some(&classical::X25519),
    kem: &ML_KEM_768,
    order: ShareOrder::KemFirst,
};

/// SecP384r1MLKEM1024 (0x11ED, RFC 10024): P-384 (97) ‖ ek (1568); P-384 (97) ‖ ct (1568).
pub static SECP384R1MLKEM1024: KeyExchangeGroup = KeyExchangeGroup {
    name: "SecP384r1MLKEM1024",
    aliases: &["P384MLKEM1024", "secp384r1mlkem1024"],
    code_point: TlsCodePoint {
        value: 0x11ED,
        iana: "SecP384r1MLKEM1024",
        source: "RFC 10024",
    },
    classical: Some(&classical::P384),
    kem: &ML_KEM_1024,
    order: ShareOrder::ClassicalFirst,
};

/// p256_mlkem512 (0x2F4B, oqs-provider): P-256 (65) ‖ ek (800); P-256 (65) ‖ ct (768); secret
/// ECDH (32) ‖ ML-KEM (32). No length prefixes on the wire (oqs-provider `reverse_share = 0`).
pub static P256_MLKEM512: KeyExchangeGroup = level_named(
    "p256_mlkem512",
    &["P256_KYBER_LEVEL1", "SecP256r1MLKEM512", "P256MLKEM512"],
    0x2F4B,
    &classical::P256,
    &ML_KEM_512,
);

/// p384_mlkem768 (0x2F4C, oqs-provider): P-384 (97) ‖ ek (1184); P-384 (97) ‖ ct (1088); secret
/// ECDH (48) ‖ ML-KEM (32).
pub static P384_MLKEM768: KeyExchangeGroup = level_named(
    "p384_mlkem768",
    &["P384_KYBER_LEVEL3", "SecP384r1MLKEM768", "P384MLKEM768"],
    0x2F4C,
    &classical::P384,
    &ML_KEM_768,
);

/// p521_mlkem1024 (0x2F4D, oqs-provider): P-521 (133) ‖ ek (1568); P-521 (133) ‖ ct (1568);
/// secret ECDH (66) ‖ ML-KEM (32).
pub static P521_MLKEM1024: KeyExchangeGroup = level_named(
    "p521_mlkem1024",
    &["P521_KYBER_LEVEL5", "SecP521r1MLKEM1024", "P521MLKEM1024"],
    0x2F4D,
    &classical::P521,
    &ML_KEM_1024,
);

/// oqs-provider's hybrids: classical share and secret first, private-use code points.
const fn level_named(
    name: &'static str,
    aliases: &'static [&'static str],
    value: u16,
    classical: &'static Ecdh,
    kem: &'static KemAlgorithm,
) -> KeyExchangeGroup {
    KeyExchangeGroup {
        name,
        aliases,
        code_point: TlsCodePoint::oqs_provider(value, name),
        classical: Some(classical),
        kem,
        order: ShareOrder::ClassicalFirst,
    }
}

impl KeyExchangeGroup {
    /// Size of the client's key share in bytes.
    pub fn client_share_size(&self) -> usize {
        self.classical_share_size() + self.kem.encapsulation_key_size
    }

    /// Size of the server's key share in bytes.
    pub fn server_share_size(&self) -> usize {
        self.classical_share_size() + self.kem.ciphertext_size
    }

    /// Size of the combined shared secret in bytes.
    pub fn shared_secret_size(&self) -> usize {
        self.classical.map_or(0, |c| c.secret_size) + self.kem.shared_secret_size
    }

    /// NIST security category of the post-quantum half.
    pub fn category(&self) -> u8 {
        self.kem.category
    }

    /// Client side: generates the ephemeral keys and the client share.
    ///
    /// # Errors
    /// [`Error::Rng`] or [`Error::Backend`].
    pub fn start(&'static self) -> Result<ClientKeyExchange, Error> {
        let dk = self.kem.generate()?;
        let ecdh = self.classical.map(|c| c.generate()).transpose()?;
        let ek = dk.encapsulation_key().as_bytes();
        let share = self.join(ecdh.as_ref().map_or(&[][..], |e| e.share()), ek);
        Ok(ClientKeyExchange {
            group: self,
            ecdh,
            dk,
            share,
        })
    }

    /// Server side: checks the client share, encapsulates to it and answers with the server
    /// share. Returns (server share, shared secret).
    ///
    /// # Errors
    /// [`Error::InvalidLength`] for a share of the wrong size, [`Error::InvalidKey`] for an
    /// encapsulation key failing FIPS 203 §7.2, [`Error::InvalidCiphertext`] for a bad ECDH
    /// share; [`Error::Rng`] or [`Error::Backend`].
    pub fn encapsulate(
        &'static self,
        client_share: &[u8],
    ) -> Result<(Vec<u8>, Zeroizing<Vec<u8>>), Error> {
        check_len("client key share", client_share, self.client_share_size())?;
        let (peer_ecdh, ek) = self.split(client_share, self.kem.encapsulation_key_size);
        let ek = self.kem.encapsulation_key(ek)?;
        let (ct, kem_secret) = ek.encapsulate()?;
        match self.classical {
            None => Ok((ct, Zeroizing::new(kem_secret.as_bytes().to_vec()))),
            Some(c) => {
                let mine = c.generate()?;
                let ecdh_secret = mine.agree(peer_ecdh)?;
                let share = self.join(mine.share(), &ct);
                Ok((share, self.join_secret(&ecdh_secret, kem_secret.as_bytes())))
            }
        }
    }

    fn classical_share_size(&self) -> usize {
        self.classical.map_or(0, |c| c.share_size)
    }

    /// Concatenates an ECDH part and a KEM part in this group's order.
    fn join(&self, ecdh: &[u8], kem: &[u8]) -> Vec<u8> {
        match self.order {
            ShareOrder::ClassicalFirst => [ecdh, kem].concat(),
            ShareOrder::KemFirst => [kem, ecdh].concat(),
        }
    }

    fn join_secret(&self, ecdh: &[u8], kem: &[u8]) -> Zeroizing<Vec<u8>> {
        Zeroizing::new(self.join(ecdh, kem))
    }

    /// Splits a share of checked length into (ECDH part, KEM part).
    fn split<'a>(&self, share: &'a [u8], kem_len: usize) -> (&'a [u8], &'a [u8]) {
        match self.order {
            ShareOrder::ClassicalFirst => share.split_at(share.len() - kem_len),
            ShareOrder::KemFirst => {
                let (kem, ecdh) = share.split_at(kem_len);
                (ecdh, kem)
            }
        }
    }
}

impl core::fmt::Debug for KeyExchangeGroup {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name)
    }
}

/// The client's half of a key exchange in progress: its ephemeral keys and share.
pub struct ClientKeyExchange {
    group: &'static KeyExchangeGroup,
    ecdh: Option<EcdhKey>,
    dk: DecapsulationKey,
    share: Vec<u8>,
}

impl ClientKeyExchange {
    /// The client share, [`KeyExchangeGroup::client_share_size`] bytes.
    pub fn share(&self) -> &[u8] {
        &self.share
    }

    /// The group.
    pub fn group(&self) -> &'static KeyExchangeGroup {
        self.group
    }

    /// Completes the exchange with the server share and returns the combined shared secret.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] or [`Error::InvalidCiphertext`] for a bad server share.
    pub fn complete(self, server_share: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        let g = self.group;
        check_len("server key share", server_share, g.server_share_size())?;
        let (peer_ecdh, ct) = g.split(server_share, g.kem.ciphertext_size);
        let kem_secret = self.dk.decapsulate(ct)?;
        match &self.ecdh {
            None => Ok(Zeroizing::new(kem_secret.as_bytes().to_vec())),
            Some(mine) => Ok(g.join_secret(&mine.agree(peer_ecdh)?, kem_secret.as_bytes())),
        }
    }
}

impl core::fmt::Debug for ClientKeyExchange {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ClientKeyExchange")
            .field("group", &self.group.name)
            .finish_non_exhaustive()
    }
}

const fn pure(name: &'static str, kem: &'static KemAlgorithm) -> KeyExchangeGroup {
    let code_point = match kem.tls_group {
        Some(cp) => cp,
        // Evaluated at compile time only (the callers are `static` initializers): a KEM without
        // a TLS code point fails the build, never a running program.
        None => panic!("pure KEM group without a code point"),
    };
    KeyExchangeGroup {
        name,
        aliases: &[],
        code_point,
        classical: None,
        kem,
        order: ShareOrder::KemFirst,
    }
}

/// HQC's groups at oqs-provider's code points (`oqs-template/generate.yml`, liboqs 0.16's
/// `OQS_KEM_alg_hqc_1/3/5`): each set alone, and the ECDHE hybrids (classical share and
/// secret first). x448_hqc3 is not offered: aws-lc-rs has no X448.
mod hqc_groups {
    use super::{KeyExchangeGroup, level_named, pure};
    use crate::classical::{P256, P384, P521, X25519};
    use crate::hqc::{HQC_1, HQC_3, HQC_5};

    /// hqc1 (65075): ek 2241; ct 4433.
    pub static HQC1: KeyExchangeGroup = pure("hqc1", &HQC_1);
    /// p256_hqc1 (65076).
    pub static P256_HQC1: KeyExchangeGroup = level_named("p256_hqc1", &[], 65076, &P256, &HQC_1);
    /// x25519_hqc1 (65077).
    pub static X25519_HQC1: KeyExchangeGroup =
        level_named("x25519_hqc1", &[], 65077, &X25519, &HQC_1);
    /// hqc3 (65078).
    pub static HQC3: KeyExchangeGroup = pure("hqc3", &HQC_3);
    /// p384_hqc3 (65079).
    pub static P384_HQC3: KeyExchangeGroup = level_named("p384_hqc3", &[], 65079, &P384, &HQC_3);
    /// hqc5 (65081).
    pub static HQC5: KeyExchangeGroup = pure("hqc5", &HQC_5);
    /// p521_hqc5 (65082).
    pub static P521_HQC5: KeyExchangeGroup = level_named("p521_hqc5", &[], 65082, &P521, &HQC_5);

    /// All of them.
    pub(crate) static HQC_GROUPS: &[&KeyExchangeGroup] = &[
        &HQC1,
        &P256_HQC1,
        &X25519_HQC1,
        &HQC3,
        &P384_HQC3,
        &HQC5,
        &P521_HQC5,
    ];
}

pub use hqc_groups::*;

/// The groups of the KEMs pqkit takes from liboqs (BIKE, eFrodoKEM), with oqs-provider's
/// private-use code points (`oqs-template/generate.yml`): each KEM alone, and hybrids whose
/// ECDHE share and secret come first, as [`P256_MLKEM512`]'s do. Classic McEliece has none:
/// its encapsulation key exceeds a key share's 65,535 bytes (RFC 8446 §4.2.8). oqs-provider's
/// X448 hybrids (x448_bikel3, x448_efrodo976*) are not offered: aws-lc-rs has no X448.
#[cfg(feature = "liboqs")]
mod liboqs_groups {
    use super::{KeyExchangeGroup, level_named, pure};
    use crate::classical::{P256, P384, P521, X25519};
    use crate::oqs_kem::{
        BIKE_L1, BIKE_L3, BIKE_L5, EFRODOKEM_640_AES, EFRODOKEM_640_SHAKE, EFRODOKEM_976_AES,
        EFRODOKEM_976_SHAKE, EFRODOKEM_1344_AES, EFRODOKEM_1344_SHAKE,
    };

    /// bikel1 (65040): ek 1541; ct 1573.
    pub static BIKEL1: KeyExchangeGroup = pure("bikel1", &BIKE_L1);
    /// p256_bikel1 (65041).
    pub static P256_BIKEL1: KeyExchangeGroup =
        level_named("p256_bikel1", &[], 65041, &P256, &BIKE_L1);
    /// x25519_bikel1 (65042).
    pub static X25519_BIKEL1: KeyExchangeGroup =
        level_named("x25519_bikel1", &[], 65042, &X25519, &BIKE_L1);
    /// bikel3 (65043).
    pub static BIKEL3: KeyExchangeGroup = pure("bikel3", &BIKE_L3);
    /// p384_bikel3 (65044).
    pub static P384_BIKEL3: KeyExchangeGroup =
        level_named("p384_bikel3", &[], 65044, &P384, &BIKE_L3);
    /// bikel5 (65046).
    pub static BIKEL5: KeyExchangeGroup = pure("bikel5", &BIKE_L5);
    /// p521_bikel5 (65047).
    pub static P521_BIKEL5: KeyExchangeGroup =
        level_named("p521_bikel5", &[], 65047, &P521, &BIKE_L5);
    /// efrodo640aes (65024).
    pub static EFRODO640AES: KeyExchangeGroup = pure("efrodo640aes", &EFRODOKEM_640_AES);
    /// p256_efrodo640aes (65025).
    pub static P256_EFRODO640AES: KeyExchangeGroup =
        level_named("p256_efrodo640aes", &[], 65025, &P256, &EFRODOKEM_640_AES);
    /// x25519_efrodo640aes (65026).
    pub static X25519_EFRODO640AES: KeyExchangeGroup = level_named(
        "x25519_efrodo640aes",
        &[],
        65026,
        &X25519,
        &EFRODOKEM_640_AES,
    );
    /// efrodo640shake (65027).
    pub static EFRODO640SHAKE: KeyExchangeGroup = pure("efrodo640shake", &EFRODOKEM_640_SHAKE);
    /// p256_efrodo640shake (65028).
    pub static P256_EFRODO640SHAKE: KeyExchangeGroup = level_named(
        "p256_efrodo640shake",
        &[],
        65028,
        &P256,
        &EFRODOKEM_640_SHAKE,
    );
    /// x25519_efrodo640shake (65029).
    pub static X25519_EFRODO640SHAKE: KeyExchangeGroup = level_named(
        "x25519_efrodo640shake",
        &[],
        65029,
        &X25519,
        &EFRODOKEM_640_SHAKE,
    );
    /// efrodo976aes (65030).
    pub static EFRODO976AES: KeyExchangeGroup = pure("efrodo976aes", &EFRODOKEM_976_AES);
    /// p384_efrodo976aes (65031).
    pub static P384_EFRODO976AES: KeyExchangeGroup =
        level_named("p384_efrodo976aes", &[], 65031, &P384, &EFRODOKEM_976_AES);
    /// efrodo976shake (65033).
    pub static EFRODO976SHAKE: KeyExchangeGroup = pure("efrodo976shake", &EFRODOKEM_976_SHAKE);
    /// p384_efrodo976shake (65034).
    pub static P384_EFRODO976SHAKE: KeyExchangeGroup = level_named(
        "p384_efrodo976shake",
        &[],
        65034,
        &P384,
        &EFRODOKEM_976_SHAKE,
    );
    /// efrodo1344aes (65036).
    pub static EFRODO1344AES: KeyExchangeGroup = pure("efrodo1344aes", &EFRODOKEM_1344_AES);
    /// p521_efrodo1344aes (65037).
    pub static P521_EFRODO1344AES: KeyExchangeGroup =
        level_named("p521_efrodo1344aes", &[], 65037, &P521, &EFRODOKEM_1344_AES);
    /// efrodo1344shake (65038).
    pub static EFRODO1344SHAKE: KeyExchangeGroup = pure("efrodo1344shake", &EFRODOKEM_1344_SHAKE);
    /// p521_efrodo1344shake (65039).
    pub static P521_EFRODO1344SHAKE: KeyExchangeGroup = level_named(
        "p521_efrodo1344shake",
        &[],
        65039,
        &P521,
        &EFRODOKEM_1344_SHAKE,
    );

    /// All of them: BIKE's, then eFrodoKEM's.
    pub(crate) static LIBOQS_GROUPS: &[&KeyExchangeGroup] = &[
        &BIKEL1,
        &P256_BIKEL1,
        &X25519_BIKEL1,
        &BIKEL3,
        &P384_BIKEL3,
        &BIKEL5,
        &P521_BIKEL5,
        &EFRODO640AES,
        &P256_EFRODO640AES,
        &X25519_EFRODO640AES,
        &EFRODO640SHAKE,
        &P256_EFRODO640SHAKE,
        &X25519_EFRODO640SHAKE,
        &EFRODO976AES,
        &P384_EFRODO976AES,
        &EFRODO976SHAKE,
        &P384_EFRODO976SHAKE,
        &EFRODO1344AES,
        &P521_EFRODO1344AES,
        &EFRODO1344SHAKE,
        &P521_EFRODO1344SHAKE,
    ];
}

#[cfg(feature = "liboqs")]
pub use liboqs_groups::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::groups;

    #[test]
    fn shares_and_secrets_have_the_rfc_10024_layout() {
        // (group, client share, server share, secret) sizes in bytes.
        let expected = [
            ("X25519MLKEM768", 1216, 1120, 64),
            ("SecP256r1MLKEM768", 1249, 1153, 64),
            ("SecP384r1MLKEM1024", 1665, 1665, 80),
            ("MLKEM512", 800, 768, 32),
            ("MLKEM768", 1184, 1088, 32),
            ("MLKEM1024", 1568, 1568, 32),
            // oqs-provider's level-named hybrids: classical first, no length prefixes.
            ("p256_mlkem512", 865, 833, 64),
            ("p384_mlkem768", 1281, 1185, 80),
            ("p521_mlkem1024", 1701, 1701, 98),
        ];
        for (name, client, server, secret) in expected {
            let g = crate::catalogue::group(name).expect("group");
            assert_eq!(
                (g.client_share_size(), g.server_share_size()),
                (client, server),
                "{name}"
            );
            assert_eq!(g.shared_secret_size(), secret, "{name}");
            let c = g.start().expect("start");
            assert_eq!(c.share().len(), client);
            let (s_share, s_secret) = g.encapsulate(c.share()).expect("encapsulate");
            assert_eq!(s_share.len(), server);
            assert_eq!(*c.complete(&s_share).expect("complete"), *s_secret);
        }
        assert_eq!(crate::catalogue::ml_kem_groups().len(), expected.len());
    }

    #[test]
    fn shared_secret_halves_are_in_share_order() {
        for g in groups() {
            let c = g.start().expect("start");
            let (share, secret) = g.encapsulate(c.share()).expect("encapsulate");
            let (ecdh_part, ct) = g.split(&share, g.kem.ciphertext_size);
            let kem_secret = c.dk.decapsulate(ct).expect("decapsulate");
            let ecdh_secret = match &c.ecdh {
                Some(e) => e.agree(ecdh_part).expect("agree").to_vec(),
                None => Vec::new(),
            };
            let want = match g.order {
                ShareOrder::ClassicalFirst => [&ecdh_secret[..], kem_secret.as_bytes()].concat(),
                ShareOrder::KemFirst => [kem_secret.as_bytes(), &ecdh_secret[..]].concat(),
            };
            assert_eq!(*secret, want, "{}", g.name);
        }
        // RFC 10024 §3: X25519MLKEM768 puts ML-KEM first, the SecP hybrids put ECDH first.
        assert_eq!(X25519MLKEM768.order, ShareOrder::KemFirst);
        assert_eq!(SECP256R1MLKEM768.order, ShareOrder::ClassicalFirst);
        assert_eq!(SECP384R1MLKEM1024.order, ShareOrder::ClassicalFirst);
    }

    #[test]
    fn ml_kem_half_is_where_the_order_says() {
        // X25519MLKEM768: ek first; its ek must be the ML-KEM part of the share.
        let c = X25519MLKEM768.start().expect("start");
        let ek = c.dk.encapsulation_key().as_bytes();
        assert_eq!(&c.share()[..1184], ek);
        let c = SECP256R1MLKEM768.start().expect("start");
        let ek = c.dk.encapsulation_key().as_bytes();
        assert_eq!(&c.share()[65..], ek);
        assert_eq!(c.share()[0], 0x04, "uncompressed P-256 point first");
    }

    #[test]
    fn low_order_x25519_share_is_rejected() {
        // u = 0 is a low-order point: the X25519 output is all zero (RFC 7748 §6.1).
        let c = X25519MLKEM768.start().expect("start");
        let mut share = c.share().to_vec();
        share[1184..].fill(0);
        assert!(matches!(
            X25519MLKEM768.encapsulate(&share),
            Err(Error::InvalidCiphertext(_))
        ));
        // A P-256 share that is not on the curve.
        let c = SECP256R1MLKEM768.start().expect("start");
        let mut share = c.share().to_vec();
        share[1..65].fill(0x11);
        assert!(matches!(
            SECP256R1MLKEM768.encapsulate(&share),
            Err(Error::InvalidCiphertext(_))
        ));
        // A compressed point.
        let mut share = c.share().to_vec();
        share[0] = 0x02;
        assert!(SECP256R1MLKEM768.encapsulate(&share).is_err());
    }
}
