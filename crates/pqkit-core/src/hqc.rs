//! HQC, the code-based KEM NIST selected in March 2025 (HQC specification 2025-08-22, FIPS
//! 207 in preparation), on RustCrypto `hqc-kem`.
//!
//! The reference code changed its key-generation sampling on 2026-02-10 (pqc-hqc commit
//! 161cd4f) under the same specification date; `hqc-kem` 0.1.0-rc.0, liboqs 0.16 and
//! oqs-provider follow that commit, and so does pqkit (`tests/hqc_kat.rs` reproduces liboqs
//! 0.16.0's known-answer digests). liboqs 0.13 (the newest on crates.io) has only the 2023 HQC,
//! which it disables for its broken IND-CCA2 proof; it is not offered.
//!
//! Keys: the seed seed_kem (32 bytes, HQC spec §3.3 KeyGen) is the seed form; the expanded
//! decapsulation key is pk ‖ seed_dk ‖ σ ‖ seed_kem, so it contains both its encapsulation key
//! (at offset 0) and its seed, and is checked by regenerating it from that seed.
//!
//! OIDs: NIST has assigned none; pqkit uses Bouncy Castle's (1.3.6.1.4.1.22554.5.9.x), not
//! the provisional 2.16.840.1.101.3.4.4.4–6 that `hqc-kem` guesses. TLS code points are
//! oqs-provider's (hqc1 65075, hqc3 65078, hqc5 65081).

use hqc_kem::{HqcKem, HqcParams};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::code_point::TlsCodePoint;
use crate::error::Error;
use crate::kem::{KemAlgorithm, KemBackend, KemFamily, KeyPair};
use crate::random_vec;

const BACKEND: &str = "hqc-kem";
/// The salt of HQC encapsulation, in bytes (HQC spec §3.3 Encaps).
const SALT_SIZE: usize = 16;
/// seed_kem, in bytes: the last field of the decapsulation key.
const SEED_SIZE: usize = 32;

/// `hqc-kem` for one parameter set; `k` is the message size in bytes.
struct RustCryptoHqc<P: HqcParams> {
    k: usize,
    _params: core::marker::PhantomData<fn() -> P>,
}

impl<P: HqcParams> RustCryptoHqc<P> {
    const fn new(k: usize) -> Self {
        Self {
            k,
            _params: core::marker::PhantomData,
        }
    }
}

impl<P: HqcParams> KemBackend for RustCryptoHqc<P> {
    fn name(&self) -> &'static str {
        "hqc-kem 0.1.0-rc.0"
    }

    fn generate_from_seed(&self, seed: &[u8]) -> Result<KeyPair, Error> {
        let seed: &[u8; SEED_SIZE] = seed.try_into().map_err(|_| Error::Backend(BACKEND))?;
        let (ek, dk) = HqcKem::<P>::generate_key_deterministic(seed);
        Ok((ek.as_ref().to_vec(), Zeroizing::new(dk.as_ref().to_vec())))
    }

    /// The decapsulation key must be the one its own seed_kem generates.
    fn check_decapsulation_key(&self, dk: &[u8]) -> Result<(), Error> {
        let seed = &dk[dk.len() - SEED_SIZE..];
        let (_, again) = self.generate_from_seed(seed)?;
        if bool::from(again.ct_eq(dk)) {
            Ok(())
        } else {
            Err(Error::InvalidKey(
                "HQC decapsulation key (it is not the key its seed_kem generates: damaged)",
            ))
        }
    }

    fn encapsulate(&self, ek: &[u8]) -> Result<(Vec<u8>, Zeroizing<Vec<u8>>), Error> {
        let randomness = random_vec(self.k + SALT_SIZE)?;
        self.encapsulate_deterministic(ek, &randomness)
    }

    fn encapsulate_deterministic(
        &self,
        ek: &[u8],
        randomness: &[u8],
    ) -> Result<(Vec<u8>, Zeroizing<Vec<u8>>), Error> {
        let ek =
            hqc_kem::EncapsulationKey::<P>::try_from(ek).map_err(|_| Error::Backend(BACKEND))?;
        let (m, salt) = randomness.split_at(self.k);
        let salt: &[u8; SALT_SIZE] = salt.try_into().map_err(|_| Error::Backend(BACKEND))?;
        let (ct, ss) = ek
            .encapsulate_deterministic(m, salt)
            .map_err(|_| Error::Backend(BACKEND))?;
        Ok((ct.as_ref().to_vec(), Zeroizing::new(ss.as_ref().to_vec())))
    }

    fn decapsulate(&self, dk: &[u8], ct: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        let dk =
            hqc_kem::DecapsulationKey::<P>::try_from(dk).map_err(|_| Error::Backend(BACKEND))?;
        let ct = hqc_kem::Ciphertext::<P>::try_from(ct).map_err(|_| Error::Backend(BACKEND))?;
        let ss = dk.decapsulate(&ct);
        Ok(Zeroizing::new(ss.as_ref().to_vec()))
    }
}

static HQC_128: RustCryptoHqc<hqc_kem::Hqc128Params> = RustCryptoHqc::new(16);
static HQC_192: RustCryptoHqc<hqc_kem::Hqc192Params> = RustCryptoHqc::new(24);
static HQC_256: RustCryptoHqc<hqc_kem::Hqc256Params> = RustCryptoHqc::new(32);

const STANDARD: &str = "HQC (specification 2025-08-22, reference commit 161cd4f; FIPS 207 draft)";

#[allow(clippy::too_many_arguments)]
const fn hqc(
    name: &'static str,
    aliases: &'static [&'static str],
    category: u8,
    (ek, dk, ct, k): (usize, usize, usize, usize),
    oid: &'static str,
    group: (u16, &'static str),
    backend: &'static dyn KemBackend,
) -> KemAlgorithm {
    KemAlgorithm {
        name,
        aliases,
        family: KemFamily::Hqc,
        category,
        encapsulation_key_size: ek,
        decapsulation_key_size: dk,
        seed_size: SEED_SIZE,
        ciphertext_size: ct,
        shared_secret_size: 32,
        encapsulation_randomness_size: k + SALT_SIZE,
        ind_cca: true,
        ephemeral: false,
        encapsulation_key_offset: Some(0),
        oid,
        tls_group: Some(TlsCodePoint::oqs_provider(group.0, group.1)),
        standard: STANDARD,
        backend,
    }
}

/// HQC-1, category 1: encapsulation key 2241, decapsulation key 2321, ciphertext 4433, shared
/// secret 32 bytes. TLS: hqc1 (65075, oqs-provider).
pub static HQC_1: KemAlgorithm = hqc(
    "HQC-1",
    &["hqc1"],
    1,
    (2241, 2321, 4433, 16),
    "1.3.6.1.4.1.22554.5.9.1",
    (65075, "hqc1"),
    &HQC_128,
);

/// HQC-3, category 3: encapsulation key 4514, decapsulation key 4602, ciphertext 8978, shared
/// secret 32 bytes. TLS: hqc3 (65078, oqs-provider).
pub static HQC_3: KemAlgorithm = hqc(
    "HQC-3",
    &["hqc3"],
    3,
    (4514, 4602, 8978, 24),
    "1.3.6.1.4.1.22554.5.9.2",
    (65078, "hqc3"),
    &HQC_192,
);

/// HQC-5, category 5: encapsulation key 7237, decapsulation key 7333, ciphertext 14421, shared
/// secret 32 bytes. TLS: hqc5 (65081, oqs-provider).
pub static HQC_5: KemAlgorithm = hqc(
    "HQC-5",
    &["hqc5"],
    5,
    (7237, 7333, 14421, 32),
    "1.3.6.1.4.1.22554.5.9.3",
    (65081, "hqc5"),
    &HQC_256,
);

/// The three parameter sets.
pub(crate) static KEMS: &[&KemAlgorithm] = &[&HQC_1, &HQC_3, &HQC_5];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_hqc_kem_sizes() {
        use hqc_kem::{hqc128, hqc192, hqc256};
        let want = [
            (
                hqc128::PUBLIC_KEY_SIZE,
                hqc128::SECRET_KEY_SIZE,
                hqc128::CIPHERTEXT_SIZE,
                hqc128::MESSAGE_SIZE,
            ),
            (
                hqc192::PUBLIC_KEY_SIZE,
                hqc192::SECRET_KEY_SIZE,
                hqc192::CIPHERTEXT_SIZE,
                hqc192::MESSAGE_SIZE,
            ),
            (
                hqc256::PUBLIC_KEY_SIZE,
                hqc256::SECRET_KEY_SIZE,
                hqc256::CIPHERTEXT_SIZE,
                hqc256::MESSAGE_SIZE,
            ),
        ];
        for (alg, (ek, dk, ct, k)) in KEMS.iter().zip(want) {
            assert_eq!(
                (
                    alg.encapsulation_key_size,
                    alg.decapsulation_key_size,
                    alg.ciphertext_size,
                    alg.encapsulation_randomness_size
                ),
                (ek, dk, ct, k + SALT_SIZE),
                "{}",
                alg.name
            );
        }
    }

    #[test]
    fn seed_expanded_and_damage() {
        for alg in KEMS {
            let dk = alg.generate().expect("keygen");
            let seed = dk.seed().expect("seed form").to_vec();
            assert_eq!(&dk.expanded()[dk.expanded().len() - 32..], &seed[..]);
            let again = alg.generate_from_seed(&seed).expect("seed");
            assert_eq!(again.expanded(), dk.expanded());
            let loaded = alg
                .decapsulation_key_from_expanded(dk.expanded())
                .expect("expanded");
            let (ct, ss) = loaded
                .encapsulation_key()
                .encapsulate()
                .expect("encapsulate");
            assert_eq!(dk.decapsulate(&ct).expect("decapsulate"), ss);
            let mut bad_ct = ct.clone();
            bad_ct[5] ^= 4;
            assert_ne!(dk.decapsulate(&bad_ct).expect("decapsulate"), ss);
            // Any byte of the key changed: pk, seed_dk, σ or seed_kem.
            for at in [
                0,
                100,
                alg.encapsulation_key_size + 3,
                alg.decapsulation_key_size - 1,
            ] {
                let mut bad = dk.expanded().to_vec();
                bad[at] ^= 0x10;
                assert!(
                    matches!(
                        alg.decapsulation_key_from_expanded(&bad),
                        Err(Error::InvalidKey(_))
                    ),
                    "{} byte {at}",
                    alg.name
                );
            }
        }
    }
}
