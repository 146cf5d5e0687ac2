//! The Keccak lane kernels against the portable permutation, and [`Shake`] against the `sha3`
//! crate, on every path this CPU supports.

use sha3::digest::{ExtendableOutput, Update, XofReader};

use super::{Shake, permute_lanes, permute_picked, permute_portable};
use crate::{Isa, ManyHash};

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
fn paths() -> Vec<Isa> {
    Isa::supported()
}

#[test]
fn paths_tested_are_the_supported_paths() {
    let tested = paths();
    let supported: Vec<Isa> = Isa::ALL.into_iter().filter(|p| p.is_supported()).collect();
    assert_eq!(tested, supported);
    assert_eq!(tested, Isa::supported());
    assert!(tested.contains(&Isa::Portable));
    #[cfg(target_arch = "x86_64")]
    {
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        assert_eq!(tested.contains(&Isa::Avx2), avx2);
        let avx512 = std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw");
        assert_eq!(tested.contains(&Isa::Avx512), avx512);
    }
    eprintln!("Keccak paths tested: {tested:?}");
}

/// Keccak-f\[1600\] of the all-zero state: the first lanes of the Keccak team's
/// `KeccakF-1600-IntermediateValues.txt`.
#[test]
fn zero_state_known_answer() {
    for isa in paths() {
        for n in 0..=20 {
            let mut states = vec![[0u64; 25]; n];
            permute_lanes(isa, &mut states);
            for s in &states {
                assert_eq!(s[0], 0xF125_8F79_40E1_DDE7, "{isa}, {n} lanes");
                assert_eq!(s[1], 0x84D5_CCF9_33C0_478A, "{isa}, {n} lanes");
                assert_eq!(s[24], 0xEAF1_FF7B_5CEC_A249, "{isa}, {n} lanes");
            }
        }
    }
}

#[test]
fn permute_lanes_matches_portable() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for isa in paths() {
        for n in 0..=20 {
            let start: Vec<[u64; 25]> = (0..n).map(|_| rng.state()).collect();
            let mut expected = start.clone();
            let mut got = start;
            for twice in 1..=2 {
                expected.iter_mut().for_each(permute_portable);
                permute_lanes(isa, &mut got);
                assert_eq!(got, expected, "{isa}, {n} lanes, application {twice}");
            }
        }
    }
}

/// Picked states (every subset pattern of a stride, 0 to 20 of 24 states) are permuted
/// where they are, the others left alone, on every path.
#[test]
fn permute_picked_matches_portable() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for isa in paths() {
        for stride in 1..=4 {
            for n in 0..=20 {
                let start: Vec<[u64; 25]> = (0..24).map(|_| rng.state()).collect();
                let picked: Vec<usize> = (0..24).step_by(stride).take(n).collect();
                let mut expected = start.clone();
                for &i in &picked {
                    permute_portable(&mut expected[i]);
                }
                let mut got = start;
                permute_picked(isa, &mut got, &picked);
                assert_eq!(got, expected, "{isa}, {picked:?}");
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
                super::avx512::permute8_each(&mut got.each_mut());
                assert_eq!(got, expected, "permute8, application {twice}");
            }
        }
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
        {
            let mut got: [[u64; 25]; 9] = core::array::from_fn(|_| rng.state());
            let mut expected = got;
            for twice in 1..=2 {
                expected.iter_mut().for_each(permute_portable);
                let (eight, one) = got.split_at_mut(8);
                let eight: &mut [[u64; 25]; 8] = eight.try_into().expect("8 states");
                super::avx512::permute8_plus_one(&mut eight.each_mut(), &mut one[0]);
                assert_eq!(got, expected, "permute8_plus_one, application {twice}");
            }
        }
        {
            let mut got = rng.state();
            let mut expected = got;
            for twice in 1..=2 {
                permute_portable(&mut expected);
                super::permute_one(&mut got);
                assert_eq!(got, expected, "permute_one, application {twice}");
                super::scalar::permute(&mut got);
                permute_portable(&mut expected);
                assert_eq!(
                    got, expected,
                    "scalar::permute (baseline build), application {twice}"
                );
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
        if super::avx2::vl::available() {
            // 1 to 4 states; the states after them are not touched.
            for n in 1..=4 {
                let mut got: [[u64; 25]; 4] = core::array::from_fn(|_| rng.state());
                let mut expected = got;
                for twice in 1..=2 {
                    expected[..n].iter_mut().for_each(permute_portable);
                    super::avx2::vl::permute(&mut got.each_mut()[..n]);
                    assert_eq!(got, expected, "vl::permute of {n}, application {twice}");
                }
            }
        }
    }
}

/// `len` bytes of SHAKE128 or SHAKE256 of `msg` (the `sha3` crate).
pub(super) fn oracle(shake: Shake, msg: &[u8], len: usize) -> Vec<u8> {
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
        for isa in paths() {
            for msg_len in 1..=420 {
                for n in [1, 3, 4, 6, 8, 9, 13, 17] {
                    let msgs = rng.bytes(n * msg_len);
                    let full: Vec<Vec<u8>> = msgs
                        .chunks(msg_len)
                        .map(|m| oracle(shake, m, rate))
                        .collect();
                    for out_len in [16, 20, 24, 32, 40, 64, rate] {
                        let mut out = vec![0; n * out_len];
                        shake.hash_many_on(isa, msg_len, &msgs, out_len, &mut out);
                        for (i, (got, want)) in out.chunks(out_len).zip(&full).enumerate() {
                            assert_eq!(
                                got,
                                &want[..out_len],
                                "{name} on {isa}: message {i} of {n}, {msg_len} bytes, \
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
        for isa in paths() {
            for out_len in [16, 24, 32, 64, shake.max_output()] {
                let mut out = [];
                shake.hash_many_on(isa, 0, &[], out_len, &mut out);
                let mut three = vec![0u8; 3 * out_len];
                shake.hash_many_on(isa, 0, &[], out_len, &mut three);
                let mut one = vec![0u8; out_len];
                shake.hash_many_on(isa, 1, &[0], out_len, &mut one);
                assert_eq!(three[..out_len], three[2 * out_len..], "{isa}");
                assert_ne!(three[..out_len], one[..], "{isa}");
            }
        }
    }
}

/// A message as SLH-DSA-SHAKE's F forms it, PK.seed ‖ ADRS ‖ M (2n + 32 bytes): random bytes,
/// with `junk` at the hash address and M (which the chain code overwrites) or zeros there.
fn f_message(rng: &mut Rng, n: usize, junk: bool) -> Vec<u8> {
    let mut m = rng.bytes(2 * n + 32);
    if !junk {
        m[n + 28..].fill(0);
    }
    m
}

/// SLH-DSA-SHAKE's F as a chain layout: PK.seed ‖ ADRS ‖ M, the hash address the step
/// counter (FIPS 205 §11.1).
fn f_layout(n: usize) -> crate::Layout {
    crate::Layout {
        msg_len: 2 * n + 32,
        step_at: n + 28,
        step_bytes: 4,
        value_at: n + 32,
        n,
    }
}

/// The one-block state of a message: the message, then SHAKE's padding for `rate`.
fn template(msg: &[u8], rate: usize) -> [u64; 25] {
    let mut bytes = [0u8; 200];
    bytes[..msg.len()].copy_from_slice(msg);
    bytes[msg.len()] ^= 0x1F;
    bytes[rate - 1] ^= 0x80;
    core::array::from_fn(|i| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().expect("8")))
}

/// Lane start and end steps: random in 0..=16 with `at ≤ end`, and the edge cases.
fn steps<const W: usize>(rng: &mut Rng, case: usize) -> ([u32; W], [u32; W]) {
    let mut at = [0u32; W];
    let mut end = [0u32; W];
    for l in 0..W {
        let (a, b) = ((rng.next() % 17) as u32, (rng.next() % 17) as u32);
        (at[l], end[l]) = match case % 4 {
            0 => (a.min(b), a.max(b)),
            1 => (a, a),
            2 => (0, 16),
            _ => (a.min(b) / 2, a.max(b)),
        };
    }
    (at, end)
}

/// A kernel prelude in every other case: SLH-DSA-SHAKE's (the WOTS_PRF type, byte n + 19)
/// or a random byte of PK.seed or ADRS before the hash address, with a random non-zero XOR.
#[cfg(target_arch = "x86_64")]
fn prelude(rng: &mut Rng, n: usize, case: usize) -> Option<(usize, u64)> {
    let (at, xor) = match case % 4 {
        1 => (n + 19, 5),
        3 => (
            usize::try_from(rng.next() % 64).expect("< 64") % (n + 28),
            u8::try_from(rng.next() % 255 + 1).expect("1‥255"),
        ),
        _ => return None,
    };
    Some(super::prelude_lane(crate::Prelude { at, xor }))
}

/// The pipelined kernels on SLH-DSA-SHAKE's F layouts, with and without a prelude, against
/// the portable twin.
#[cfg(target_arch = "x86_64")]
#[test]
fn chain_kernels_match_portable() {
    use super::{ChainGroup, chains_portable};
    let mut rng = Rng(0x5851_F42D_4C95_7F2D);
    for n in [16, 24, 32] {
        for case in 0..40 {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
            {
                let templates: [[u64; 25]; 8] =
                    core::array::from_fn(|_| template(&f_message(&mut rng, n, false), 136));
                let (at, end) = steps::<8>(&mut rng, case);
                let g = ChainGroup {
                    templates: &templates,
                    step_at: n + 28,
                    value_at: n + 32,
                    n,
                    at,
                    end,
                    prelude: prelude(&mut rng, n, case),
                };
                let start: [[u8; 32]; 8] =
                    core::array::from_fn(|_| rng.bytes(32).try_into().expect("32"));
                let (mut got, mut want) = (start, start);
                super::avx512::chains8(&g, &mut got);
                chains_portable(&g, &mut want);
                for l in 0..8 {
                    assert_eq!(got[l][..n], want[l][..n], "chains8, n = {n}, case {case}");
                }
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                let templates: [[u64; 25]; 4] =
                    core::array::from_fn(|_| template(&f_message(&mut rng, n, false), 136));
                let (at, end) = steps::<4>(&mut rng, case);
                let g = ChainGroup {
                    templates: &templates,
                    step_at: n + 28,
                    value_at: n + 32,
                    n,
                    at,
                    end,
                    prelude: prelude(&mut rng, n, case),
                };
                let start: [[u8; 32]; 4] =
                    core::array::from_fn(|_| rng.bytes(32).try_into().expect("32"));
                let (mut got, mut want) = (start, start);
                super::avx2::chains4(&g, &mut got);
                chains_portable(&g, &mut want);
                for l in 0..4 {
                    assert_eq!(got[l][..n], want[l][..n], "chains4, n = {n}, case {case}");
                }
            }
        }
    }
}

/// One chain step by the `sha3` crate: SHAKE of the message with j and the value written in.
#[test]
fn chains_portable_matches_sha3() {
    use super::{ChainGroup, chains_portable};
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for n in [16, 24, 32] {
        let msg = f_message(&mut rng, n, false);
        let templates = [template(&msg, 136)];
        let value: [u8; 32] = rng.bytes(32).try_into().expect("32");
        let mut want = value;
        for j in 3..9u32 {
            let mut m = msg.clone();
            m[n + 28..n + 32].copy_from_slice(&j.to_be_bytes());
            m[n + 32..].copy_from_slice(&want[..n]);
            want[..n].copy_from_slice(&oracle(Shake::SHAKE256, &m, n));
        }
        let g = ChainGroup {
            templates: &templates,
            step_at: n + 28,
            value_at: n + 32,
            n,
            at: [3],
            end: [9],
            prelude: None,
        };
        let mut got = [value];
        chains_portable(&g, &mut got);
        assert_eq!(got[0][..n], want[..n], "n = {n}");
    }
}

/// `fixed_chains` on F's layout, 1‥40 chains, on every path, against the portable twin chain
/// by chain (chains with `at ≥ end` unchanged).
#[test]
fn fixed_chains_match_portable() {
    use super::{ChainGroup, chains_portable};
    use crate::{Chain, fixed_chains};
    let mut rng = Rng(0x853C_49E6_748F_EA9B);
    for shake in [Shake::SHAKE256, Shake::SHAKE128] {
        for n in [16, 24, 32] {
            let layout = f_layout(n);
            for count in 1..=40 {
                let case = count % 5;
                let msgs: Vec<Vec<u8>> = (0..count)
                    .map(|_| f_message(&mut rng, n, case != 0))
                    .collect();
                let start: Vec<Chain> = (0..count)
                    .map(|i| {
                        let (at, end) = match case {
                            // Any order, at > end included.
                            4 => ((rng.next() % 17) as u32, (rng.next() % 17) as u32),
                            _ => {
                                let ([at], [end]) = steps::<1>(&mut rng, case);
                                (at, end)
                            }
                        };
                        Chain::new(u32::try_from(i).expect("40"), at, end, &rng.bytes(n))
                    })
                    .collect();
                let want: Vec<Chain> = start
                    .iter()
                    .zip(&msgs)
                    .map(|(c, m)| {
                        if c.at >= c.end {
                            return *c;
                        }
                        let mut clean = m.clone();
                        clean[n + 28..].fill(0);
                        let templates = [template(&clean, shake.max_output())];
                        let g = ChainGroup {
                            templates: &templates,
                            step_at: n + 28,
                            value_at: n + 32,
                            n,
                            at: [c.at],
                            end: [c.end],
                            prelude: None,
                        };
                        let mut v = [c.value];
                        chains_portable(&g, &mut v);
                        Chain {
                            at: c.end,
                            value: v[0],
                            ..*c
                        }
                    })
                    .collect();
                let messages = msgs.concat();
                for isa in paths() {
                    let mut got = start.clone();
                    let before = crate::stats::thread_counts();
                    crate::dispatch::with_isa(isa, || {
                        fixed_chains(&shake, &layout, &mut got, &messages);
                    })
                    .expect("supported");
                    let permutations: u64 = start
                        .iter()
                        .map(|c| u64::from(c.end.saturating_sub(c.at)))
                        .sum();
                    assert_eq!(
                        crate::stats::thread_counts().since(before).keccak,
                        permutations,
                        "{isa}: permutations counted"
                    );
                    assert_eq!(got, want, "{isa}, rate {}, n = {n}, {count} chains", {
                        shake.max_output()
                    });
                }
            }
        }
    }
}

/// `fixed_chains_with_prelude` on every path against the general one on the portable path
/// (the preludes as a batch of hashes, then the steps): SLH-DSA-SHAKE's F layouts (n = 16,
/// 24, 32; the WOTS_PRF type at byte n + 19), chains with and without steps (and one with
/// at > end), counts around the kernel widths; the permutations counted.
#[test]
fn prelude_chains_match_general() {
    use crate::{Chain, Prelude};
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for shake in [Shake::SHAKE256, Shake::SHAKE128] {
        for n in [16, 24, 32] {
            let layout = f_layout(n);
            let prelude = Prelude { at: n + 19, xor: 5 };
            for count in [1, 3, 4, 5, 8, 9, 17, 35, 70] {
                let msgs: Vec<Vec<u8>> = (0..count).map(|_| f_message(&mut rng, n, true)).collect();
                let start: Vec<Chain> = (0..count)
                    .map(|i| {
                        let (at, end) = match i % 5 {
                            0 => (0, 0),
                            1 => (9, 4),
                            _ => ((rng.next() % 4) as u32, (rng.next() % 17) as u32),
                        };
                        Chain::new(u32::try_from(i).expect("70"), at, end, &rng.bytes(n))
                    })
                    .collect();
                let message = |k: usize, _: &Chain, m: &mut [u8]| m.copy_from_slice(&msgs[k]);
                let mut want = start.clone();
                crate::chain::prelude_chains_general(
                    &shake,
                    Isa::Portable,
                    &layout,
                    prelude,
                    &mut want,
                    &message,
                );
                for isa in paths() {
                    let mut got = start.clone();
                    let before = crate::stats::thread_counts();
                    crate::dispatch::with_isa(isa, || {
                        crate::fixed_chains_with_prelude(
                            &shake, &layout, prelude, &mut got, &message,
                        );
                    })
                    .expect("supported");
                    let name = format!("{isa}, rate {}, n = {n}, {count} chains", {
                        shake.max_output()
                    });
                    assert_eq!(got, want, "{name}");
                    let permutations: u64 = start
                        .iter()
                        .map(|c| u64::from(c.end.saturating_sub(c.at)) + 1)
                        .sum();
                    assert_eq!(
                        crate::stats::thread_counts().since(before).keccak,
                        permutations,
                        "{name}: permutations counted"
                    );
                }
            }
        }
    }
}

/// Each permutation counted once, and as alone only where it ran alone: a single state on the
/// vector paths (on AVX2 also one left over beside full calls of 4; on AVX-512 a ninth rides
/// the call of 8), every state on the others — for contiguous and picked states alike.
#[test]
fn permutations_counted_once() {
    let mut rng = Rng(0x5851_F42D_4C95_7F2D);
    for isa in paths() {
        let alone = |n: usize| -> u64 {
            match isa {
                Isa::Avx512 => u64::from(n == 1),
                Isa::Avx2 => u64::from(n % 4 == 1),
                _ => n as u64,
            }
        };
        for n in 0..=20 {
            let mut states: Vec<[u64; 25]> = (0..24).map(|_| rng.state()).collect();
            let before = crate::stats::thread_counts();
            permute_lanes(isa, &mut states[..n]);
            let done = crate::stats::thread_counts().since(before);
            assert_eq!(
                (done.keccak, done.keccak_alone),
                (n as u64, alone(n)),
                "{isa}, {n} lanes"
            );
            let picked: Vec<usize> = (0..24).step_by(2).take(n).collect();
            let before = crate::stats::thread_counts();
            permute_picked(isa, &mut states, &picked);
            let done = crate::stats::thread_counts().since(before);
            assert_eq!(
                (done.keccak, done.keccak_alone),
                (picked.len() as u64, alone(picked.len())),
                "{isa}, {picked:?} picked"
            );
        }
    }
}
