//! ML-DSA (FIPS 204): the three parameter sets and their backends.
//!
//! aws-lc-rs does key generation from ξ and pure signing/verification with an empty context —
//! the TLS path, and the fastest measured here (DESIGN.md). It has no context string, so
//! signing or verifying with a non-empty context, and deterministic or fixed-randomness signing
//! (known-answer tests), go to `fips204`. [`backend`] exposes each backend on its own so that
//! every vector suite runs against both.

use zeroize::Zeroizing;

use crate::catalogue::TlsCodePoint;
use crate::error::Error;
use crate::prehash::PreHash;
use crate::random_array;
use crate::sig::{
    Family, MU_SIZE, SIGNING_RANDOMNESS_SIZE, SignatureAlgorithm, SignatureBackend, SigningKeyImpl,
    SigningRandomness,
};

/// Size of the ML-DSA seed ξ in bytes (FIPS 204 Algorithm 1).
pub const SEED_SIZE: usize = 32;

/// ML-DSA-44, NIST category 2 (FIPS 204 §4, Table 2).
pub static ML_DSA_44: SignatureAlgorithm = SignatureAlgorithm {
    name: "ML-DSA-44",
    aliases: &["MLDSA44", "ML_DSA_44", "DILITHIUM_LEVEL2", "Dilithium2"],
    category: 2,
    verifying_key_size: 1312,
    signing_key_size: 2560,
    seed_size: SEED_SIZE,
    signature_size: 2420,
    oid: "2.16.840.1.101.3.4.3.17",
    spki_algorithm_id: &ALG_ID_44,
    signature_algorithm_id: &ALG_ID_44,
    // draft-ietf-tls-mldsa: mldsa44 = 0x0904.
    tls_scheme: Some(TlsCodePoint {
        value: 0x0904,
        iana: "mldsa44",
        source: "draft-ietf-tls-mldsa",
    }),
    standard: "FIPS 204",
    family: Family::MlDsa,
    backend: &MlDsa(Level::L44),
};

/// ML-DSA-65, NIST category 3 (FIPS 204 §4, Table 2).
pub static ML_DSA_65: SignatureAlgorithm = SignatureAlgorithm {
    name: "ML-DSA-65",
    aliases: &["MLDSA65", "ML_DSA_65", "DILITHIUM_LEVEL3", "Dilithium3"],
    category: 3,
    verifying_key_size: 1952,
    signing_key_size: 4032,
    seed_size: SEED_SIZE,
    signature_size: 3309,
    oid: "2.16.840.1.101.3.4.3.18",
    spki_algorithm_id: &ALG_ID_65,
    signature_algorithm_id: &ALG_ID_65,
    // draft-ietf-tls-mldsa: mldsa65 = 0x0905.
    tls_scheme: Some(TlsCodePoint {
        value: 0x0905,
        iana: "mldsa65",
        source: "draft-ietf-tls-mldsa",
    }),
    standard: "FIPS 204",
    family: Family::MlDsa,
    backend: &MlDsa(Level::L65),
};

/// ML-DSA-87, NIST category 5 (FIPS 204 §4, Table 2).
pub static ML_DSA_87: SignatureAlgorithm = SignatureAlgorithm {
    name: "ML-DSA-87",
    aliases: &["MLDSA87", "ML_DSA_87", "DILITHIUM_LEVEL5", "Dilithium5"],
    category: 5,
    verifying_key_size: 2592,
    signing_key_size: 4896,
    seed_size: SEED_SIZE,
    signature_size: 4627,
    oid: "2.16.840.1.101.3.4.3.19",
    spki_algorithm_id: &ALG_ID_87,
    signature_algorithm_id: &ALG_ID_87,
    // draft-ietf-tls-mldsa: mldsa87 = 0x0906.
    tls_scheme: Some(TlsCodePoint {
        value: 0x0906,
        iana: "mldsa87",
        source: "draft-ietf-tls-mldsa",
    }),
    standard: "FIPS 204",
    family: Family::MlDsa,
    backend: &MlDsa(Level::L87),
};

/// The ML-DSA backends, each usable on its own (for vector tests and benchmarks).
pub mod backend {
    use super::*;

    /// One ML-DSA implementation.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Backend {
        /// aws-lc-rs: key generation, hedged signing and verification with an empty context.
        AwsLc,
        /// fips204: everything FIPS 204 defines, at several times the cost.
        Fips204,
    }

    /// Every ML-DSA backend.
    pub const ALL: [Backend; 2] = [Backend::AwsLc, Backend::Fips204];

    impl Backend {
        /// Name of the crate.
        pub fn name(self) -> &'static str {
            match self {
                Self::AwsLc => "aws-lc-rs",
                Self::Fips204 => "fips204",
            }
        }

        /// FIPS 204 Algorithm 6 (ML-DSA.KeyGen_internal): (pk, sk) from ξ.
        ///
        /// # Errors
        /// [`Error::InvalidLength`] for a seed that is not 32 bytes; [`Error::Backend`].
        pub fn keygen(
            self,
            alg: &'static SignatureAlgorithm,
            seed: &[u8],
        ) -> Result<(Vec<u8>, Zeroizing<Vec<u8>>), Error> {
            let level = level_of(alg)?;
            let xi = seed_array(seed)?;
            match self {
                Self::AwsLc => {
                    let pair = aws::key_pair(level, &xi)?;
                    let sk = aws::expanded(&pair)?;
                    Ok((aws::public_key(&pair).to_vec(), sk))
                }
                Self::Fips204 => Ok(fips::keygen(level, &xi)),
            }
        }

        /// FIPS 204 Algorithm 3 (ML-DSA.Verify) with context `ctx`.
        ///
        /// # Errors
        /// [`Error::BadSignature`]; [`Error::Unsupported`] for aws-lc-rs with a non-empty context.
        pub fn verify(
            self,
            alg: &'static SignatureAlgorithm,
            pk: &[u8],
            msg: &[u8],
            ctx: &[u8],
            sig: &[u8],
        ) -> Result<(), Error> {
            let level = level_of(alg)?;
            match self {
                Self::AwsLc if ctx.is_empty() => aws::verify(level, pk, msg, sig),
                Self::AwsLc => Err(Error::Unsupported(
                    "aws-lc-rs ML-DSA takes no context string",
                )),
                Self::Fips204 => fips::verify(level, pk, msg, ctx, sig),
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    L44,
    L65,
    L87,
}

fn level_of(alg: &'static SignatureAlgorithm) -> Result<Level, Error> {
    match alg.name {
        "ML-DSA-44" => Ok(Level::L44),
        "ML-DSA-65" => Ok(Level::L65),
        "ML-DSA-87" => Ok(Level::L87),
        _ => Err(Error::Unsupported("not an ML-DSA algorithm")),
    }
}

fn seed_array(seed: &[u8]) -> Result<Zeroizing<[u8; SEED_SIZE]>, Error> {
    crate::error::check_len("ML-DSA seed", seed, SEED_SIZE)?;
    let mut xi = Zeroizing::new([0u8; SEED_SIZE]);
    xi.copy_from_slice(seed);
    Ok(xi)
}

/// The catalogue's ML-DSA backend: aws-lc-rs where it can, fips204 where it cannot.
struct MlDsa(Level);

impl SignatureBackend for MlDsa {
    fn name(&self) -> &'static str {
        "aws-lc-rs (pure, empty context) + fips204 (context, deterministic)"
    }

    fn signing_key_from_seed(
        &self,
        _alg: &'static SignatureAlgorithm,
        seed: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let seed = seed_array(seed)?;
        let pair = aws::key_pair(self.0, &seed)?;
        let verifying_key = aws::public_key(&pair).to_vec();
        Ok(Box::new(MlDsaSigningKey {
            level: self.0,
            held: Held::Seed { seed, pair },
            verifying_key,
        }))
    }

    fn signing_key_from_expanded(
        &self,
        _alg: &'static SignatureAlgorithm,
        bytes: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let sk = Zeroizing::new(bytes.to_vec());
        let verifying_key = fips::public_from_expanded(self.0, &sk)?;
        // FIPS 204 Algorithm 24: sk = ρ ‖ K ‖ tr ‖ s1 ‖ s2 ‖ t0 with tr = H(pk, 64). pk is
        // recomputed from ρ, s1 and s2 (t = A·s1 + s2), so a damaged ρ, tr, s1 or s2 shows as
        // a tr that is not H(pk). t0 is not covered: every signature of an expanded-only key
        // is verified before it leaves (see `MlDsaSigningKey::checked`).
        let tr: [u8; 64] = crate::prehash::shake256(&[&verifying_key]);
        if !bool::from(subtle::ConstantTimeEq::ct_eq(&tr[..], &sk[64..128])) {
            return Err(Error::InvalidKey(
                "ML-DSA expanded private key (tr is not H(pk): the key is damaged)",
            ));
        }
        Ok(Box::new(MlDsaSigningKey {
            level: self.0,
            held: Held::Expanded(sk),
            verifying_key,
        }))
    }

    fn verify(
        &self,
        _alg: &'static SignatureAlgorithm,
        pk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), Error> {
        if ctx.is_empty() {
            aws::verify(self.0, pk, msg, sig)
        } else {
            fips::verify(self.0, pk, msg, ctx, sig)
        }
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
        fips::hash_verify(self.0, pk, hash, digest, ctx, sig)
    }

    fn verify_mu(
        &self,
        _alg: &'static SignatureAlgorithm,
        pk: &[u8],
        mu: &[u8; MU_SIZE],
        sig: &[u8],
    ) -> Result<(), Error> {
        fips::verify_mu(self.0, pk, mu, sig)
    }
}

/// An ML-DSA signing key.
///
/// # Security
/// ξ and the expanded key are zeroized on drop; AWS-LC cleanses its key on free.
struct MlDsaSigningKey {
    level: Level,
    held: Held,
    verifying_key: Vec<u8>,
}

/// What a signing key was loaded from.
enum Held {
    /// ξ (RFC 9881 seed form) and the aws-lc-rs key pair expanded from it.
    Seed {
        seed: Zeroizing<[u8; SEED_SIZE]>,
        pair: aws_lc_rs::signature::PqdsaKeyPair,
    },
    /// Only the expanded `sk` (RFC 9881 expandedKey form): every operation runs on fips204.
    Expanded(Zeroizing<Vec<u8>>),
}

impl MlDsaSigningKey {
    /// `sig`, after verifying it when the key was loaded from its expanded form only: nothing
    /// ties t0 to the rest of such a key, and a damaged t0 makes invalid signatures, so none
    /// leaves the signer (FIPS 140-3's pairwise consistency, per signature). Keys from a seed
    /// are consistent by construction.
    ///
    /// # Errors
    /// [`Error::InvalidKey`] when the signature does not verify.
    fn checked(
        &self,
        sig: Vec<u8>,
        verify: impl FnOnce(&[u8], &[u8]) -> Result<(), Error>,
    ) -> Result<Vec<u8>, Error> {
        if matches!(self.held, Held::Expanded(_)) && verify(&self.verifying_key, &sig).is_err() {
            return Err(Error::InvalidKey(
                "ML-DSA expanded private key (its signature does not verify: t0 is damaged)",
            ));
        }
        Ok(sig)
    }

    fn secret(&self) -> fips::Secret<'_> {
        match &self.held {
            Held::Seed { seed, .. } => fips::Secret::Seed(seed),
            Held::Expanded(sk) => fips::Secret::Expanded(sk),
        }
    }
}

impl SigningKeyImpl for MlDsaSigningKey {
    fn verifying_key(&self) -> &[u8] {
        &self.verifying_key
    }

    fn seed(&self) -> Option<&[u8]> {
        match &self.held {
            Held::Seed { seed, .. } => Some(&seed[..]),
            Held::Expanded(_) => None,
        }
    }

    fn expanded(&self) -> Option<Zeroizing<Vec<u8>>> {
        match &self.held {
            Held::Seed { pair, .. } => aws::expanded(pair).ok(),
            Held::Expanded(sk) => Some(sk.clone()),
        }
    }

    fn sign(
        &self,
        message: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        if let Held::Seed { pair, .. } = &self.held
            && context.is_empty()
            && matches!(randomness, SigningRandomness::Hedged)
        {
            return aws::sign(pair, message);
        }
        let rnd = rnd(randomness)?;
        let sig = fips::sign(self.level, self.secret(), message, context, &rnd)?;
        self.checked(sig, |pk, sig| {
            fips::verify(self.level, pk, message, context, sig)
        })
    }

    fn sign_prehashed(
        &self,
        hash: PreHash,
        digest: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        let rnd = rnd(randomness)?;
        let sig = fips::hash_sign(self.level, self.secret(), hash, digest, context, &rnd)?;
        self.checked(sig, |pk, sig| {
            fips::hash_verify(self.level, pk, hash, digest, context, sig)
        })
    }

    fn sign_mu(
        &self,
        mu: &[u8; MU_SIZE],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        let rnd = rnd(randomness)?;
        let sig = fips::sign_mu(self.level, self.secret(), mu, &rnd)?;
        self.checked(sig, |pk, sig| fips::verify_mu(self.level, pk, mu, sig))
    }
}

/// FIPS 204 Algorithm 2's `rnd`: fresh, zero (deterministic) or given (32 bytes).
fn rnd(
    randomness: SigningRandomness<'_>,
) -> Result<Zeroizing<[u8; SIGNING_RANDOMNESS_SIZE]>, Error> {
    match randomness {
        SigningRandomness::Hedged => random_array::<SIGNING_RANDOMNESS_SIZE>(),
        SigningRandomness::Deterministic => Ok(Zeroizing::new([0; SIGNING_RANDOMNESS_SIZE])),
        SigningRandomness::Fixed(given) => {
            crate::error::check_len("ML-DSA rnd", given, SIGNING_RANDOMNESS_SIZE)?;
            let mut out = Zeroizing::new([0; SIGNING_RANDOMNESS_SIZE]);
            out.copy_from_slice(given);
            Ok(out)
        }
    }
}

/// aws-lc-rs ML-DSA.
mod aws {
    use aws_lc_rs::encoding::AsRawBytes;
    use aws_lc_rs::signature as pq;
    use aws_lc_rs::signature::{KeyPair, PqdsaKeyPair, UnparsedPublicKey};

    use super::*;

    const NAME: &str = "aws-lc-rs";

    fn algorithms(
        level: Level,
    ) -> (
        &'static pq::PqdsaSigningAlgorithm,
        &'static pq::PqdsaVerificationAlgorithm,
    ) {
        match level {
            Level::L44 => (&pq::ML_DSA_44_SIGNING, &pq::ML_DSA_44),
            Level::L65 => (&pq::ML_DSA_65_SIGNING, &pq::ML_DSA_65),
            Level::L87 => (&pq::ML_DSA_87_SIGNING, &pq::ML_DSA_87),
        }
    }

    pub(super) fn key_pair(level: Level, xi: &[u8; SEED_SIZE]) -> Result<PqdsaKeyPair, Error> {
        PqdsaKeyPair::from_seed(algorithms(level).0, xi).map_err(|_| Error::Backend(NAME))
    }

    pub(super) fn public_key(pair: &PqdsaKeyPair) -> &[u8] {
        pair.public_key().as_ref()
    }

    pub(super) fn expanded(pair: &PqdsaKeyPair) -> Result<Zeroizing<Vec<u8>>, Error> {
        let raw = pair
            .private_key()
            .as_raw_bytes()
            .map_err(|_| Error::Backend(NAME))?;
        Ok(Zeroizing::new(raw.as_ref().to_vec()))
    }

    pub(super) fn sign(pair: &PqdsaKeyPair, msg: &[u8]) -> Result<Vec<u8>, Error> {
        let mut sig = vec![0u8; pair.algorithm().signature_len()];
        let n = pair.sign(msg, &mut sig).map_err(|_| Error::Backend(NAME))?;
        sig.truncate(n);
        Ok(sig)
    }

    pub(super) fn verify(level: Level, pk: &[u8], msg: &[u8], sig: &[u8]) -> Result<(), Error> {
        UnparsedPublicKey::new(algorithms(level).1, pk)
            .verify(msg, sig)
            .map_err(|_| Error::BadSignature)
    }
}

/// fips204 ML-DSA, one parameter-set module at a time.
#[allow(deprecated)] // fips204's sign_mu/verify_mu are marked as ACVP hooks; they are FIPS 204's
// Algorithm 7/8 from μ on, which is what external μ is.
mod fips {
    use fips204::traits::{KeyGen, SerDes, Signer, Verifier};

    use super::*;
    use crate::FixedRng;

    const NAME: &str = "fips204";

    /// The private half, as the caller holds it.
    #[derive(Clone, Copy)]
    pub(super) enum Secret<'a> {
        Seed(&'a [u8; SEED_SIZE]),
        Expanded(&'a [u8]),
    }

    macro_rules! with_level {
        ($level:expr, $m:ident => $body:expr) => {
            match $level {
                Level::L44 => {
                    use fips204::ml_dsa_44 as $m;
                    $body
                }
                Level::L65 => {
                    use fips204::ml_dsa_65 as $m;
                    $body
                }
                Level::L87 => {
                    use fips204::ml_dsa_87 as $m;
                    $body
                }
            }
        };
    }

    macro_rules! private_key {
        ($m:ident, $secret:expr) => {
            match $secret {
                Secret::Seed(xi) => $m::KG::keygen_from_seed(xi).1,
                Secret::Expanded(sk) => {
                    let sk: [u8; $m::SK_LEN] = sk
                        .try_into()
                        .map_err(|_| Error::InvalidKey("ML-DSA expanded private key"))?;
                    $m::PrivateKey::try_from_bytes(sk)
                        .map_err(|_| Error::InvalidKey("ML-DSA expanded private key"))?
                }
            }
        };
    }

    macro_rules! public_key {
        ($m:ident, $pk:expr) => {{
            let pk: [u8; $m::PK_LEN] = $pk.try_into().map_err(|_| Error::BadSignature)?;
            $m::PublicKey::try_from_bytes(pk).map_err(|_| Error::BadSignature)?
        }};
    }

    pub(super) fn keygen(level: Level, xi: &[u8; SEED_SIZE]) -> (Vec<u8>, Zeroizing<Vec<u8>>) {
        with_level!(level, m => {
            let (pk, sk) = m::KG::keygen_from_seed(xi);
            (pk.into_bytes().to_vec(), Zeroizing::new(sk.into_bytes().to_vec()))
        })
    }

    /// pk = ρ ‖ t1 with t = A·s1 + s2 recomputed from an expanded key.
    ///
    /// fips204 compares the t0 it recomputes with the key's in a `debug_assert!`: a damaged
    /// key panics where debug assertions are on (tests, fuzzing) and passes in release builds
    /// — where the caller's tr check and verify-after-sign catch it. The panic is caught and
    /// is the same error here.
    pub(super) fn public_from_expanded(level: Level, sk: &[u8]) -> Result<Vec<u8>, Error> {
        let derive = || -> Result<Vec<u8>, Error> {
            with_level!(level, m => {
                let sk = private_key!(m, Secret::Expanded(sk));
                Ok(sk.get_public_key().into_bytes().to_vec())
            })
        };
        std::panic::catch_unwind(derive).unwrap_or(Err(Error::InvalidKey(
            "ML-DSA expanded private key (t0 does not match ρ, s1 and s2: the key is damaged)",
        )))
    }

    pub(super) fn sign(
        level: Level,
        secret: Secret<'_>,
        msg: &[u8],
        ctx: &[u8],
        rnd: &[u8; SIGNING_RANDOMNESS_SIZE],
    ) -> Result<Vec<u8>, Error> {
        with_level!(level, m => {
            let sk = private_key!(m, secret);
            let sig = sk.try_sign_with_seed(rnd, msg, ctx).map_err(|_| Error::Backend(NAME))?;
            Ok(sig.to_vec())
        })
    }

    pub(super) fn hash_sign(
        level: Level,
        secret: Secret<'_>,
        hash: PreHash,
        digest: &[u8],
        ctx: &[u8],
        rnd: &[u8; SIGNING_RANDOMNESS_SIZE],
    ) -> Result<Vec<u8>, Error> {
        with_level!(level, m => {
            let sk = private_key!(m, secret);
            let sig = sk
                .try_hash_sign_with_seed(rnd, digest, ctx, &hash.oid_der())
                .map_err(|_| Error::Backend(NAME))?;
            Ok(sig.to_vec())
        })
    }

    pub(super) fn sign_mu(
        level: Level,
        secret: Secret<'_>,
        mu: &[u8; MU_SIZE],
        rnd: &[u8; SIGNING_RANDOMNESS_SIZE],
    ) -> Result<Vec<u8>, Error> {
        with_level!(level, m => {
            let sk = private_key!(m, secret);
            let sig = sk
                .sign_mu(&mut FixedRng::new(rnd), mu, true)
                .map_err(|_| Error::Backend(NAME))?;
            Ok(sig.to_vec())
        })
    }

    pub(super) fn verify(
        level: Level,
        pk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), Error> {
        with_level!(level, m => {
            let pk = public_key!(m, pk);
            let sig: [u8; m::SIG_LEN] = sig.try_into().map_err(|_| Error::BadSignature)?;
            if pk.verify(msg, &sig, ctx) { Ok(()) } else { Err(Error::BadSignature) }
        })
    }

    pub(super) fn hash_verify(
        level: Level,
        pk: &[u8],
        hash: PreHash,
        digest: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), Error> {
        with_level!(level, m => {
            let pk = public_key!(m, pk);
            let sig: [u8; m::SIG_LEN] = sig.try_into().map_err(|_| Error::BadSignature)?;
            if pk.hash_verify(digest, &sig, ctx, &hash.oid_der()) {
                Ok(())
            } else {
                Err(Error::BadSignature)
            }
        })
    }

    pub(super) fn verify_mu(
        level: Level,
        pk: &[u8],
        mu: &[u8; MU_SIZE],
        sig: &[u8],
    ) -> Result<(), Error> {
        with_level!(level, m => {
            let pk = public_key!(m, pk);
            let sig: [u8; m::SIG_LEN] = sig.try_into().map_err(|_| Error::BadSignature)?;
            if pk.verify_mu(mu, &sig) { Ok(()) } else { Err(Error::BadSignature) }
        })
    }
}

// DER contents of AlgorithmIdentifier { id-ml-dsa-NN } (RFC 9881 §2: parameters absent).
const ALG_ID_44: [u8; 11] = [
    0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11,
];
const ALG_ID_65: [u8; 11] = [
    0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12,
];
const ALG_ID_87: [u8; 11] = [
    0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x13,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sig::MAX_CONTEXT_SIZE;

    #[test]
    fn backends_verify_each_others_signatures() {
        for alg in [&ML_DSA_44, &ML_DSA_65, &ML_DSA_87] {
            let key = alg.generate().expect("key");
            let pk = key.verifying_key();
            // Hedged, empty context: signed by aws-lc-rs, verified by both.
            let sig = key.sign(b"msg", &[]).expect("sign");
            assert_eq!(sig.len(), alg.signature_size);
            for b in backend::ALL {
                b.verify(alg, pk.as_bytes(), b"msg", &[], &sig)
                    .unwrap_or_else(|e| panic!("{}: {e}", b.name()));
            }
            // Deterministic: signed by fips204, verified by aws-lc-rs; and repeatable.
            let det = key
                .sign_with(b"msg", &[], SigningRandomness::Deterministic)
                .expect("sign");
            assert_eq!(
                det,
                key.sign_with(b"msg", &[], SigningRandomness::Deterministic)
                    .expect("sign")
            );
            backend::Backend::AwsLc
                .verify(alg, pk.as_bytes(), b"msg", &[], &det)
                .expect("aws-lc-rs");
            // Hedged signatures differ.
            assert_ne!(sig, key.sign(b"msg", &[]).expect("sign"));
        }
    }

    #[test]
    fn context_binds_the_signature() {
        let key = ML_DSA_65.generate().expect("key");
        let pk = key.verifying_key();
        let sig = key.sign(b"msg", b"ctx").expect("sign");
        pk.verify(b"msg", b"ctx", &sig).expect("same context");
        assert_eq!(pk.verify(b"msg", b"other", &sig), Err(Error::BadSignature));
        assert_eq!(pk.verify(b"msg", &[], &sig), Err(Error::BadSignature));
        assert_eq!(pk.verify(b"msh", b"ctx", &sig), Err(Error::BadSignature));
        let long = [0u8; MAX_CONTEXT_SIZE + 1];
        assert_eq!(key.sign(b"msg", &long), Err(Error::ContextTooLong(256)));
        assert!(key.sign(b"msg", &long[..MAX_CONTEXT_SIZE]).is_ok());
    }

    #[test]
    fn bad_lengths_are_errors() {
        let key = ML_DSA_44.generate().expect("key");
        let sig = key.sign(b"m", &[]).expect("sign");
        let pk = key.verifying_key();
        for n in [0, 1, sig.len() - 1, sig.len() + 1] {
            let mut s = sig.clone();
            s.resize(n, 0);
            assert_eq!(
                pk.verify(b"m", &[], &s),
                Err(Error::BadSignature),
                "len {n}"
            );
        }
        for n in [0, 31, 33] {
            assert!(matches!(
                ML_DSA_44.signing_key_from_seed(&vec![0; n]),
                Err(Error::InvalidLength { expected: 32, .. })
            ));
        }
        assert!(ML_DSA_44.verifying_key(&pk.as_bytes()[1..]).is_err());
    }

    #[test]
    fn debug_prints_no_key_material() {
        let key = ML_DSA_44.signing_key_from_seed(&[0xab; 32]).expect("key");
        let shown = format!("{key:?}");
        assert!(
            !shown.contains("ab, ab") && !shown.contains("171"),
            "{shown}"
        );
    }
}
