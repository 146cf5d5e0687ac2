//! Every SHA-256 path against the portable compression and against the `sha2` crate.

use sha2::Digest;

use super::{ChainGroup, Sha256Prefix, compress_lanes, compress_sequential, portable};
use crate::{Chain, IdField, Isa, Layout, ManyHash};

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
fn each_path(mut f: impl FnMut(Isa)) -> Vec<Isa> {
    let mut tested = Vec::new();
    for isa in Isa::supported() {
        f(isa);
        tested.push(isa);
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
    let tested = each_path(|isa| {
        for lanes in 0..=40 {
            for _ in 0..3 {
                let blocks: Vec<[u8; 64]> = (0..lanes).map(|_| rng.bytes()).collect();
                let ptrs: Vec<&[u8; 64]> = blocks.iter().collect();
                let states: Vec<[u32; 8]> = (0..lanes).map(|_| rng.state()).collect();
                let mut want = states.clone();
                portable_lanes(&mut want, &ptrs);
                let mut got = states;
                compress_lanes(isa, &mut got, &ptrs);
                assert_eq!(got, want, "{isa}, {lanes} lanes");
            }
        }
    });
    assert_eq!(tested, Isa::supported());
}

#[test]
fn lanes_with_shared_blocks_match_portable() {
    // Several lanes reading the same block, as the padding of a partial chunk does.
    let mut rng = Rng::new(2);
    let tested = each_path(|isa| {
        let blocks: [[u8; 64]; 3] = core::array::from_fn(|_| rng.bytes());
        let ptrs: Vec<&[u8; 64]> = (0..37).map(|i| &blocks[i % 3]).collect();
        let states: Vec<[u32; 8]> = (0..37).map(|_| rng.state()).collect();
        let mut want = states.clone();
        portable_lanes(&mut want, &ptrs);
        let mut got = states;
        compress_lanes(isa, &mut got, &ptrs);
        assert_eq!(got, want, "{isa}");
    });
    assert_eq!(tested, Isa::supported());
}

#[test]
fn sequential_matches_portable() {
    let mut rng = Rng::new(3);
    let tested = each_path(|isa| {
        for n in 0..=5 {
            for _ in 0..8 {
                let blocks: Vec<[u8; 64]> = (0..n).map(|_| rng.bytes()).collect();
                let state = rng.state();
                let mut want = state;
                for b in &blocks {
                    portable::compress(&mut want, b);
                }
                let mut got = state;
                compress_sequential(isa, &mut got, &blocks);
                assert_eq!(got, want, "{isa}, {n} blocks");
            }
        }
    });
    assert_eq!(tested, Isa::supported());
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
    let paths = Isa::supported();
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
                for &isa in &paths {
                    for out_len in [16, 24, 32] {
                        let mut out = vec![0u8; out_len * count];
                        pre.hash_many_on(isa, msg_len, &msgs, out_len, &mut out);
                        for (i, (got, want)) in out.chunks_exact(out_len).zip(&want).enumerate() {
                            assert_eq!(
                                got,
                                &want[..out_len],
                                "{isa}, prefix {}, msg_len {msg_len}, count {count}, \
                                 out_len {out_len}, message {i}",
                                prefix.len()
                            );
                        }
                    }
                    if !tested.contains(&isa) {
                        tested.push(isa);
                    }
                }
            }
        }
        // Zero messages of zero bytes: nothing to write.
        for &isa in &paths {
            pre.hash_many_on(isa, 0, &[], 32, &mut []);
        }
    }
    assert_eq!(tested, Isa::supported());
}

/// Chain layouts as (value_at, n, step_at, step_bytes): SLH-DSA-SHA2's F and LMS's chain step
/// exactly, then every value alignment, n and step width at various alignments, the step
/// before, after and in the same word as the value's ends, up to byte 55.
const CHAIN_LAYOUTS: [(usize, usize, usize, usize); 20] = [
    (22, 16, 18, 4),
    (22, 24, 18, 4),
    (22, 32, 18, 4),
    (23, 32, 22, 1),
    (23, 24, 22, 1),
    (23, 16, 22, 1),
    (0, 16, 16, 4),
    (1, 32, 40, 1),
    (2, 24, 30, 4),
    (3, 16, 20, 4),
    (5, 32, 0, 4),
    (38, 16, 37, 1),
    (39, 16, 34, 4),
    (4, 32, 36, 4),
    (13, 8, 1, 4),
    (50, 4, 54, 1),
    (21, 16, 17, 4),
    (20, 32, 52, 1),
    (7, 24, 31, 4),
    (10, 16, 6, 4),
];

/// A random chain message for `layout` (zeros under the step counter and the value, as the
/// callers leave them) and its padded one-block template after a `prefix_len`-byte prefix.
fn chain_message(rng: &mut Rng, layout: &Layout, prefix_len: usize) -> (Vec<u8>, [u8; 64]) {
    let mut msg = vec![0u8; layout.msg_len];
    rng.fill(&mut msg);
    msg[layout.step_at..layout.step_at + layout.step_bytes].fill(0);
    msg[layout.value_at..layout.value_at + layout.n].fill(0);
    let mut block = [0u8; 64];
    block[..msg.len()].copy_from_slice(&msg);
    block[msg.len()] = 0x80;
    block[56..].copy_from_slice(&(((prefix_len + msg.len()) * 8) as u64).to_be_bytes());
    (msg, block)
}

fn chain_layout(
    rng: &mut Rng,
    (value_at, n, step_at, step_bytes): (usize, usize, usize, usize),
) -> Layout {
    let used = (value_at + n).max(step_at + step_bytes);
    Layout {
        msg_len: used + (rng.next() % 56) as usize % (56 - used),
        step_at,
        step_bytes,
        value_at,
        n,
    }
}

/// Random steps 0..=16 (`at <= end`); some groups with every lane alike, or no step at all.
fn chain_steps<const W: usize>(rng: &mut Rng) -> ([u32; W], [u32; W]) {
    let pick = |rng: &mut Rng| {
        let a = (rng.next() % 17) as u32;
        let b = (rng.next() % 17) as u32;
        (a.min(b), a.max(b))
    };
    match rng.next() % 4 {
        0 => {
            let (a, e) = pick(rng);
            let a = if rng.next().is_multiple_of(2) { e } else { a };
            ([a; W], [e; W])
        }
        _ => {
            let mut at = [0; W];
            let mut end = [0; W];
            for (a, e) in at.iter_mut().zip(&mut end) {
                (*a, *e) = pick(rng);
            }
            (at, end)
        }
    }
}

/// An id field of 1, 2 or 4 bytes in one word of the message, clear of the step counter and
/// the value, if the layout leaves room for one.
fn id_field(rng: &mut Rng, layout: &Layout) -> Option<IdField> {
    let bytes = [1, 2, 4][(rng.next() % 3) as usize];
    let fits: Vec<IdField> = (0..layout.msg_len)
        .map(|at| IdField { at, bytes })
        .filter(|f| f.fits(layout))
        .collect();
    (!fits.is_empty())
        .then(|| fits[usize::try_from(rng.next() % fits.len() as u64).expect("small")])
}

/// A prelude byte of `layout`'s message clear of the step counter and the value, and a
/// non-zero XOR for it (none when the two fill the message).
fn prelude_for(rng: &mut Rng, layout: &Layout) -> Option<crate::Prelude> {
    let clear: Vec<usize> = (0..layout.msg_len)
        .filter(|&b| {
            !(layout.step_at..layout.step_at + layout.step_bytes).contains(&b)
                && !(layout.value_at..layout.value_at + layout.n).contains(&b)
        })
        .collect();
    (!clear.is_empty()).then(|| crate::Prelude {
        at: clear[usize::try_from(rng.next() % clear.len() as u64).expect("small")],
        xor: (rng.next() % 255) as u8 + 1,
    })
}

/// Runs `kernel` on random groups of every layout against [`portable::chains`]; with
/// `preludes`, every other group takes a prelude.
fn group_kernel_matches_portable<const W: usize>(
    seed: u64,
    preludes: bool,
    kernel: impl Fn(&ChainGroup<'_, W>, &mut [[u8; 32]; W]),
) {
    let mut rng = Rng::new(seed);
    for &l in &CHAIN_LAYOUTS {
        for k in 0..24 {
            let layout = chain_layout(&mut rng, l);
            let templates: [[u8; 64]; W] =
                core::array::from_fn(|_| chain_message(&mut rng, &layout, 64).1);
            let (at, end) = chain_steps::<W>(&mut rng);
            let prelude = (preludes && k % 2 == 1)
                .then(|| prelude_for(&mut rng, &layout))
                .flatten()
                .map(super::prelude_word);
            let g = ChainGroup {
                midstate: rng.state(),
                templates: &templates,
                step_at: layout.step_at,
                step_bytes: layout.step_bytes,
                value_at: layout.value_at,
                n: layout.n,
                at,
                end,
                prelude,
            };
            let values: [[u8; 32]; W] = core::array::from_fn(|_| rng.bytes());
            let mut want = values;
            portable::chains(&g, &mut want);
            let mut got = values;
            kernel(&g, &mut got);
            assert_eq!(got, want, "{layout:?}, at {at:?}, end {end:?}, {prelude:?}");
        }
    }
}

#[test]
fn portable_chains_match_sha2() {
    // The reference against an independent SHA-256: step by step with the sha2 crate.
    let mut rng = Rng::new(9);
    let prefix: [u8; 64] = rng.bytes();
    let pre = Sha256Prefix::new(&prefix);
    for &l in &CHAIN_LAYOUTS {
        let layout = chain_layout(&mut rng, l);
        let (msg, block) = chain_message(&mut rng, &layout, 64);
        let (at, end) = (3, 7);
        let g = ChainGroup {
            midstate: pre.state,
            templates: &[block],
            step_at: layout.step_at,
            step_bytes: layout.step_bytes,
            value_at: layout.value_at,
            n: layout.n,
            at: [at],
            end: [end],
            prelude: None,
        };
        let start: [u8; 32] = rng.bytes();
        let mut got = [start];
        portable::chains(&g, &mut got);
        let mut want = start;
        let mut m = msg.clone();
        for j in at..end {
            layout.put_step(&mut m, j);
            m[layout.value_at..layout.value_at + layout.n].copy_from_slice(&want[..layout.n]);
            let mut h = sha2::Sha256::new();
            h.update(prefix);
            h.update(&m);
            let d: [u8; 32] = h.finalize().into();
            want[..layout.n].copy_from_slice(&d[..layout.n]);
        }
        assert_eq!(got[0], want, "{layout:?}");
    }
}

#[test]
fn fixed_chains_match_portable() {
    let mut rng = Rng::new(10);
    let prefix: [u8; 64] = rng.bytes();
    let pre = Sha256Prefix::new(&prefix);
    let tested = each_path(|isa| {
        for &l in &CHAIN_LAYOUTS {
            for count in 1..=40 {
                let layout = chain_layout(&mut rng, l);
                let mut msgs = Vec::new();
                let mut want = Vec::new();
                let mut chains = Vec::new();
                // Steps of groups of 8 chains alike at times, as callers group them.
                let mut steps = chain_steps::<8>(&mut rng);
                for i in 0..count {
                    if i % 8 == 0 {
                        steps = chain_steps::<8>(&mut rng);
                    }
                    let (msg, block) = chain_message(&mut rng, &layout, 64);
                    msgs.extend_from_slice(&msg);
                    let mut chain = Chain::new(
                        u32::try_from(i).expect("40 chains"),
                        steps.0[i % 8],
                        steps.1[i % 8],
                        &[],
                    );
                    chain.value = rng.bytes();
                    chains.push(chain);
                    let g = ChainGroup {
                        midstate: pre.state,
                        templates: &[block],
                        step_at: layout.step_at,
                        step_bytes: layout.step_bytes,
                        value_at: layout.value_at,
                        n: layout.n,
                        at: [chain.at],
                        end: [chain.end],
                        prelude: None,
                    };
                    let mut value = [chain.value];
                    portable::chains(&g, &mut value);
                    want.push(Chain {
                        at: chain.end,
                        value: value[0],
                        ..chain
                    });
                }
                let hashes: u64 = chains.iter().map(|c| u64::from(c.end - c.at)).sum();
                let before = crate::stats::thread_counts();
                crate::dispatch::with_isa(isa, || {
                    crate::fixed_chains(&pre, &layout, &mut chains, &msgs);
                })
                .expect("a supported path");
                assert_eq!(chains, want, "{isa}, {layout:?}, {count} chains");
                assert_eq!(
                    crate::stats::thread_counts().since(before).sha256,
                    hashes,
                    "{isa}, {layout:?}, {count} chains: compressions counted"
                );
            }
        }
    });
    assert_eq!(tested, Isa::supported());
}

/// `fixed_chains_with_prelude` on every path against the general one on the portable path
/// (the preludes as a batch of hashes, then the steps): SLH-DSA-SHA2's F layouts (n = 16, 24,
/// 32 after a 64-byte prefix, the WOTS_PRF type at byte 9) and other layouts, chains with and
/// without steps, counts around the kernel widths.
#[test]
fn prelude_chains_match_general() {
    let mut rng = Rng::new(14);
    let prefix: [u8; 64] = rng.bytes();
    let pre = Sha256Prefix::new(&prefix);
    let slh = |n| Layout {
        msg_len: 22 + n,
        step_at: 18,
        step_bytes: 4,
        value_at: 22,
        n,
    };
    let tested = each_path(|isa| {
        for (k, count) in [1, 3, 5, 16, 17, 35, 70].into_iter().enumerate() {
            for layout in [
                slh(16),
                slh(24),
                slh(32),
                chain_layout(&mut rng, CHAIN_LAYOUTS[k % 8]),
            ] {
                let prelude = if layout.step_at == 18 {
                    crate::Prelude { at: 9, xor: 5 }
                } else if let Some(p) = prelude_for(&mut rng, &layout) {
                    p
                } else {
                    continue;
                };
                let msgs: Vec<Vec<u8>> = (0..count)
                    .map(|_| chain_message(&mut rng, &layout, 64).0)
                    .collect();
                let mut chains: Vec<Chain> = (0..count)
                    .map(|i| {
                        let end = (rng.next() % 16) as u32;
                        let mut c = Chain::new(i, 0, if i % 4 == 0 { 0 } else { end }, &[]);
                        c.value = rng.bytes();
                        c
                    })
                    .collect();
                let mut want = chains.clone();
                let message = |k: usize, _: &Chain, m: &mut [u8]| m.copy_from_slice(&msgs[k]);
                crate::dispatch::with_isa(Isa::Portable, || {
                    crate::chain::prelude_chains_general(
                        &pre,
                        Isa::Portable,
                        &layout,
                        prelude,
                        &mut want,
                        &message,
                    );
                })
                .expect("the portable path");
                let before = crate::stats::thread_counts();
                crate::dispatch::with_isa(isa, || {
                    crate::fixed_chains_with_prelude(&pre, &layout, prelude, &mut chains, &message);
                })
                .expect("a supported path");
                let name = format!("{isa}, {layout:?}, {prelude:?}, {count} chains");
                assert_eq!(chains, want, "{name}");
                let hashes: u64 = want.iter().map(|c| u64::from(c.end) + 1).sum();
                let counted = crate::stats::thread_counts().since(before).sha256;
                assert_eq!(counted, hashes, "{name}: compressions counted");
            }
        }
    });
    assert_eq!(tested, Isa::supported());
}

/// LM-OTS's chain step layout for n-byte values: I ‖ u32str(q) ‖ u16str(i) ‖ u8str(j) ‖ tmp.
fn lms_layout(n: usize) -> Layout {
    Layout {
        msg_len: 23 + n,
        step_at: 22,
        step_bytes: 1,
        value_at: 23,
        n,
    }
}

/// `shared_chains` on every path against chains whose messages are written out (the portable
/// `fixed_chains`): LM-OTS's layouts (n = 32 and 24, u16str(i) at byte 20) with LM-OTS's
/// chain lengths (0–3 and 0–15 steps, and the signer's 0xff start), other id fields, and
/// counts around the kernel widths.
#[test]
fn shared_chains_match_fixed_chains() {
    let mut rng = Rng::new(13);
    let tested = each_path(|isa| {
        for (k, count) in [1, 4, 5, 16, 17, 33, 67, 133, 265].into_iter().enumerate() {
            for (layout, id) in [
                (lms_layout(32), Some(IdField { at: 20, bytes: 2 })),
                (lms_layout(24), Some(IdField { at: 20, bytes: 2 })),
                // Two blocks: the general path on every engine path.
                (
                    Layout {
                        msg_len: 70,
                        ..lms_layout(32)
                    },
                    Some(IdField { at: 60, bytes: 4 }),
                ),
                (chain_layout(&mut rng, CHAIN_LAYOUTS[k % 8]), None),
            ] {
                let Some(id) = id.or_else(|| id_field(&mut rng, &layout)) else {
                    continue;
                };
                let mut shared = vec![0u8; layout.msg_len];
                rng.fill(&mut shared);
                let mut chains: Vec<Chain> = (0..count)
                    .map(|i| {
                        let (at, end) = match rng.next() % 3 {
                            0 => (0xff, 0x100 + (rng.next() % 4) as u32),
                            1 => ((rng.next() % 4) as u32, 3),
                            _ => ((rng.next() % 16) as u32, 15),
                        };
                        let mut c = Chain::new(i, at, end, &[]);
                        c.value = rng.bytes();
                        c
                    })
                    .collect();
                let mut want = chains.clone();
                let msgs: Vec<u8> = want
                    .iter()
                    .flat_map(|c| {
                        let mut m = shared.clone();
                        id.put(&mut m, c.id);
                        m
                    })
                    .collect();
                crate::dispatch::with_isa(Isa::Portable, || {
                    crate::fixed_chains(&Sha256Prefix::NONE, &layout, &mut want, &msgs);
                })
                .expect("the portable path");
                crate::dispatch::with_isa(isa, || {
                    crate::shared_chains(&Sha256Prefix::NONE, &layout, id, &shared, &mut chains);
                })
                .expect("a supported path");
                assert_eq!(chains, want, "{isa}, {layout:?}, {id:?}, {count} chains");
            }
        }
    });
    assert_eq!(tested, Isa::supported());
}

/// `shared_chains_to_end` on every path against `shared_chains` on the portable path, chain by chain:
/// LM-OTS's layouts (n = 32 and 24) and digit widths (ends 1, 3, 15, 255), starts anywhere
/// from 0 to past the end (chains without steps), and counts around the kernel widths and
/// the sort's 64-chain compares.
#[test]
fn shared_chains_to_end_match_shared_chains() {
    let mut rng = Rng::new(19);
    let id = IdField { at: 20, bytes: 2 };
    let tested = each_path(|isa| {
        for count in [0, 1, 4, 5, 16, 17, 33, 64, 65, 67, 133, 265, 300] {
            for n in [32, 24] {
                for end in [1u32, 3, 15, 255] {
                    let layout = lms_layout(n);
                    let mut shared = vec![0u8; layout.msg_len];
                    rng.fill(&mut shared);
                    let starts: Vec<u8> = (0..count)
                        .map(|_| match rng.next() % 8 {
                            0 => 255,
                            _ => u8::try_from(rng.next() % u64::from(end + 1)).expect("≤ 255"),
                        })
                        .collect();
                    let mut values = vec![0u8; count * n];
                    rng.fill(&mut values);
                    let mut want: Vec<Chain> = (0u32..)
                        .zip(&starts)
                        .zip(values.chunks_exact(n))
                        .map(|((i, &a), v)| Chain::new(i, u32::from(a), end, v))
                        .collect();
                    crate::dispatch::with_isa(Isa::Portable, || {
                        crate::shared_chains(&Sha256Prefix::NONE, &layout, id, &shared, &mut want);
                    })
                    .expect("the portable path");
                    let mut out = vec![0u8; count * n];
                    let ends = crate::ChainEnds {
                        starts: &starts,
                        values: &values,
                        end,
                    };
                    let before = crate::stats::thread_counts();
                    crate::dispatch::with_isa(isa, || {
                        crate::shared_chains_to_end(
                            &Sha256Prefix::NONE,
                            &layout,
                            id,
                            &shared,
                            ends,
                            &mut out,
                        );
                    })
                    .expect("a supported path");
                    let name = format!("{isa}, n {n}, end {end}, {count} chains");
                    for (k, (o, c)) in out.chunks_exact(n).zip(&want).enumerate() {
                        assert_eq!(o, &c.value[..n], "{name}: chain {k}");
                    }
                    let steps: u64 = starts
                        .iter()
                        .map(|&a| u64::from(end.saturating_sub(u32::from(a))))
                        .sum();
                    let counted = crate::stats::thread_counts().since(before).sha256;
                    assert_eq!(counted, steps, "{name}: compressions counted");
                }
            }
        }
    });
    assert_eq!(tested, Isa::supported());
}

/// `sha256_path_root` on every path against the nodes hashed with `sha2`, with LMS's heads
/// (RFC 8554 §5.3: the leaf H(I ‖ u32str(r) ‖ u16str(D_LEAF) ‖ K), then H(I ‖ u32str(r/2) ‖
/// u16str(D_INTR) ‖ left ‖ right) up the path), for heights 0–25 and leaves at both edges and
/// between.
#[test]
fn path_root_matches_sha2() {
    let mut rng = Rng::new(17);
    let tested = each_path(|isa| {
        for h in [0u32, 1, 2, 5, 10, 15, 20, 25] {
            let mut id = [0u8; 16];
            rng.fill(&mut id);
            let k: [u8; 32] = rng.bytes();
            let auth: Vec<u8> = (0..32 * h).map(|_| rng.next().to_le_bytes()[0]).collect();
            let last = (1u64 << h) - 1;
            for q in [0, last, rng.next() % (last + 1)] {
                let q = u32::try_from(q).expect("q < 2^25");
                let node = |r: u32, d: u8, parts: &[&[u8]]| -> [u8; 32] {
                    let mut h = sha2::Sha256::new();
                    h.update(id);
                    h.update(r.to_be_bytes());
                    h.update([d, d]);
                    parts.iter().for_each(|p| h.update(p));
                    h.finalize().into()
                };
                let mut r = (1u32 << h) + q;
                let mut want = node(r, 0x82, &[&k]);
                for s in auth.chunks_exact(32) {
                    want = if r & 1 == 1 {
                        node(r / 2, 0x83, &[s, &want])
                    } else {
                        node(r / 2, 0x83, &[&want, s])
                    };
                    r /= 2;
                }
                let head = |r: u32, kind: crate::PathNode| {
                    let d = match kind {
                        crate::PathNode::Leaf => 0x82,
                        crate::PathNode::Interior => 0x83,
                    };
                    let mut out = [d; crate::PATH_HEAD];
                    out[..16].copy_from_slice(&id);
                    out[16..20].copy_from_slice(&r.to_be_bytes());
                    out
                };
                let leaf = (1u32 << h) + q;
                let got = crate::dispatch::with_isa(isa, || {
                    crate::sha256_path_root(leaf, &k, &auth, head)
                })
                .expect("a supported path");
                assert_eq!(got, want, "{isa}, h {h}, q {q}");
            }
        }
    });
    assert_eq!(tested, Isa::supported());
}

/// A message hashed a piece at a time (`then` over whole blocks, then `hash` of the rest) on
/// every path: the `sha2` digest of the whole, for lengths around the block and piece edges.
#[test]
fn then_matches_sha2() {
    let mut rng = Rng::new(15);
    let tested = each_path(|isa| {
        for len in [0, 63, 64, 65, 200, 1023, 1024, 1025, 4278, 8502] {
            let msg: Vec<u8> = (0..len).map(|_| rng.next().to_le_bytes()[0]).collect();
            let want: [u8; 32] = sha2::Sha256::digest(&msg).into();
            for piece in [64, 128, 1024] {
                let got = crate::dispatch::with_isa(isa, || {
                    let mut prefix = Sha256Prefix::NONE;
                    let mut rest = &msg[..];
                    while rest.len() > piece {
                        prefix = prefix.then(&rest[..piece]);
                        rest = &rest[piece..];
                    }
                    prefix.hash(rest)
                })
                .expect("a supported path");
                assert_eq!(got, want, "{isa}, {len} bytes in pieces of {piece}");
            }
        }
    });
    assert_eq!(tested, Isa::supported());
}

/// A message hashed as parts cut at random points (empty parts, parts within a block, parts
/// spanning blocks, after a prefix of 0–2 blocks) on every path: the `sha2` digest of the
/// prefix and the parts joined, for lengths around the block and padding edges.
#[test]
fn hash_parts_matches_sha2() {
    let mut rng = Rng::new(16);
    let tested = each_path(|isa| {
        for len in [0, 1, 22, 55, 56, 63, 64, 65, 86, 119, 120, 128, 200, 4278] {
            for prefix_blocks in 0..3 {
                let mut prefix = vec![0u8; 64 * prefix_blocks];
                rng.fill(&mut prefix);
                let mut msg = vec![0u8; len];
                rng.fill(&mut msg);
                let mut parts = Vec::new();
                let mut rest = &msg[..];
                while !rest.is_empty() || parts.len() < 2 {
                    let take = (rng.next() % 80) as usize % (rest.len() + 1);
                    parts.push(&rest[..take]);
                    rest = &rest[take..];
                }
                let want: [u8; 32] = sha2::Sha256::digest([&prefix[..], &msg].concat()).into();
                let got = crate::dispatch::with_isa(isa, || {
                    Sha256Prefix::new(&prefix).hash_parts(parts.iter().copied())
                })
                .expect("a supported path");
                assert_eq!(
                    got,
                    want,
                    "{isa}, {len} bytes in {} parts after {prefix_blocks} blocks",
                    parts.len()
                );
            }
        }
    });
    assert_eq!(tested, Isa::supported());
}

#[test]
fn known_answer() {
    // FIPS 180-4 example "abc".
    let want = [
        0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22,
        0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00,
        0x15, 0xad,
    ];
    let tested = each_path(|isa| {
        for count in [1, 16, 20] {
            let msgs = b"abc".repeat(count);
            let mut out = vec![0u8; 32 * count];
            Sha256Prefix::NONE.hash_many_on(isa, 3, &msgs, 32, &mut out);
            for d in out.chunks_exact(32) {
                assert_eq!(d, want, "{isa}, {count} messages");
            }
        }
    });
    assert_eq!(tested, Isa::supported());
}

/// The paths this CPU should support, from the CPU itself, so that a broken
/// [`Isa::is_supported`] cannot silently skip a kernel.
#[test]
fn supported_paths_are_all_tested() {
    let mut want = vec![Isa::Portable];
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("sha") && has!("sse4.1") {
            want.push(Isa::ShaNi);
        }
        if has!("avx2") {
            want.push(Isa::Avx2);
        }
        if has!("avx512f") && has!("avx512bw") {
            want.push(Isa::Avx512);
        }
    }
    assert_eq!(Isa::supported(), want);
    assert_eq!(each_path(|_| {}), want);
}

#[cfg(target_arch = "x86_64")]
mod kernels {
    //! The kernels called directly, so that a dispatch mistake cannot hide one.

    use super::{Rng, group_kernel_matches_portable, portable, portable_lanes};
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
    fn avx512_chains16() {
        if !(has!("avx512f") && has!("avx512bw")) {
            return;
        }
        group_kernel_matches_portable::<16>(11, true, avx512::chains16);
    }

    #[test]
    fn avx2_chains8() {
        if !has!("avx2") {
            return;
        }
        group_kernel_matches_portable::<8>(12, false, avx2::chains8);
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
    fn shani_compress_n() {
        if !(has!("sha") && has!("sse4.1")) {
            return;
        }
        let mut rng = Rng::new(8);
        fn check<const N: usize>(rng: &mut Rng) {
            let blocks: [[u8; 64]; N] = core::array::from_fn(|_| rng.bytes());
            let states: [[u32; 8]; N] = core::array::from_fn(|_| rng.state());
            let mut want = states;
            let ptrs: Vec<&[u8; 64]> = blocks.iter().collect();
            portable_lanes(&mut want, &ptrs);
            let mut got = states;
            shani::compress_n(&mut got, blocks.each_ref());
            assert_eq!(got, want, "{N} interleaved");
        }
        for _ in 0..100 {
            check::<1>(&mut rng);
            check::<2>(&mut rng);
            check::<3>(&mut rng);
            check::<4>(&mut rng);
        }
    }
}
