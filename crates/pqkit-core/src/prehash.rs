//! The hash functions of HashML-DSA (FIPS 204 §5.4) and HashSLH-DSA (FIPS 205 §10.2.2), and
//! their OIDs.
//!
//! Pre-hashing moves the pass over a long message out of the signer: only the digest (at most
//! 64 bytes) and the hash's OID cross the key's boundary. [`Hasher`] hashes a message in pieces
//! so that a 10 MiB file never has to be held in memory.

use sha2::Digest;
use sha3::digest::{ExtendableOutput, Update, XofReader};

use crate::error::Error;

/// A pre-hash function: every hash ACVP lists for HashML-DSA and HashSLH-DSA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PreHash {
    /// SHA-224 (FIPS 180-4), 28-byte digest.
    Sha224,
    /// SHA-256, 32-byte digest.
    Sha256,
    /// SHA-384, 48-byte digest.
    Sha384,
    /// SHA-512, 64-byte digest.
    Sha512,
    /// SHA-512/224, 28-byte digest.
    Sha512_224,
    /// SHA-512/256, 32-byte digest.
    Sha512_256,
    /// SHA3-224 (FIPS 202), 28-byte digest.
    Sha3_224,
    /// SHA3-256, 32-byte digest.
    Sha3_256,
    /// SHA3-384, 48-byte digest.
    Sha3_384,
    /// SHA3-512, 64-byte digest.
    Sha3_512,
    /// SHAKE128 with 256 bits of output (FIPS 204 §5.4.1), 32 bytes.
    Shake128,
    /// SHAKE256 with 512 bits of output, 64 bytes.
    Shake256,
}

impl PreHash {
    /// Every pre-hash function, in ACVP's order.
    pub const ALL: [Self; 12] = [
        Self::Sha224,
        Self::Sha256,
        Self::Sha384,
        Self::Sha512,
        Self::Sha512_224,
        Self::Sha512_256,
        Self::Sha3_224,
        Self::Sha3_256,
        Self::Sha3_384,
        Self::Sha3_512,
        Self::Shake128,
        Self::Shake256,
    ];

    /// The name as ACVP spells it ("SHA2-256", "SHA3-512", "SHAKE-128").
    pub fn name(self) -> &'static str {
        match self {
            Self::Sha224 => "SHA2-224",
            Self::Sha256 => "SHA2-256",
            Self::Sha384 => "SHA2-384",
            Self::Sha512 => "SHA2-512",
            Self::Sha512_224 => "SHA2-512/224",
            Self::Sha512_256 => "SHA2-512/256",
            Self::Sha3_224 => "SHA3-224",
            Self::Sha3_256 => "SHA3-256",
            Self::Sha3_384 => "SHA3-384",
            Self::Sha3_512 => "SHA3-512",
            Self::Shake128 => "SHAKE-128",
            Self::Shake256 => "SHAKE-256",
        }
    }

    /// Finds a hash by name, case-insensitively and ignoring '-', '_' and '/': "SHA-512",
    /// "sha2-512", "SHA512", "SHAKE-256", "shake256" and "SHA2-512/256" all work.
    ///
    /// # Errors
    /// [`Error::UnknownAlgorithm`].
    pub fn from_name(name: &str) -> Result<Self, Error> {
        let norm = |s: &str| {
            s.chars()
                .filter(|c| !matches!(c, '-' | '_' | '/'))
                .flat_map(char::to_lowercase)
                .collect::<String>()
        };
        let wanted = norm(name);
        Self::ALL
            .into_iter()
            .find(|h| {
                let canonical = norm(h.name());
                canonical == wanted || canonical.replacen("sha2", "sha", 1) == wanted
            })
            .ok_or_else(|| Error::UnknownAlgorithm(name.to_owned()))
    }

    /// Digest size in bytes.
    pub fn digest_size(self) -> usize {
        match self {
            Self::Sha224 | Self::Sha512_224 | Self::Sha3_224 => 28,
            Self::Sha256 | Self::Sha512_256 | Self::Sha3_256 | Self::Shake128 => 32,
            Self::Sha384 | Self::Sha3_384 => 48,
            Self::Sha512 | Self::Sha3_512 | Self::Shake256 => 64,
        }
    }

    /// The DER encoding of the hash's OID (tag 06, length 09, 9 bytes of NIST arc
    /// 2.16.840.1.101.3.4.2.x), as it enters M′ (FIPS 204 Algorithm 4, FIPS 205 Algorithm 23).
    pub fn oid_der(self) -> [u8; 11] {
        let last = match self {
            Self::Sha256 => 0x01,
            Self::Sha384 => 0x02,
            Self::Sha512 => 0x03,
            Self::Sha224 => 0x04,
            Self::Sha512_224 => 0x05,
            Self::Sha512_256 => 0x06,
            Self::Sha3_224 => 0x07,
            Self::Sha3_256 => 0x08,
            Self::Sha3_384 => 0x09,
            Self::Sha3_512 => 0x0a,
            Self::Shake128 => 0x0b,
            Self::Shake256 => 0x0c,
        };
        [
            0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, last,
        ]
    }

    /// A hasher to feed a message in pieces.
    pub fn hasher(self) -> Hasher {
        let state = match self {
            Self::Sha224 => State::Sha224(sha2::Sha224::new()),
            Self::Sha256 => State::Sha256(sha2::Sha256::new()),
            Self::Sha384 => State::Sha384(sha2::Sha384::new()),
            Self::Sha512 => State::Sha512(sha2::Sha512::new()),
            Self::Sha512_224 => State::Sha512_224(sha2::Sha512_224::new()),
            Self::Sha512_256 => State::Sha512_256(sha2::Sha512_256::new()),
            Self::Sha3_224 => State::Sha3_224(sha3::Sha3_224::new()),
            Self::Sha3_256 => State::Sha3_256(sha3::Sha3_256::new()),
            Self::Sha3_384 => State::Sha3_384(sha3::Sha3_384::new()),
            Self::Sha3_512 => State::Sha3_512(sha3::Sha3_512::new()),
            Self::Shake128 => State::Shake128(sha3::Shake128::default()),
            Self::Shake256 => State::Shake256(sha3::Shake256::default()),
        };
        Hasher { hash: self, state }
    }

    /// The digest of `message`, [`Self::digest_size`] bytes.
    pub fn digest(self, message: &[u8]) -> Vec<u8> {
        let mut h = self.hasher();
        h.update(message);
        h.finalize()
    }

    /// Checks that `digest` has this hash's size.
    ///
    /// # Errors
    /// [`Error::InvalidLength`].
    pub fn check_digest(self, digest: &[u8]) -> Result<(), Error> {
        crate::error::check_len("pre-hash digest", digest, self.digest_size())
    }
}

/// An incremental pre-hash computation (see [`PreHash::hasher`]).
pub struct Hasher {
    hash: PreHash,
    state: State,
}

enum State {
    Sha224(sha2::Sha224),
    Sha256(sha2::Sha256),
    Sha384(sha2::Sha384),
    Sha512(sha2::Sha512),
    Sha512_224(sha2::Sha512_224),
    Sha512_256(sha2::Sha512_256),
    Sha3_224(sha3::Sha3_224),
    Sha3_256(sha3::Sha3_256),
    Sha3_384(sha3::Sha3_384),
    Sha3_512(sha3::Sha3_512),
    Shake128(sha3::Shake128),
    Shake256(sha3::Shake256),
}

impl Hasher {
    /// Feeds the next piece of the message.
    pub fn update(&mut self, piece: &[u8]) {
        match &mut self.state {
            State::Sha224(h) => Digest::update(h, piece),
            State::Sha256(h) => Digest::update(h, piece),
            State::Sha384(h) => Digest::update(h, piece),
            State::Sha512(h) => Digest::update(h, piece),
            State::Sha512_224(h) => Digest::update(h, piece),
            State::Sha512_256(h) => Digest::update(h, piece),
            State::Sha3_224(h) => Digest::update(h, piece),
            State::Sha3_256(h) => Digest::update(h, piece),
            State::Sha3_384(h) => Digest::update(h, piece),
            State::Sha3_512(h) => Digest::update(h, piece),
            State::Shake128(h) => Update::update(h, piece),
            State::Shake256(h) => Update::update(h, piece),
        }
    }

    /// The digest, [`PreHash::digest_size`] bytes.
    pub fn finalize(self) -> Vec<u8> {
        let size = self.hash.digest_size();
        match self.state {
            State::Sha224(h) => h.finalize().to_vec(),
            State::Sha256(h) => h.finalize().to_vec(),
            State::Sha384(h) => h.finalize().to_vec(),
            State::Sha512(h) => h.finalize().to_vec(),
            State::Sha512_224(h) => h.finalize().to_vec(),
            State::Sha512_256(h) => h.finalize().to_vec(),
            State::Sha3_224(h) => h.finalize().to_vec(),
            State::Sha3_256(h) => h.finalize().to_vec(),
            State::Sha3_384(h) => h.finalize().to_vec(),
            State::Sha3_512(h) => h.finalize().to_vec(),
            State::Shake128(h) => xof(h.finalize_xof(), size),
            State::Shake256(h) => xof(h.finalize_xof(), size),
        }
    }
}

fn xof(mut reader: impl XofReader, size: usize) -> Vec<u8> {
    let mut out = vec![0u8; size];
    reader.read(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_and_sizes_match_the_output() {
        for h in PreHash::ALL {
            assert_eq!(PreHash::from_name(h.name()), Ok(h));
            assert_eq!(h.digest(b"abc").len(), h.digest_size(), "{}", h.name());
        }
        assert_eq!(PreHash::from_name("SHA-512"), Ok(PreHash::Sha512));
        assert_eq!(PreHash::from_name("shake256"), Ok(PreHash::Shake256));
        assert_eq!(PreHash::from_name("sha512/256"), Ok(PreHash::Sha512_256));
        assert!(PreHash::from_name("md5").is_err());
    }

    #[test]
    fn known_digests() {
        // FIPS 180-4 / FIPS 202 examples for "abc".
        assert_eq!(
            hex(&PreHash::Sha256.digest(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex(&PreHash::Sha3_256.digest(b"abc")),
            "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"
        );
        // Pieces give the same digest as the whole.
        for h in PreHash::ALL {
            let mut inc = h.hasher();
            inc.update(b"a");
            inc.update(b"bc");
            assert_eq!(inc.finalize(), h.digest(b"abc"), "{}", h.name());
        }
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
}
