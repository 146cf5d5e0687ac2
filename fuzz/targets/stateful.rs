//! Stateful hash-based signatures: public keys, signatures and state files from untrusted
//! bytes.

use std::sync::OnceLock;

use pqkit_hbs::public::PublicKey;

/// An HSS key (two levels of LMS_SHA256_M32_H5 / LMOTS_SHA256_N32_W8) and an XMSS key
/// (XMSS-SHA2_10_256), each with one signature over `b"fuzz"`, made once per process.
fn keys() -> &'static [(PublicKey, Vec<u8>)] {
    static KEYS: OnceLock<Vec<(PublicKey, Vec<u8>)>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("pqkit-fuzz-hbs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let level = (&pqkit_hbs::params::LMS[0], &pqkit_hbs::params::OTS[3]);
        let ledger = pqkit_hbs::ledger::hazmat::in_memory;
        let mut hss =
            pqkit_hbs::state::StatefulKey::create(&dir.join("hss"), &[level, level], ledger(), 1)
                .expect("hss");
        let xmss_params = pqkit_hbs::xmss::by_name("XMSS-SHA2_10_256").expect("xmss");
        let mut xmss =
            pqkit_hbs::state::StatefulKey::create_xmss(&dir.join("xmss"), xmss_params, ledger(), 1)
                .expect("xmss");
        let out = vec![
            (hss.public_key(), hss.sign(b"fuzz").expect("sign")),
            (xmss.public_key(), xmss.sign(b"fuzz").expect("sign")),
        ];
        drop((hss, xmss));
        let _ = std::fs::remove_dir_all(&dir);
        out
    })
}

/// A stateful public key: SPKI or PEM.
pub(crate) fn public_key(data: &[u8]) {
    let _ = PublicKey::from_spki_der(data);
    if let Ok(text) = core::str::from_utf8(data) {
        let _ = PublicKey::from_pem(text);
    }
}

/// A signature under the fixed HSS and XMSS keys; its counter is read without verifying.
pub(crate) fn signature(data: &[u8]) {
    for (pk, good) in keys() {
        let valid = pk.verify(b"fuzz", data).is_ok();
        assert!(
            !valid || data == &good[..],
            "a signature pqkit never made verified"
        );
        let _ = pk.counter(data);
    }
}

/// A state file: its status and public key read, and opened as a key with a ledger (in a
/// scratch directory).
pub(crate) fn state_file(data: &[u8]) {
    use std::io::Write;
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("pqkit-fuzz-state-{}-{n}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("key.state");
    if let Ok(mut f) = std::fs::File::create(&path) {
        let _ = f.write_all(data);
    }
    let _ = pqkit_hbs::state::inspect(&path);
    let _ = pqkit_hbs::state::public_key(&path, 1);
    let _ = pqkit_hbs::state::StatefulKey::open(&path, pqkit_hbs::ledger::hazmat::in_memory(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}
