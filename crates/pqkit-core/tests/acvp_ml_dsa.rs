//! NIST ACVP ML-DSA sigGen and sigVer (ACVP-Server v1.1.0.43, `acvp/ML-DSA-sigGen-FIPS204`,
//! `acvp/ML-DSA-sigGen-FIPS204-tr1` and `acvp/ML-DSA-sigVer-FIPS204` under the vectors
//! directory), in every mode the files hold:
//!
//! - signatureInterface `external` with preHash `pure` (ML-DSA.Sign, FIPS 204 Algorithm 2) and
//!   `preHash` (HashML-DSA, Algorithm 4, every `hashAlg`);
//! - signatureInterface `internal` (ML-DSA.Sign_internal, Algorithm 7, M′ = `message`) with
//!   `externalMu` false (μ computed from `message`) and true (`mu` signed directly);
//! - `deterministic` true (rnd = 0³²) and false (the given `rnd`, through
//!   `SigningRandomness::Fixed`);
//! - the `-tr1` file's `keyFormat` `seed` (ξ → `signing_key_from_seed`) and `expanded`
//!   (`sk` → `signing_key_from_expanded`).
//!
//! Every signature must equal the expected bytes, and verify. Each file runs once per hash path
//! pqkit-lattice runs on (portable, AVX2, AVX-512, as the CPU has). Each signature is also
//! reproduced through `sign_mu` with a μ computed here from an M′ formatted here, which checks
//! the library's M′ formatting (context prefix, hash OID, pre-hash digest) independently.

mod common;
mod oracles;

use std::collections::BTreeMap;

use common::{
    Case, acvp_cases, ctx_len, hex, hex_array, ml_dsa_mu, on_every_path, prehash_here, sig_alg,
};
use oracles::{self as backend, Backend};
use pqkit_core::Error;
use pqkit_core::prehash::PreHash;
use pqkit_core::sig::{MuHasher, SigningKey, SigningRandomness};

/// A short name for a group's mode, for the per-mode counts.
fn mode(c: &Case) -> String {
    let interface = c.opt("signatureInterface");
    let variant = match interface {
        "external" => c.opt("preHash").to_owned(),
        "internal" => format!("externalMu={}", c.group["externalMu"]),
        other => panic!("{}: unknown signatureInterface {other:?}", c.id()),
    };
    let det = match c.group["deterministic"].as_bool() {
        Some(true) => "deterministic",
        Some(false) => "hedged",
        None => "any",
    };
    let format = match c.opt("keyFormat") {
        "" => String::new(),
        f => format!("/keyFormat={f}"),
    };
    format!("{interface}/{variant}/{det}{format}")
}

/// The message, context and M′ parts of an external-interface case, as this file formats
/// them: pure M′ = 0 ‖ |ctx| ‖ ctx ‖ M; pre-hash M′ = 1 ‖ |ctx| ‖ ctx ‖ OID ‖ PH(M).
struct External {
    msg: Vec<u8>,
    ctx: Vec<u8>,
    /// `Some((hash, digest, oid))` for preHash groups.
    prehash: Option<(PreHash, Vec<u8>, [u8; 11])>,
}

impl External {
    fn new(c: &Case) -> Self {
        let msg = hex(&c.test["message"]);
        let ctx = hex(&c.test["context"]);
        let prehash = match c.opt("preHash") {
            "pure" => None,
            "preHash" => {
                let name = c.test["hashAlg"].as_str().expect("hashAlg");
                let hash = PreHash::from_name(name).expect("known hashAlg");
                let (oid, digest) = prehash_here(name, &msg);
                assert_eq!(hash.digest(&msg), digest, "{}: {name} digest", c.id());
                assert_eq!(hash.oid_der(), oid, "{}: {name} OID", c.id());
                Some((hash, digest, oid))
            }
            other => panic!("{}: unknown preHash {other:?}", c.id()),
        };
        Self { msg, ctx, prehash }
    }

    /// μ over M′ formatted here.
    fn mu(&self, pk: &[u8]) -> [u8; 64] {
        let len = [ctx_len(&self.ctx)];
        match &self.prehash {
            None => ml_dsa_mu(pk, &[&[0], &len, &self.ctx, &self.msg]),
            Some((_, digest, oid)) => ml_dsa_mu(pk, &[&[1], &len, &self.ctx, oid, digest]),
        }
    }
}

/// Runs one sigGen file; returns the number of cases per mode.
fn siggen(dir: &str) -> BTreeMap<String, usize> {
    let mut per_mode = BTreeMap::new();
    let mut aws_lc_verified = 0;
    for c in acvp_cases(dir) {
        let id = format!("{dir} {} ({})", c.id(), mode(&c));
        let alg = sig_alg(&c.group);
        let key: SigningKey = match (c.test.get("seed"), c.test.get("sk")) {
            (Some(seed), None) => {
                assert_eq!(c.opt("keyFormat"), "seed", "{id}");
                alg.signing_key_from_seed(&hex(seed)).expect("key from ξ")
            }
            (None, Some(sk)) => {
                assert!(matches!(c.opt("keyFormat"), "" | "expanded"), "{id}");
                alg.signing_key_from_expanded(&hex(sk))
                    .expect("key from expanded sk")
            }
            _ => panic!("{id}: expected exactly one of seed and sk"),
        };
        let vk = key.verifying_key();
        let pk = vk.as_bytes();
        let rnd = c.test.get("rnd").map(hex);
        let randomness = match (c.group["deterministic"].as_bool(), &rnd) {
            (Some(true), None) => SigningRandomness::Deterministic,
            (Some(false), Some(r)) => SigningRandomness::Fixed(r),
            _ => panic!("{id}: deterministic flag and rnd disagree"),
        };
        let want = hex(&c.expected["signature"]);

        let (sig, mu_here) = match c.opt("signatureInterface") {
            "external" => {
                let ext = External::new(&c);
                let sig = match &ext.prehash {
                    None => key.sign_with(&ext.msg, &ext.ctx, randomness),
                    Some((hash, digest, _)) => {
                        key.sign_prehashed(*hash, digest, &ext.ctx, randomness)
                    }
                }
                .unwrap_or_else(|e| panic!("{id}: sign: {e}"));
                match &ext.prehash {
                    None => {
                        vk.verify(&ext.msg, &ext.ctx, &sig)
                            .unwrap_or_else(|e| panic!("{id}: verify: {e}"));
                        assert_eq!(
                            vk.external_mu(&ext.msg, &ext.ctx).expect("external μ"),
                            ext.mu(pk),
                            "{id}: external_mu"
                        );
                        if ext.ctx.is_empty() {
                            Backend::AwsLc
                                .verify(alg, pk, &ext.msg, &ext.ctx, &sig)
                                .unwrap_or_else(|e| panic!("{id}: aws-lc-rs verify: {e}"));
                            aws_lc_verified += 1;
                        }
                    }
                    Some((hash, digest, _)) => vk
                        .verify_prehashed(*hash, digest, &ext.ctx, &sig)
                        .unwrap_or_else(|e| panic!("{id}: verify_prehashed: {e}")),
                }
                (sig, ext.mu(pk))
            }
            "internal" => {
                let mu: [u8; 64] = match c.group["externalMu"].as_bool() {
                    Some(true) => hex_array(&c.test["mu"]),
                    Some(false) => {
                        let msg = hex(&c.test["message"]);
                        let mut h = MuHasher::new(pk, &[]);
                        h.update(&msg);
                        let mu = h.finalize();
                        assert_eq!(mu, ml_dsa_mu(pk, &[&msg]), "{id}: MuHasher");
                        mu
                    }
                    None => panic!("{id}: internal group without externalMu"),
                };
                let sig = key
                    .sign_mu(&mu, randomness)
                    .unwrap_or_else(|e| panic!("{id}: sign_mu: {e}"));
                vk.verify_mu(&mu, &sig)
                    .unwrap_or_else(|e| panic!("{id}: verify_mu: {e}"));
                (sig, mu)
            }
            other => panic!("{id}: unknown signatureInterface {other:?}"),
        };
        assert_eq!(sig.len(), alg.signature_size, "{id}: length");
        assert!(
            sig == want,
            "{id}: signature differs from the expected bytes"
        );
        // The same signature from μ over the M′ formatted here (for internal groups this is
        // the path already taken).
        if c.opt("signatureInterface") == "external" {
            let again = key.sign_mu(&mu_here, randomness).expect("sign_mu");
            assert!(
                again == want,
                "{id}: sign_mu over M′ formatted here differs"
            );
        }
        *per_mode.entry(mode(&c)).or_insert(0) += 1;
    }
    let total: usize = per_mode.values().sum();
    eprintln!("{dir}: {total} signatures equal the expected bytes and verify");
    for (m, n) in &per_mode {
        eprintln!("  {m}: {n}");
    }
    eprintln!(
        "  ({aws_lc_verified} external/pure empty-context signatures also verified by aws-lc-rs)"
    );
    assert!(aws_lc_verified > 0, "aws-lc-rs must see some signatures");
    per_mode
}

#[test]
fn ml_dsa_siggen_fips204_every_mode() {
    let paths = on_every_path(|path| {
        eprintln!("on {path}:");
        let per_mode = siggen("ML-DSA-sigGen-FIPS204");
        // 2 interfaces × 2 variants × deterministic/hedged, 45 cases (15 per parameter set)
        // each.
        assert_eq!(per_mode.len(), 8, "{per_mode:?}");
        assert!(per_mode.values().all(|&n| n == 45), "{per_mode:?}");
        assert_eq!(per_mode.values().sum::<usize>(), 360);
    });
    eprintln!("on every hash path: {paths:?}");
}

#[test]
fn ml_dsa_siggen_fips204_tr1_every_mode_and_key_format() {
    let paths = on_every_path(|path| {
        eprintln!("on {path}:");
        let per_mode = siggen("ML-DSA-sigGen-FIPS204-tr1");
        // As above × keyFormat seed/expanded.
        assert_eq!(per_mode.len(), 16, "{per_mode:?}");
        assert!(per_mode.values().all(|&n| n == 45), "{per_mode:?}");
        assert_eq!(per_mode.values().sum::<usize>(), 720);
    });
    eprintln!("on every hash path: {paths:?}");
}

#[test]
fn ml_dsa_sigver_every_mode() {
    let paths = on_every_path(|path| {
        eprintln!("on {path}:");
        sigver();
    });
    eprintln!("on every hash path: {paths:?}");
}

/// Runs the sigVer file: valid signatures accepted, invalid ones refused, in every mode.
fn sigver() {
    let dir = "ML-DSA-sigVer-FIPS204";
    let mut per_mode: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut hashes = BTreeMap::new();
    let (mut backend_runs, mut aws_lc_runs) = (0, 0);
    for c in acvp_cases(dir) {
        let id = format!("{dir} {} ({})", c.id(), mode(&c));
        let alg = sig_alg(&c.group);
        let pk = hex(&c.test["pk"]);
        let sig = hex(&c.test["signature"]);
        let want = c.expected["testPassed"].as_bool().expect("testPassed");
        let result = match alg.verifying_key(&pk) {
            Err(e) => Err(e),
            Ok(vk) => match c.opt("signatureInterface") {
                "external" => {
                    let ext = External::new(&c);
                    match &ext.prehash {
                        None => {
                            // Every backend on its own, too (aws-lc-rs only without a context).
                            for b in backend::ALL {
                                match b.verify(alg, &pk, &ext.msg, &ext.ctx, &sig) {
                                    Err(Error::Unsupported(_)) => {
                                        assert!(b == Backend::AwsLc && !ext.ctx.is_empty(), "{id}")
                                    }
                                    r => {
                                        assert_eq!(r.is_ok(), want, "{id}: {} backend", b.name());
                                        backend_runs += 1;
                                        aws_lc_runs += usize::from(b == Backend::AwsLc);
                                    }
                                }
                            }
                            // And the key with Â and tr computed once.
                            let prepared = vk.clone().prepared();
                            assert!(prepared.is_prepared(), "{id}");
                            let r = prepared.verify(&ext.msg, &ext.ctx, &sig);
                            assert_eq!(r.is_ok(), want, "{id}: prepared key");
                            vk.verify(&ext.msg, &ext.ctx, &sig)
                        }
                        Some((hash, digest, _)) => {
                            *hashes.entry(hash.name()).or_insert(0) += 1;
                            vk.verify_prehashed(*hash, digest, &ext.ctx, &sig)
                        }
                    }
                    .and_then(|()| {
                        // A valid signature must also verify against μ over M′ formatted here.
                        vk.verify_mu(&ext.mu(&pk), &sig)
                    })
                }
                "internal" => {
                    let mu: [u8; 64] = match c.group["externalMu"].as_bool() {
                        Some(true) => hex_array(&c.test["mu"]),
                        Some(false) => {
                            let mut h = MuHasher::new(&pk, &[]);
                            h.update(&hex(&c.test["message"]));
                            h.finalize()
                        }
                        None => panic!("{id}: internal group without externalMu"),
                    };
                    vk.verify_mu(&mu, &sig)
                }
                other => panic!("{id}: unknown signatureInterface {other:?}"),
            },
        };
        match (want, &result) {
            (true, Ok(())) => {}
            (false, Err(Error::BadSignature | Error::InvalidLength { .. })) => {}
            _ => panic!("{id}: testPassed {want}, got {result:?}"),
        }
        let entry = per_mode.entry(mode(&c)).or_insert((0, 0));
        if want { entry.0 += 1 } else { entry.1 += 1 }
    }
    let total: usize = per_mode.values().map(|(a, r)| a + r).sum();
    eprintln!("{dir}: {total} cases (valid accepted, invalid rejected with BadSignature)");
    for (m, (a, r)) in &per_mode {
        eprintln!("  {m}: {a} valid, {r} invalid");
    }
    eprintln!("  preHash hash functions: {hashes:?}");
    eprintln!(
        "  external/pure cases also ran on each backend: {backend_runs} backend runs, \
         {aws_lc_runs} of them on aws-lc-rs (empty context)"
    );
    assert_eq!(total, 180);
    assert_eq!(per_mode.len(), 4, "{per_mode:?}");
    assert!(
        per_mode
            .values()
            .all(|&(a, r)| a + r == 45 && a > 0 && r > 0),
        "{per_mode:?}"
    );
    assert_eq!(hashes.len(), 12, "every pre-hash function: {hashes:?}");
    assert!(aws_lc_runs > 0);
}

/// Signed by pqkit-lattice, verified by every backend (hedged and deterministic).
#[test]
fn backends_verify_each_others_signatures() {
    common::hash_path_from_env();
    for alg in [
        &pqkit_core::ml_dsa::ML_DSA_44,
        &pqkit_core::ml_dsa::ML_DSA_65,
        &pqkit_core::ml_dsa::ML_DSA_87,
    ] {
        let key = alg.generate().expect("key");
        let pk = key.verifying_key();
        // Hedged, empty context: signed by pqkit-lattice, verified by every backend.
        let sig = key.sign(b"msg", &[]).expect("sign");
        assert_eq!(sig.len(), alg.signature_size);
        for b in backend::ALL {
            b.verify(alg, pk.as_bytes(), b"msg", &[], &sig)
                .unwrap_or_else(|e| panic!("{}: {e}", b.name()));
        }
        // Deterministic: verified by aws-lc-rs; and repeatable.
        let det = key
            .sign_with(b"msg", &[], SigningRandomness::Deterministic)
            .expect("sign");
        assert_eq!(
            det,
            key.sign_with(b"msg", &[], SigningRandomness::Deterministic)
                .expect("sign")
        );
        Backend::AwsLc
            .verify(alg, pk.as_bytes(), b"msg", &[], &det)
            .expect("aws-lc-rs");
        // Hedged signatures differ.
        assert_ne!(sig, key.sign(b"msg", &[]).expect("sign"));
    }
}
