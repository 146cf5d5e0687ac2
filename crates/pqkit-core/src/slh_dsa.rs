//! SLH-DSA (FIPS 205): the twelve parameter sets, pure and HashSLH-DSA, with context,
//! deterministic and randomized.
//!
//! Backend: RustCrypto `slh-dsa` 0.0.3, driven through its `slh_sign_internal` /
//! `slh_verify_internal` (FIPS 205 Algorithms 19 and 20) with M′ formatted here (Algorithms
//! 22–25), so that pure and pre-hash signing share one path. pqkit's own multi-buffer
//! implementation replaces it later.
//!
//! Keys: the seed form is SK.seed ‖ SK.prf ‖ PK.seed (3n bytes, the inputs of
//! `slh_keygen_internal`, FIPS 205 Algorithm 18); the expanded form is
//! SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root (4n bytes, FIPS 205 §9.1, the RFC 9909 private key).

use zeroize::Zeroizing;

use crate::catalogue::TlsCodePoint;
use crate::error::{Error, check_len};
use crate::prehash::PreHash;
use crate::random_vec;
use crate::sig::{Family, SignatureAlgorithm, SignatureBackend, SigningKeyImpl, SigningRandomness};

/// The twelve FIPS 205 parameter sets (Table 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Set {
    Sha2_128s,
    Sha2_128f,
    Sha2_192s,
    Sha2_192f,
    Sha2_256s,
    Sha2_256f,
    Shake128s,
    Shake128f,
    Shake192s,
    Shake192f,
    Shake256s,
    Shake256f,
}

macro_rules! with_set {
    ($set:expr, $p:ident => $body:expr) => {
        match $set {
            Set::Sha2_128s => {
                type $p = slh_dsa::Sha2_128s;
                $body
            }
            Set::Sha2_128f => {
                type $p = slh_dsa::Sha2_128f;
                $body
            }
            Set::Sha2_192s => {
                type $p = slh_dsa::Sha2_192s;
                $body
            }
            Set::Sha2_192f => {
                type $p = slh_dsa::Sha2_192f;
                $body
            }
            Set::Sha2_256s => {
                type $p = slh_dsa::Sha2_256s;
                $body
            }
            Set::Sha2_256f => {
                type $p = slh_dsa::Sha2_256f;
                $body
            }
            Set::Shake128s => {
                type $p = slh_dsa::Shake128s;
                $body
            }
            Set::Shake128f => {
                type $p = slh_dsa::Shake128f;
                $body
            }
            Set::Shake192s => {
                type $p = slh_dsa::Shake192s;
                $body
            }
            Set::Shake192f => {
                type $p = slh_dsa::Shake192f;
                $body
            }
            Set::Shake256s => {
                type $p = slh_dsa::Shake256s;
                $body
            }
            Set::Shake256f => {
                type $p = slh_dsa::Shake256f;
                $body
            }
        }
    };
}

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
            backend: &SlhDsa(Set::$set),
        };
    };
}

slh_dsa!(
    /// SLH-DSA-SHA2-128s (FIPS 205 Table 2; RFC 9909 id-slh-dsa-sha2-128s).
    SLH_DSA_SHA2_128S, Sha2_128s, "SLH-DSA-SHA2-128s", ["SPHINCS+-SHA2-128s-simple", "slhdsa_sha2_128s"],
    n = 16, sig = 7856, cat = 1, arc = 20, tls = 0x0911, "slhdsa_sha2_128s");
slh_dsa!(
    /// SLH-DSA-SHA2-128f.
    SLH_DSA_SHA2_128F, Sha2_128f, "SLH-DSA-SHA2-128f", ["SPHINCS+-SHA2-128f-simple", "slhdsa_sha2_128f"],
    n = 16, sig = 17088, cat = 1, arc = 21, tls = 0x0912, "slhdsa_sha2_128f");
slh_dsa!(
    /// SLH-DSA-SHA2-192s.
    SLH_DSA_SHA2_192S, Sha2_192s, "SLH-DSA-SHA2-192s", ["SPHINCS+-SHA2-192s-simple", "slhdsa_sha2_192s"],
    n = 24, sig = 16224, cat = 3, arc = 22, tls = 0x0913, "slhdsa_sha2_192s");
slh_dsa!(
    /// SLH-DSA-SHA2-192f.
    SLH_DSA_SHA2_192F, Sha2_192f, "SLH-DSA-SHA2-192f", ["SPHINCS+-SHA2-192f-simple", "slhdsa_sha2_192f"],
    n = 24, sig = 35664, cat = 3, arc = 23, tls = 0x0914, "slhdsa_sha2_192f");
slh_dsa!(
    /// SLH-DSA-SHA2-256s.
    SLH_DSA_SHA2_256S, Sha2_256s, "SLH-DSA-SHA2-256s", ["SPHINCS+-SHA2-256s-simple", "slhdsa_sha2_256s"],
    n = 32, sig = 29792, cat = 5, arc = 24, tls = 0x0915, "slhdsa_sha2_256s");
slh_dsa!(
    /// SLH-DSA-SHA2-256f.
    SLH_DSA_SHA2_256F, Sha2_256f, "SLH-DSA-SHA2-256f", ["SPHINCS+-SHA2-256f-simple", "slhdsa_sha2_256f"],
    n = 32, sig = 49856, cat = 5, arc = 25, tls = 0x0916, "slhdsa_sha2_256f");
slh_dsa!(
    /// SLH-DSA-SHAKE-128s.
    SLH_DSA_SHAKE_128S, Shake128s, "SLH-DSA-SHAKE-128s",
    ["SPHINCS_SMALL_LEVEL1", "SPHINCS+-SHAKE-128s-simple", "slhdsa_shake_128s"],
    n = 16, sig = 7856, cat = 1, arc = 26, tls = 0x0917, "slhdsa_shake_128s");
slh_dsa!(
    /// SLH-DSA-SHAKE-128f.
    SLH_DSA_SHAKE_128F, Shake128f, "SLH-DSA-SHAKE-128f",
    ["SPHINCS_FAST_LEVEL1", "SPHINCS+-SHAKE-128f-simple", "slhdsa_shake_128f"],
    n = 16, sig = 17088, cat = 1, arc = 27, tls = 0x0918, "slhdsa_shake_128f");
slh_dsa!(
    /// SLH-DSA-SHAKE-192s.
    SLH_DSA_SHAKE_192S, Shake192s, "SLH-DSA-SHAKE-192s",
    ["SPHINCS_SMALL_LEVEL3", "SPHINCS+-SHAKE-192s-simple", "slhdsa_shake_192s"],
    n = 24, sig = 16224, cat = 3, arc = 28, tls = 0x0919, "slhdsa_shake_192s");
slh_dsa!(
    /// SLH-DSA-SHAKE-192f.
    SLH_DSA_SHAKE_192F, Shake192f, "SLH-DSA-SHAKE-192f",
    ["SPHINCS_FAST_LEVEL3", "SPHINCS+-SHAKE-192f-simple", "slhdsa_shake_192f"],
    n = 24, sig = 35664, cat = 3, arc = 29, tls = 0x091A, "slhdsa_shake_192f");
slh_dsa!(
    /// SLH-DSA-SHAKE-256s.
    SLH_DSA_SHAKE_256S, Shake256s, "SLH-DSA-SHAKE-256s",
    ["SPHINCS_SMALL_LEVEL5", "SPHINCS+-SHAKE-256s-simple", "slhdsa_shake_256s"],
    n = 32, sig = 29792, cat = 5, arc = 30, tls = 0x091B, "slhdsa_shake_256s");
slh_dsa!(
    /// SLH-DSA-SHAKE-256f.
    SLH_DSA_SHAKE_256F, Shake256f, "SLH-DSA-SHAKE-256f",
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

/// FIPS 205 Algorithm 18 (slh_keygen_internal) on the backend, for vector tests: the 4n-byte
/// private key and the 2n-byte public key from SK.seed, SK.prf and PK.seed (n bytes each).
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
    let seed = Zeroizing::new([sk_seed, sk_prf, pk_seed].concat());
    check_len("SLH-DSA seeds", &seed, alg.seed_size)?;
    let key = set_of(alg)?.keygen(&seed)?;
    let pk = key[2 * n_of(alg)..].to_vec();
    Ok((key, pk))
}

/// FIPS 205 Algorithm 19 (slh_sign_internal) over a caller-formatted M′, for vector tests.
/// `addrnd` of `None` is the deterministic variant (opt_rand = PK.seed).
///
/// # Errors
/// [`Error::InvalidLength`] for a key or `addrnd` of the wrong size.
pub fn sign_internal(
    alg: &'static SignatureAlgorithm,
    private_key: &[u8],
    m_prime: &[u8],
    addrnd: Option<&[u8]>,
) -> Result<Vec<u8>, Error> {
    check_len("SLH-DSA private key", private_key, alg.signing_key_size)?;
    if let Some(r) = addrnd {
        check_len("SLH-DSA addrnd", r, n_of(alg))?;
    }
    set_of(alg)?.sign(private_key, &[m_prime], addrnd)
}

/// FIPS 205 Algorithm 20 (slh_verify_internal) over a caller-formatted M′.
///
/// # Errors
/// [`Error::BadSignature`].
pub fn verify_internal(
    alg: &'static SignatureAlgorithm,
    public_key: &[u8],
    m_prime: &[u8],
    signature: &[u8],
) -> Result<(), Error> {
    set_of(alg)?.verify(public_key, &[m_prime], signature)
}

fn set_of(alg: &'static SignatureAlgorithm) -> Result<Set, Error> {
    ALL.iter()
        .position(|a| core::ptr::eq(*a, alg))
        .map(|i| {
            [
                Set::Sha2_128s,
                Set::Sha2_128f,
                Set::Sha2_192s,
                Set::Sha2_192f,
                Set::Sha2_256s,
                Set::Sha2_256f,
                Set::Shake128s,
                Set::Shake128f,
                Set::Shake192s,
                Set::Shake192f,
                Set::Shake256s,
                Set::Shake256f,
            ][i]
        })
        .ok_or(Error::Unsupported("not an SLH-DSA algorithm"))
}

/// n in bytes (FIPS 205 Table 2).
fn n_of(alg: &SignatureAlgorithm) -> usize {
    alg.verifying_key_size / 2
}

/// Runs `f` on a thread with a 32 MiB stack: slh-dsa 0.0.3 keeps whole signatures (up to
/// 49 856 bytes) and their parts on the stack, several copies deep, which overflows the 2 MiB
/// of a default Rust thread for the 192/256 sets. A thread costs microseconds; an SLH-DSA
/// operation costs milliseconds.
fn on_big_stack<T: Send>(f: impl FnOnce() -> Result<T, Error> + Send) -> Result<T, Error> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("pqkit-slh-dsa".into())
            .stack_size(32 << 20)
            .spawn_scoped(scope, f)
            .map_err(|_| Error::Backend("slh-dsa (thread)"))?
            .join()
            .map_err(|_| Error::Backend("slh-dsa"))?
    })
}

impl Set {
    /// n in bytes (FIPS 205 Table 2).
    fn n(self) -> usize {
        match self {
            Self::Sha2_128s | Self::Sha2_128f | Self::Shake128s | Self::Shake128f => 16,
            Self::Sha2_192s | Self::Sha2_192f | Self::Shake192s | Self::Shake192f => 24,
            _ => 32,
        }
    }

    /// SK.seed ‖ SK.prf ‖ PK.seed (3n) → the 4n-byte private key.
    fn keygen(self, seed: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        check_len("SLH-DSA seed", seed, 3 * self.n())?;
        on_big_stack(|| {
            with_set!(self, P => {
                let n = seed.len() / 3;
                let key = slh_dsa::SigningKey::<P>::slh_keygen_internal(&seed[..n], &seed[n..2 * n], &seed[2 * n..]);
                Ok(Zeroizing::new(key.to_vec()))
            })
        })
    }

    /// Algorithm 19 over M′ given in parts. Lengths are checked by the callers.
    fn sign(
        self,
        private_key: &[u8],
        m_prime: &[&[u8]],
        addrnd: Option<&[u8]>,
    ) -> Result<Vec<u8>, Error> {
        on_big_stack(|| {
            with_set!(self, P => {
                let key = slh_dsa::SigningKey::<P>::try_from(private_key)
                    .map_err(|_| Error::InvalidKey("SLH-DSA private key"))?;
                Ok(key.slh_sign_internal(m_prime, addrnd).to_vec())
            })
        })
    }

    /// Algorithm 20 over M′ given in parts.
    fn verify(self, public_key: &[u8], m_prime: &[&[u8]], signature: &[u8]) -> Result<(), Error> {
        on_big_stack(|| {
            with_set!(self, P => {
                let key = slh_dsa::VerifyingKey::<P>::try_from(public_key).map_err(|_| Error::BadSignature)?;
                let sig = slh_dsa::Signature::<P>::try_from(signature).map_err(|_| Error::BadSignature)?;
                key.slh_verify_internal(m_prime, &sig).map_err(|_| Error::BadSignature)
            })
        })
    }
}

/// The catalogue's SLH-DSA backend for one parameter set.
struct SlhDsa(Set);

impl SlhDsa {
    /// A signing key from the 4n-byte key Algorithm 18 derived (its first 3n bytes are the
    /// seed form).
    fn key(&self, alg: &SignatureAlgorithm, key: Zeroizing<Vec<u8>>) -> Box<dyn SigningKeyImpl> {
        Box::new(SlhDsaSigningKey {
            set: self.0,
            n: n_of(alg),
            key,
        })
    }
}

impl SignatureBackend for SlhDsa {
    fn name(&self) -> &'static str {
        "RustCrypto slh-dsa 0.0.3"
    }

    fn signing_key_from_seed(
        &self,
        alg: &'static SignatureAlgorithm,
        seed: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let key = self.0.keygen(seed)?;
        Ok(self.key(alg, key))
    }

    fn signing_key_from_expanded(
        &self,
        alg: &'static SignatureAlgorithm,
        bytes: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        // The backend takes PK.root on trust; recompute it from the seeds (FIPS 205 Algorithm 18)
        // so that an inconsistent key is refused rather than producing invalid signatures.
        let seed = &bytes[..alg.seed_size];
        let key = self.0.keygen(seed)?;
        if !bool::from(subtle::ConstantTimeEq::ct_eq(&key[..], bytes)) {
            return Err(Error::InvalidKey(
                "SLH-DSA private key (PK.root does not match the seeds)",
            ));
        }
        Ok(self.key(alg, key))
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
        self.0.verify(pk, &[&[0], &len, ctx, msg], sig)
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
        self.0
            .verify(pk, &[&[1], &len, ctx, &hash.oid_der(), digest], sig)
    }
}

fn context_len(ctx: &[u8]) -> Result<u8, Error> {
    u8::try_from(ctx.len()).map_err(|_| Error::ContextTooLong(ctx.len()))
}

/// An SLH-DSA signing key.
///
/// # Security
/// pqkit's copy of the 4n-byte key is zeroized on drop. `slh-dsa` 0.0.3 does not zeroize
/// the key object it builds for each signature; pqkit's own implementation will.
struct SlhDsaSigningKey {
    set: Set,
    n: usize,
    key: Zeroizing<Vec<u8>>,
}

impl SlhDsaSigningKey {
    fn addrnd(
        &self,
        randomness: SigningRandomness<'_>,
    ) -> Result<Option<Zeroizing<Vec<u8>>>, Error> {
        match randomness {
            SigningRandomness::Hedged => Ok(Some(random_vec(self.n)?)),
            SigningRandomness::Deterministic => Ok(None),
            SigningRandomness::Fixed(r) => {
                check_len("SLH-DSA addrnd", r, self.n)?;
                Ok(Some(Zeroizing::new(r.to_vec())))
            }
        }
    }
}

impl SigningKeyImpl for SlhDsaSigningKey {
    fn verifying_key(&self) -> &[u8] {
        &self.key[2 * self.n..]
    }

    fn seed(&self) -> Option<&[u8]> {
        // SK.seed ‖ SK.prf ‖ PK.seed: the inputs of Algorithm 18.
        Some(&self.key[..3 * self.n])
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
        let rnd = self.addrnd(randomness)?;
        let len = [context_len(context)?];
        self.set.sign(
            &self.key,
            &[&[0], &len, context, message],
            rnd.as_deref().map(|r| &r[..]),
        )
    }

    fn sign_prehashed(
        &self,
        hash: PreHash,
        digest: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        let rnd = self.addrnd(randomness)?;
        let len = [context_len(context)?];
        let oid = hash.oid_der();
        self.set.sign(
            &self.key,
            &[&[1], &len, context, &oid, digest],
            rnd.as_deref().map(|r| &r[..]),
        )
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
