//! Helpers shared by the vector test files (`mod common;` in each): where the vectors live, how
//! to read them (plain or `.gz`), the ACVP prompt/expectedResults join and hex decoding.
//!
//! Every reader fails the test, naming the path, when a vector file is missing: a suite whose
//! data went away must not pass by checking nothing.

// Each test file uses a different subset of these helpers.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pqkit_core::catalogue;
use pqkit_core::kem::KemAlgorithm;
use pqkit_core::sig::SignatureAlgorithm;
use serde_json::Value;

/// The vectors directory: `$PQKIT_VECTORS`, else `../shared/vectors` beside the repository.
/// Also where the hash path `PQKIT_HASH` names is chosen for the test process (CI runs
/// pqkit-hbs's LMS/XMSS suites, which include this module, once per path; a test that hashes
/// before it reads vectors calls [`hash_path_from_env`] first).
pub(crate) fn vectors_dir() -> PathBuf {
    hash_path_from_env();
    std::env::var_os("PQKIT_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        })
}

/// Chooses the hash path `PQKIT_HASH` names, if set, for the whole process.
///
/// # Panics
/// When it names no path this CPU runs, or another path is already fixed (a test hashed
/// before calling this): a forced path is never silently ignored.
pub(crate) fn hash_path_from_env() {
    if let Ok(name) = std::env::var("PQKIT_HASH") {
        pqkit_hash::dispatch::set_process_by_name(&name)
            .unwrap_or_else(|e| panic!("PQKIT_HASH={name}: {e}"));
    }
}

/// The bytes of `<vectors>/<rel>`, decompressed. A file stored gzipped (its name ends in `.gz`)
/// is decompressed; a plain name that is missing falls back to its `.gz` twin. A missing file
/// fails the test with its path.
pub(crate) fn read_bytes(rel: &str) -> Vec<u8> {
    let path = vectors_dir().join(rel);
    let gz = PathBuf::from(format!("{}.gz", path.display()));
    if rel.ends_with(".gz") {
        return gunzip(&path);
    }
    match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(_) if gz.exists() => gunzip(&gz),
        Err(e) => panic!(
            "vector file {} (or its .gz twin) is missing or unreadable: {e}",
            path.display()
        ),
    }
}

fn gunzip(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| {
        panic!(
            "vector file {} is missing or unreadable: {e}",
            path.display()
        )
    });
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(file), &mut out)
        .unwrap_or_else(|e| panic!("{}: bad gzip: {e}", path.display()));
    out
}

/// `<vectors>/<rel>` as UTF-8 text (see [`read_bytes`]).
pub(crate) fn read_text(rel: &str) -> String {
    String::from_utf8(read_bytes(rel)).unwrap_or_else(|e| panic!("{rel}: not UTF-8: {e}"))
}

/// `<vectors>/<rel>` parsed as JSON (see [`read_bytes`]).
pub(crate) fn read_json(rel: &str) -> Value {
    serde_json::from_slice(&read_bytes(rel)).unwrap_or_else(|e| panic!("{rel}: bad JSON: {e}"))
}

/// One ACVP test case: its group (without the `tests` array), its inputs and its expected
/// outputs, joined on (tgId, tcId).
pub(crate) struct Case {
    pub(crate) group: Value,
    pub(crate) test: Value,
    pub(crate) expected: Value,
    /// The expected results' group (without `tests`): group-level outputs such as a
    /// `publicKey`.
    pub(crate) expected_group: Value,
}

/// A tgId or tcId: a number, or a number in a string (pqc-kat writes "1").
fn id_of(v: &Value, what: &str) -> u64 {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("bad {what}: {v}"))
}

/// A group without its `tests`.
fn header(group: &Value) -> Value {
    let mut h = group.clone();
    if let Some(o) = h.as_object_mut() {
        o.remove("tests");
    }
    h
}

impl Case {
    /// "tgId 3 tcId 41", for assertion messages.
    pub(crate) fn id(&self) -> String {
        format!("tgId {} tcId {}", self.group["tgId"], self.test["tcId"])
    }

    /// A group option as a string ("" when absent).
    pub(crate) fn opt(&self, key: &str) -> &str {
        self.group[key].as_str().unwrap_or("")
    }
}

/// Joins `<dir>/<inputs>` (prompt or internalProjection) and `<dir>/<outputs>`
/// (expectedResults) on (tgId, tcId). Every input case must have its expected result.
pub(crate) fn join(dir: &str, inputs: &str, outputs: &str) -> Vec<Case> {
    let prompt = read_json(&format!("{dir}/{inputs}"));
    let expected = read_json(&format!("{dir}/{outputs}"));
    let mut results: HashMap<(u64, u64), Value> = HashMap::new();
    let mut groups: HashMap<u64, Value> = HashMap::new();
    for group in array(&expected["testGroups"]) {
        let tg = id_of(&group["tgId"], "tgId");
        groups.insert(tg, header(group));
        for test in array(&group["tests"]) {
            results.insert((tg, id_of(&test["tcId"], "tcId")), test.clone());
        }
    }
    let mut out = Vec::new();
    for group in array(&prompt["testGroups"]) {
        let tg = id_of(&group["tgId"], "tgId");
        let head = header(group);
        for test in array(&group["tests"]) {
            let tc = id_of(&test["tcId"], "tcId");
            let expected = results
                .remove(&(tg, tc))
                .unwrap_or_else(|| panic!("{dir}: no expected result for tgId {tg} tcId {tc}"));
            out.push(Case {
                group: head.clone(),
                test: test.clone(),
                expected,
                expected_group: groups.get(&tg).cloned().unwrap_or(Value::Null),
            });
        }
    }
    assert!(!out.is_empty(), "{dir}: no test cases");
    out
}

/// The ACVP cases of `acvp/<dir>`: prompt joined with expectedResults.
pub(crate) fn acvp_cases(dir: &str) -> Vec<Case> {
    join(
        &format!("acvp/{dir}"),
        "prompt.json",
        "expectedResults.json",
    )
}

/// [`acvp_cases`] as (group, test, expected) tuples.
pub(crate) fn acvp_triples(dir: &str) -> Vec<(Value, Value, Value)> {
    acvp_cases(dir)
        .into_iter()
        .map(|c| (c.group, c.test, c.expected))
        .collect()
}

/// The directories under `<vectors>/<rel>` whose names start with `prefix`, sorted; fails
/// naming the path when there are none.
pub(crate) fn dirs(rel: &str, prefix: &str) -> Vec<String> {
    let root = vectors_dir().join(rel);
    let mut out: Vec<String> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect();
    out.sort();
    assert!(
        !out.is_empty(),
        "{}: no {prefix}* directories",
        root.display()
    );
    out
}

/// The elements of a JSON array (panics on anything else).
pub(crate) fn array(v: &Value) -> &Vec<Value> {
    v.as_array()
        .unwrap_or_else(|| panic!("expected a JSON array, got {v}"))
}

/// Decodes a hex string value (either case).
pub(crate) fn hex(v: &Value) -> Vec<u8> {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("expected a hex string, got {v}"));
    hex::decode(s).unwrap_or_else(|e| panic!("bad hex {s:.40}…: {e}"))
}

/// Decodes `obj[key]` as hex when present.
pub(crate) fn hex_opt(obj: &Value, key: &str) -> Option<Vec<u8>> {
    obj.get(key).filter(|v| !v.is_null()).map(hex)
}

/// `N` bytes of hex, checked.
pub(crate) fn hex_array<const N: usize>(v: &Value) -> [u8; N] {
    let bytes = hex(v);
    bytes
        .as_slice()
        .try_into()
        .unwrap_or_else(|_| panic!("expected {N} bytes, got {}", bytes.len()))
}

/// The KEM a group's `parameterSet` names.
pub(crate) fn kem(group: &Value) -> &'static KemAlgorithm {
    let name = group["parameterSet"].as_str().expect("parameterSet");
    catalogue::kem(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The signature algorithm a group's `parameterSet` names.
pub(crate) fn sig_alg(group: &Value) -> &'static SignatureAlgorithm {
    let name = group["parameterSet"].as_str().expect("parameterSet");
    catalogue::signature(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The value of the one `name = hexvalue` line of a CCTV text file. Fails when the line is
/// missing or repeated. Lines of other shapes (decimal coefficient lists) are ignored.
pub(crate) fn cctv_field(text: &str, name: &str) -> Vec<u8> {
    let prefix = format!("{name} = ");
    let mut found = text
        .lines()
        .filter_map(|line| line.strip_prefix(&prefix))
        .map(|value| hex::decode(value.trim()).unwrap_or_else(|e| panic!("{name}: bad hex: {e}")));
    let value = found
        .next()
        .unwrap_or_else(|| panic!("no `{name} = ` line"));
    assert!(found.next().is_none(), "`{name} = ` appears twice");
    value
}

/// The pre-hash of HashML-DSA / HashSLH-DSA computed here, independently of
/// `pqkit_core::prehash`: (DER of the hash OID, PH(M)) for an ACVP `hashAlg` name. SHAKE-128
/// gives 256 bits and SHAKE-256 512 bits (FIPS 204 §5.4, FIPS 205 §10.2.2).
pub(crate) fn prehash_here(hash_alg: &str, msg: &[u8]) -> ([u8; 11], Vec<u8>) {
    use sha2::Digest;
    use sha3::digest::{ExtendableOutput, Update, XofReader};
    fn xof<H: Default + Update + ExtendableOutput>(msg: &[u8], len: usize) -> Vec<u8> {
        let mut h = H::default();
        h.update(msg);
        let mut out = vec![0u8; len];
        h.finalize_xof().read(&mut out);
        out
    }
    // 2.16.840.1.101.3.4.2.<arc> (NIST hash algorithms, CSOR).
    let (arc, digest) = match hash_alg {
        "SHA2-256" => (1, sha2::Sha256::digest(msg).to_vec()),
        "SHA2-384" => (2, sha2::Sha384::digest(msg).to_vec()),
        "SHA2-512" => (3, sha2::Sha512::digest(msg).to_vec()),
        "SHA2-224" => (4, sha2::Sha224::digest(msg).to_vec()),
        "SHA2-512/224" => (5, sha2::Sha512_224::digest(msg).to_vec()),
        "SHA2-512/256" => (6, sha2::Sha512_256::digest(msg).to_vec()),
        "SHA3-224" => (7, sha3::Sha3_224::digest(msg).to_vec()),
        "SHA3-256" => (8, sha3::Sha3_256::digest(msg).to_vec()),
        "SHA3-384" => (9, sha3::Sha3_384::digest(msg).to_vec()),
        "SHA3-512" => (10, sha3::Sha3_512::digest(msg).to_vec()),
        "SHAKE-128" => (11, xof::<sha3::Shake128>(msg, 32)),
        "SHAKE-256" => (12, xof::<sha3::Shake256>(msg, 64)),
        other => panic!("unknown hashAlg {other:?}"),
    };
    let oid = [
        0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, arc,
    ];
    (oid, digest)
}

/// SHAKE256 over the concatenated parts, `N` bytes, computed here with the `sha3` crate.
pub(crate) fn shake256<const N: usize>(parts: &[&[u8]]) -> [u8; N] {
    use sha3::digest::{ExtendableOutput, Update, XofReader};
    let mut h = sha3::Shake256::default();
    for p in parts {
        h.update(p);
    }
    let mut out = [0u8; N];
    h.finalize_xof().read(&mut out);
    out
}

/// ML-DSA's μ = H(H(pk, 64) ‖ M′, 64) (FIPS 204 Algorithm 7 lines 6–7), computed here, with M′
/// given in parts.
pub(crate) fn ml_dsa_mu(pk: &[u8], m_prime: &[&[u8]]) -> [u8; 64] {
    let tr: [u8; 64] = shake256(&[pk]);
    let mut parts: Vec<&[u8]> = vec![&tr];
    parts.extend_from_slice(m_prime);
    shake256(&parts)
}

/// The one-byte length prefix of a context string (at most 255 bytes in every valid case).
pub(crate) fn ctx_len(ctx: &[u8]) -> u8 {
    u8::try_from(ctx.len()).expect("context of at most 255 bytes")
}

/// Runs `f` once on every pqkit-hash path this CPU has — pqkit-lattice's ML-KEM follows the
/// hash path (its Keccak lanes and its AVX-512, AVX2 or portable arithmetic) — and returns
/// their names.
pub(crate) fn on_every_path(mut f: impl FnMut(pqkit_hash::Isa)) -> Vec<&'static str> {
    let paths = pqkit_hash::Isa::supported();
    for &p in &paths {
        pqkit_hash::dispatch::with_isa(p, || f(p)).expect("a supported path");
    }
    paths.iter().map(|p| p.name()).collect()
}
