//! SLH-DSA (FIPS 205): the twelve parameter sets, pure and HashSLH-DSA, with context,
//! deterministic and randomized.
//!
//! pqkit's own implementation (the `pqkit-slh-dsa` crate, FIPS 205 §4–§11, on the
//! multi-buffer hashing engine). M′ is formatted here (Algorithms 22–25), so pure and pre-hash
//! signing share one path. RustCrypto
//! `slh-dsa` is kept as a test oracle (byte-identical deterministic signatures).
//!
//! Keys: the seed form is SK.seed ‖ SK.prf ‖ PK.seed (3n bytes, the inputs of
//! `slh_keygen_internal`, FIPS 205 Algorithm 18); the expanded form is
//! SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root (4n bytes, FIPS 205 §9.1, the RFC 9909 private key).

use pqkit_slh_dsa::hazmat as internal;
use pqkit_slh_dsa::{Levels, params};
use zeroize::Zeroizing;

use crate::code_point::TlsCodePoint;
use crate::error::{Error, check_len};
use crate::prehash::PreHash;
use crate::random_vec;
use crate::sig::{Family, SignatureAlgorithm, SignatureBackend, SigningKeyImpl, SigningRandomness};

/// Declares one parameter set: name, aliases, n, signature size, OID arc, TLS code point.
macro_rules! slh_dsa {
    ($(#[$doc:meta])* $stat:ident, $set:ident, $name:literal, [$($alias:literal),*], n = $n:literal,
     sig = $sig:literal, cat = $cat:literal, arc = $arc:literal, tls = $tls:literal, $iana:literal) => {
        $(#[$doc])*
        pub static $stat: SignatureAlgorithm = SignatureAlgorithm {
            name: $name,
            aliases: &[$($alias),*],
            category: $cat,
            verifying_key_size: 2 * $n,
            signing_key_size: 4 * $n,
            seed_size: 3 * $n,
            signature_size: $sig,
            oid: concat!("2.16.840.1.101.3.4.3.", $arc),
            spki_algorithm_id: &[0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, $arc],
            signature_algorithm_id: &[
                0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, $arc,
            ],
            // draft-reddy-tls-slhdsa.
            tls_scheme: Some(TlsCodePoint {
                value: $tls,
                iana: $iana,
                source: "draft-reddy-tls-slhdsa",
            }),
            standard: "FIPS 205",
            family: Family::SlhDsa,
            backend: &SlhDsa(&params::$set),
        };
    };
}

slh_dsa!(
    /// SLH-DSA-SHA2-128s (FIPS 205 Table 2; RFC 9909 id-slh-dsa-sha2-128s).
    SLH_DSA_SHA2_128S, SHA2_128S, "SLH-DSA-SHA2-128s", ["SPHINCS+-SHA2-128s-simple", "slhdsa_sha2_128s"],
    n = 16, sig = 7856, cat = 1, arc = 20, tls = 0x0911, "slhdsa_sha2_128s");
slh_dsa!(
    /// SLH-DSA-SHA2-128f.
    SLH_DSA_SHA2_128F, SHA2_128F, "SLH-DSA-SHA2-128f", ["SPHINCS+-SHA2-128f-simple", "slhdsa_sha2_128f"],
    n = 16, sig = 17088, cat = 1, arc = 21, tls = 0x0912, "slhdsa_sha2_128f");
slh_dsa!(
    /// SLH-DSA-SHA2-192s.
    SLH_DSA_SHA2_192S, SHA2_192S, "SLH-DSA-SHA2-192s", ["SPHINCS+-SHA2-192s-simple", "slhdsa_sha2_192s"],
    n = 24, sig = 16224, cat = 3, arc = 22, tls = 0x0913, "slhdsa_sha2_192s");
slh_dsa!(
    /// SLH-DSA-SHA2-192f.
    SLH_DSA_SHA2_192F, SHA2_192F, "SLH-DSA-SHA2-192f", ["SPHINCS+-SHA2-192f-simple", "slhdsa_sha2_192f"],
    n = 24, sig = 35664, cat = 3, arc = 23, tls = 0x0914, "slhdsa_sha2_192f");
slh_dsa!(
    /// SLH-DSA-SHA2-256s.
    SLH_DSA_SHA2_256S, SHA2_256S, "SLH-DSA-SHA2-256s", ["SPHINCS+-SHA2-256s-simple", "slhdsa_sha2_256s"],
    n = 32, sig = 29792, cat = 5, arc = 24, tls = 0x0915, "slhdsa_sha2_256s");
slh_dsa!(
    /// SLH-DSA-SHA2-256f.
    SLH_DSA_SHA2_256F, SHA2_256F, "SLH-DSA-SHA2-256f", ["SPHINCS+-SHA2-256f-simple", "slhdsa_sha2_256f"],
    n = 32, sig = 49856, cat = 5, arc = 25, tls = 0x0916, "slhdsa_sha2_256f");
slh_dsa!(
    /// SLH-DSA-SHAKE-128s.
    SLH_DSA_SHAKE_128S, SHAKE_128S, "SLH-DSA-SHAKE-128s",
    ["SPHINCS_SMALL_LEVEL1", "SPHINCS+-SHAKE-128s-simple", "slhdsa_shake_128s"],
    n = 16, sig = 7856, cat = 1, arc = 26, tls = 0x0917, "slhdsa_shake_128s");
slh_dsa!(
    /// SLH-DSA-SHAKE-128f.
    SLH_DSA_SHAKE_128F, SHAKE_128F, "SLH-DSA-SHAKE-128f",
    ["SPHINCS_FAST_LEVEL1", "SPHINCS+-SHAKE-128f-simple", "slhdsa_shake_128f"],
    n = 16, sig = 17088, cat = 1, arc = 27, tls = 0x0918, "slhdsa_shake_128f");
slh_dsa!(
    /// SLH-DSA-SHAKE-192s.
    SLH_DSA_SHAKE_192S, SHAKE_192S, "SLH-DSA-SHAKE-192s",
    ["SPHINCS_SMALL_LEVEL3", "SPHINCS+-SHAKE-192s-simple", "slhdsa_shake_192s"],
    n = 24, sig = 16224, cat = 3, arc = 28, tls = 0x0919, "slhdsa_shake_192s");
slh_dsa!(
    /// SLH-DSA-SHAKE-192f.
    SLH_DSA_SHAKE_192F, SHAKE_192F, "SLH-DSA-SHAKE-192f",
    ["SPHINCS_FAST_LEVEL3", "SPHINCS+-SHAKE-192f-simple", "slhdsa_shake_192f"],
    n = 24, sig = 35664, cat = 3, arc = 29, tls = 0x091A, "slhdsa_shake_192f");
slh_dsa!(
    /// SLH-DSA-SHAKE-256s.
    SLH_DSA_SHAKE_256S, SHAKE_256S, "SLH-DSA-SHAKE-256s",
    ["SPHINCS_SMALL_LEVEL5", "SPHINCS+-SHAKE-256s-simple", "slhdsa_shake_256s"],
    n = 32, sig = 29792, cat = 5, arc = 30, tls = 0x091B, "slhdsa_shake_256s");
slh_dsa!(
    /// SLH-DSA-SHAKE-256f.
    SLH_DSA_SHAKE_256F, SHAKE_256F, "SLH-DSA-SHAKE-256f",
    ["SPHINCS_FAST_LEVEL5", "SPHINCS+-SHAKE-256f-simple", "slhdsa_shake_256f"],
    n = 32, sig = 49856, cat = 5, arc = 31, tls = 0x091C, "slhdsa_shake_256f");

/// Every SLH-DSA parameter set, SHA2 then SHAKE, in code-point order.
pub static ALL: [&SignatureAlgorithm; 12] = [
    &SLH_DSA_SHA2_128S,
    &SLH_DSA_SHA2_128F,
    &SLH_DSA_SHA2_192S,
    &SLH_DSA_SHA2_192F,
    &SLH_DSA_SHA2_256S,
    &SLH_DSA_SHA2_256F,
    &SLH_DSA_SHAKE_128S,
    &SLH_DSA_SHAKE_128F,
    &SLH_DSA_SHAKE_192S,
    &SLH_DSA_SHAKE_192F,
    &SLH_DSA_SHAKE_256S,
    &SLH_DSA_SHAKE_256F,
];

pub use pqkit_slh_dsa::{set_signing_threads, signing_threads};

/// FIPS 205's internal functions (Algorithms 18–20) over a caller-formatted M′ and with the
/// caller's randomness, for known-answer tests.
///
/// # Security
/// `sign_internal` signs with the `addrnd` it is given (or none: the deterministic variant),
/// and none of these formats M′ (FIPS 205 §10.2's domain separation of pure and pre-hash
/// signing is the caller's). Sign through [`SignatureAlgorithm`]'s keys otherwise.
pub mod hazmat {
    use super::*;

    /// FIPS 205 Algorithm 18 (slh_keygen_internal), for vector tests: the 4n-byte private key
    /// and the 2n-byte public key from SK.seed, SK.prf and PK.seed (n bytes each).
    ///
    /// # Errors
    /// [`Error::InvalidLength`] when a seed is not n bytes; [`Error::Unsupported`] for an
    /// algorithm that is not SLH-DSA.
    pub fn keygen_internal(
        alg: &'static SignatureAlgorithm,
        sk_seed: &[u8],
        sk_prf: &[u8],
        pk_seed: &[u8],
    ) -> Result<(Zeroizing<Vec<u8>>, Vec<u8>), Error> {
        let p = params_of(alg)?;
        let seed = Zeroizing::new([sk_seed, sk_prf, pk_seed].concat());
        check_len("SLH-DSA seeds", &seed, alg.seed_size)?;
        for part in [sk_seed, sk_prf, pk_seed] {
            check_len("SLH-DSA seed", part, p.n)?;
        }
        let key = internal::keygen(p, &seed);
        let pk = key[2 * p.n..].to_vec();
        Ok((key, pk))
    }

    /// FIPS 205 Algorithm 19 (slh_sign_internal) over a caller-formatted M′, for vector tests:
    /// the signature (Table 2 size, e.g. 17 088 bytes for SLH-DSA-SHA2-128f). `addrnd` of `None`
    /// is the deterministic variant (opt_rand = PK.seed).
    ///
    /// # Errors
    /// [`Error::InvalidLength`] for a key (4n bytes) or `addrnd` (n bytes) of the wrong size;
    /// [`Error::Unsupported`] for an algorithm that is not SLH-DSA.
    pub fn sign_internal(
        alg: &'static SignatureAlgorithm,
        private_key: &[u8],
        m_prime: &[u8],
        addrnd: Option<&[u8]>,
    ) -> Result<Vec<u8>, Error> {
        let p = params_of(alg)?;
        check_len("SLH-DSA private key", private_key, alg.signing_key_size)?;
        if let Some(r) = addrnd {
            check_len("SLH-DSA addrnd", r, p.n)?;
        }
        // No top tree here: this is the path that signs from the key bytes alone (the public
        // API's keys keep theirs; the ACVP test compares the two).
        Ok(internal::sign(p, private_key, &[m_prime], addrnd, None))
    }

    /// FIPS 205 Algorithm 20 (slh_verify_internal) over a caller-formatted M′.
    ///
    /// # Errors
    /// [`Error::BadSignature`] when the signature (of any length) does not verify;
    /// [`Error::Unsupported`] for an algorithm that is not SLH-DSA.
    pub fn verify_internal(
        alg: &'static SignatureAlgorithm,
        public_key: &[u8],
        m_prime: &[u8],
        signature: &[u8],
    ) -> Result<(), Error> {
        let p = params_of(alg)?;
        verified(internal::verify(p, public_key, &[m_prime], signature))
    }
}

fn verified(ok: bool) -> Result<(), Error> {
    if ok { Ok(()) } else { Err(Error::BadSignature) }
}

fn params_of(alg: &'static SignatureAlgorithm) -> Result<&'static params::Params, Error> {
    params::ALL
        .iter()
        .copied()
        .find(|p| p.name == alg.name)
        .ok_or(Error::Unsupported("not an SLH-DSA algorithm"))
}

/// The catalogue's SLH-DSA backend for one parameter set.
struct SlhDsa(&'static params::Params);

impl SlhDsa {
    /// SK.seed ‖ SK.prf ‖ PK.seed (3n) → the signing key: the 4n-byte private key and the
    /// top tree Algorithm 18 computed for PK.root.
    fn keygen(&self, seed: &[u8]) -> Result<SlhDsaSigningKey, Error> {
        check_len("SLH-DSA seed", seed, 3 * self.0.n)?;
        let (key, top) = internal::expand(self.0, seed);
        Ok(SlhDsaSigningKey {
            p: self.0,
            key,
            top,
        })
    }
}

impl SignatureBackend for SlhDsa {
    fn name(&self) -> &'static str {
        "pqkit-hash engine"
    }

    fn signing_key_from_seed(
        &self,
        _alg: &'static SignatureAlgorithm,
        seed: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        Ok(Box::new(self.keygen(seed)?))
    }

    fn signing_key_from_expanded(
        &self,
        alg: &'static SignatureAlgorithm,
        bytes: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        check_len("SLH-DSA private key", bytes, alg.signing_key_size)?;
        // PK.root is recomputed from the seeds (Algorithm 18) so that an inconsistent key is
        // refused rather than producing invalid signatures.
        let key = self.keygen(&bytes[..alg.seed_size])?;
        if !bool::from(subtle::ConstantTimeEq::ct_eq(&key.key[..], bytes)) {
            return Err(Error::InvalidKey(
                "SLH-DSA private key (PK.root does not match the seeds)",
            ));
        }
        Ok(Box::new(key))
    }

    fn verify(
        &self,
        _alg: &'static SignatureAlgorithm,
        pk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), Error> {
        let len = [context_len(ctx)?];
        verified(internal::verify(self.0, pk, &[&[0], &len, ctx, msg], sig))
    }

    fn verify_prehashed(
        &self,
        _alg: &'static SignatureAlgorithm,
        pk: &[u8],
        hash: PreHash,
        digest: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), Error> {
        let len = [context_len(ctx)?];
        let oid = hash.oid_der();
        verified(internal::verify(
            self.0,
            pk,
            &[&[1], &len, ctx, &oid, digest],
            sig,
        ))
    }
}

fn context_len(ctx: &[u8]) -> Result<u8, Error> {
    u8::try_from(ctx.len()).map_err(|_| Error::ContextTooLong(ctx.len()))
}

/// An SLH-DSA signing key: SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root (4n bytes), zeroized on drop,
/// and the top XMSS tree that deriving PK.root computed ((2^(h′+1) − 1)·n public bytes,
/// 16 368 for the 128s sets): every signature takes the top layer's authentication path
/// from it instead of rebuilding the tree, which saves 1/d of the hypertree's hashing.
struct SlhDsaSigningKey {
    p: &'static params::Params,
    key: Zeroizing<Vec<u8>>,
    top: Levels,
}

impl SlhDsaSigningKey {
    fn addrnd(
        &self,
        randomness: SigningRandomness<'_>,
    ) -> Result<Option<Zeroizing<Vec<u8>>>, Error> {
        match randomness {
            SigningRandomness::Hedged => Ok(Some(random_vec(self.p.n)?)),
            SigningRandomness::Deterministic => Ok(None),
            SigningRandomness::Fixed(r) => {
                check_len("SLH-DSA addrnd", r, self.p.n)?;
                Ok(Some(Zeroizing::new(r.to_vec())))
            }
        }
    }

    fn sign_parts(&self, m: &[&[u8]], randomness: SigningRandomness<'_>) -> Result<Vec<u8>, Error> {
        let rnd = self.addrnd(randomness)?;
        Ok(internal::sign(
            self.p,
            &self.key,
            m,
            rnd.as_deref().map(|r| &r[..]),
            Some(&self.top),
        ))
    }
}

impl SigningKeyImpl for SlhDsaSigningKey {
    fn verifying_key(&self) -> &[u8] {
        &self.key[2 * self.p.n..]
    }

    fn seed(&self) -> Option<&[u8]> {
        // SK.seed ‖ SK.prf ‖ PK.seed: the inputs of Algorithm 18.
        Some(&self.key[..3 * self.p.n])
    }

    fn expanded(&self) -> Option<Zeroizing<Vec<u8>>> {
        Some(self.key.clone())
    }

    fn sign(
        &self,
        message: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        let len = [context_len(context)?];
        self.sign_parts(&[&[0], &len, context, message], randomness)
    }

    fn sign_prehashed(
        &self,
        hash: PreHash,
        digest: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        let len = [context_len(context)?];
        let oid = hash.oid_der();
        self.sign_parts(&[&[1], &len, context, &oid, digest], randomness)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_backend() {
        // The fast sets and the smallest small set: the other small sets take seconds each;
        // the ACVP vectors cover every set.
        for alg in ALL
            .iter()
            .filter(|a| a.name.ends_with('f') || a.name.ends_with("128s"))
        {
            let key = alg.generate().expect("key");
            let sig = key.sign(b"m", b"ctx").expect("sign");
            assert_eq!(sig.len(), alg.signature_size, "{}", alg.name);
            assert_eq!(key.verifying_key().as_bytes().len(), alg.verifying_key_size);
            assert_eq!(key.expanded().expect("sk").len(), alg.signing_key_size);
            key.verifying_key()
                .verify(b"m", b"ctx", &sig)
                .expect("verify");
            assert_eq!(
                key.verifying_key().verify(b"m", b"ctz", &sig),
                Err(Error::BadSignature)
            );
            // Fast sets only: the small ones take long in a debug build.
            if alg.name.ends_with('f') {
                let ph = PreHash::Sha256;
                let d = ph.digest(b"m");
                let hs = key
                    .sign_prehashed(ph, &d, b"", SigningRandomness::Deterministic)
                    .expect("hash sign");
                key.verifying_key()
                    .verify_prehashed(ph, &d, b"", &hs)
                    .expect("hash verify");
                assert_eq!(
                    key.verifying_key().verify(b"m", b"", &hs),
                    Err(Error::BadSignature)
                );
            }
        }
    }

    /// Multithreaded signing gives the single-threaded bytes, and both those of
    /// [`hazmat::sign_internal`], which has no cached top tree (the setting is process-wide;
    /// other tests that sign meanwhile just run threaded, with the same results).
    #[test]
    fn threaded_signatures_are_the_single_threaded_ones() {
        for alg in [&SLH_DSA_SHA2_128F, &SLH_DSA_SHAKE_128F, &SLH_DSA_SHA2_192F] {
            let key = alg
                .signing_key_from_seed(&vec![3; alg.seed_size])
                .expect("key");
            let sign = |threads| {
                set_signing_threads(threads);
                key.sign_with(b"m", b"c", SigningRandomness::Deterministic)
                    .expect("sign")
            };
            let one = sign(1);
            for threads in [2, 3, 8] {
                assert!(sign(threads) == one, "{} on {threads} threads", alg.name);
            }
            // The key's cached top tree changes nothing: the bytes are those signed from
            // the key bytes alone (M′ = 0 ‖ |ctx| ‖ ctx ‖ M, FIPS 205 Algorithm 22).
            let sk = key.expanded().expect("sk");
            let alone = hazmat::sign_internal(alg, &sk, b"\x00\x01cm", None).expect("sign");
            assert!(alone == one, "{}: cached top tree", alg.name);
            set_signing_threads(1);
            key.verifying_key()
                .verify(b"m", b"c", &one)
                .expect("verify");
        }
    }

    /// Every catalogue entry has its FIPS 205 parameters, with the sizes the catalogue states.
    #[test]
    fn every_set_has_its_parameters() {
        for alg in ALL {
            let p = params_of(alg).expect(alg.name);
            assert_eq!(p.signature_bytes(), alg.signature_size, "{}", alg.name);
            assert_eq!(2 * p.n, alg.verifying_key_size, "{}", alg.name);
        }
    }

    #[test]
    fn expanded_key_with_a_wrong_root_is_refused() {
        let alg = &SLH_DSA_SHAKE_128F;
        let key = alg.signing_key_from_seed(&[7; 48]).expect("key");
        let mut sk = key.expanded().expect("sk");
        assert!(alg.signing_key_from_expanded(&sk).is_ok());
        sk[63] ^= 1;
        assert!(matches!(
            alg.signing_key_from_expanded(&sk),
            Err(Error::InvalidKey(_))
        ));
    }
}
