//! Known-answer tests of HQC-1/3/5 through pqkit's API: the response files of the HQC reference
//! implementation (commit 161cd4f), regenerated and compared by SHA-256 with liboqs 0.16.0's
//! `tests/KATs/kem/kats.json` ("all": 100 counts per set).
//!
//! HQC's KAT generator (liboqs `tests/test_helpers.c`, "liboqs's output actually matches
//! pqc-hqc's output") draws from SHAKE256 rather than the NIST AES DRBG: the master stream is
//! SHAKE256(0 ‖ 1 ‖ … ‖ 47 ‖ 0x00); each count reads a 48-byte seed from it, and that count's
//! randomness is SHAKE256(seed ‖ 0x00): seed_kem (32 bytes) for key generation, then m (k
//! bytes) and salt (16 bytes) for encapsulation.

mod kem_kat;

use kem_kat::KatFile;
use pqkit_core::catalogue;
use sha3::Shake256;
use sha3::digest::{ExtendableOutput, Update, XofReader};

/// liboqs 0.16.0, `tests/KATs/kem/kats.json`, "all".
const DIGESTS: [(&str, &str); 3] = [
    (
        "HQC-1",
        "b3389b12e932373de55a14223acf2c7e67dddcf4df46a133bd3724fe0460b4d1",
    ),
    (
        "HQC-3",
        "afe6382bfec5426317ca6c986731433fafb95bc08cc6d0b273c3736fcd8b3205",
    ),
    (
        "HQC-5",
        "8eda7cc337fb4c279f0c1199ececb142406735449faed24a9047b38956de7805",
    ),
];

fn prng(seed: &[u8]) -> impl XofReader {
    let mut h = Shake256::default();
    h.update(seed);
    h.update(&[0x00]);
    h.finalize_xof()
}

/// liboqs's `kem_kat(method, all = true)` for HQC, through pqkit-core; the file's SHA-256.
fn response_file_digest(name: &str) -> String {
    let alg = catalogue::kem(name).expect("in the catalogue");
    let entropy: Vec<u8> = (0..48).collect();
    let mut master = prng(&entropy);
    let mut file = KatFile::default();
    for count in 0..100 {
        let mut seed = [0u8; 48];
        master.read(&mut seed);
        let mut rng = prng(&seed);
        let mut seed_kem = vec![0u8; alg.seed_size];
        rng.read(&mut seed_kem);
        let dk = alg.generate_from_seed(&seed_kem).expect("keygen");
        let mut randomness = vec![0u8; alg.encapsulation_randomness_size];
        rng.read(&mut randomness);
        let (ct, ss) = dk
            .encapsulation_key()
            .encapsulate_deterministic(&randomness)
            .expect("encapsulate");
        file.record((count, 100), &seed, &dk, (&ct, &ss));
    }
    file.sha256_hex()
}

#[test]
fn hqc_reproduces_the_reference_kat_files() {
    for (name, want) in DIGESTS {
        assert_eq!(
            response_file_digest(name),
            want,
            "{name}: the KAT response file differs"
        );
    }
}
