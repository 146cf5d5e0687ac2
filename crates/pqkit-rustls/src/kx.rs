//! The catalogue's key-exchange groups as rustls [`SupportedKxGroup`]s (TLS 1.3 only).
//!
//! Each static pairs a pqkit-core [`KeyExchangeGroup`] with the exact rustls [`NamedGroup`]
//! variant pqkit matches on. rustls 0.23 has no name for some code points; they are
//! `NamedGroup::Unknown(_)` here, and a test checks that `NamedGroup::from(u16)` still yields
//! that very variant — if a rustls upgrade names it, the test fails instead of negotiation.
//!
//! Any fault in a peer's key share — wrong length, an encapsulation key failing the FIPS 203
//! §7.2 modulus check, a bad ECDH point, an all-zero X25519 output — is
//! `PeerMisbehaved::InvalidKeyShare`, which rustls sends as an `illegal_parameter` alert.

use pqkit_core::hybrid::{self, ClientKeyExchange, KeyExchangeGroup};
use rustls::crypto::{ActiveKeyExchange, CompletedKeyExchange, SharedSecret, SupportedKxGroup};
use rustls::{Error, NamedGroup, PeerMisbehaved, ProtocolVersion};

/// A pqkit key-exchange group offered to rustls.
pub struct KxGroup {
    /// The group's definition: halves, sizes and order.
    pub group: &'static KeyExchangeGroup,
    /// The rustls variant for its code point.
    pub name: NamedGroup,
}

/// X25519MLKEM768, 0x11EC (RFC 10024).
pub static X25519MLKEM768: KxGroup = KxGroup {
    group: &hybrid::X25519MLKEM768,
    name: NamedGroup::X25519MLKEM768,
};
/// SecP256r1MLKEM768, 0x11EB (RFC 10024).
pub static SECP256R1MLKEM768: KxGroup = KxGroup {
    group: &hybrid::SECP256R1MLKEM768,
    name: NamedGroup::secp256r1MLKEM768,
};
/// SecP384r1MLKEM1024, 0x11ED (RFC 10024); unnamed in rustls 0.23.
pub static SECP384R1MLKEM1024: KxGroup = KxGroup {
    group: &hybrid::SECP384R1MLKEM1024,
    name: NamedGroup::Unknown(0x11ED),
};
/// MLKEM512, 0x0200 (draft-ietf-tls-mlkem).
pub static MLKEM512: KxGroup = KxGroup {
    group: &hybrid::MLKEM512,
    name: NamedGroup::MLKEM512,
};
/// MLKEM768, 0x0201 (draft-ietf-tls-mlkem).
pub static MLKEM768: KxGroup = KxGroup {
    group: &hybrid::MLKEM768,
    name: NamedGroup::MLKEM768,
};
/// MLKEM1024, 0x0202 (draft-ietf-tls-mlkem).
pub static MLKEM1024: KxGroup = KxGroup {
    group: &hybrid::MLKEM1024,
    name: NamedGroup::MLKEM1024,
};

/// p256_mlkem512, 0x2F4B (oqs-provider, private use); unnamed in rustls 0.23.
pub static P256_MLKEM512: KxGroup = KxGroup {
    group: &hybrid::P256_MLKEM512,
    name: NamedGroup::Unknown(0x2F4B),
};
/// p384_mlkem768, 0x2F4C (oqs-provider, private use); unnamed in rustls 0.23.
pub static P384_MLKEM768: KxGroup = KxGroup {
    group: &hybrid::P384_MLKEM768,
    name: NamedGroup::Unknown(0x2F4C),
};
/// p521_mlkem1024, 0x2F4D (oqs-provider, private use); unnamed in rustls 0.23.
pub static P521_MLKEM1024: KxGroup = KxGroup {
    group: &hybrid::P521_MLKEM1024,
    name: NamedGroup::Unknown(0x2F4D),
};

/// pqkit's groups offered by default, in preference order (RFC 10024 hybrids, pure ML-KEM, then
/// oqs-provider's private-use ML-KEM hybrids).
pub static ALL_KX_GROUPS: &[&KxGroup] = &[
    &X25519MLKEM768,
    &SECP256R1MLKEM768,
    &SECP384R1MLKEM1024,
    &MLKEM768,
    &MLKEM1024,
    &MLKEM512,
    &P256_MLKEM512,
    &P384_MLKEM768,
    &P521_MLKEM1024,
];

/// The catalogue's other groups — BIKE and FrodoKEM, alone and with an ECDHE half, at
/// oqs-provider's private-use code points — offered only when named. rustls has no names for
/// them: each is `NamedGroup::Unknown(code point)`.
pub fn other_kx_groups() -> &'static [KxGroup] {
    static OTHERS: std::sync::OnceLock<Vec<KxGroup>> = std::sync::OnceLock::new();
    OTHERS.get_or_init(|| {
        pqkit_core::catalogue::groups()
            .iter()
            .filter(|g| !ALL_KX_GROUPS.iter().any(|k| core::ptr::eq(k.group, **g)))
            .map(|g| KxGroup {
                group: g,
                name: NamedGroup::from(g.code_point.value),
            })
            .collect()
    })
}

/// Every pqkit group: [`ALL_KX_GROUPS`], then [`other_kx_groups`].
pub fn every_kx_group() -> impl Iterator<Item = &'static KxGroup> {
    ALL_KX_GROUPS
        .iter()
        .copied()
        .chain(other_kx_groups().iter())
}

/// Finds one of pqkit's groups by name, alias or code point (see
/// [`pqkit_core::catalogue::group`]).
///
/// # Errors
/// [`pqkit_core::Error::UnknownAlgorithm`].
pub fn find(name: &str) -> Result<&'static KxGroup, pqkit_core::Error> {
    let group = pqkit_core::catalogue::group(name)?;
    every_kx_group()
        .find(|g| core::ptr::eq(g.group, group))
        .ok_or_else(|| pqkit_core::Error::UnknownAlgorithm(name.to_owned()))
}

impl SupportedKxGroup for KxGroup {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let exchange = self.group.start().map_err(local_failure)?;
        Ok(Box::new(ActiveKx {
            exchange,
            name: self.name,
        }))
    }

    fn start_and_complete(&self, client_share: &[u8]) -> Result<CompletedKeyExchange, Error> {
        let (server_share, secret) = self
            .group
            .encapsulate(client_share)
            .map_err(peer_or_local)?;
        Ok(CompletedKeyExchange {
            group: self.name,
            pub_key: server_share,
            secret: SharedSecret::from(&secret[..]),
        })
    }

    fn name(&self) -> NamedGroup {
        self.name
    }

    fn usable_for_version(&self, version: ProtocolVersion) -> bool {
        version == ProtocolVersion::TLSv1_3
    }
}

impl core::fmt::Debug for KxGroup {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.group.name)
    }
}

/// The client side of a key exchange in flight.
struct ActiveKx {
    exchange: ClientKeyExchange,
    name: NamedGroup,
}

impl ActiveKeyExchange for ActiveKx {
    fn complete(self: Box<Self>, server_share: &[u8]) -> Result<SharedSecret, Error> {
        let secret = self
            .exchange
            .complete(server_share)
            .map_err(peer_or_local)?;
        Ok(SharedSecret::from(&secret[..]))
    }

    fn pub_key(&self) -> &[u8] {
        self.exchange.share()
    }

    fn group(&self) -> NamedGroup {
        self.name
    }
}

/// The one place pqkit-core errors become TLS errors: a fault in the peer's share is
/// `InvalidKeyShare` (sent as `illegal_parameter`); anything else (RNG, backend) is ours and is
/// not blamed on the peer.
fn peer_or_local(e: pqkit_core::Error) -> Error {
    match e {
        pqkit_core::Error::InvalidLength { .. }
        | pqkit_core::Error::InvalidKey(_)
        | pqkit_core::Error::InvalidCiphertext(_) => INVALID_KEY_SHARE,
        other => local_failure(other),
    }
}

fn local_failure(e: pqkit_core::Error) -> Error {
    Error::General(format!("key exchange: {e}"))
}

const INVALID_KEY_SHARE: Error = Error::PeerMisbehaved(PeerMisbehaved::InvalidKeyShare);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_point_round_trips_to_the_variant_pqkit_matches_on() {
        for g in every_kx_group() {
            let wire = u16::from(g.name);
            assert_eq!(wire, g.group.code_point.value, "{}", g.group.name);
            assert_eq!(
                NamedGroup::from(wire),
                g.name,
                "{}: rustls now names 0x{wire:04x}",
                g.group.name
            );
        }
    }

    #[test]
    fn every_catalogue_group_is_offered_in_catalogue_order() {
        let ours: Vec<&str> = every_kx_group().map(|g| g.group.name).collect();
        let catalogue: Vec<&str> = pqkit_core::catalogue::groups()
            .iter()
            .map(|g| g.name)
            .collect();
        assert_eq!(ours, catalogue);
    }

    #[test]
    fn server_rejects_every_wrong_length_and_a_bad_modulus() {
        for g in every_kx_group() {
            let client = g.start().expect("start");
            let share = client.pub_key().to_vec();
            assert!(g.start_and_complete(&share).is_ok());
            for bad_len in [0, share.len() - 1, share.len() + 1] {
                let mut bad = share.clone();
                bad.resize(bad_len, 0);
                assert_eq!(g.start_and_complete(&bad).err(), Some(INVALID_KEY_SHARE));
            }
            if g.group.kem.family != pqkit_core::kem::KemFamily::MlKem {
                continue;
            }
            // All-0xFF coefficients are 4095 > q: fails the FIPS 203 §7.2 modulus check.
            let mut bad = share.clone();
            let ek_len = g.group.kem.encapsulation_key_size;
            let ek_start = match g.group.order {
                hybrid::ShareOrder::KemFirst => 0,
                hybrid::ShareOrder::ClassicalFirst => share.len() - ek_len,
            };
            bad[ek_start..ek_start + 3].fill(0xff);
            assert_eq!(
                g.start_and_complete(&bad).err(),
                Some(INVALID_KEY_SHARE),
                "{g:?}"
            );
        }
    }

    #[test]
    fn client_and_server_agree() {
        for g in every_kx_group() {
            let client = g.start().expect("start");
            let done = g.start_and_complete(client.pub_key()).expect("server");
            assert_eq!(done.pub_key.len(), g.group.server_share_size());
            let secret = client.complete(&done.pub_key).expect("client");
            assert_eq!(secret.secret_bytes(), done.secret.secret_bytes());
            assert_eq!(secret.secret_bytes().len(), g.group.shared_secret_size());
        }
    }
}
