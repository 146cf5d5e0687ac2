//! ML-KEM (FIPS 203): the three parameter sets on pqkit's own implementation (pqkit-lattice:
//! sampling on pqkit-hash's Keccak lanes, NTT arithmetic for AVX-512, AVX2 or portable,
//! chosen at run time with the hash path).
//!
//! libcrux-ml-kem, the formally verified implementation this replaced, stays as the oracle
//! the tests compare every key, ciphertext and shared secret against, and as a peer in
//! `pqkit bench crypto`.

use pqkit_lattice::ml_kem;
use zeroize::Zeroizing;

use crate::code_point::TlsCodePoint;
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
    backend: &Lattice(&ml_kem::ML_KEM_512),
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
    backend: &Lattice(&ml_kem::ML_KEM_768),
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
    backend: &Lattice(&ml_kem::ML_KEM_1024),
};

/// The one-line note printed when a user names round-3 Kyber.
pub const KYBER_NOTE: &str = "note: Kyber (round 3) is not ML-KEM (FIPS 203); pqkit uses ML-KEM, \
     which is not interoperable with round-3 Kyber peers";

/// pqkit-lattice for one parameter set. Lengths are checked by [`KemAlgorithm`] before a
/// backend is called; a length pqkit-lattice still refuses is [`Error::Backend`].
struct Lattice(&'static ml_kem::Params);

/// The error of a length pqkit-lattice refuses (a caller bug: lengths are checked first).
fn length(_: ml_kem::WrongLength) -> Error {
    Error::Backend("pqkit-lattice")
}

impl KemBackend for Lattice {
    fn name(&self) -> &'static str {
        "pqkit-lattice"
    }

    fn generate_from_seed(&self, seed: &[u8]) -> Result<KeyPair, Error> {
        let p = self.0;
        let (d, z) = seed
            .split_first_chunk::<32>()
            .ok_or(Error::Backend("pqkit-lattice"))?;
        let z: &[u8; 32] = z.try_into().map_err(|_| Error::Backend("pqkit-lattice"))?;
        let mut ek = vec![0u8; p.encapsulation_key_size()];
        let mut dk = Zeroizing::new(vec![0u8; p.decapsulation_key_size()]);
        ml_kem::hazmat::key_gen_internal(p, d, z, &mut ek, &mut dk).map_err(length)?;
        Ok((ek, dk))
    }

    fn check_encapsulation_key(&self, ek: &[u8]) -> bool {
        ml_kem::check_encapsulation_key(self.0, ek)
    }

    fn check_decapsulation_key(&self, dk: &[u8]) -> Result<(), Error> {
        if ml_kem::check_decapsulation_key(self.0, dk) {
            Ok(())
        } else {
            Err(Error::InvalidKey(
                "ML-KEM decapsulation key (FIPS 203 §7.3 hash check)",
            ))
        }
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
        let m: &[u8; ENCAPSULATION_RANDOMNESS_SIZE] =
            m.try_into().map_err(|_| Error::Backend("pqkit-lattice"))?;
        let mut c = vec![0u8; self.0.ciphertext_size()];
        let k = ml_kem::hazmat::encaps_internal(self.0, ek, m, &mut c).map_err(length)?;
        Ok((c, Zeroizing::new(k.to_vec())))
    }

    fn decapsulate(&self, dk: &[u8], ct: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        let k = ml_kem::decapsulate(self.0, dk, ct).map_err(length)?;
        Ok(Zeroizing::new(k.to_vec()))
    }
}
