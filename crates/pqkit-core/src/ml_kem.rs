//! ML-KEM (FIPS 203): the three parameter sets and the libcrux-ml-kem backend.
//!
//! libcrux-ml-kem is formally verified, dispatches to AVX2 at run time, and, unlike aws-lc-rs,
//! generates keys from the 64-byte seed and encapsulates deterministically — both needed for
//! seed-form keys and known-answer tests.

use zeroize::Zeroizing;

use crate::catalogue::TlsCodePoint;
use crate::error::Error;
use crate::kem::{
    ENCAPSULATION_RANDOMNESS_SIZE, KemAlgorithm, KemBackend, KemFamily, KeyPair, SEED_SIZE,
    SHARED_SECRET_SIZE,
};
use crate::random_array;

/// ML-KEM-512, NIST category 1 (FIPS 203 §8, Table 3).
pub static ML_KEM_512: KemAlgorithm = KemAlgorithm {
    name: "ML-KEM-512",
    aliases: &[
        "MLKEM512",
        "ML_KEM_512",
        "KYBER_LEVEL1",
        "Kyber512",
        "Kyber-512",
    ],
    family: KemFamily::MlKem,
    category: 1,
    encapsulation_key_size: 800,
    decapsulation_key_size: 1632,
    seed_size: SEED_SIZE,
    ciphertext_size: 768,
    shared_secret_size: SHARED_SECRET_SIZE,
    encapsulation_randomness_size: ENCAPSULATION_RANDOMNESS_SIZE,
    ind_cca: true,
    ephemeral: false,
    // FIPS 203 §7.3: dk = dk_PKE (384·k) ‖ ek ‖ H(ek) ‖ z.
    encapsulation_key_offset: Some(384 * 2),
    oid: "2.16.840.1.101.3.4.4.1",
    // draft-ietf-tls-mlkem: MLKEM512 = 0x0200.
    tls_group: Some(TlsCodePoint {
        value: 0x0200,
        iana: "MLKEM512",
        source: "draft-ietf-tls-mlkem",
    }),
    standard: "FIPS 203",
    backend: &Libcrux512,
};

/// ML-KEM-768, NIST category 3 (FIPS 203 §8, Table 3).
pub static ML_KEM_768: KemAlgorithm = KemAlgorithm {
    name: "ML-KEM-768",
    aliases: &[
        "MLKEM768",
        "ML_KEM_768",
        "KYBER_LEVEL3",
        "Kyber768",
        "Kyber-768",
    ],
    family: KemFamily::MlKem,
    category: 3,
    encapsulation_key_size: 1184,
    decapsulation_key_size: 2400,
    seed_size: SEED_SIZE,
    ciphertext_size: 1088,
    shared_secret_size: SHARED_SECRET_SIZE,
    encapsulation_randomness_size: ENCAPSULATION_RANDOMNESS_SIZE,
    ind_cca: true,
    ephemeral: false,
    encapsulation_key_offset: Some(384 * 3),
    oid: "2.16.840.1.101.3.4.4.2",
    // draft-ietf-tls-mlkem: MLKEM768 = 0x0201.
    tls_group: Some(TlsCodePoint {
        value: 0x0201,
        iana: "MLKEM768",
        source: "draft-ietf-tls-mlkem",
    }),
    standard: "FIPS 203",
    backend: &Libcrux768,
};

/// ML-KEM-1024, NIST category 5 (FIPS 203 §8, Table 3).
pub static ML_KEM_1024: KemAlgorithm = KemAlgorithm {
    name: "ML-KEM-1024",
    aliases: &[
        "MLKEM1024",
        "ML_KEM_1024",
        "KYBER_LEVEL5",
        "Kyber1024",
        "Kyber-1024",
    ],
    family: KemFamily::MlKem,
    category: 5,
    encapsulation_key_size: 1568,
    decapsulation_key_size: 3168,
    seed_size: SEED_SIZE,
    ciphertext_size: 1568,
    shared_secret_size: SHARED_SECRET_SIZE,
    encapsulation_randomness_size: ENCAPSULATION_RANDOMNESS_SIZE,
    ind_cca: true,
    ephemeral: false,
    encapsulation_key_offset: Some(384 * 4),
    oid: "2.16.840.1.101.3.4.4.3",
    // draft-ietf-tls-mlkem: MLKEM1024 = 0x0202.
    tls_group: Some(TlsCodePoint {
        value: 0x0202,
        iana: "MLKEM1024",
        source: "draft-ietf-tls-mlkem",
    }),
    standard: "FIPS 203",
    backend: &Libcrux1024,
};

/// The one-line note printed when a user names round-3 Kyber.
pub const KYBER_NOTE: &str = "note: Kyber (round 3) is not ML-KEM (FIPS 203); pqkit uses ML-KEM, \
     which is not interoperable with round-3 Kyber peers";

/// libcrux-ml-kem for one parameter set (`$dk_len`: decapsulation key size in bytes). Lengths
/// are checked by [`KemAlgorithm`] before a backend is called; a length the backend still
/// cannot take is [`Error::Backend`].
///
/// # Security
/// libcrux-ml-kem 0.0.11 types do not zeroize themselves. The copies this code owns (the seed
/// passed in, the private key returned, the private key rebuilt for each decapsulation) are
/// turned back into byte arrays and zeroized; copies the compiler makes when moving them into
/// libcrux's own frames are out of reach.
macro_rules! libcrux_backend {
    ($backend:ident, $module:ident, $dk_len:expr) => {
        struct $backend;

        impl KemBackend for $backend {
            fn name(&self) -> &'static str {
                "libcrux-ml-kem"
            }

            fn generate_from_seed(&self, seed: &[u8]) -> Result<KeyPair, Error> {
                let seed: [u8; SEED_SIZE] = seed
                    .try_into()
                    .map_err(|_| Error::Backend("libcrux-ml-kem"))?;
                let seed = Zeroizing::new(seed);
                let pair = libcrux_ml_kem::$module::generate_key_pair(*seed);
                let (sk, pk) = pair.into_parts();
                let sk = Zeroizing::new(<[u8; $dk_len]>::from(sk));
                Ok((pk.as_slice().to_vec(), Zeroizing::new(sk.to_vec())))
            }

            fn check_encapsulation_key(&self, ek: &[u8]) -> bool {
                match ek.try_into() {
                    Ok(ek) => libcrux_ml_kem::$module::validate_public_key(&ek),
                    Err(_) => false,
                }
            }

            fn check_decapsulation_key(&self, dk: &[u8]) -> Result<(), Error> {
                let refused =
                    Error::InvalidKey("ML-KEM decapsulation key (FIPS 203 §7.3 hash check)");
                let Ok(dk) = dk.try_into() else {
                    return Err(refused);
                };
                let ok = libcrux_ml_kem::$module::portable::validate_private_key_only(&dk);
                drop(Zeroizing::new(<[u8; $dk_len]>::from(dk)));
                if ok { Ok(()) } else { Err(refused) }
            }

            fn encapsulate(&self, ek: &[u8]) -> Result<(Vec<u8>, Zeroizing<Vec<u8>>), Error> {
                let m = random_array::<ENCAPSULATION_RANDOMNESS_SIZE>()?;
                self.encapsulate_deterministic(ek, &m[..])
            }

            fn encapsulate_deterministic(
                &self,
                ek: &[u8],
                m: &[u8],
            ) -> Result<(Vec<u8>, Zeroizing<Vec<u8>>), Error> {
                let m: Zeroizing<[u8; ENCAPSULATION_RANDOMNESS_SIZE]> =
                    Zeroizing::new(m.try_into().map_err(|_| Error::Backend("libcrux-ml-kem"))?);
                let ek = ek
                    .try_into()
                    .map_err(|_| Error::Backend("libcrux-ml-kem"))?;
                let (ct, ss) = libcrux_ml_kem::$module::encapsulate(&ek, *m);
                let ss = Zeroizing::new(ss);
                Ok((ct.as_slice().to_vec(), Zeroizing::new(ss.to_vec())))
            }

            fn decapsulate(&self, dk: &[u8], ct: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
                let dk = dk
                    .try_into()
                    .map_err(|_| Error::Backend("libcrux-ml-kem"))?;
                let ct = ct
                    .try_into()
                    .map_err(|_| Error::Backend("libcrux-ml-kem"))?;
                let ss: Zeroizing<[u8; SHARED_SECRET_SIZE]> =
                    Zeroizing::new(libcrux_ml_kem::$module::decapsulate(&dk, &ct));
                drop(Zeroizing::new(<[u8; $dk_len]>::from(dk)));
                Ok(Zeroizing::new(ss.to_vec()))
            }
        }
    };
}

libcrux_backend!(Libcrux512, mlkem512, 1632);
libcrux_backend!(Libcrux768, mlkem768, 2400);
libcrux_backend!(Libcrux1024, mlkem1024, 3168);
