//! `bench crypto` rows for the stateful hash-based schemes of pqkit-hbs: key generation on one
//! thread and on every core (the whole tree: 2^h one-time keys per level on the current path),
//! signing with an in-memory signer over consecutive one-time keys (a fresh key, made outside
//! the timing, when one runs out — no one-time key is used twice, even here), verification.

use std::cell::RefCell;

use pqkit_hbs::hss::{HssSigner, Level};
use pqkit_hbs::preset::{PRESETS, Shape};
use pqkit_hbs::signer::Signer;
use pqkit_hbs::xmss::{XmssParams, XmssSigner};

use crate::crypto::{MESSAGE_SIZE, Row};
use crate::timing::{Budget, measure, measure_with};

/// The stateful schemes `bench crypto` runs when no `--alg` is given: the reference
/// manual's L2_H10_W2 and L3_H5_W8, and XMSS-SHA2_10_256.
pub const DEFAULT: [&str; 3] = ["L2_H10_W2", "L3_H5_W8", "XMSS-SHA2_10_256"];

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

/// The rows of `scheme`: keygen (1 thread and every core), sign, verify.
///
/// # Errors
/// A scheme's error, as text.
pub fn rows(scheme: &Scheme, budget: Budget) -> Result<Vec<Row>, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let name = scheme.name();
    let row = |operation, implementation: String, timing| Row {
        algorithm: name,
        kind: "stateful",
        operation,
        implementation,
        signing: None,
        timing,
        ratio_to_fastest_peer: None,
    };
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
    let key = RefCell::new((scheme.generate(cores)?, 0u64));
    let sign = measure_with(
        budget,
        || {
            let mut k = key.borrow_mut();
            if k.1 >= k.0.capacity() {
                *k = (scheme.generate(cores)?, 0);
            }
            Ok::<(), String>(())
        },
        |()| {
            let mut k = key.borrow_mut();
            let counter = k.1;
            k.1 += 1;
            k.0.sign(counter, &message).map(drop).map_err(e)
        },
    )?;
    out.push(row("sign", "pqkit-hbs (1 thread)".to_owned(), sign));
    let mut k = scheme.generate(cores)?;
    let signature = k.sign(0, &message).map_err(e)?;
    let public = k.public_key();
    out.push(row(
        "verify",
        "pqkit-hbs".to_owned(),
        measure(budget, || public.verify(&message, &signature).map_err(e))?,
    ));
    Ok(out)
}
