//! The peers of `bench crypto` (cargo feature `peers`): the same operations on the same
//! message through liboqs 0.13 (crate `oqs`, built from source: needs cmake and libclang —
//! `apt-get install cmake libclang-dev`), libcrux-ml-kem / libcrux-ml-dsa (AVX2 where the CPU
//! has it), RustCrypto `ml-kem` 0.3, `ml-dsa` 0.1 and `slh-dsa` 0.2, and PQClean's SPHINCS+
//! round 3 (`pqcrypto-sphincsplus` 0.7: AVX2 8-way SHA-256 and 4-way Keccak where the CPU has
//! AVX2).
//!
//! liboqs 0.13 has SPHINCS+ round 3 ("simple"), not FIPS 205 SLH-DSA: the same parameters and
//! the same number of hash calls, a slightly different message hashing; its rows are labelled
//! so. RustCrypto `ml-dsa` signs deterministically through its `Signer` (the row says so);
//! every other peer signs hedged when pqkit does, with fresh randomness per call from the OS.
//! Stateful schemes: RustCrypto `lms-signature` (single LMS trees — it has no HSS — so each
//! HSS preset is compared with one tree of its level's shape) and RustCrypto `xmss`.

use std::hint::black_box;

use rand_core::{OsRng, RngCore};

use crate::row::Row;
use crate::stateful::OneTree;
use crate::timing::{Budget, Timing, measure};

const LIBOQS: &str = "liboqs 0.13";
const LIBCRUX: &str = "libcrux";
const RUSTCRYPTO: &str = "RustCrypto";

fn random<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    OsRng.fill_bytes(&mut out);
    out
}

fn random_vec(n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    OsRng.fill_bytes(&mut out);
    out
}

/// What the peer rows of one algorithm share.
struct Peer {
    algorithm: &'static str,
    kind: &'static str,
    implementation: String,
    budget: Budget,
    signing: &'static str,
    /// For stateful peers: log2 of the signatures one key makes.
    capacity_bits: u8,
}

impl Peer {
    fn row(&self, operation: &'static str, timing: Timing) -> Row {
        Row {
            algorithm: self.algorithm,
            kind: self.kind,
            operation,
            implementation: self.implementation.clone(),
            signing: (operation == "sign" && !self.signing.is_empty()).then_some(self.signing),
            timing,
            hash_path: None,
            limit_ns: None,
            ratio_to_fastest_peer: None,
        }
    }

    /// Times the three operations (keygen, then sign/encapsulate, then verify/decapsulate).
    fn three(
        &self,
        names: [&'static str; 3],
        mut first: impl FnMut() -> Result<(), String>,
        mut second: impl FnMut() -> Result<(), String>,
        mut third: impl FnMut() -> Result<(), String>,
    ) -> Result<Vec<Row>, String> {
        Ok(vec![
            self.row(names[0], measure(self.budget, &mut first)?),
            self.row(names[1], measure(self.budget, &mut second)?),
            self.row(names[2], measure(self.budget, &mut third)?),
        ])
    }
}

const SIG_OPS: [&str; 3] = ["keygen", "sign", "verify"];
const KEM_OPS: [&str; 3] = ["keygen", "encapsulate", "decapsulate"];

fn e(err: impl std::fmt::Debug) -> String {
    format!("{err:?}")
}

fn liboqs_sig(name: &str) -> Option<(oqs::sig::Algorithm, &'static str)> {
    use oqs::sig::Algorithm as A;
    let round3 = " (SPHINCS+ round 3)";
    Some(match name {
        "ML-DSA-44" => (A::MlDsa44, ""),
        "ML-DSA-65" => (A::MlDsa65, ""),
        "ML-DSA-87" => (A::MlDsa87, ""),
        "Falcon-512" => (A::Falcon512, ""),
        "Falcon-1024" => (A::Falcon1024, ""),
        "SLH-DSA-SHA2-128s" => (A::SphincsSha2128sSimple, round3),
        "SLH-DSA-SHA2-128f" => (A::SphincsSha2128fSimple, round3),
        "SLH-DSA-SHA2-192s" => (A::SphincsSha2192sSimple, round3),
        "SLH-DSA-SHA2-192f" => (A::SphincsSha2192fSimple, round3),
        "SLH-DSA-SHA2-256s" => (A::SphincsSha2256sSimple, round3),
        "SLH-DSA-SHA2-256f" => (A::SphincsSha2256fSimple, round3),
        "SLH-DSA-SHAKE-128s" => (A::SphincsShake128sSimple, round3),
        "SLH-DSA-SHAKE-128f" => (A::SphincsShake128fSimple, round3),
        "SLH-DSA-SHAKE-192s" => (A::SphincsShake192sSimple, round3),
        "SLH-DSA-SHAKE-192f" => (A::SphincsShake192fSimple, round3),
        "SLH-DSA-SHAKE-256s" => (A::SphincsShake256sSimple, round3),
        "SLH-DSA-SHAKE-256f" => (A::SphincsShake256fSimple, round3),
        _ => return None,
    })
}

fn liboqs_signature(
    p: &Peer,
    alg: oqs::sig::Algorithm,
    message: &[u8],
) -> Result<Vec<Row>, String> {
    oqs::init();
    let sig = oqs::sig::Sig::new(alg).map_err(e)?;
    let (pk, sk) = sig.keypair().map_err(e)?;
    let signature = sig.sign(message, &sk).map_err(e)?;
    p.three(
        SIG_OPS,
        || sig.keypair().map(drop).map_err(e),
        || sig.sign(message, &sk).map(drop).map_err(e),
        || sig.verify(message, &signature, &pk).map_err(e),
    )
}

fn liboqs_kem(p: &Peer, alg: oqs::kem::Algorithm) -> Result<Vec<Row>, String> {
    oqs::init();
    let kem = oqs::kem::Kem::new(alg).map_err(e)?;
    let (pk, sk) = kem.keypair().map_err(e)?;
    let (ct, _) = kem.encapsulate(&pk).map_err(e)?;
    p.three(
        KEM_OPS,
        || kem.keypair().map(drop).map_err(e),
        || kem.encapsulate(&pk).map(drop).map_err(e),
        || kem.decapsulate(&sk, &ct).map(drop).map_err(e),
    )
}

macro_rules! libcrux_ml_dsa {
    ($p:expr, $m:ident, $message:expr) => {{
        use libcrux_ml_dsa::$m as m;
        let message: &[u8] = $message;
        let keys = m::generate_key_pair(random());
        let signature = m::sign(&keys.signing_key, message, &[], random()).map_err(e)?;
        $p.three(
            SIG_OPS,
            || {
                black_box(m::generate_key_pair(random()));
                Ok(())
            },
            || {
                m::sign(&keys.signing_key, message, &[], random())
                    .map(drop)
                    .map_err(e)
            },
            || m::verify(&keys.verification_key, message, &[], &signature).map_err(e),
        )
    }};
}

macro_rules! libcrux_ml_kem {
    ($p:expr, $m:ident) => {{
        use libcrux_ml_kem::$m as m;
        let keys = m::generate_key_pair(random());
        let (ct, _) = m::encapsulate(keys.public_key(), random());
        $p.three(
            KEM_OPS,
            || {
                black_box(m::generate_key_pair(random()));
                Ok(())
            },
            || {
                black_box(m::encapsulate(keys.public_key(), random()));
                Ok(())
            },
            || {
                black_box(m::decapsulate(keys.private_key(), &ct));
                Ok(())
            },
        )
    }};
}

macro_rules! rustcrypto_ml_kem {
    ($p:expr, $t:ty) => {{
        use ml_kem::kem::{Decapsulate, Encapsulate, Kem};
        let (dk, ek) = <$t>::generate_keypair();
        let (ct, _) = ek.encapsulate();
        $p.three(
            KEM_OPS,
            || {
                black_box(<$t>::generate_keypair());
                Ok(())
            },
            || {
                black_box(ek.encapsulate());
                Ok(())
            },
            || {
                black_box(dk.decapsulate(&ct));
                Ok(())
            },
        )
    }};
}

macro_rules! rustcrypto_ml_dsa {
    ($p:expr, $t:ty, $message:expr) => {{
        use ml_dsa::{Generate, Keypair, Signer, SigningKey, Verifier};
        let message: &[u8] = $message;
        let sk = SigningKey::<$t>::generate();
        let vk = sk.verifying_key();
        let signature = sk.try_sign(message).map_err(e)?;
        $p.three(
            SIG_OPS,
            || {
                black_box(SigningKey::<$t>::generate());
                Ok(())
            },
            || sk.try_sign(message).map(drop).map_err(e),
            || vk.verify(message, &signature).map_err(e),
        )
    }};
}

macro_rules! rustcrypto_slh_dsa {
    ($p:expr, $t:ty, $n:expr, $message:expr, $hedged:expr) => {{
        use rustcrypto_slh_dsa::SigningKey;
        use rustcrypto_slh_dsa::signature::Keypair as _;
        let message: &[u8] = $message;
        let keygen = || {
            SigningKey::<$t>::slh_keygen_internal(&random_vec($n), &random_vec($n), &random_vec($n))
        };
        let sk = keygen();
        let vk = sk.verifying_key();
        let sign = || {
            let rnd = random_vec($n);
            sk.try_sign_with_context(message, &[], $hedged.then_some(&rnd[..]))
        };
        let signature = sign().map_err(e)?;
        $p.three(
            SIG_OPS,
            || {
                black_box(keygen());
                Ok(())
            },
            || sign().map(drop).map_err(e),
            || {
                vk.try_verify_with_context(message, &[], &signature)
                    .map_err(e)
            },
        )
    }};
}

/// PQClean SPHINCS+ round 3 "simple" through `pqcrypto-sphincsplus` (its AVX2 code when the
/// CPU has AVX2): keygen, sign (randomized, as round 3 signs), verify.
macro_rules! pqclean_sphincs {
    ($p:expr, $m:ident, $message:expr) => {{
        use pqcrypto_sphincsplus::$m as s;
        let message: &[u8] = $message;
        let (pk, sk) = s::keypair();
        let signature = s::detached_sign(message, &sk);
        $p.three(
            SIG_OPS,
            || {
                black_box(s::keypair());
                Ok(())
            },
            || {
                black_box(s::detached_sign(message, &sk));
                Ok(())
            },
            || s::verify_detached_signature(&signature, message, &pk).map_err(e),
        )
    }};
}

/// The PQClean peer's name, with the code it runs on this CPU.
fn pqclean() -> String {
    let avx2 = cfg!(target_arch = "x86_64") && std::arch::is_x86_feature_detected!("avx2");
    format!(
        "PQClean sphincs+ round 3 ({})",
        if avx2 { "AVX2" } else { "clean" }
    )
}

/// The peer rows for `algorithm` (canonical name), of kind `kind` ("signature", "KEM" or
/// "group": groups have no peers), signing `message` (hedged unless `deterministic`).
///
/// # Errors
/// A peer's failure, as text.
pub fn rows(
    algorithm: &'static str,
    kind: &'static str,
    budget: Budget,
    message: &[u8],
    deterministic: bool,
) -> Result<Vec<Row>, String> {
    let signing = if deterministic {
        "deterministic"
    } else {
        "hedged"
    };
    let peer = |implementation: String, signing: &'static str| Peer {
        algorithm,
        kind,
        implementation,
        budget,
        signing,
        capacity_bits: 0,
    };
    let hedged = !deterministic;
    let mut out = Vec::new();
    if kind == "signature" {
        if let Some((alg, note)) = liboqs_sig(algorithm) {
            // liboqs ML-DSA and Falcon always sign hedged; SPHINCS+ "simple" randomized.
            let p = peer(format!("{LIBOQS}{note}"), "hedged");
            out.extend(liboqs_signature(&p, alg, message)?);
        }
        let crux = peer(format!("{LIBCRUX}-ml-dsa"), "hedged");
        let rc = peer(format!("{RUSTCRYPTO} ml-dsa"), "deterministic");
        let slh = peer(format!("{RUSTCRYPTO} slh-dsa 0.2"), signing);
        let pq = peer(pqclean(), "hedged");
        match algorithm {
            "SLH-DSA-SHA2-128s" => {
                out.extend(pqclean_sphincs!(pq, sphincssha2128ssimple, message)?)
            }
            "SLH-DSA-SHA2-128f" => {
                out.extend(pqclean_sphincs!(pq, sphincssha2128fsimple, message)?)
            }
            "SLH-DSA-SHA2-192s" => {
                out.extend(pqclean_sphincs!(pq, sphincssha2192ssimple, message)?)
            }
            "SLH-DSA-SHA2-192f" => {
                out.extend(pqclean_sphincs!(pq, sphincssha2192fsimple, message)?)
            }
            "SLH-DSA-SHA2-256s" => {
                out.extend(pqclean_sphincs!(pq, sphincssha2256ssimple, message)?)
            }
            "SLH-DSA-SHA2-256f" => {
                out.extend(pqclean_sphincs!(pq, sphincssha2256fsimple, message)?)
            }
            "SLH-DSA-SHAKE-128s" => {
                out.extend(pqclean_sphincs!(pq, sphincsshake128ssimple, message)?)
            }
            "SLH-DSA-SHAKE-128f" => {
                out.extend(pqclean_sphincs!(pq, sphincsshake128fsimple, message)?)
            }
            "SLH-DSA-SHAKE-192s" => {
                out.extend(pqclean_sphincs!(pq, sphincsshake192ssimple, message)?)
            }
            "SLH-DSA-SHAKE-192f" => {
                out.extend(pqclean_sphincs!(pq, sphincsshake192fsimple, message)?)
            }
            "SLH-DSA-SHAKE-256s" => {
                out.extend(pqclean_sphincs!(pq, sphincsshake256ssimple, message)?)
            }
            "SLH-DSA-SHAKE-256f" => {
                out.extend(pqclean_sphincs!(pq, sphincsshake256fsimple, message)?)
            }
            _ => {}
        }
        use rustcrypto_slh_dsa as s;
        match algorithm {
            "ML-DSA-44" => {
                out.extend(libcrux_ml_dsa!(crux, ml_dsa_44, message)?);
                out.extend(rustcrypto_ml_dsa!(rc, ml_dsa::MlDsa44, message)?);
            }
            "ML-DSA-65" => {
                out.extend(libcrux_ml_dsa!(crux, ml_dsa_65, message)?);
                out.extend(rustcrypto_ml_dsa!(rc, ml_dsa::MlDsa65, message)?);
            }
            "ML-DSA-87" => {
                out.extend(libcrux_ml_dsa!(crux, ml_dsa_87, message)?);
                out.extend(rustcrypto_ml_dsa!(rc, ml_dsa::MlDsa87, message)?);
            }
            "SLH-DSA-SHA2-128s" => {
                out.extend(rustcrypto_slh_dsa!(slh, s::Sha2_128s, 16, message, hedged)?)
            }
            "SLH-DSA-SHA2-128f" => {
                out.extend(rustcrypto_slh_dsa!(slh, s::Sha2_128f, 16, message, hedged)?)
            }
            "SLH-DSA-SHA2-192s" => {
                out.extend(rustcrypto_slh_dsa!(slh, s::Sha2_192s, 24, message, hedged)?)
            }
            "SLH-DSA-SHA2-192f" => {
                out.extend(rustcrypto_slh_dsa!(slh, s::Sha2_192f, 24, message, hedged)?)
            }
            "SLH-DSA-SHA2-256s" => {
                out.extend(rustcrypto_slh_dsa!(slh, s::Sha2_256s, 32, message, hedged)?)
            }
            "SLH-DSA-SHA2-256f" => {
                out.extend(rustcrypto_slh_dsa!(slh, s::Sha2_256f, 32, message, hedged)?)
            }
            "SLH-DSA-SHAKE-128s" => {
                out.extend(rustcrypto_slh_dsa!(slh, s::Shake128s, 16, message, hedged)?)
            }
            "SLH-DSA-SHAKE-128f" => {
                out.extend(rustcrypto_slh_dsa!(slh, s::Shake128f, 16, message, hedged)?)
            }
            "SLH-DSA-SHAKE-192s" => {
                out.extend(rustcrypto_slh_dsa!(slh, s::Shake192s, 24, message, hedged)?)
            }
            "SLH-DSA-SHAKE-192f" => {
                out.extend(rustcrypto_slh_dsa!(slh, s::Shake192f, 24, message, hedged)?)
            }
            "SLH-DSA-SHAKE-256s" => {
                out.extend(rustcrypto_slh_dsa!(slh, s::Shake256s, 32, message, hedged)?)
            }
            "SLH-DSA-SHAKE-256f" => {
                out.extend(rustcrypto_slh_dsa!(slh, s::Shake256f, 32, message, hedged)?)
            }
            _ => {}
        }
    } else if kind == "KEM" {
        use oqs::kem::Algorithm as A;
        let oqs = peer(LIBOQS.to_owned(), signing);
        // pqkit's ML-KEM backend until pqkit-lattice replaced it; now its test oracle.
        let crux = peer(format!("{LIBCRUX}-ml-kem"), signing);
        let rc = peer(format!("{RUSTCRYPTO} ml-kem"), signing);
        match algorithm {
            "ML-KEM-512" => {
                out.extend(liboqs_kem(&oqs, A::MlKem512)?);
                out.extend(libcrux_ml_kem!(crux, mlkem512)?);
                out.extend(rustcrypto_ml_kem!(rc, ml_kem::MlKem512)?);
            }
            "ML-KEM-768" => {
                out.extend(liboqs_kem(&oqs, A::MlKem768)?);
                out.extend(libcrux_ml_kem!(crux, mlkem768)?);
                out.extend(rustcrypto_ml_kem!(rc, ml_kem::MlKem768)?);
            }
            "ML-KEM-1024" => {
                out.extend(liboqs_kem(&oqs, A::MlKem1024)?);
                out.extend(libcrux_ml_kem!(crux, mlkem1024)?);
                out.extend(rustcrypto_ml_kem!(rc, ml_kem::MlKem1024)?);
            }
            _ => {}
        }
    }
    Ok(out)
}

// ------------------------------------------------------------------------ stateful schemes

/// RustCrypto lms-signature: one LMS tree with the shape of each HSS level (it has no HSS),
/// keygen (whole tree, one thread), sign (consecutive q; a fresh key, outside the timing, when
/// one runs out), verify of pqkit's [`OneTree`] signatures in turn (the same signatures pqkit
/// verifies; decoded outside the timing), or of one of its own without them.
fn lms_tree<M: lms_signature::lms::LmsMode>(
    p: &Peer,
    message: &[u8],
    one: Option<&OneTree>,
) -> Result<Vec<Row>, String> {
    use lms_signature::lms::{Signature, SigningKey, VerifyingKey};
    use signature3::{RandomizedSignerMut, Verifier};
    let fresh = || SigningKey::<M>::new_from_seed(random::<16>(), random_vec(M::M)).map_err(e);
    let key = std::cell::RefCell::new(fresh()?);
    let leaves = 1u64 << M::H;
    let mut keygen = || fresh().map(drop);
    let keygen = measure(p.budget, &mut keygen)?;
    let sign = crate::timing::measure_with(
        p.budget,
        || {
            if u64::from(key.borrow().q()) >= leaves {
                *key.borrow_mut() = fresh()?;
            }
            Ok::<(), String>(())
        },
        |()| {
            key.borrow_mut()
                .try_sign_with_rng(&mut getrandom04::SysRng, message)
                .map(drop)
                .map_err(e)
        },
    )?;
    let (public, signatures) = match one {
        Some(one) => (
            VerifyingKey::<M>::try_from(&one.public[..]).map_err(e)?,
            one.signatures
                .iter()
                .map(|s| Signature::<M>::try_from(&s[..]).map_err(e))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        None => {
            let mut k = fresh()?;
            let signature = k
                .try_sign_with_rng(&mut getrandom04::SysRng, message)
                .map_err(e)?;
            (k.public(), vec![signature])
        }
    };
    let mut turn = signatures.iter().cycle();
    let verify = measure(p.budget, || {
        let signature = turn.next().ok_or("no signatures")?;
        public.verify(message, signature).map_err(e)
    })?;
    Ok(vec![
        p.row("keygen", keygen),
        p.row("sign", sign),
        p.row("verify", verify),
    ])
}

/// RustCrypto xmss: keygen from a seed, sign (detached; a fresh key when one runs out),
/// verify.
fn xmss_key<P: rustcrypto_xmss::XmssParameter>(
    p: &Peer,
    message: &[u8],
) -> Result<Vec<Row>, String> {
    use rustcrypto_xmss::KeyPair;
    let fresh = || KeyPair::<P>::from_seed(&random_vec(P::SEED_LEN)).map_err(e);
    let keygen = measure(p.budget, || fresh().map(drop))?;
    let pair = std::cell::RefCell::new((fresh()?, 0u64));
    let capacity = 1u64 << p.capacity_bits;
    let sign = crate::timing::measure_with(
        p.budget,
        || {
            if pair.borrow().1 >= capacity {
                *pair.borrow_mut() = (fresh()?, 0);
            }
            Ok::<(), String>(())
        },
        |()| {
            let mut kp = pair.borrow_mut();
            kp.1 += 1;
            kp.0.signing_key()
                .sign_detached(message)
                .map(drop)
                .map_err(e)
        },
    )?;
    let mut kp = fresh()?;
    let signature = kp.signing_key().sign_detached(message).map_err(e)?;
    let verify = measure(p.budget, || {
        kp.verifying_key()
            .verify_detached(&signature, message)
            .map_err(e)
    })?;
    Ok(vec![
        p.row("keygen", keygen),
        p.row("sign", sign),
        p.row("verify", verify),
    ])
}

/// The peer rows for a stateful scheme of `bench crypto` (named as pqkit-hbs names it); an LMS
/// peer verifies `one`'s signatures when given.
///
/// # Errors
/// A peer's failure, as text.
pub fn stateful_rows(
    algorithm: &'static str,
    budget: Budget,
    message: &[u8],
    one: Option<&OneTree>,
) -> Result<Vec<Row>, String> {
    // lms-signature 0.1.0-rc.2 has no H15 trees (hybrid-array sizes): the L1_H15 presets have
    // no peer.
    use lms_signature::lms::{LmsSha256M32H5, LmsSha256M32H10};
    use lms_signature::ots::{LmsOtsSha256N32W2, LmsOtsSha256N32W4, LmsOtsSha256N32W8};
    let peer = |implementation: &str, capacity_bits| Peer {
        algorithm,
        kind: "stateful",
        implementation: implementation.to_owned(),
        budget,
        signing: "",
        capacity_bits,
    };
    let lms = |h: u8, w: u8| {
        peer(
            &format!("{RUSTCRYPTO} lms-signature (one LMS_SHA256_M32_H{h}/W{w} tree)"),
            h,
        )
    };
    let xmss = peer(&format!("{RUSTCRYPTO} xmss 0.1.0-pre.0"), 10);
    match algorithm {
        "L2_H10_W2" => lms_tree::<LmsSha256M32H10<LmsOtsSha256N32W2>>(&lms(10, 2), message, one),
        "L2_H10_W4" | "L3_H10_W4" => {
            lms_tree::<LmsSha256M32H10<LmsOtsSha256N32W4>>(&lms(10, 4), message, one)
        }
        "L2_H10_W8" => lms_tree::<LmsSha256M32H10<LmsOtsSha256N32W8>>(&lms(10, 8), message, one),
        "L3_H5_W2" => lms_tree::<LmsSha256M32H5<LmsOtsSha256N32W2>>(&lms(5, 2), message, one),
        "L3_H5_W4" => lms_tree::<LmsSha256M32H5<LmsOtsSha256N32W4>>(&lms(5, 4), message, one),
        "L3_H5_W8" | "L4_H5_W8" => {
            lms_tree::<LmsSha256M32H5<LmsOtsSha256N32W8>>(&lms(5, 8), message, one)
        }
        "XMSS-SHA2_10_256" => xmss_key::<rustcrypto_xmss::XmssSha2_10_256>(&xmss, message),
        "XMSS-SHA2_10_192" => xmss_key::<rustcrypto_xmss::XmssSha2_10_192>(&xmss, message),
        _ => Ok(Vec::new()),
    }
}
