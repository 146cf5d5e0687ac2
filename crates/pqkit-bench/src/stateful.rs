//! `bench crypto` rows for the stateful hash-based schemes of pqkit-hbs: key generation on one
//! thread and on every core (the whole tree: 2^h one-time keys per level on the current path),
//! signing with an in-memory signer over consecutive one-time keys (a fresh key, made outside
//! the timing, when one runs out — no one-time key is used twice, even here), verification.

use std::cell::RefCell;

use pqkit_hbs::hazmat::SignAt as _;
use pqkit_hbs::hss::{HssSigner, Level};
use pqkit_hbs::preset::{PRESETS, Shape};
use pqkit_hbs::signer::Signer;
use pqkit_hbs::tree::LmsTree;
use pqkit_hbs::xmss::{XmssParams, XmssSigner};

use crate::row::{MESSAGE_SIZE, Row};
use crate::timing::{Budget, measure, measure_with};

/// The stateful schemes `bench crypto` runs when no `--alg` is given: the reference
/// manual's L2_H10_W2 and L3_H5_W8, and XMSS-SHA2_10_256.
pub const DEFAULT: [&str; 3] = ["L2_H10_W2", "L3_H5_W8", "XMSS-SHA2_10_256"];

/// Every set the wolfSSL manual's LMS/HSS and XMSS benchmark tables print (`../shared/seeds`,
/// document 000): what `pqkit report` runs, so that its wolfSSL page compares them all.
pub const REFERENCE: [&str; 13] = [
    "L2_H10_W2",
    "L2_H10_W4",
    "L3_H5_W4",
    "L3_H5_W8",
    "L3_H10_W4",
    "L4_H5_W8",
    "XMSS-SHA2_10_256",
    "XMSSMT-SHA2_20/2_256",
    "XMSSMT-SHA2_20/4_256",
    "XMSSMT-SHA2_40/4_256",
    "XMSSMT-SHA2_40/8_256",
    "XMSSMT-SHA2_60/6_256",
    "XMSSMT-SHA2_60/12_256",
];

/// A stateful scheme by name: one of the manual's HSS presets or an XMSS / XMSS^MT set.
#[derive(Clone, Debug)]
pub enum Scheme {
    /// HSS: the preset's name and levels.
    Hss(&'static str, Vec<Level>),
    /// XMSS or XMSS^MT.
    Xmss(&'static XmssParams),
}

impl Scheme {
    /// Parses a preset of [`pqkit_hbs::preset::PRESETS`] ("L2_H10_W4") or an XMSS / XMSS^MT
    /// set name ("XMSS-SHA2_10_256", "XMSSMT-SHA2_20/2_256"); `None` for anything else.
    pub fn parse(name: &str) -> Option<Self> {
        if let Ok(p) = pqkit_hbs::xmss::by_name(name) {
            return Some(Self::Xmss(p));
        }
        let preset = PRESETS
            .iter()
            .find(|p| p.eq_ignore_ascii_case(name.trim()))?;
        Shape::parse(preset)
            .ok()
            .map(|s| Self::Hss(preset, s.levels()))
    }

    /// The row name: the preset ("L2_H10_W4", HSS) or the set name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Hss(name, _) => name,
            Self::Xmss(p) => p.name,
        }
    }

    fn generate(&self, threads: usize) -> Result<Signer, String> {
        let e = |e: pqkit_hbs::Error| e.to_string();
        Ok(match self {
            Self::Hss(_, levels) => {
                let m = levels.first().map_or(32, |(l, _)| l.m);
                Signer::Hss(
                    HssSigner::generate(levels, [0x5a; 16], &vec![0xa5; m], threads).map_err(e)?,
                )
            }
            Self::Xmss(p) => {
                let s = vec![0x5a; p.n];
                Signer::Xmss(XmssSigner::generate(p, &s, &s, &s, threads).map_err(e)?)
            }
        })
    }
}

/// A `bench crypto` row of a stateful scheme.
fn row(
    algorithm: &'static str,
    operation: &'static str,
    implementation: String,
    timing: crate::timing::Timing,
) -> Row {
    Row {
        algorithm,
        kind: "stateful",
        operation,
        implementation,
        signing: None,
        timing,
        hash_path: None,
        limit_ns: None,
        ratio_to_fastest_peer: None,
    }
}

/// Times signing over consecutive one-time keys of a key from `fresh` (made on every core,
/// outside the timing), taking a fresh key when `capacity` says one runs out: no one-time
/// key is used twice, even here.
fn measure_signing<K>(
    budget: Budget,
    fresh: impl Fn() -> Result<K, String>,
    capacity: impl Fn(&K) -> u64,
    sign: impl Fn(&mut K, u64) -> Result<(), String>,
) -> Result<crate::timing::Timing, String> {
    let key = RefCell::new((fresh()?, 0u64));
    measure_with(
        budget,
        || {
            let mut k = key.borrow_mut();
            if k.1 >= capacity(&k.0) {
                *k = (fresh()?, 0);
            }
            Ok::<(), String>(())
        },
        |()| {
            let mut k = key.borrow_mut();
            let counter = k.1;
            k.1 += 1;
            sign(&mut k.0, counter)
        },
    )
}

/// The rows of `scheme`: keygen (1 thread and every core), sign, verify.
///
/// # Errors
/// A scheme's error, as text.
pub fn rows(scheme: &Scheme, budget: Budget) -> Result<Vec<Row>, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let row =
        |operation, implementation, timing| row(scheme.name(), operation, implementation, timing);
    let e = |e: pqkit_hbs::Error| e.to_string();
    let mut out = Vec::new();
    for threads in [1, cores] {
        let t = measure(budget, || scheme.generate(threads).map(drop))?;
        out.push(row(
            "keygen",
            format!(
                "pqkit-hbs ({threads} thread{})",
                if threads == 1 { "" } else { "s" }
            ),
            t,
        ));
        if cores == 1 {
            break;
        }
    }
    let message = [0x5au8; MESSAGE_SIZE];
    let sign = measure_signing(
        budget,
        || scheme.generate(cores),
        Signer::capacity,
        |k, counter| k.sign_at(counter, &message).map(drop).map_err(e),
    )?;
    out.push(row("sign", "pqkit-hbs (1 thread)".to_owned(), sign));
    let mut k = scheme.generate(cores)?;
    let signature = k.sign_at(0, &message).map_err(e)?;
    let public = k.public_key();
    out.push(row(
        "verify",
        "pqkit-hbs".to_owned(),
        measure(budget, || public.verify(&message, &signature).map_err(e))?,
    ));
    Ok(out)
}

/// How many signatures of one tree both pqkit and the peer verify, in turn: the work of an
/// LM-OTS verification depends on the signed digits (RFC 8554 Algorithm 4b runs chain i from
/// a_i to 2^w − 1: the bench tree's LMS_SHA256_M32_H10/W2 signatures q = 0…23 take 249–315
/// SHA-256 compressions), so a ratio of two verifications of different signatures compares
/// different work.
pub const VERIFY_SET: u32 = 16;

/// One LMS tree of an HSS preset's bottom-level shape (fixed I and SEED), its public key
/// (RFC 8554 §5.3 encoding) and [`VERIFY_SET`] signatures of a message (one-time keys
/// q = 0, 1, …): what pqkit and RustCrypto `lms-signature` both verify.
pub struct OneTree {
    name: &'static str,
    lms: &'static pqkit_hbs::params::LmsParams,
    ots: &'static pqkit_hbs::params::OtsParams,
    /// The public key, encoded.
    pub public: Vec<u8>,
    /// The signatures, encoded (u32str(q) ‖ LM-OTS signature ‖ LMS type ‖ path).
    pub signatures: Vec<Vec<u8>>,
}

impl OneTree {
    /// The tree of `scheme`'s bottom level, generated on every core, and its signatures of
    /// `message`; `None` for XMSS.
    pub fn of(scheme: &Scheme, message: &[u8]) -> Option<Self> {
        let Scheme::Hss(name, levels) = scheme else {
            return None;
        };
        let &(lms, ots) = levels.last()?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut t = Self::tree(lms, ots, cores);
        Some(Self {
            name,
            lms,
            ots,
            public: t.public_key().to_bytes(),
            signatures: (0..VERIFY_SET).map(|q| t.sign_at(q, message)).collect(),
        })
    }

    fn tree(
        lms: &'static pqkit_hbs::params::LmsParams,
        ots: &'static pqkit_hbs::params::OtsParams,
        threads: usize,
    ) -> LmsTree {
        LmsTree::generate(lms, ots, [0x5a; 16], &vec![0xa5; lms.m], threads)
    }
}

/// pqkit's rows for what RustCrypto `lms-signature` measures beside an HSS preset: one LMS
/// tree of the preset's bottom-level shape — keygen on one thread, sign, and verify of the
/// [`OneTree`] signatures in turn — so that the ratio compares the same work. (An HSS signature
/// also pays, paced, for a leaf of each lower level's next tree and verifies L LMS
/// signatures.)
///
/// # Errors
/// A scheme's error, as text.
pub fn one_tree_rows(one: &OneTree, budget: Budget, message: &[u8]) -> Result<Vec<Row>, String> {
    let (name, lms, ots) = (one.name, one.lms, one.ots);
    let label = format!("one {}/W{} tree", lms.name, ots.w);
    let row = |operation, implementation, timing| row(name, operation, implementation, timing);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let keygen = measure(budget, || {
        drop(OneTree::tree(lms, ots, 1));
        Ok::<(), String>(())
    })?;
    let sign = measure_signing(
        budget,
        || Ok(OneTree::tree(lms, ots, cores)),
        |_| lms.leaves(),
        |t, q| {
            let q = u32::try_from(q).map_err(|e| e.to_string())?;
            t.sign_at(q, message);
            Ok(())
        },
    )?;
    let (public, _) =
        pqkit_hbs::lms::LmsPublicKey::parse(&one.public).map_err(|e| e.to_string())?;
    let mut turn = one.signatures.iter().cycle();
    let verify = measure(budget, || {
        let signature = turn.next().ok_or("no signatures")?;
        public.verify(message, signature).map_err(|e| e.to_string())
    })?;
    Ok(vec![
        row("keygen", format!("pqkit-hbs ({label}, 1 thread)"), keygen),
        row("sign", format!("pqkit-hbs ({label})"), sign),
        row("verify", format!("pqkit-hbs ({label})"), verify),
    ])
}
