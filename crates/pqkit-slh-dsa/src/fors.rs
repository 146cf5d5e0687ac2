//! FORS (FIPS 205 §8): k trees of 2^a leaves, signed (Algorithm 16) a level at a time across
//! several trees, and the public key from a signature (Algorithm 17).

use pqkit_hash::{Chain, Wiped};

use crate::address::{Adrs, Type};
use crate::hash::{Hasher, Kind};
use crate::params::low_bits;
use crate::tree::{Levels, climb};

/// Leaves hashed together: trees are grouped until a group has this many.
const LANES: u32 = 4096;

/// base_2b(md, a, k): the k leaf indices (Algorithm 4).
fn indices(md: &[u8], a: u32, k: u32) -> Vec<u32> {
    let (mut total, mut bits, mut at) = (0u64, 0u32, 0usize);
    (0..k)
        .map(|_| {
            while bits < a {
                total = (total << 8) | u64::from(md[at]);
                at += 1;
                bits += 8;
            }
            bits -= a;
            low_bits(total >> bits, a)
        })
        .collect()
}

/// The FORS address of key pair `idx_leaf` in tree `idx_tree` (layer 0).
fn address(idx_tree: u64, idx_leaf: u32) -> Adrs {
    let mut adrs = Adrs::default();
    adrs.set_tree(idx_tree);
    adrs.set_type(Type::ForsTree);
    adrs.set_key_pair(idx_leaf);
    adrs
}

/// The FORS signature of `md` (k·(1 + a)·n bytes) and the FORS public key (n bytes)
/// (Algorithms 16 and 17 — the roots come from the trees built here).
pub(crate) fn sign(
    h: &Hasher,
    sk_seed: &[u8],
    md: &[u8],
    idx_tree: u64,
    idx_leaf: u32,
) -> (Vec<u8>, Vec<u8>) {
    let (n, a, k) = (h.p.n, h.p.a, h.p.k);
    let idx = indices(md, a, k);
    let adrs = address(idx_tree, idx_leaf);
    let mut prf = adrs;
    prf.set_type(Type::ForsPrf);
    prf.set_key_pair(idx_leaf);
    let per_group = (LANES >> a).clamp(1, k);
    let mut sig = Vec::with_capacity(h.p.fors_bytes());
    let mut roots = Wiped::with_capacity(k as usize * n);
    for t0 in (0..k).step_by(per_group as usize) {
        let trees = per_group.min(k - t0);
        let leaves = trees << a;
        let first = t0 << a;
        // Every leaf of the group: F(fors_skGen) (Algorithm 14; Algorithm 15, z = 0) as a
        // one-step chain from SK.seed with the PRF as its prelude, the tree index its step.
        let mut chains = Wiped::from_vec(
            (0..leaves)
                .map(|i| Chain::new(i, first + i, first + i + 1, sk_seed))
                .collect::<Vec<Chain>>(),
        );
        h.chains_from_prf(&mut chains, (Type::ForsTree, Type::ForsPrf), |_| adrs);
        let mut nodes = Wiped::with_capacity(leaves as usize * n);
        pqkit_hash::append_values(&chains, n, &mut nodes);
        // The signature's k secret values, one PRF each.
        let sks = h.prf_many(sk_seed, trees, |t| {
            let mut sk = prf;
            sk.set_tree_index(first + (t << a) + idx[(t0 + t) as usize]);
            sk
        });
        let levels = Levels::build(h, &adrs, nodes, a, |z| first >> z);
        for t in 0..trees {
            let i = idx[(t0 + t) as usize];
            let local = (t << a) + i;
            sig.extend_from_slice(&sks[t as usize * n..(t as usize + 1) * n]);
            // The authentication path inside tree t of the group's levels.
            for j in 0..a {
                sig.extend_from_slice(levels.node(j, (local >> j) ^ 1, n));
            }
            roots.extend_from_slice(levels.node(a, t, n));
        }
    }
    let pk = public_key(h, &adrs, idx_leaf, &roots);
    (sig, pk)
}

/// T_k over the roots (Algorithm 17, lines 21–24).
fn public_key(h: &Hasher, adrs: &Adrs, idx_leaf: u32, roots: &[u8]) -> Vec<u8> {
    let mut pk = *adrs;
    pk.set_type(Type::ForsRoots);
    pk.set_key_pair(idx_leaf);
    h.one(Kind::Long, &pk, &[roots]).to_vec()
}

/// The FORS public key from a signature `sig` (k·(1 + a)·n bytes) of `md` (Algorithm 17).
pub(crate) fn public_key_from_signature(
    h: &Hasher,
    sig: &[u8],
    md: &[u8],
    idx_tree: u64,
    idx_leaf: u32,
) -> Vec<u8> {
    let (n, a, k) = (h.p.n, h.p.a, h.p.k);
    let idx = indices(md, a, k);
    let adrs = address(idx_tree, idx_leaf);
    let mut roots = Wiped::with_capacity(k as usize * n);
    for (t, (tree_sig, i)) in (0..).zip(sig.chunks_exact((1 + a as usize) * n).zip(idx)) {
        let (sk, auth) = tree_sig.split_at(n);
        let index = (t << a) + i;
        let mut leaf = adrs;
        leaf.set_tree_index(index);
        let node = h.one(Kind::Short, &leaf, &[sk]);
        roots.extend_from_slice(&climb(h, &mut leaf, index, node, auth));
    }
    public_key(h, &adrs, idx_leaf, &roots)
}
