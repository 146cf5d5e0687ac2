//! A Merkle tree's signing side, for LMS and XMSS alike: its leaves computed on every thread
//! asked for, the top of the tree kept, and the bottom subtree of the current leaf kept, so
//! that an authentication path costs one leaf — not the 2^h leaves of a recomputed tree.
//!
//! The tree of height h is cut at height k = min(h, [`SUBTREE_HEIGHT`]): every node at height
//! ≥ k is computed at key generation and kept ([`MerkleTree::top_bytes`]: (2^(h−k+1) − 1)·n
//! bytes), with the 2^(k+1) − 1 nodes of the subtree holding the current leaf. The next
//! subtree's leaves are computed one per signature while the current one is in use
//! ([`MerkleTree::auth_path`]), and a tree that will replace a whole tree (a lower HSS level, an
//! XMSS^MT layer) is built by a [`TreeBuilder`] paced over the signatures before it is needed
//! ([`Upcoming`]): no signature pays for a whole subtree or tree at once.
//!
//! [`TreeCache`] saves trees and builders by their identity — leaves and subtree roots only,
//! interior nodes recomputed on load and checked against the saved roots — so that reopening
//! a key computes no leaves. [`LmsTree`] is the LMS tree on all of it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use zeroize::Zeroizing;

use crate::lms::{self, Identifier, LmsPublicKey, Node};
use crate::params::{LmsParams, OtsParams};

/// Height of the bottom subtrees, k (at most h).
pub const SUBTREE_HEIGHT: u8 = 10;

/// Leaves computed by this process so far, across every tree and thread: what a progress bar
/// for key generation reads ([`leaves_computed`]).
static LEAVES: AtomicU64 = AtomicU64::new(0);

/// Leaves (one-time public keys) computed by this process so far.
pub fn leaves_computed() -> u64 {
    LEAVES.load(Ordering::Relaxed)
}

/// What a Merkle tree is made of: its leaves and how two children make a parent.
pub trait TreeHasher: Sync {
    /// Tree height h.
    fn height(&self) -> u8;
    /// Node length, in bytes.
    fn node_len(&self) -> usize;
    /// Bytes that tell this tree from every other tree of the key: its [`TreeCache`] key.
    fn identity(&self) -> Vec<u8>;
    /// Leaf `index` (a one-time key's compressed public key).
    fn leaf(&self, index: u32) -> Node;
    /// The node at `height` (≥ 1) and position `index` in its level, from its children.
    fn parent(&self, height: u8, index: u32, left: &Node, right: &Node) -> Node;
}

/// `x` as u32 (every count here is below 2^32).
fn to_u32(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// Leaves `first .. first + count` on `threads` threads.
fn leaves<H: TreeHasher>(hasher: &H, first: u32, count: usize, threads: usize) -> Vec<Node> {
    let mut out = vec![[0u8; 32]; count];
    let per = count.div_ceil(threads.max(1)).max(1);
    // The workers hash on the caller's pqkit-hash path (a path forced on this thread too).
    let isa = pqkit_hash::dispatch::current();
    std::thread::scope(|s| {
        for (c, chunk) in out.chunks_mut(per).enumerate() {
            s.spawn(move || {
                let work = || {
                    for (j, node) in chunk.iter_mut().enumerate() {
                        *node = hasher.leaf(first + to_u32(c * per + j));
                        LEAVES.fetch_add(1, Ordering::Relaxed);
                    }
                };
                // The caller runs on `path`, so the CPU supports it.
                let _ = pqkit_hash::dispatch::with_isa(isa, work);
            });
        }
    });
    out
}

/// The levels above `level0` (whose first node is at height `height`, position `first`) up
/// to a single node: level t holds the nodes at height `height + t`.
fn build_levels<H: TreeHasher>(
    hasher: &H,
    level0: Vec<Node>,
    height: u8,
    first: u32,
) -> Vec<Vec<Node>> {
    let mut levels = vec![level0];
    let (mut height, mut first) = (height, first);
    while levels.last().is_some_and(|l| l.len() > 1) {
        let below = levels.last().map(Vec::as_slice).unwrap_or_default();
        height += 1;
        first /= 2;
        let up: Vec<Node> = below
            .chunks_exact(2)
            .enumerate()
            .map(|(j, pair)| hasher.parent(height, first + to_u32(j), &pair[0], &pair[1]))
            .collect();
        levels.push(up);
    }
    levels
}

/// The first leaves of subtree `s` (leaves s·2^k ..), computed so far.
struct Partial {
    s: u32,
    leaves: Vec<Node>,
}

impl Partial {
    fn new(s: u32) -> Self {
        Self {
            s,
            leaves: Vec::new(),
        }
    }

    /// Computes leaves on this thread until `target` (at most 2^k) are done.
    fn advance_to<H: TreeHasher>(&mut self, hasher: &H, k: u8, target: usize) {
        while self.leaves.len() < target.min(1 << k) {
            let q = (self.s << k) + to_u32(self.leaves.len());
            self.leaves.push(hasher.leaf(q));
            LEAVES.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Computes the remaining leaves on `threads` threads; the subtree's levels 0..=k.
    fn finish<H: TreeHasher>(mut self, hasher: &H, k: u8, threads: usize) -> Vec<Vec<Node>> {
        let first = self.s << k;
        let done = self.leaves.len();
        let rest = (1usize << k).saturating_sub(done);
        self.leaves
            .extend(leaves(hasher, first + to_u32(done), rest, threads));
        build_levels(hasher, self.leaves, 0, first)
    }
}

/// A Merkle tree kept as its top levels and the subtree in use.
pub struct MerkleTree<H: TreeHasher> {
    /// The leaves and node function.
    pub hasher: H,
    k: u8,
    /// Levels k..=h of the whole tree.
    top: Vec<Vec<Node>>,
    /// The subtree in use: its number and levels 0..=k.
    current: Option<(u32, Vec<Vec<Node>>)>,
    /// The subtree after it, a leaf per signature.
    next: Option<Partial>,
    threads: usize,
}

impl<H: TreeHasher> MerkleTree<H> {
    /// Computes the tree (2^h leaves) on `threads` threads, cut at height `k`.
    pub fn generate(hasher: H, threads: usize, k: u8) -> Self {
        TreeBuilder::new(hasher, k).finish(threads)
    }

    fn subtrees(&self) -> u32 {
        1 << (self.hasher.height() - self.k)
    }

    /// The root.
    pub fn root(&self) -> Node {
        self.top
            .last()
            .and_then(|l| l.first())
            .copied()
            .unwrap_or_default()
    }

    /// The authentication path of leaf `q`: its sibling at each height 0..h, bottom first.
    /// Takes the subtree holding `q` when it is not the one kept (the paced next subtree, or
    /// computed now after a jump), and computes leaves of the subtree after `q`'s until as
    /// many are done as `q`'s position in its own: one leaf per signature in order.
    pub fn auth_path(&mut self, q: u32) -> Vec<Node> {
        let k = self.k;
        let s = q >> k;
        if self.current.as_ref().is_none_or(|(cur, _)| *cur != s) {
            let partial = match self.next.take() {
                Some(p) if p.s == s => p,
                _ => Partial::new(s),
            };
            self.current = Some((s, partial.finish(&self.hasher, k, self.threads)));
        }
        let empty = Vec::new();
        let subtree = self.current.as_ref().map_or(&empty, |(_, l)| l);
        let path = (0..self.hasher.height())
            .map(|t| {
                let sibling = ((q >> t) ^ 1) as usize;
                if t < k {
                    subtree[usize::from(t)][sibling - ((s as usize) << (k - t))]
                } else {
                    self.top[usize::from(t - k)][sibling]
                }
            })
            .collect();
        if s + 1 < self.subtrees() {
            if self.next.as_ref().is_none_or(|p| p.s != s + 1) {
                self.next = Some(Partial::new(s + 1));
            }
            if let Some(next) = self.next.as_mut() {
                next.advance_to(&self.hasher, k, (q - (s << k)) as usize + 1);
            }
        }
        path
    }

    /// Bytes of nodes kept: the top levels, the subtree in use and the next one's leaves.
    pub fn cache_bytes(&self) -> usize {
        let top: usize = self.top.iter().map(Vec::len).sum();
        let sub: usize = self
            .current
            .as_ref()
            .map_or(0, |(_, l)| l.iter().map(Vec::len).sum());
        let next = self.next.as_ref().map_or(0, |p| p.leaves.len());
        (top + sub + next) * self.hasher.node_len()
    }

    /// Bytes of the kept top levels (heights k..=h).
    pub fn top_bytes(&self) -> usize {
        self.top.iter().map(Vec::len).sum::<usize>() * self.hasher.node_len()
    }

    /// Cache form: u8 k ‖ subtree roots ‖ u32 current subtree ‖ its leaves ‖ u32 next
    /// subtree ‖ its leaves computed so far (u32::MAX and no nodes for none).
    fn save(&self) -> Vec<u8> {
        let n = self.hasher.node_len();
        let mut w = Writer(vec![self.k]);
        w.nodes(self.top.first().map_or(&[], Vec::as_slice), n);
        match &self.current {
            Some((s, levels)) => {
                w.u32(*s);
                w.nodes(&levels[0], n);
            }
            None => w.u32(u32::MAX),
        }
        match &self.next {
            Some(p) => {
                w.u32(p.s);
                w.nodes(&p.leaves, n);
            }
            None => w.u32(u32::MAX),
        }
        w.0
    }

    /// The tree from its cache form; `None` unless every count fits the tree and the
    /// recomputed current subtree's root is the saved one.
    fn restore(hasher: &H, k: u8, payload: &[u8]) -> Option<Restored> {
        let n = hasher.node_len();
        let k = hasher.height().min(k);
        let (full, subtrees) = (1usize << k, 1usize << (hasher.height() - k));
        let mut r = Reader(payload);
        (r.u8()? == k).then_some(())?;
        let roots = r.nodes(n)?;
        (roots.len() == subtrees).then_some(())?;
        let mut current = None;
        let cs = r.u32()?;
        if cs != u32::MAX {
            let leaves = r.nodes(n)?;
            (leaves.len() == full && (cs as usize) < subtrees).then_some(())?;
            let levels = build_levels(hasher, leaves, 0, cs << k);
            (levels[usize::from(k)][0] == roots[cs as usize]).then_some(())?;
            current = Some((cs, levels));
        }
        let mut next = None;
        let ns = r.u32()?;
        if ns != u32::MAX {
            let leaves = r.nodes(n)?;
            (leaves.len() < full && (ns as usize) < subtrees).then_some(())?;
            next = Some(Partial { s: ns, leaves });
        }
        r.0.is_empty().then_some(())?;
        Some(Restored {
            k,
            roots,
            current,
            next,
        })
    }
}

/// A tree's cache form, checked and expanded.
struct Restored {
    k: u8,
    roots: Vec<Node>,
    current: Option<(u32, Vec<Vec<Node>>)>,
    next: Option<Partial>,
}

/// A whole tree computed a few leaves at a time ([`TreeBuilder::advance`]), subtree by
/// subtree: it keeps the finished subtrees' roots, the first subtree (where signing will
/// start) and the leaves of the one in progress.
pub struct TreeBuilder<H: TreeHasher> {
    hasher: H,
    k: u8,
    roots: Vec<Node>,
    first: Option<Vec<Vec<Node>>>,
    partial: Partial,
}

impl<H: TreeHasher> TreeBuilder<H> {
    /// A builder that has computed nothing yet, cutting the tree at height min(h, `k`).
    pub fn new(hasher: H, k: u8) -> Self {
        let k = hasher.height().min(k);
        Self {
            hasher,
            k,
            roots: Vec::new(),
            first: None,
            partial: Partial::new(0),
        }
    }

    /// The tree's leaves and node function.
    pub fn hasher(&self) -> &H {
        &self.hasher
    }

    fn subtrees(&self) -> usize {
        1 << (self.hasher.height() - self.k)
    }

    /// Leaves still to compute.
    pub fn left(&self) -> u64 {
        let done = ((self.roots.len() as u64) << self.k) + self.partial.leaves.len() as u64;
        (1u64 << self.hasher.height()) - done
    }

    /// Finishes the subtree in progress on `threads` threads.
    fn close(&mut self, threads: usize) {
        let next = Partial::new(self.partial.s + 1);
        let partial = std::mem::replace(&mut self.partial, next);
        let levels = partial.finish(&self.hasher, self.k, threads);
        self.roots.push(levels[usize::from(self.k)][0]);
        if self.first.is_none() {
            self.first = Some(levels);
        }
    }

    /// Computes up to `count` more leaves on this thread.
    pub fn advance(&mut self, count: u64) {
        let full = 1usize << self.k;
        let mut count = count;
        while count > 0 && self.roots.len() < self.subtrees() {
            let done = self.partial.leaves.len();
            let take = usize::try_from(count)
                .unwrap_or(usize::MAX)
                .min(full - done);
            self.partial.advance_to(&self.hasher, self.k, done + take);
            count -= take as u64;
            if self.partial.leaves.len() == full {
                self.close(1);
            }
        }
    }

    /// Computes the rest on `threads` threads: the tree, ready to sign from leaf 0.
    pub fn finish(mut self, threads: usize) -> MerkleTree<H> {
        while self.roots.len() < self.subtrees() {
            self.close(threads);
        }
        let top = build_levels(&self.hasher, self.roots, self.k, 0);
        MerkleTree {
            hasher: self.hasher,
            k: self.k,
            top,
            current: self.first.map(|levels| (0, levels)),
            next: None,
            threads,
        }
    }

    /// Bytes of nodes kept.
    pub fn cache_bytes(&self) -> usize {
        let first: usize = self.first.iter().flatten().map(Vec::len).sum();
        (self.roots.len() + first + self.partial.leaves.len()) * self.hasher.node_len()
    }

    /// Cache form: u8 k ‖ finished subtree roots ‖ the first subtree's leaves (none before
    /// it is finished) ‖ the leaves of the one in progress.
    fn save(&self) -> Vec<u8> {
        let n = self.hasher.node_len();
        let mut w = Writer(vec![self.k]);
        w.nodes(&self.roots, n);
        w.nodes(self.first.as_ref().map_or(&[], |l| l[0].as_slice()), n);
        w.nodes(&self.partial.leaves, n);
        w.0
    }

    /// The builder from its cache form; `Err(hasher)` unless every count fits and the
    /// recomputed first subtree's root is the saved one.
    fn restore(hasher: H, k: u8, payload: &[u8]) -> Result<Self, H> {
        let mut me = Self::new(hasher, k);
        let parsed = (|| {
            let (n, k) = (me.hasher.node_len(), me.k);
            let mut r = Reader(payload);
            (r.u8()? == k).then_some(())?;
            let roots = r.nodes(n)?;
            let first = r.nodes(n)?;
            let partial = r.nodes(n)?;
            r.0.is_empty().then_some(())?;
            let full = 1usize << k;
            (roots.len() <= me.subtrees() && partial.len() < full).then_some(())?;
            (roots.len() < me.subtrees() || partial.is_empty()).then_some(())?;
            let first = if roots.is_empty() {
                first.is_empty().then_some(None)?
            } else {
                (first.len() == full).then_some(())?;
                let levels = build_levels(&me.hasher, first, 0, 0);
                (levels[usize::from(k)][0] == roots[0]).then_some(())?;
                Some(levels)
            };
            Some((roots, first, partial))
        })();
        match parsed {
            Some((roots, first, leaves)) => {
                me.partial = Partial {
                    s: to_u32(roots.len()),
                    leaves,
                };
                me.roots = roots;
                me.first = first;
                Ok(me)
            }
            None => Err(me.hasher),
        }
    }
}

/// A tree that will replace one of the key's trees when the counter reaches `start`, built a
/// few leaves at each signature before then.
pub struct Upcoming<H: TreeHasher> {
    /// The first counter value signed under the new tree.
    pub start: u64,
    /// The tree so far.
    pub builder: TreeBuilder<H>,
}

impl<H: TreeHasher> Upcoming<H> {
    /// At the signature with counter value `counter` (< `start`): computes ⌈leaves left /
    /// signatures left before `start`⌉ leaves, so that the tree is complete in time.
    pub fn pace(&mut self, counter: u64) {
        let signatures = self.start.saturating_sub(counter).max(1);
        self.builder
            .advance(self.builder.left().div_ceil(signatures));
    }
}

impl<H: TreeHasher> Upcoming<H> {
    /// Keeps `slot` the tree that starts at counter value `start` (`None`: no tree follows),
    /// replacing what it holds with `make(start)` when that is another, and paces it at
    /// `counter`.
    pub fn keep(
        slot: &mut Option<Self>,
        start: Option<u64>,
        counter: u64,
        make: impl FnOnce(u64) -> TreeBuilder<H>,
    ) {
        let Some(start) = start else {
            *slot = None;
            return;
        };
        if slot.as_ref().is_none_or(|u| u.start != start) {
            *slot = Some(Self {
                start,
                builder: make(start),
            });
        }
        if let Some(upcoming) = slot.as_mut() {
            upcoming.pace(counter);
        }
    }
}

/// Bytes of nodes a signer keeps: its trees in use and its next trees' progress.
pub(crate) fn kept_bytes<'a, H: TreeHasher + 'a>(
    trees: impl IntoIterator<Item = &'a MerkleTree<H>>,
    upcoming: &[Option<Upcoming<H>>],
) -> usize {
    let trees: usize = trees.into_iter().map(MerkleTree::cache_bytes).sum();
    let next: usize = upcoming
        .iter()
        .flatten()
        .map(|u| u.builder.cache_bytes())
        .sum();
    trees + next
}

/// `untaken` (saved entries a signer has not taken yet) with its trees in use and its next
/// trees added: what the signer saves.
pub(crate) fn saved<'a, H: TreeHasher + 'a>(
    untaken: &TreeCache,
    trees: impl IntoIterator<Item = &'a MerkleTree<H>>,
    upcoming: &[Option<Upcoming<H>>],
) -> TreeCache {
    let mut cache = untaken.clone();
    for tree in trees {
        cache.put_tree(tree);
    }
    for u in upcoming.iter().flatten() {
        cache.put_builder(&u.builder);
    }
    cache
}

/// The counter value at which a level whose trees each serve 2^`bits` counter values next
/// changes tree after `counter`; `None` when that is at or past `capacity`.
pub fn next_start(counter: u64, bits: u32, capacity: u64) -> Option<u64> {
    let step = 1u64.checked_shl(bits)?;
    (counter / step + 1)
        .checked_mul(step)
        .filter(|&s| s < capacity)
}

/// A key's trees and builders saved by identity: what reopening a key reads instead of
/// recomputing leaves. Only leaves and subtree roots are saved; interior nodes are
/// recomputed on load (about 2^k + 2^(h−k) node hashes per tree) and checked against the
/// saved roots, and an entry that does not fit is ignored (the tree is computed instead).
/// Integrity against tampering is the file's business ([`crate::state`] MACs it).
#[derive(Clone, Default)]
pub struct TreeCache {
    entries: HashMap<Vec<u8>, Vec<u8>>,
}

const TREE: u8 = 1;
const BUILDER: u8 = 2;

fn entry_key(kind: u8, identity: Vec<u8>) -> Vec<u8> {
    let mut key = vec![kind];
    key.extend(identity);
    key
}

impl TreeCache {
    /// Adds `tree`.
    pub fn put_tree<H: TreeHasher>(&mut self, tree: &MerkleTree<H>) {
        let key = entry_key(TREE, tree.hasher.identity());
        self.entries.insert(key, tree.save());
    }

    /// Adds `builder`.
    pub fn put_builder<H: TreeHasher>(&mut self, builder: &TreeBuilder<H>) {
        let key = entry_key(BUILDER, builder.hasher.identity());
        self.entries.insert(key, builder.save());
    }

    /// The tree of `hasher` from the cache (removing the entry), or computed on `threads`
    /// threads when absent or unusable.
    pub fn take_tree<H: TreeHasher>(&mut self, hasher: H, threads: usize, k: u8) -> MerkleTree<H> {
        let key = entry_key(TREE, hasher.identity());
        let restored = self
            .entries
            .remove(&key)
            .and_then(|payload| MerkleTree::restore(&hasher, k, &payload));
        match restored {
            Some(r) => MerkleTree {
                top: build_levels(&hasher, r.roots, r.k, 0),
                hasher,
                k: r.k,
                current: r.current,
                next: r.next,
                threads,
            },
            None => MerkleTree::generate(hasher, threads, k),
        }
    }

    /// The tree of `hasher` when a level changes tree: the upcoming one finished on `threads`
    /// threads when `upcoming` holds it (leaving `upcoming` empty), else as
    /// [`TreeCache::take_tree`].
    pub fn next_tree<H: TreeHasher>(
        &mut self,
        upcoming: &mut Option<Upcoming<H>>,
        hasher: H,
        threads: usize,
    ) -> MerkleTree<H> {
        match upcoming.take() {
            Some(u) if u.builder.hasher.identity() == hasher.identity() => {
                u.builder.finish(threads)
            }
            other => {
                *upcoming = other;
                self.take_tree(hasher, threads, SUBTREE_HEIGHT)
            }
        }
    }

    /// The builder of `hasher` from the cache (removing the entry), or a new one.
    pub fn take_builder<H: TreeHasher>(&mut self, hasher: H, k: u8) -> TreeBuilder<H> {
        let key = entry_key(BUILDER, hasher.identity());
        match self.entries.remove(&key) {
            Some(payload) => TreeBuilder::restore(hasher, k, &payload)
                .unwrap_or_else(|hasher| TreeBuilder::new(hasher, k)),
            None => TreeBuilder::new(hasher, k),
        }
    }

    /// Forgets every entry not taken.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// u32 count ‖ (u32 key length ‖ key ‖ u32 value length ‖ value)…, in key order.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut keys: Vec<&Vec<u8>> = self.entries.keys().collect();
        keys.sort();
        let mut w = Writer(Vec::new());
        w.u32(to_u32(keys.len()));
        for key in keys {
            w.bytes(key);
            w.bytes(&self.entries[key]);
        }
        w.0
    }

    /// Parses [`TreeCache::to_bytes`]; `None` for bytes that do not.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let mut r = Reader(bytes);
        let count = r.u32()?;
        let mut entries = HashMap::new();
        for _ in 0..count {
            let key = r.bytes()?.to_vec();
            entries.insert(key, r.bytes()?.to_vec());
        }
        r.0.is_empty().then_some(Self { entries })
    }
}

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }

    fn bytes(&mut self, b: &[u8]) {
        self.u32(to_u32(b.len()));
        self.0.extend_from_slice(b);
    }

    fn nodes(&mut self, nodes: &[Node], n: usize) {
        self.u32(to_u32(nodes.len()));
        for node in nodes {
            self.0.extend_from_slice(&node[..n]);
        }
    }
}

/// Reads the [`Writer`] forms; `None` on any short read.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        (self.0.len() >= len).then_some(())?;
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4)?.try_into().ok().map(u32::from_be_bytes)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = self.u32()? as usize;
        self.take(len)
    }

    fn nodes(&mut self, n: usize) -> Option<Vec<Node>> {
        let count = self.u32()? as usize;
        let raw = self.take(count.checked_mul(n)?)?;
        (1..=32).contains(&n).then_some(())?;
        Some(
            raw.chunks_exact(n.max(1))
                .map(|c| {
                    let mut node = [0u8; 32];
                    node[..n].copy_from_slice(c);
                    node
                })
                .collect(),
        )
    }
}

/// An LMS key's leaves (RFC 8554 §5.3): leaf q = H(I ‖ u32str(2^h + q) ‖ D_LEAF ‖ K_q).
pub struct LmsLeaves {
    lms: &'static LmsParams,
    ots: &'static OtsParams,
    id: Identifier,
    seed: Zeroizing<Vec<u8>>,
}

impl LmsLeaves {
    /// The leaves of LMS key (I, SEED).
    pub fn new(
        lms: &'static LmsParams,
        ots: &'static OtsParams,
        id: Identifier,
        seed: &[u8],
    ) -> Self {
        Self {
            lms,
            ots,
            id,
            seed: Zeroizing::new(seed.to_vec()),
        }
    }
}

impl TreeHasher for LmsLeaves {
    fn height(&self) -> u8 {
        self.lms.h
    }

    /// I ‖ u32str(LMS type) ‖ u32str(LM-OTS type).
    fn identity(&self) -> Vec<u8> {
        let mut out = self.id.to_vec();
        out.extend_from_slice(&self.lms.code.to_be_bytes());
        out.extend_from_slice(&self.ots.code.to_be_bytes());
        out
    }

    fn node_len(&self) -> usize {
        self.lms.m
    }

    fn leaf(&self, q: u32) -> Node {
        let k = lms::ots_public_key(self.ots, &self.id, &self.seed, q);
        lms::leaf(self.lms, &self.id, q, &k)
    }

    fn parent(&self, height: u8, index: u32, left: &Node, right: &Node) -> Node {
        // Node number r = 2^(h − height) + index (RFC 8554 §5.3).
        let r = (1u32 << (self.lms.h - height)) + index;
        lms::interior(self.lms, &self.id, r, left, right)
    }
}

/// The signing side of one LMS key pair.
pub struct LmsTree(pub(crate) MerkleTree<LmsLeaves>);

impl LmsTree {
    /// Generates the tree of key (I, SEED) on `threads` threads (RFC 8554 Algorithm 5 with
    /// the Appendix A derivation). Costs 2^h LM-OTS public keys.
    pub fn generate(
        lms: &'static LmsParams,
        ots: &'static OtsParams,
        id: Identifier,
        seed: &[u8],
        threads: usize,
    ) -> Self {
        Self::with_subtree_height(lms, ots, id, seed, threads, SUBTREE_HEIGHT)
    }

    /// As [`LmsTree::generate`], cutting the tree at height `k` (at most h) instead of
    /// [`SUBTREE_HEIGHT`]: a smaller k keeps fewer nodes and recomputes smaller subtrees.
    pub fn with_subtree_height(
        lms: &'static LmsParams,
        ots: &'static OtsParams,
        id: Identifier,
        seed: &[u8],
        threads: usize,
        k: u8,
    ) -> Self {
        Self(MerkleTree::generate(
            LmsLeaves::new(lms, ots, id, seed),
            threads,
            k,
        ))
    }

    /// The public key.
    pub fn public_key(&self) -> LmsPublicKey {
        let l = &self.0.hasher;
        LmsPublicKey {
            lms: l.lms,
            ots: l.ots,
            id: l.id,
            root: self.0.root(),
        }
    }

    /// Bytes of tree nodes this key keeps.
    pub fn cache_bytes(&self) -> usize {
        self.0.cache_bytes()
    }

    /// Bytes of the kept top levels.
    pub fn top_bytes(&self) -> usize {
        self.0.top_bytes()
    }

    /// Signs `message` with one-time key `q` (RFC 8554 Algorithm 3 + §5.4): u32str(q) ‖ LM-OTS
    /// signature ‖ u32str(LMS type) ‖ path. The caller guarantees `q` is used once.
    pub(crate) fn sign_index(&mut self, q: u32, message: &[u8]) -> Vec<u8> {
        let path = self.0.auth_path(q);
        let l = &self.0.hasher;
        let mut out = Vec::with_capacity(l.lms.signature_len(l.ots));
        out.extend_from_slice(&q.to_be_bytes());
        out.extend_from_slice(&lms::ots_sign(l.ots, &l.id, &l.seed, q, message));
        out.extend_from_slice(&l.lms.code.to_be_bytes());
        for node in path {
            out.extend_from_slice(&node[..l.lms.m]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{LMS, OTS};

    #[test]
    fn every_cut_height_signs_the_same_and_verifies() {
        // LMS_SHA256_M24_H10 / LMOTS_SHA256_N24_W8: one tree kept whole (k = 10) and cut at
        // k = 3 (128 subtrees of 8 leaves under a kept top of 7 levels).
        let (lms, ots) = (&LMS[6], &OTS[7]);
        let seed = [7u8; 24];
        let id = [9u8; 16];
        let mut whole = LmsTree::generate(lms, ots, id, &seed, 2);
        let mut cut = LmsTree::with_subtree_height(lms, ots, id, &seed, 1, 3);
        assert_eq!(whole.public_key(), cut.public_key());
        assert!(cut.cache_bytes() < whole.cache_bytes());
        let pk = whole.public_key();
        for q in [0u32, 1, 7, 8, 9, 500, 1022, 1023] {
            let msg = q.to_be_bytes();
            let a = whole.sign_index(q, &msg);
            assert_eq!(a, cut.sign_index(q, &msg), "q = {q}");
            assert_eq!(pk.verify(&msg, &a), Ok(()), "q = {q}");
            assert_eq!(a.len(), lms.signature_len(ots));
        }
    }
}
