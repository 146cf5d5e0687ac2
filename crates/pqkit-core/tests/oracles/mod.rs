//! The ML-DSA implementations the vector suites run side by side: pqkit's own (pqkit-lattice,
//! through the catalogue), aws-lc-rs and fips204. The two oracles are dev-dependencies only:
//! production pqkit-core links neither for ML-DSA.

// Each test file uses a different part of this.
#![allow(dead_code)]

use aws_lc_rs::encoding::AsRawBytes;
use aws_lc_rs::signature as pq;
use aws_lc_rs::signature::{KeyPair, PqdsaKeyPair, UnparsedPublicKey};
use fips204::traits::{KeyGen, SerDes, Verifier};
use pqkit_core::Error;
use pqkit_core::sig::SignatureAlgorithm;
use pqkit_lattice::ml_dsa as lattice;
use zeroize::Zeroizing;

/// One ML-DSA implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// pqkit-lattice: pqkit's own, the catalogue's backend.
    Lattice,
    /// aws-lc-rs: key generation and verification with an empty context.
    AwsLc,
    /// fips204: everything FIPS 204 defines.
    Fips204,
}

/// Every ML-DSA backend.
pub(crate) const ALL: [Backend; 3] = [Backend::Lattice, Backend::AwsLc, Backend::Fips204];

#[derive(Clone, Copy)]
enum Level {
    L44,
    L65,
    L87,
}

fn level_of(alg: &'static SignatureAlgorithm) -> Level {
    match alg.name {
        "ML-DSA-44" => Level::L44,
        "ML-DSA-65" => Level::L65,
        "ML-DSA-87" => Level::L87,
        other => panic!("{other} is not an ML-DSA algorithm"),
    }
}

macro_rules! fips204_level {
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

fn aws_algorithms(
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

impl Backend {
    /// Name of the crate.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Lattice => "pqkit-lattice",
            Self::AwsLc => "aws-lc-rs",
            Self::Fips204 => "fips204",
        }
    }

    /// FIPS 204 Algorithm 6 (ML-DSA.KeyGen_internal): (pk, sk) from ξ (32 bytes).
    pub(crate) fn keygen(
        self,
        alg: &'static SignatureAlgorithm,
        seed: &[u8],
    ) -> Result<(Vec<u8>, Zeroizing<Vec<u8>>), Error> {
        let level = level_of(alg);
        let xi: [u8; 32] = seed
            .try_into()
            .map_err(|_| Error::Backend("ML-DSA seed length"))?;
        match self {
            Self::Lattice => {
                let params = match level {
                    Level::L44 => &lattice::ML_DSA_44,
                    Level::L65 => &lattice::ML_DSA_65,
                    Level::L87 => &lattice::ML_DSA_87,
                };
                let key = lattice::hazmat::key_gen_internal(params, &xi);
                Ok((
                    key.verifying_key().to_vec(),
                    Zeroizing::new(key.expanded().to_vec()),
                ))
            }
            Self::AwsLc => {
                let pair = PqdsaKeyPair::from_seed(aws_algorithms(level).0, &xi)
                    .map_err(|_| Error::Backend("aws-lc-rs"))?;
                let sk = pair
                    .private_key()
                    .as_raw_bytes()
                    .map_err(|_| Error::Backend("aws-lc-rs"))?;
                Ok((
                    pair.public_key().as_ref().to_vec(),
                    Zeroizing::new(sk.as_ref().to_vec()),
                ))
            }
            Self::Fips204 => Ok(fips204_level!(level, m => {
                let (pk, sk) = m::KG::keygen_from_seed(&xi);
                (pk.into_bytes().to_vec(), Zeroizing::new(sk.into_bytes().to_vec()))
            })),
        }
    }

    /// FIPS 204 Algorithm 3 (ML-DSA.Verify) with context `ctx`: [`Error::BadSignature`], or
    /// [`Error::Unsupported`] for aws-lc-rs with a non-empty context.
    pub(crate) fn verify(
        self,
        alg: &'static SignatureAlgorithm,
        pk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), Error> {
        let level = level_of(alg);
        match self {
            Self::Lattice => alg.verifying_key(pk)?.verify(msg, ctx, sig),
            Self::AwsLc if ctx.is_empty() => UnparsedPublicKey::new(aws_algorithms(level).1, pk)
                .verify(msg, sig)
                .map_err(|_| Error::BadSignature),
            Self::AwsLc => Err(Error::Unsupported(
                "aws-lc-rs ML-DSA takes no context string",
            )),
            Self::Fips204 => fips204_level!(level, m => {
                let pk: [u8; m::PK_LEN] = pk.try_into().map_err(|_| Error::BadSignature)?;
                let pk = m::PublicKey::try_from_bytes(pk).map_err(|_| Error::BadSignature)?;
                let sig: [u8; m::SIG_LEN] = sig.try_into().map_err(|_| Error::BadSignature)?;
                if pk.verify(msg, &sig, ctx) { Ok(()) } else { Err(Error::BadSignature) }
            }),
        }
    }
}
