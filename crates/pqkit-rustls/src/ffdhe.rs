//! ffdhe3072 (0x0101, RFC 7919): finite-field Diffie-Hellman in TLS 1.3, the classical baseline
//! of the embedded-TLS measurements (aws-lc-rs offers no DH; the arithmetic is RustCrypto
//! `crypto-bigint`'s constant-time Montgomery exponentiation).
//!
//! - Key share: Y = g^x mod p, big-endian, left-padded to the 384 bytes of p (RFC 8446
//!   §4.2.8.1); a peer's Y must satisfy 1 < Y < p − 1 (RFC 8446 §4.2.8.1, RFC 7919 §5.1).
//! - Private exponent: 256 random bits (RFC 7919 §5.2: at least twice the group's ≈ 125-bit
//!   security level), zeroized on drop.
//! - Shared secret: Z = Y^x mod p, left-padded to 384 bytes (RFC 8446 §7.4.1).

use crypto_bigint::modular::{BoxedMontyForm, BoxedMontyParams};
use crypto_bigint::{BoxedUint, Odd};
use rustls::crypto::{ActiveKeyExchange, CompletedKeyExchange, SharedSecret, SupportedKxGroup};
use rustls::ffdhe_groups::{FFDHE3072 as GROUP, FfdheGroup};
use rustls::{Error, NamedGroup, PeerMisbehaved, ProtocolVersion};
use zeroize::Zeroizing;

/// Bits of p and of every element.
const BITS: u32 = 3072;
/// Bytes of p, of a key share and of the shared secret.
pub const SHARE_SIZE: usize = 384;
/// Bytes of the private exponent.
const EXPONENT_SIZE: usize = 32;
/// Bits of the private exponent.
const EXPONENT_BITS: u32 = 256;

/// ffdhe3072, offered when named (`--groups ffdhe3072`).
#[derive(Debug)]
pub struct Ffdhe3072;

/// The one ffdhe3072 group.
pub static FFDHE3072: Ffdhe3072 = Ffdhe3072;

fn params() -> &'static BoxedMontyParams {
    static PARAMS: std::sync::OnceLock<BoxedMontyParams> = std::sync::OnceLock::new();
    PARAMS.get_or_init(|| {
        let p = BoxedUint::from_be_slice(GROUP.p, BITS).expect("RFC 7919 p is 3072 bits");
        BoxedMontyParams::new(Odd::new(p).expect("RFC 7919 p is odd"))
    })
}

/// x^e mod p for x < p and e < 2^256, as 384 big-endian bytes (the ladder runs over the
/// exponent's 256 bits, whatever their values).
fn pow(base: &BoxedUint, exponent: &BoxedUint) -> Zeroizing<Vec<u8>> {
    let r = BoxedMontyForm::new(base.clone(), params())
        .pow_bounded_exp(exponent, EXPONENT_BITS)
        .retrieve();
    Zeroizing::new(r.to_be_bytes().to_vec())
}

/// A fresh private exponent and its key share.
fn key_pair() -> Result<(Zeroizing<Vec<u8>>, Vec<u8>), Error> {
    let mut x = Zeroizing::new(vec![0u8; EXPONENT_SIZE]);
    aws_lc_rs::rand::fill(&mut x[..]).map_err(|_| Error::FailedToGetRandomBytes)?;
    let exponent = BoxedUint::from_be_slice(&x, BITS).map_err(|_| internal())?;
    let g = BoxedUint::from_be_slice(GROUP.g, BITS).map_err(|_| internal())?;
    let share = pow(&g, &exponent).to_vec();
    Ok((x, share))
}

/// Z from our exponent and the peer's share, after the RFC 8446 §4.2.8.1 checks.
fn agree(x: &[u8], peer: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
    if peer.len() != SHARE_SIZE {
        return Err(INVALID_KEY_SHARE);
    }
    let y = BoxedUint::from_be_slice(peer, BITS).map_err(|_| INVALID_KEY_SHARE)?;
    let p = BoxedUint::from_be_slice(GROUP.p, BITS).map_err(|_| internal())?;
    let one = BoxedUint::one_with_precision(BITS);
    let p_minus_one = p.wrapping_sub(&one);
    // 1 < Y < p − 1: public values, so a variable-time comparison reveals nothing secret.
    if y <= one || y >= p_minus_one {
        return Err(INVALID_KEY_SHARE);
    }
    let exponent = BoxedUint::from_be_slice(x, BITS).map_err(|_| internal())?;
    Ok(pow(&y, &exponent))
}

fn internal() -> Error {
    Error::General("ffdhe3072: arithmetic setup failed".into())
}

const INVALID_KEY_SHARE: Error = Error::PeerMisbehaved(PeerMisbehaved::InvalidKeyShare);

impl SupportedKxGroup for Ffdhe3072 {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let (x, share) = key_pair()?;
        Ok(Box::new(Active { x, share }))
    }

    fn start_and_complete(&self, client_share: &[u8]) -> Result<CompletedKeyExchange, Error> {
        let (x, share) = key_pair()?;
        let secret = agree(&x, client_share)?;
        Ok(CompletedKeyExchange {
            group: NamedGroup::FFDHE3072,
            pub_key: share,
            secret: SharedSecret::from(&secret[..]),
        })
    }

    fn ffdhe_group(&self) -> Option<FfdheGroup<'static>> {
        Some(GROUP)
    }

    fn name(&self) -> NamedGroup {
        NamedGroup::FFDHE3072
    }

    fn usable_for_version(&self, version: ProtocolVersion) -> bool {
        version == ProtocolVersion::TLSv1_3
    }
}

/// The client side in flight: the private exponent (zeroized on drop) and the key share.
struct Active {
    x: Zeroizing<Vec<u8>>,
    share: Vec<u8>,
}

impl ActiveKeyExchange for Active {
    fn complete(self: Box<Self>, server_share: &[u8]) -> Result<SharedSecret, Error> {
        Ok(SharedSecret::from(&agree(&self.x, server_share)?[..]))
    }

    fn pub_key(&self) -> &[u8] {
        &self.share
    }

    fn ffdhe_group(&self) -> Option<FfdheGroup<'static>> {
        Some(GROUP)
    }

    fn group(&self) -> NamedGroup {
        NamedGroup::FFDHE3072
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_agree_on_a_padded_secret() {
        let client = FFDHE3072.start().expect("start");
        assert_eq!(client.pub_key().len(), SHARE_SIZE);
        let done = FFDHE3072
            .start_and_complete(client.pub_key())
            .expect("server");
        assert_eq!(done.pub_key.len(), SHARE_SIZE);
        let secret = client.complete(&done.pub_key).expect("client");
        assert_eq!(secret.secret_bytes(), done.secret.secret_bytes());
        assert_eq!(secret.secret_bytes().len(), SHARE_SIZE);
    }

    #[test]
    fn small_large_and_misshapen_shares_are_refused() {
        let p = GROUP.p.to_vec();
        let mut p_minus_one = p.clone();
        p_minus_one[SHARE_SIZE - 1] -= 1;
        let mut two = vec![0u8; SHARE_SIZE];
        two[SHARE_SIZE - 1] = 2;
        let mut one = vec![0u8; SHARE_SIZE];
        one[SHARE_SIZE - 1] = 1;
        for bad in [
            vec![0u8; SHARE_SIZE],
            one,
            p_minus_one,
            p.clone(),
            vec![0xff; SHARE_SIZE],
            vec![2u8; SHARE_SIZE - 1],
            [&p[..], &[0]].concat(),
        ] {
            assert_eq!(
                FFDHE3072.start_and_complete(&bad).err(),
                Some(INVALID_KEY_SHARE),
                "{} bytes",
                bad.len()
            );
        }
        assert!(FFDHE3072.start_and_complete(&two).is_ok());
    }

    #[test]
    fn g_to_one_is_g() {
        let g = BoxedUint::from_be_slice(&[2], BITS).expect("g");
        let one = BoxedUint::one_with_precision(BITS);
        let mut want = vec![0u8; SHARE_SIZE];
        want[SHARE_SIZE - 1] = 2;
        assert_eq!(&pow(&g, &one)[..], &want[..]);
    }
}
