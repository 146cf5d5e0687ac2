//! The Keccak lane kernels against the portable permutation, and [`Shake`] against the `sha3`
//! crate, on every path this CPU supports.

use sha3::digest::{ExtendableOutput, Update, XofReader};

use super::{Shake, permute_lanes, permute_portable};
use crate::{ManyHash, Path};

/// xorshift64: reproducible test data without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn state(&mut self) -> [u64; 25] {
        core::array::from_fn(|_| self.next())
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next().to_le_bytes()[0]).collect()
    }
}

/// The paths every test below runs on.
fn paths() -> Vec<Path> {
    Path::supported()
}

#[test]
fn paths_tested_are_the_supported_paths() {
    let tested = paths();
    let supported: Vec<Path> = Path::ALL.into_iter().filter(|p| p.is_supported()).collect();
    assert_eq!(tested, supported);
    assert_eq!(tested, Path::supported());
    assert!(tested.contains(&Path::Portable));
    #[cfg(target_arch = "x86_64")]
    {
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        assert_eq!(tested.contains(&Path::Avx2), avx2);
        let avx512 = std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw");
        assert_eq!(tested.contains(&Path::Avx512), avx512);
    }
    eprintln!("Keccak paths tested: {tested:?}");
}

/// Keccak-f\[1600\] of the all-zero state: the first lanes of the Keccak team's
/// `KeccakF-1600-IntermediateValues.txt`.
#[test]
fn zero_state_known_answer() {
    for path in paths() {
        for n in 0..=20 {
            let mut states = vec![[0u64; 25]; n];
            permute_lanes(path, &mut states);
            for s in &states {
                assert_eq!(s[0], 0xF125_8F79_40E1_DDE7, "{path}, {n} lanes");
                assert_eq!(s[1], 0x84D5_CCF9_33C0_478A, "{path}, {n} lanes");
                assert_eq!(s[24], 0xEAF1_FF7B_5CEC_A249, "{path}, {n} lanes");
            }
        }
    }
}

#[test]
fn permute_lanes_matches_portable() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for path in paths() {
        for n in 0..=20 {
            let start: Vec<[u64; 25]> = (0..n).map(|_| rng.state()).collect();
            let mut expected = start.clone();
            let mut got = start;
            for twice in 1..=2 {
                expected.iter_mut().for_each(permute_portable);
                permute_lanes(path, &mut got);
                assert_eq!(got, expected, "{path}, {n} lanes, application {twice}");
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn kernels_match_portable() {
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    for _ in 0..50 {
        if std::arch::is_x86_feature_detected!("avx512f") {
            let mut got: [[u64; 25]; 8] = core::array::from_fn(|_| rng.state());
            let mut expected = got;
            for twice in 1..=2 {
                expected.iter_mut().for_each(permute_portable);
                super::avx512::permute8(&mut got);
                assert_eq!(got, expected, "permute8, application {twice}");
            }
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            let mut got: [[u64; 25]; 4] = core::array::from_fn(|_| rng.state());
            let mut expected = got;
            for twice in 1..=2 {
                expected.iter_mut().for_each(permute_portable);
                super::avx2::permute4(&mut got);
                assert_eq!(got, expected, "permute4, application {twice}");
            }
        }
    }
}

/// `len` bytes of SHAKE128 or SHAKE256 of `msg` (the `sha3` crate).
fn oracle(shake: Shake, msg: &[u8], len: usize) -> Vec<u8> {
    let mut out = vec![0; len];
    if shake == Shake::SHAKE128 {
        let mut h = sha3::Shake128::default();
        h.update(msg);
        h.finalize_xof().read(&mut out);
    } else {
        let mut h = sha3::Shake256::default();
        h.update(msg);
        h.finalize_xof().read(&mut out);
    }
    out
}

#[test]
fn shake_matches_sha3() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for shake in [Shake::SHAKE128, Shake::SHAKE256] {
        let rate = shake.max_output();
        let name = if shake == Shake::SHAKE128 {
            "SHAKE128"
        } else {
            "SHAKE256"
        };
        for path in paths() {
            for msg_len in 1..=420 {
                for n in [1, 3, 4, 8, 9, 17] {
                    let msgs = rng.bytes(n * msg_len);
                    let full: Vec<Vec<u8>> = msgs
                        .chunks(msg_len)
                        .map(|m| oracle(shake, m, rate))
                        .collect();
                    for out_len in [16, 24, 32, 64, rate] {
                        let mut out = vec![0; n * out_len];
                        shake.hash_many_on(path, msg_len, &msgs, out_len, &mut out);
                        for (i, (got, want)) in out.chunks(out_len).zip(&full).enumerate() {
                            assert_eq!(
                                got,
                                &want[..out_len],
                                "{name} on {path}: message {i} of {n}, {msg_len} bytes, \
                                 {out_len} out"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// No messages: no output and no panic; empty messages: SHAKE of the empty string each.
#[test]
fn shake_of_no_messages() {
    for shake in [Shake::SHAKE128, Shake::SHAKE256] {
        for path in paths() {
            for out_len in [16, 24, 32, 64, shake.max_output()] {
                let mut out = [];
                shake.hash_many_on(path, 0, &[], out_len, &mut out);
                let mut three = vec![0u8; 3 * out_len];
                shake.hash_many_on(path, 0, &[], out_len, &mut three);
                let mut one = vec![0u8; out_len];
                shake.hash_many_on(path, 1, &[0], out_len, &mut one);
                assert_eq!(three[..out_len], three[2 * out_len..], "{path}");
                assert_ne!(three[..out_len], one[..], "{path}");
            }
        }
    }
}
