//! Work per signature, counted in leaves (one-time public keys) computed: next subtrees and
//! next trees are paced over the signatures before them, so no signature pays for a whole
//! tree; and a reopened key takes its trees from the cache file instead of computing them —
//! unless the cache is damaged or another key's, when it computes them and signs the same.
//!
//! The leaf counter is process-wide, so the tests here take turns (`SERIAL`).

use std::path::PathBuf;
use std::sync::Mutex;

use pqkit_hbs::hazmat::SignAt as _;
use pqkit_hbs::hss::{HssSigner, Level};
use pqkit_hbs::params::{lms_by_name, ots_by_name};
use pqkit_hbs::state::StatefulKey;
use pqkit_hbs::tree::{LmsTree, leaves_computed};
use pqkit_hbs::xmss::{XmssSigner, by_name};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn level(lms: &str, ots: &str) -> Level {
    (
        lms_by_name(lms).expect("LMS set"),
        ots_by_name(ots).expect("LM-OTS set"),
    )
}

/// Leaves computed by `f`, and its result.
fn counted<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let before = leaves_computed();
    let out = f();
    (leaves_computed() - before, out)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pqkit-hbs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn one_tree_paces_its_next_subtree() {
    let _turn = serial();
    // LMS_SHA256_M24_H10 / LMOTS_SHA256_N24_W2 cut at k = 3: 128 subtrees of 8 leaves.
    let (lms, ots) = level("LMS_SHA256_M24_H10", "LMOTS_SHA256_N24_W2");
    let (keygen, mut tree) =
        counted(|| LmsTree::with_subtree_height(lms, ots, [1; 16], &[2; 24], 2, 3));
    assert_eq!(keygen, 1024);
    let pk = tree.public_key();
    let mut total = 0;
    for q in 0..1024u32 {
        let msg = q.to_be_bytes();
        let (leaves, sig) = counted(|| tree.sign_at(q, &msg));
        assert!(leaves <= 1, "q = {q}: {leaves} leaves");
        total += leaves;
        if q % 97 == 0 || q % 8 == 7 {
            assert_eq!(pk.verify(&msg, &sig), Ok(()), "q = {q}");
        }
    }
    // Every leaf but those of subtree 0 (kept from key generation) computed once.
    assert_eq!(total, 1024 - 8);
}

#[test]
fn hss_paces_its_next_trees() {
    let _turn = serial();
    // Three levels of LMS_SHA256_M24_H5 / LMOTS_SHA256_N24_W2: the bottom tree changes every
    // 32 signatures, the middle one every 1024.
    let l = level("LMS_SHA256_M24_H5", "LMOTS_SHA256_N24_W2");
    let (keygen, key) = counted(|| HssSigner::generate(&[l; 3], [3; 16], &[4; 24], 2));
    let mut key = key.expect("key");
    assert_eq!(keygen, 3 * 32);
    let pk = key.public_key();
    let mut worst = 0;
    for counter in 0..2100u64 {
        let msg = counter.to_be_bytes();
        let (leaves, sig) = counted(|| key.sign_at(counter, &msg).expect("sign"));
        worst = worst.max(leaves);
        if counter % 32 == 0 || counter % 1024 == 1023 {
            assert_eq!(pk.verify(&msg, &sig), Ok(()), "counter {counter}");
        }
    }
    // A leaf of the next bottom tree and one of the next middle tree at most; before pacing,
    // the signature after a boundary computed 32 (or 64) leaves.
    assert!(worst <= 2, "worst signature computed {worst} leaves");
}

#[test]
fn xmss_mt_paces_its_next_trees() {
    let _turn = serial();
    // XMSSMT-SHA2_20/4_256: four layers of height-5 trees.
    let p = by_name("XMSSMT-SHA2_20/4_256").expect("set");
    let mut key = XmssSigner::generate(p, &[5; 32], &[6; 32], &[7; 32], 2).expect("key");
    let pk = key.public_key();
    let mut worst = 0;
    for idx in 0..1100u64 {
        let msg = idx.to_be_bytes();
        let (leaves, sig) = counted(|| key.sign_at(idx, &msg).expect("sign"));
        worst = worst.max(leaves);
        if idx % 32 == 0 || idx == 1024 {
            assert_eq!(pk.verify(&msg, &sig), Ok(()), "idx {idx}");
        }
    }
    assert!(worst <= 3, "worst signature computed {worst} leaves");
}

/// The test's reservation ledger, in its scratch directory.
fn ledger(dir: &std::path::Path) -> pqkit_hbs::ledger::Ledger {
    pqkit_hbs::ledger::Ledger::sqlite(&dir.join("ledger.sqlite3")).expect("ledger")
}

#[test]
fn reopening_takes_the_trees_from_the_cache() {
    let _turn = serial();
    let dir = scratch("cache");
    let l = level("LMS_SHA256_M24_H5", "LMOTS_SHA256_N24_W4");
    let (id, seed) = ([8u8; 16], [9u8; 24]);
    let path = dir.join("key.hss");
    let mut key = pqkit_hbs::state::NewKey::hss_from_seed(&path, &[l; 2], id, &seed, 2)
        .and_then(|k| k.commit(ledger(&dir)))
        .expect("create");
    let pk = key.public_key();
    // The uncached reference: the same key in memory.
    let mut reference = HssSigner::generate(&[l; 2], id, &seed, 1).expect("reference");
    let mut expect = |counter: u64, msg: &[u8]| reference.sign_at(counter, msg).expect("sign");
    for i in 0..30u8 {
        assert_eq!(key.sign(&[i]).expect("sign"), expect(u64::from(i), &[i]));
    }
    drop(key);

    // Reopened with the cache: no leaf computed to open, and across the bottom tree boundary
    // (counter 32) no signature computes more than one leaf: the next tree's progress was
    // saved too.
    let (leaves, key) = counted(|| StatefulKey::open(&path, ledger(&dir), 2));
    let mut key = key.expect("open");
    assert_eq!(leaves, 0, "open computed {leaves} leaves");
    for i in 30..40u8 {
        let (leaves, sig) = counted(|| key.sign(&[i]).expect("sign"));
        assert!(leaves <= 1, "counter {i}: {leaves} leaves");
        assert_eq!(sig, expect(u64::from(i), &[i]));
    }
    drop(key);

    // A damaged cache is ignored: the trees are computed and the signatures are the same.
    let cache = dir.join("key.hss.cache");
    let mut bytes = std::fs::read(&cache).expect("cache file");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&cache, &bytes).expect("damage");
    let (leaves, key) = counted(|| StatefulKey::open(&path, ledger(&dir), 2));
    let mut key = key.expect("open");
    assert!(
        leaves >= 64,
        "a damaged cache was used ({leaves} leaves computed)"
    );
    let sig = key.sign(b"x").expect("sign");
    assert_eq!(sig, expect(40, b"x"));
    assert_eq!(pk.verify(b"x", &sig), Ok(()));
    drop(key);

    // Another key's cache (a valid file, MACed under the other key) is ignored too.
    let other = dir.join("other.hss");
    drop(StatefulKey::create(&other, &[l; 2], ledger(&dir), 1).expect("other"));
    std::fs::copy(dir.join("other.hss.cache"), &cache).expect("copy");
    let (leaves, key) = counted(|| StatefulKey::open(&path, ledger(&dir), 2));
    let mut key = key.expect("open");
    assert!(leaves >= 64, "another key's cache was used");
    assert_eq!(key.sign(b"y").expect("sign"), expect(41, b"y"));
    drop(key);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn xmss_reopens_from_the_cache() {
    let _turn = serial();
    let dir = scratch("xmss-cache");
    let path = dir.join("key.xmss");
    let p = by_name("XMSS-SHA2_10_192").expect("set");
    let mut key = StatefulKey::create_xmss(&path, p, ledger(&dir), 2).expect("create");
    let pk = key.public_key();
    let first = key.sign(b"a").expect("sign");
    drop(key);
    let (leaves, key) = counted(|| StatefulKey::open(&path, ledger(&dir), 2));
    let mut key = key.expect("open");
    assert_eq!(leaves, 0);
    assert_eq!(key.public_key(), pk);
    let second = key.sign(b"b").expect("sign");
    assert_eq!(pk.verify(b"a", &first), Ok(()));
    assert_eq!(pk.verify(b"b", &second), Ok(()));
    drop(key);
    std::fs::remove_dir_all(&dir).expect("clean up");
}
