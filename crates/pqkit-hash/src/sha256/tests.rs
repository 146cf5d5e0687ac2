//! Every SHA-256 path against the portable compression and against the `sha2` crate.

use sha2::Digest;

use super::{Sha256Prefix, compress_lanes, compress_sequential, portable};
use crate::{ManyHash, Path};

/// xorshift64*: reproducible test inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let x = self.next().to_le_bytes();
            chunk.copy_from_slice(&x[..chunk.len()]);
        }
    }

    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut b = [0u8; N];
        self.fill(&mut b);
        b
    }

    fn state(&mut self) -> [u32; 8] {
        core::array::from_fn(|_| (self.next() >> 32) as u32)
    }
}

/// Runs `f` on every supported path and returns the paths it ran on.
fn each_path(mut f: impl FnMut(Path)) -> Vec<Path> {
    let mut tested = Vec::new();
    for path in Path::supported() {
        f(path);
        tested.push(path);
    }
    tested
}

fn portable_lanes(states: &mut [[u32; 8]], blocks: &[&[u8; 64]]) {
    for (s, b) in states.iter_mut().zip(blocks) {
        portable::compress(s, b);
    }
}

#[test]
fn lanes_match_portable() {
    let mut rng = Rng::new(1);
    let tested = each_path(|path| {
        for lanes in 0..=40 {
            for _ in 0..3 {
                let blocks: Vec<[u8; 64]> = (0..lanes).map(|_| rng.bytes()).collect();
                let ptrs: Vec<&[u8; 64]> = blocks.iter().collect();
                let states: Vec<[u32; 8]> = (0..lanes).map(|_| rng.state()).collect();
                let mut want = states.clone();
                portable_lanes(&mut want, &ptrs);
                let mut got = states;
                compress_lanes(path, &mut got, &ptrs);
                assert_eq!(got, want, "{path}, {lanes} lanes");
            }
        }
    });
    assert_eq!(tested, Path::supported());
}

#[test]
fn lanes_with_shared_blocks_match_portable() {
    // Several lanes reading the same block, as the padding of a partial chunk does.
    let mut rng = Rng::new(2);
    let tested = each_path(|path| {
        let blocks: [[u8; 64]; 3] = core::array::from_fn(|_| rng.bytes());
        let ptrs: Vec<&[u8; 64]> = (0..37).map(|i| &blocks[i % 3]).collect();
        let states: Vec<[u32; 8]> = (0..37).map(|_| rng.state()).collect();
        let mut want = states.clone();
        portable_lanes(&mut want, &ptrs);
        let mut got = states;
        compress_lanes(path, &mut got, &ptrs);
        assert_eq!(got, want, "{path}");
    });
    assert_eq!(tested, Path::supported());
}

#[test]
fn sequential_matches_portable() {
    let mut rng = Rng::new(3);
    let tested = each_path(|path| {
        for n in 0..=5 {
            for _ in 0..8 {
                let blocks: Vec<[u8; 64]> = (0..n).map(|_| rng.bytes()).collect();
                let state = rng.state();
                let mut want = state;
                for b in &blocks {
                    portable::compress(&mut want, b);
                }
                let mut got = state;
                compress_sequential(path, &mut got, &blocks);
                assert_eq!(got, want, "{path}, {n} blocks");
            }
        }
    });
    assert_eq!(tested, Path::supported());
}

#[test]
fn hash_many_matches_sha2() {
    let mut rng = Rng::new(4);
    let prefixes: Vec<Vec<u8>> = [0, 64, 128]
        .into_iter()
        .map(|n| {
            let mut p = vec![0u8; n];
            rng.fill(&mut p);
            p
        })
        .collect();
    let paths = Path::supported();
    let mut tested = Vec::new();
    for prefix in &prefixes {
        let pre = Sha256Prefix::new(prefix);
        // msg_len 0 admits only zero messages (the count would be undefined).
        for msg_len in 1..=300 {
            for count in [1, 2, 7, 16, 17, 33] {
                let mut msgs = vec![0u8; msg_len * count];
                rng.fill(&mut msgs);
                let want: Vec<[u8; 32]> = msgs
                    .chunks_exact(msg_len)
                    .map(|m| {
                        let mut h = sha2::Sha256::new();
                        h.update(prefix);
                        h.update(m);
                        h.finalize().into()
                    })
                    .collect();
                for &path in &paths {
                    for out_len in [16, 24, 32] {
                        let mut out = vec![0u8; out_len * count];
                        pre.hash_many_on(path, msg_len, &msgs, out_len, &mut out);
                        for (i, (got, want)) in out.chunks_exact(out_len).zip(&want).enumerate() {
                            assert_eq!(
                                got,
                                &want[..out_len],
                                "{path}, prefix {}, msg_len {msg_len}, count {count}, \
                                 out_len {out_len}, message {i}",
                                prefix.len()
                            );
                        }
                    }
                    if !tested.contains(&path) {
                        tested.push(path);
                    }
                }
            }
        }
        // Zero messages of zero bytes: nothing to write.
        for &path in &paths {
            pre.hash_many_on(path, 0, &[], 32, &mut []);
        }
    }
    assert_eq!(tested, Path::supported());
}

#[test]
fn known_answer() {
    // FIPS 180-4 example "abc".
    let want = [
        0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22,
        0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00,
        0x15, 0xad,
    ];
    let tested = each_path(|path| {
        for count in [1, 16, 20] {
            let msgs = b"abc".repeat(count);
            let mut out = vec![0u8; 32 * count];
            Sha256Prefix::NONE.hash_many_on(path, 3, &msgs, 32, &mut out);
            for d in out.chunks_exact(32) {
                assert_eq!(d, want, "{path}, {count} messages");
            }
        }
    });
    assert_eq!(tested, Path::supported());
}

/// The paths this CPU should support, from the CPU itself, so that a broken
/// [`Path::is_supported`] cannot silently skip a kernel.
#[test]
fn supported_paths_are_all_tested() {
    let mut want = vec![Path::Portable];
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("sha") && has!("sse4.1") {
            want.push(Path::ShaNi);
        }
        if has!("avx2") {
            want.push(Path::Avx2);
        }
        if has!("avx512f") && has!("avx512bw") {
            want.push(Path::Avx512);
        }
    }
    assert_eq!(Path::supported(), want);
    assert_eq!(each_path(|_| {}), want);
}

#[cfg(target_arch = "x86_64")]
mod kernels {
    //! The kernels called directly, so that a dispatch mistake cannot hide one.

    use super::{Rng, portable, portable_lanes};
    use crate::sha256::{avx2, avx512, shani};
    use std::arch::is_x86_feature_detected as has;

    #[test]
    fn avx512_compress16() {
        if !(has!("avx512f") && has!("avx512bw")) {
            return;
        }
        let mut rng = Rng::new(5);
        for _ in 0..200 {
            let blocks: [[u8; 64]; 16] = core::array::from_fn(|_| rng.bytes());
            let ptrs: [&[u8; 64]; 16] = core::array::from_fn(|i| &blocks[i]);
            let states: [[u32; 8]; 16] = core::array::from_fn(|_| rng.state());
            let mut want = states;
            portable_lanes(&mut want, &ptrs);
            let mut got = states;
            avx512::compress16(&mut got, &ptrs);
            assert_eq!(got, want);
        }
    }

    #[test]
    fn avx2_compress8() {
        if !has!("avx2") {
            return;
        }
        let mut rng = Rng::new(6);
        for _ in 0..200 {
            let blocks: [[u8; 64]; 8] = core::array::from_fn(|_| rng.bytes());
            let ptrs: [&[u8; 64]; 8] = core::array::from_fn(|i| &blocks[i]);
            let states: [[u32; 8]; 8] = core::array::from_fn(|_| rng.state());
            let mut want = states;
            portable_lanes(&mut want, &ptrs);
            let mut got = states;
            avx2::compress8(&mut got, &ptrs);
            assert_eq!(got, want);
        }
    }

    #[test]
    fn shani_compress() {
        if !(has!("sha") && has!("sse4.1")) {
            return;
        }
        let mut rng = Rng::new(7);
        for n in 0..=5 {
            for _ in 0..20 {
                let blocks: Vec<[u8; 64]> = (0..n).map(|_| rng.bytes()).collect();
                let state = rng.state();
                let mut want = state;
                for b in &blocks {
                    portable::compress(&mut want, b);
                }
                let mut got = state;
                shani::compress(&mut got, &blocks);
                assert_eq!(got, want, "{n} blocks");
            }
        }
    }

    #[test]
    fn shani_compress2() {
        if !(has!("sha") && has!("sse4.1")) {
            return;
        }
        let mut rng = Rng::new(8);
        for _ in 0..200 {
            let blocks: [[u8; 64]; 2] = core::array::from_fn(|_| rng.bytes());
            let states: [[u32; 8]; 2] = core::array::from_fn(|_| rng.state());
            let mut want = states;
            portable_lanes(&mut want, &[&blocks[0], &blocks[1]]);
            let mut got = states;
            shani::compress2(&mut got, [&blocks[0], &blocks[1]]);
            assert_eq!(got, want);
        }
    }
}
