//! XMSS trees of the hypertree (FIPS 205 §6, §7): nodes computed a level at a time across the
//! whole tree, signatures (Algorithms 10, 12) and verification (Algorithms 11, 13).

use pqkit_hash::Wiped;

use crate::address::{Adrs, Type};
use crate::hash::{Hasher, Kind};
use crate::params::low_bits;
use crate::wots;

/// Key pairs whose chains run together (len·32 lanes): enough to fill every SIMD lane, few
/// enough to stay in cache.
const GROUP: u32 = 32;

/// The levels of one Merkle tree: level 0 the leaves, level `height` the root; n bytes per node.
pub struct Levels(Vec<Wiped<u8>>);

impl Levels {
    /// Hashes `leaves` up to the root, a level at a time; node i of level z is
    /// H(PK.seed, ADRS(type, height z, index `offset(z) + i`), left ‖ right) where `adrs`
    /// holds the type and the rest of the address (Algorithms 9 and 15).
    pub(crate) fn build(
        h: &Hasher,
        adrs: &Adrs,
        leaves: Wiped<u8>,
        height: u32,
        offset: impl Fn(u32) -> u32,
    ) -> Self {
        let n = h.p.n;
        let mut levels = vec![leaves];
        let mut a = *adrs;
        for z in 1..=height {
            let below = levels.last().expect("leaves");
            let mut batch = h.batch(2 * n, below.len() / (2 * n));
            a.set_tree_height(z);
            for (i, pair) in (0..).zip(below.chunks_exact(2 * n)) {
                a.set_tree_index(offset(z) + i);
                batch.push(h, &a, |out| pqkit_hash::copy(out, pair));
            }
            levels.push(h.hash(Kind::Long, &batch));
        }
        Self(levels)
    }

    /// Node i of level z (n bytes).
    pub(crate) fn node(&self, z: u32, i: u32, n: usize) -> &[u8] {
        &self.0[z as usize][i as usize * n..(i as usize + 1) * n]
    }

    /// The root (n bytes).
    pub(crate) fn root(&self, n: usize) -> &[u8] {
        let top = self.0.len() - 1;
        self.node(u32::try_from(top).expect("a tree's height fits u32"), 0, n)
    }

    /// The authentication path of leaf `leaf` (height·n bytes).
    pub(crate) fn auth_path(&self, leaf: u32, n: usize) -> impl Iterator<Item = &[u8]> {
        (0u32..)
            .take(self.0.len() - 1)
            .map(move |j| self.node(j, (leaf >> j) ^ 1, n))
    }
}

/// The tree at `adrs` (layer and tree address): every WOTS+ public key, and the signature of
/// `msg` by key pair `leaf` if asked.
fn tree(h: &Hasher, sk_seed: &[u8], adrs: &Adrs, sign: Option<(u32, &[u8])>) -> (Levels, Vec<u8>) {
    let n = h.p.n;
    let leaves_count = 1u32 << h.p.hp;
    let digits = sign.map(|(leaf, msg)| (leaf, wots::digits(msg)));
    let mut leaves = Wiped::with_capacity(leaves_count as usize * n);
    let mut signature = Vec::new();
    for first in (0..leaves_count).step_by(GROUP as usize) {
        let count = GROUP.min(leaves_count - first);
        let (pks, sig) = wots::public_keys(
            h,
            sk_seed,
            adrs,
            first,
            count,
            digits.as_ref().map(|(l, d)| (*l, &d[..])),
        );
        leaves.extend_from_slice(&pks);
        signature.extend(sig.unwrap_or_default());
    }
    let mut node = *adrs;
    node.set_type(Type::Tree);
    (Levels::build(h, &node, leaves, h.p.hp, |_| 0), signature)
}

/// The top tree (layer d − 1, tree 0), every node: its root is PK.root (Algorithm 18,
/// line 3). It depends on the key alone, so a signing key keeps it and every signature takes
/// its authentication path from it ([`sign`]'s `top`): (2^(h′+1) − 1)·n bytes, 16 368 for
/// SLH-DSA-128s, all public (each signature carries h′ of them).
pub(crate) fn top(h: &Hasher, sk_seed: &[u8]) -> Levels {
    let mut adrs = Adrs::default();
    adrs.set_layer(h.p.d - 1);
    tree(h, sk_seed, &adrs, None).0
}

/// The (layer and tree address, leaf) of each of the d XMSS signatures of leaf `idx_leaf` of
/// tree `idx_tree` (Algorithm 12, lines 9–11).
fn layers(h: &Hasher, idx_tree: u64, idx_leaf: u32) -> Vec<(Adrs, u32)> {
    let hp = h.p.hp;
    let (mut tree_idx, mut leaf) = (idx_tree, idx_leaf);
    (0..h.p.d)
        .map(|layer| {
            let mut adrs = Adrs::default();
            adrs.set_layer(layer);
            adrs.set_tree(tree_idx);
            let at = (adrs, leaf);
            leaf = low_bits(tree_idx, hp);
            tree_idx >>= hp;
            at
        })
        .collect()
}

/// The hypertree signature as [`sign`] makes it, with the d trees built by `threads` workers
/// (each on `path`, the caller's hash path) while `beside` (the FORS signature) runs on one
/// of them: the trees need no message, so only the d WOTS+ signatures (len chains each) are
/// left for the end, made in order — each signs the root below, the first signs
/// `message(beside's result)`. With `top` (the key's [`top`] tree) the top tree is not
/// built. Returns the signature and `beside`'s result.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sign_threaded<T: Send>(
    h: &Hasher,
    sk_seed: &[u8],
    idx_tree: u64,
    idx_leaf: u32,
    top: Option<&Levels>,
    threads: usize,
    beside: impl FnOnce() -> T + Send,
    message: impl FnOnce(&T) -> Vec<u8>,
) -> (Vec<u8>, T) {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (n, hp) = (h.p.n, h.p.hp);
    let at = layers(h, idx_tree, idx_leaf);
    // The trees to build: all but a cached top one.
    let build = at.len() - usize::from(top.is_some());
    let isa = pqkit_hash::dispatch::current();
    let trees: Vec<Mutex<Option<Levels>>> = at.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let beside = Mutex::new(Some(beside));
    let result = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let work = || {
                    let task = beside.lock().ok().and_then(|mut b| b.take());
                    if let Some(f) = task {
                        let r = f();
                        if let Ok(mut slot) = result.lock() {
                            *slot = Some(r);
                        }
                    }
                    loop {
                        let t = next.fetch_add(1, Ordering::Relaxed);
                        let Some((adrs, _)) = at[..build].get(t) else {
                            break;
                        };
                        let levels = tree(h, sk_seed, adrs, None).0;
                        if let Ok(mut slot) = trees[t].lock() {
                            *slot = Some(levels);
                        }
                    }
                };
                // The caller's path is supported: it is the one it runs on.
                let _ = pqkit_hash::dispatch::with_isa(isa, work);
            });
        }
    });
    let beside = result
        .into_inner()
        .ok()
        .flatten()
        .expect("the FORS task ran");
    let mut root = message(&beside);
    let mut out = Vec::with_capacity(h.p.d as usize * h.p.xmss_bytes());
    let last = at.len() - 1;
    for (layer, ((adrs, leaf), levels)) in at.iter().zip(trees).enumerate() {
        let built = levels.into_inner().ok().flatten();
        let cached = top.filter(|_| layer == last);
        let levels = built
            .as_ref()
            .or(cached)
            .expect("every tree was built or cached");
        out.extend_from_slice(&wots::sign(h, sk_seed, adrs, *leaf, &root));
        levels
            .auth_path(*leaf, n)
            .for_each(|a| out.extend_from_slice(a));
        root = levels.node(hp, 0, n).to_vec();
    }
    (out, beside)
}

/// The hypertree signature of `msg` (n bytes: the FORS public key) by leaf `idx_leaf` of tree
/// `idx_tree` (Algorithm 12): d·(len + h′)·n bytes. With `top` (the key's [`top`] tree) the
/// top layer is only its WOTS+ signature: 1/d of the trees' hashing is saved (1/7 or 1/8 for
/// the "s" sets, 1/17 or 1/22 for the "f" sets).
pub(crate) fn sign(
    h: &Hasher,
    sk_seed: &[u8],
    msg: &[u8],
    idx_tree: u64,
    idx_leaf: u32,
    top: Option<&Levels>,
) -> Vec<u8> {
    let (n, hp) = (h.p.n, h.p.hp);
    let mut out = Vec::with_capacity(h.p.d as usize * h.p.xmss_bytes());
    let mut root = msg.to_vec();
    let at = layers(h, idx_tree, idx_leaf);
    let last = at.len() - 1;
    for (layer, (adrs, leaf)) in at.into_iter().enumerate() {
        let built;
        let levels = match top.filter(|_| layer == last) {
            Some(levels) => {
                out.extend_from_slice(&wots::sign(h, sk_seed, &adrs, leaf, &root));
                levels
            }
            None => {
                let sig;
                (built, sig) = tree(h, sk_seed, &adrs, Some((leaf, &root)));
                out.extend_from_slice(&sig);
                &built
            }
        };
        levels
            .auth_path(leaf, n)
            .for_each(|a| out.extend_from_slice(a));
        root = levels.node(hp, 0, n).to_vec();
    }
    out
}

/// Whether `sig` (d·(len + h′)·n bytes) is a hypertree signature of `msg` under `pk_root`
/// (Algorithm 13).
pub(crate) fn verify(
    h: &Hasher,
    msg: &[u8],
    sig: &[u8],
    idx_tree: u64,
    idx_leaf: u32,
    pk_root: &[u8],
) -> bool {
    let (n, hp, len) = (h.p.n, h.p.hp, h.p.len());
    let (mut tree_idx, mut leaf) = (idx_tree, idx_leaf);
    let mut node = Wiped::from_vec(msg.to_vec());
    for (layer, xmss) in (0..).zip(sig.chunks_exact(h.p.xmss_bytes())) {
        let mut adrs = Adrs::default();
        adrs.set_layer(layer);
        adrs.set_tree(tree_idx);
        let (wots_sig, auth) = xmss.split_at(len * n);
        node = root_from_signature(h, &adrs, leaf, wots_sig, auth, &node);
        leaf = low_bits(tree_idx, hp);
        tree_idx >>= hp;
    }
    bool::from(subtle::ConstantTimeEq::ct_eq(&node[..], pk_root))
}

/// xmss_pkFromSig (Algorithm 11).
fn root_from_signature(
    h: &Hasher,
    adrs: &Adrs,
    leaf: u32,
    wots_sig: &[u8],
    auth: &[u8],
    msg: &[u8],
) -> Wiped<u8> {
    let node = wots::public_key_from_signature(h, adrs, leaf, wots_sig, msg);
    let mut a = *adrs;
    a.set_type(Type::Tree);
    climb(h, &mut a, leaf, node, auth)
}

/// Walks an authentication path from `node` at index `index` to the root: at height j + 1 the
/// node is H(node ‖ auth_j) or H(auth_j ‖ node) by the parity of index / 2^j (Algorithms 11
/// and 17). `adrs` has its type and key pair set.
pub(crate) fn climb(
    h: &Hasher,
    adrs: &mut Adrs,
    index: u32,
    mut node: Wiped<u8>,
    auth: &[u8],
) -> Wiped<u8> {
    let n = h.p.n;
    for (j, sibling) in (0..).zip(auth.chunks_exact(n)) {
        adrs.set_tree_height(j + 1);
        adrs.set_tree_index(index >> (j + 1));
        node = if (index >> j) & 1 == 0 {
            h.one(Kind::Long, adrs, &[&node, sibling])
        } else {
            h.one(Kind::Long, adrs, &[sibling, &node])
        };
    }
    node
}
