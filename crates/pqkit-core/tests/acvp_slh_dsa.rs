//! NIST ACVP SLH-DSA (FIPS 205) vectors, read from the vectors directory:
//!
//! - `acvp/SLH-DSA-keyGen-FIPS205` (v1.1.0.43): all 120 cases, 12 parameter sets; sk and pk
//!   compared byte for byte.
//! - `acvp-legacy/v1.1.0.35/SLH-DSA-sigVer-FIPS205` (internalProjection + expectedResults): the
//!   45 sigVer cases (internal interface, M′ = `message`), and its 15 valid cases re-signed as
//!   sigGen known answers (`slh_sign_internal(message, sk, additionalRandomness)` must equal
//!   `signature` exactly).
//! - `acvp/SLH-DSA-sigGen-FIPS205/prompt.json.gz` (v1.1.0.43): external/pure, external/preHash
//!   (every hashAlg) and internal groups, deterministic and not. The expected signatures of this
//!   set are not published anywhere reachable (vectors README §9), so each signature is checked
//!   by what can be computed independently here:
//!   * its length;
//!   * its randomizer R (first n bytes) equals PRF_msg(SK.prf, opt_rand, M′) computed here with
//!     `sha2`/`sha3` (FIPS 205 §11.1/§11.2), where opt_rand is PK.seed for deterministic groups
//!     and `additionalRandomness` (passed as `SigningRandomness::Fixed`) otherwise, and M′ is
//!     formatted here (0 ‖ |ctx| ‖ ctx ‖ M, or 1 ‖ |ctx| ‖ ctx ‖ OID ‖ PH(M) with the digest
//!     computed here) — so the randomness and the message encoding are checked exactly;
//!   * it verifies through the public API and through `verify_internal` over the M′ formatted
//!     here, and fails over a modified M′;
//!   * for every external case, the public-API signature equals `sign_internal` over the M′
//!     formatted here, byte for byte.
//!
//! Every case runs ([`FULL`]): 120 keyGen, 45 legacy sigVer (15 exact re-signs), 624 sigGen
//! (168 external/pure, 288 external/preHash with every hashAlg, 168 internal) — about 80 s in
//! this build on the 2-core machine with pqkit's own SLH-DSA. With `FULL = false` the sampling
//! the RustCrypto backend needed comes back (every "f"-set keyGen case and 4 of 10 per "s" set;
//! sigGen: every 128f case, 2 per group of the other "f" sets, one "s" set per mode).

mod common;

/// Every case, no sampling: pqkit's own SLH-DSA on pqkit-hash signs an "s" set in tens of
/// milliseconds (the sampling was for the slower backend it replaced).
const FULL: bool = true;

use std::collections::BTreeMap;

use common::{
    Case, acvp_cases, array, ctx_len, hex, join, prehash_here, read_json, shake256, sig_alg,
};
use pqkit_core::Error;
use pqkit_core::prehash::PreHash;
use pqkit_core::sig::{SignatureAlgorithm, SigningRandomness};
use pqkit_core::slh_dsa;
use serde_json::Value;

/// n in bytes (FIPS 205 Table 2): the public key is 2n bytes.
fn n_of(alg: &SignatureAlgorithm) -> usize {
    alg.verifying_key_size / 2
}

/// Whether the set is a small ("s") one: slow to sign.
fn is_small(alg: &SignatureAlgorithm) -> bool {
    alg.name.ends_with('s')
}

#[test]
fn slh_dsa_keygen_all_sets() {
    let mut per_set = BTreeMap::new();
    let mut skipped = BTreeMap::new();
    let mut api_checked = 0;
    for c in acvp_cases("SLH-DSA-keyGen-FIPS205") {
        let alg = sig_alg(&c.group);
        let index = *per_set.entry(alg.name).or_insert(0) + *skipped.entry(alg.name).or_insert(0);
        if !FULL && is_small(alg) && index % 3 != 0 {
            *skipped.get_mut(alg.name).expect("entry") += 1;
            continue;
        }
        let (sk_seed, sk_prf, pk_seed) = (
            hex(&c.test["skSeed"]),
            hex(&c.test["skPrf"]),
            hex(&c.test["pkSeed"]),
        );
        let (sk, pk) = slh_dsa::hazmat::keygen_internal(alg, &sk_seed, &sk_prf, &pk_seed)
            .expect("keygen_internal");
        assert_eq!(&sk[..], hex(&c.expected["sk"]), "{} sk", c.id());
        assert_eq!(pk, hex(&c.expected["pk"]), "{} pk", c.id());
        let count = per_set.entry(alg.name).or_insert(0);
        // The public API's seed form (SK.seed ‖ SK.prf ‖ PK.seed) on the first case of each set:
        // it runs the same keygen again.
        if *count == 0 {
            let seed = [sk_seed, sk_prf, pk_seed].concat();
            let key = alg.signing_key_from_seed(&seed).expect("key from seed");
            assert_eq!(key.verifying_key().as_bytes(), pk, "{} API pk", c.id());
            assert_eq!(
                &key.expanded().expect("expanded")[..],
                &sk[..],
                "{} API sk",
                c.id()
            );
            api_checked += 1;
        }
        *count += 1;
    }
    let total: usize = per_set.values().sum();
    let skipped_total: usize = skipped.values().sum();
    eprintln!(
        "SLH-DSA keyGen: {total} cases, sk and pk exact ({api_checked} also through \
         signing_key_from_seed; {skipped_total} \"s\"-set cases skipped by sampling): {per_set:?}"
    );
    assert_eq!(total + skipped_total, 120);
    assert_eq!(total, if FULL { 120 } else { 6 * 10 + 6 * 4 });
    assert_eq!(api_checked, 12);
    assert_eq!(per_set.len(), 12);
}

#[test]
fn slh_dsa_legacy_sigver_and_its_siggen_kats() {
    let dir = "acvp-legacy/v1.1.0.35/SLH-DSA-sigVer-FIPS205";
    let cases = join(dir, "internalProjection.json", "expectedResults.json");
    let (mut accepted, mut rejected, mut resigned) = (0, 0, 0);
    let mut sets = BTreeMap::new();
    for c in &cases {
        let id = format!("{dir} {} ({})", c.id(), c.test["reason"]);
        let alg = sig_alg(&c.group);
        let want = c.expected["testPassed"].as_bool().expect("testPassed");
        assert_eq!(c.test["testPassed"].as_bool(), Some(want), "{id}");
        let (pk, sk, msg, sig) = (
            hex(&c.test["pk"]),
            hex(&c.test["sk"]),
            hex(&c.test["message"]),
            hex(&c.test["signature"]),
        );
        let result = slh_dsa::hazmat::verify_internal(alg, &pk, &msg, &sig);
        if want {
            result.unwrap_or_else(|e| panic!("{id}: {e}"));
            accepted += 1;
            // The valid cases are sigGen known answers too.
            let addrnd = hex(&c.test["additionalRandomness"]);
            let again =
                slh_dsa::hazmat::sign_internal(alg, &sk, &msg, Some(&addrnd)).expect("sign");
            assert!(again == sig, "{id}: re-signed bytes differ");
            let key = alg.signing_key_from_expanded(&sk).expect("expanded sk");
            assert_eq!(key.verifying_key().as_bytes(), pk, "{id}");
            resigned += 1;
        } else {
            assert_eq!(result, Err(Error::BadSignature), "{id}");
            rejected += 1;
        }
        *sets.entry(alg.name).or_insert(0) += 1;
    }
    eprintln!(
        "SLH-DSA legacy sigVer (v1.1.0.35): {} cases, {accepted} accepted, {rejected} rejected; \
         {resigned} valid cases re-signed byte for byte; sets {sets:?}",
        cases.len()
    );
    assert_eq!((accepted, rejected, resigned), (15, 30, 15));
    assert_eq!(sets.len(), 5);
}

/// HMAC (RFC 2104) with block size `B`, over the concatenated parts, computed here.
fn hmac<D: sha2::Digest, const B: usize>(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    assert!(key.len() <= B);
    let mut k = [0u8; B];
    k[..key.len()].copy_from_slice(key);
    let mut inner = D::new();
    inner.update(k.map(|b| b ^ 0x36));
    for p in parts {
        inner.update(p);
    }
    let mut outer = D::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().to_vec()
}

/// PRF_msg(SK.prf, opt_rand, M′), n bytes, computed here: SHAKE256(SK.prf ‖ opt_rand ‖ M′, 8n)
/// for the SHAKE sets (FIPS 205 §11.1); Trunc_n(HMAC-SHA-256(SK.prf, opt_rand ‖ M′)) for
/// SHA2 category 1 and HMAC-SHA-512 for categories 3 and 5 (§11.2).
fn prf_msg(alg: &SignatureAlgorithm, sk_prf: &[u8], opt_rand: &[u8], m_prime: &[&[u8]]) -> Vec<u8> {
    let n = n_of(alg);
    let mut parts = vec![opt_rand];
    parts.extend_from_slice(m_prime);
    let full = if alg.name.contains("SHAKE") {
        let mut all = vec![sk_prf];
        all.extend_from_slice(&parts);
        shake256::<64>(&all).to_vec()
    } else if n == 16 {
        hmac::<sha2::Sha256, 64>(sk_prf, &parts)
    } else {
        hmac::<sha2::Sha512, 128>(sk_prf, &parts)
    };
    full[..n].to_vec()
}

/// Per-mode counters of the sigGen run.
#[derive(Default)]
struct Tally {
    signed: BTreeMap<String, usize>,
    exact_vs_internal: usize,
    skipped_by_sampling: usize,
    hashes: BTreeMap<String, usize>,
}

/// Runs the sigGen groups whose `signatureInterface`/`preHash` match `(interface, prehash)`.
fn siggen(interface: &str, prehash: &str) -> Tally {
    let prompt = read_json("acvp/SLH-DSA-sigGen-FIPS205/prompt.json");
    let mut tally = Tally::default();
    for (gi, group) in array(&prompt["testGroups"]).iter().enumerate() {
        if group["signatureInterface"] != interface
            || group["preHash"].as_str().unwrap_or("") != prehash
        {
            continue;
        }
        let alg = sig_alg(group);
        let deterministic = group["deterministic"].as_bool().expect("deterministic");
        let tests = array(&group["tests"]);
        let mode = match (interface, prehash, deterministic) {
            ("external", "pure", true) => 0,
            ("external", "pure", false) => 1,
            ("external", "preHash", true) => 2,
            ("external", "preHash", false) => 3,
            ("internal", "", true) => 4,
            ("internal", "", false) => 5,
            other => panic!("tgId {}: unknown mode {other:?}", group["tgId"]),
        };
        let small_index = slh_dsa::ALL
            .iter()
            .filter(|a| is_small(a))
            .position(|a| a.name == alg.name);
        for (ti, test) in tests.iter().enumerate() {
            // The sampling rule of the file header; the picked cases rotate with the group index.
            let (first, second) = (gi % tests.len(), (gi + tests.len() / 2) % tests.len());
            let run = FULL
                || if alg.name.ends_with("128f") {
                    true
                } else if let Some(i) = small_index {
                    i == mode && ti == first
                } else {
                    ti == first || ti == second
                };
            if !run {
                tally.skipped_by_sampling += 1;
                continue;
            }
            let mut header = group.clone();
            header.as_object_mut().expect("group").remove("tests");
            let c = Case {
                group: header,
                test: test.clone(),
                expected: Value::Null,
                expected_group: Value::Null,
            };
            let label = siggen_case(&c, alg, deterministic, &mut tally);
            *tally.signed.entry(label).or_insert(0) += 1;
        }
    }
    tally
}

/// Signs and checks one sigGen case; returns its mode label.
fn siggen_case(c: &Case, alg: &'static SignatureAlgorithm, det: bool, tally: &mut Tally) -> String {
    let id = format!("SLH-DSA-sigGen {} {}", c.id(), alg.name);
    let n = n_of(alg);
    let sk = hex(&c.test["sk"]);
    assert_eq!(sk.len(), 4 * n, "{id}");
    let (sk_prf, pk_seed, pk) = (&sk[n..2 * n], &sk[2 * n..3 * n], &sk[2 * n..]);
    let addrnd = c.test.get("additionalRandomness").map(hex);
    assert_eq!(
        det,
        addrnd.is_none(),
        "{id}: deterministic flag and addrnd disagree"
    );
    let randomness = match &addrnd {
        None => SigningRandomness::Deterministic,
        Some(r) => SigningRandomness::Fixed(r),
    };
    let opt_rand: &[u8] = addrnd.as_deref().unwrap_or(pk_seed);
    let msg = hex(&c.test["message"]);

    // M′ formatted here, and the signature through the public API (or the internal one).
    let ctx = c.test.get("context").map(hex).unwrap_or_default();
    let len = [ctx_len(&ctx)];
    let hashed;
    let m_prime: Vec<&[u8]>;
    let sig;
    match (c.opt("signatureInterface"), c.opt("preHash")) {
        ("external", "pure") => {
            m_prime = vec![&[0], &len, &ctx, &msg];
            let key = alg.signing_key_from_expanded(&sk).expect("expanded sk");
            sig = key.sign_with(&msg, &ctx, randomness).expect("sign");
            key.verifying_key()
                .verify(&msg, &ctx, &sig)
                .unwrap_or_else(|e| panic!("{id}: verify: {e}"));
        }
        ("external", "preHash") => {
            let name = c.test["hashAlg"].as_str().expect("hashAlg");
            *tally.hashes.entry(name.to_owned()).or_insert(0) += 1;
            let hash = PreHash::from_name(name).expect("known hashAlg");
            hashed = prehash_here(name, &msg);
            m_prime = vec![&[1], &len, &ctx, &hashed.0, &hashed.1];
            let key = alg.signing_key_from_expanded(&sk).expect("expanded sk");
            sig = key
                .sign_prehashed(hash, &hashed.1, &ctx, randomness)
                .expect("sign_prehashed");
            key.verifying_key()
                .verify_prehashed(hash, &hashed.1, &ctx, &sig)
                .unwrap_or_else(|e| panic!("{id}: verify_prehashed: {e}"));
        }
        ("internal", "") => {
            assert!(
                c.test.get("context").is_none(),
                "{id}: internal with a context"
            );
            m_prime = vec![&msg];
            sig = slh_dsa::hazmat::sign_internal(alg, &sk, &msg, addrnd.as_deref()).expect("sign");
        }
        (i, p) => panic!("{id}: unknown mode {i}/{p}"),
    }
    let m_prime_bytes = m_prime.concat();

    assert_eq!(sig.len(), alg.signature_size, "{id}: length");
    assert_eq!(
        sig[..n],
        prf_msg(alg, sk_prf, opt_rand, &m_prime)[..],
        "{id}: R differs from PRF_msg(SK.prf, opt_rand, M′) computed here"
    );
    slh_dsa::hazmat::verify_internal(alg, pk, &m_prime_bytes, &sig)
        .unwrap_or_else(|e| panic!("{id}: verify_internal over M′ formatted here: {e}"));
    let mut other = m_prime_bytes.clone();
    *other.last_mut().expect("non-empty M′") ^= 1;
    assert_eq!(
        slh_dsa::hazmat::verify_internal(alg, pk, &other, &sig),
        Err(Error::BadSignature),
        "{id}: a modified M′ must not verify"
    );
    if (FULL || !is_small(alg)) && c.opt("signatureInterface") == "external" {
        let again = slh_dsa::hazmat::sign_internal(alg, &sk, &m_prime_bytes, addrnd.as_deref())
            .expect("sign_internal");
        assert!(
            again == sig,
            "{id}: API signature differs from sign_internal over M′"
        );
        tally.exact_vs_internal += 1;
    }
    let prehash = match c.opt("preHash") {
        "" => String::new(),
        p => format!("/{p}"),
    };
    let det = if det { "deterministic" } else { "addrnd" };
    format!(
        "{}{prehash}/{det}/{}",
        c.opt("signatureInterface"),
        alg.name
    )
}

fn report(what: &str, t: &Tally) -> usize {
    let total: usize = t.signed.values().sum();
    eprintln!(
        "SLH-DSA sigGen {what}: {total} signatures checked (length, R = PRF_msg, verify, \
         modified-M′ rejection); {} also equal sign_internal byte for byte; {} cases \
         skipped by sampling",
        t.exact_vs_internal, t.skipped_by_sampling
    );
    for (mode, n) in &t.signed {
        eprintln!("  {mode}: {n}");
    }
    if !t.hashes.is_empty() {
        eprintln!("  hashAlg: {:?}", t.hashes);
    }
    // Both variants (deterministic, addrnd) on every set (sampled: every "f" set, one "s"
    // set each).
    assert_eq!(
        t.signed.len(),
        if FULL { 2 * 12 } else { 2 * 6 + 2 },
        "{:?}",
        t.signed
    );
    assert_eq!(t.skipped_by_sampling, 0, "no sampling");
    total
}

#[test]
fn slh_dsa_siggen_external_pure() {
    let t = siggen("external", "pure");
    let total = report("external/pure", &t);
    // 128f sets: 2 groups × 7; other "f" sets: 2 groups × 2; two "s" sets: 1.
    assert_eq!(total, if FULL { 168 } else { 2 * 14 + 4 * 4 + 2 });
    assert_eq!(t.exact_vs_internal, if FULL { 168 } else { 2 * 14 + 4 * 4 });
}

#[test]
fn slh_dsa_siggen_external_prehash() {
    let t = siggen("external", "preHash");
    let total = report("external/preHash", &t);
    // 128f sets: 2 groups × 12; other "f" sets: 2 groups × 2; two "s" sets: 1.
    assert_eq!(total, if FULL { 288 } else { 2 * 24 + 4 * 4 + 2 });
    assert_eq!(t.exact_vs_internal, if FULL { 288 } else { 2 * 24 + 4 * 4 });
    assert_eq!(t.hashes.len(), 12, "every hashAlg: {:?}", t.hashes);
}

#[test]
fn slh_dsa_siggen_internal() {
    let t = siggen("internal", "");
    let total = report("internal", &t);
    assert_eq!(total, if FULL { 168 } else { 2 * 14 + 4 * 4 + 2 });
}
