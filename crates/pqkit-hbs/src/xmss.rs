//! XMSS and XMSS^MT (RFC 8391) with the parameter sets of RFC 8391 (SHA2_*_256) and
//! SP 800-208 (SHA2_*_192, SHAKE256_*_256, SHAKE256_*_192), WOTS+ with w = 16, and the
//! SP 800-208 key derivation sk_i = PRF_keygen(S_XMSS, SEED ‖ ADRS) (§5, as xmss-reference).
//!
//! Encodings: public key u32 OID ‖ root ‖ SEED; XMSS signature u32 idx ‖ r ‖ WOTS+ signature ‖
//! auth path; XMSS^MT signature idx (⌈h/8⌉ bytes) ‖ r ‖ (WOTS+ signature ‖ auth path) × d.

use zeroize::Zeroizing;

use crate::Error;
use pqkit_hash::{Chain, Wiped};

use crate::lms::{Node, hash};
use crate::params::HashFn;
use crate::tree::{
    MerkleTree, SUBTREE_HEIGHT, TreeCache, TreeHasher, Upcoming, kept_bytes, next_start, saved,
};

/// An XMSS or XMSS^MT parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XmssParams {
    /// The OID of the public key (the XMSS and XMSS^MT registries are separate).
    pub oid: u32,
    /// Name, e.g. "XMSS-SHA2_10_256" or "XMSSMT-SHA2_20/2_256".
    pub name: &'static str,
    /// XMSS^MT (true) or XMSS.
    pub multi_tree: bool,
    /// Hash.
    pub hash: HashFn,
    /// Hash output length n, in bytes (24 or 32).
    pub n: usize,
    /// Total height h.
    pub h: u8,
    /// Layers d (1 for XMSS).
    pub d: u8,
}

impl XmssParams {
    /// Height of each tree, h/d.
    pub fn tree_height(&self) -> u8 {
        self.h / self.d
    }

    /// Padding length of the domain separator: n for n = 32, 4 for n = 24 (SP 800-208 §5).
    fn pad(&self) -> usize {
        if self.n == 24 { 4 } else { self.n }
    }

    /// WOTS+ chains: len1 = 2n (w = 16), len2 = 3, len = 2n + 3.
    pub fn wots_len(&self) -> usize {
        2 * self.n + 3
    }

    /// Bytes of the index in a signature: 4 for XMSS, ⌈h/8⌉ for XMSS^MT.
    fn idx_len(&self) -> usize {
        if self.multi_tree {
            usize::from(self.h).div_ceil(8)
        } else {
            4
        }
    }

    /// Signature length, in bytes: idx ‖ r ‖ (WOTS+ ‖ auth) × d.
    pub fn signature_len(&self) -> usize {
        self.idx_len()
            + self.n
            + (usize::from(self.d) * self.wots_len() + usize::from(self.h)) * self.n
    }

    /// Public key length, in bytes: 4 + 2n.
    pub fn public_key_len(&self) -> usize {
        4 + 2 * self.n
    }

    /// Number of signatures, 2^h.
    pub fn signatures(&self) -> u64 {
        1u64.checked_shl(u32::from(self.h)).unwrap_or(u64::MAX)
    }
}

const fn xmss(oid: u32, name: &'static str, hash: HashFn, n: usize, h: u8) -> XmssParams {
    XmssParams {
        oid,
        name,
        multi_tree: false,
        hash,
        n,
        h,
        d: 1,
    }
}

const fn mt(oid: u32, name: &'static str, hash: HashFn, n: usize, h: u8, d: u8) -> XmssParams {
    XmssParams {
        oid,
        name,
        multi_tree: true,
        hash,
        n,
        h,
        d,
    }
}

use HashFn::{Sha256, Shake256};

/// XMSS parameter sets: RFC 8391 OIDs 1–3 and SP 800-208 OIDs 13–21.
pub const XMSS: [XmssParams; 12] = [
    xmss(0x01, "XMSS-SHA2_10_256", Sha256, 32, 10),
    xmss(0x02, "XMSS-SHA2_16_256", Sha256, 32, 16),
    xmss(0x03, "XMSS-SHA2_20_256", Sha256, 32, 20),
    xmss(0x0D, "XMSS-SHA2_10_192", Sha256, 24, 10),
    xmss(0x0E, "XMSS-SHA2_16_192", Sha256, 24, 16),
    xmss(0x0F, "XMSS-SHA2_20_192", Sha256, 24, 20),
    xmss(0x10, "XMSS-SHAKE256_10_256", Shake256, 32, 10),
    xmss(0x11, "XMSS-SHAKE256_16_256", Shake256, 32, 16),
    xmss(0x12, "XMSS-SHAKE256_20_256", Shake256, 32, 20),
    xmss(0x13, "XMSS-SHAKE256_10_192", Shake256, 24, 10),
    xmss(0x14, "XMSS-SHAKE256_16_192", Shake256, 24, 16),
    xmss(0x15, "XMSS-SHAKE256_20_192", Shake256, 24, 20),
];

/// XMSS^MT parameter sets: RFC 8391 OIDs 1–8 and SP 800-208 OIDs 0x21–0x38.
pub const XMSS_MT: [XmssParams; 32] = [
    mt(0x01, "XMSSMT-SHA2_20/2_256", Sha256, 32, 20, 2),
    mt(0x02, "XMSSMT-SHA2_20/4_256", Sha256, 32, 20, 4),
    mt(0x03, "XMSSMT-SHA2_40/2_256", Sha256, 32, 40, 2),
    mt(0x04, "XMSSMT-SHA2_40/4_256", Sha256, 32, 40, 4),
    mt(0x05, "XMSSMT-SHA2_40/8_256", Sha256, 32, 40, 8),
    mt(0x06, "XMSSMT-SHA2_60/3_256", Sha256, 32, 60, 3),
    mt(0x07, "XMSSMT-SHA2_60/6_256", Sha256, 32, 60, 6),
    mt(0x08, "XMSSMT-SHA2_60/12_256", Sha256, 32, 60, 12),
    mt(0x21, "XMSSMT-SHA2_20/2_192", Sha256, 24, 20, 2),
    mt(0x22, "XMSSMT-SHA2_20/4_192", Sha256, 24, 20, 4),
    mt(0x23, "XMSSMT-SHA2_40/2_192", Sha256, 24, 40, 2),
    mt(0x24, "XMSSMT-SHA2_40/4_192", Sha256, 24, 40, 4),
    mt(0x25, "XMSSMT-SHA2_40/8_192", Sha256, 24, 40, 8),
    mt(0x26, "XMSSMT-SHA2_60/3_192", Sha256, 24, 60, 3),
    mt(0x27, "XMSSMT-SHA2_60/6_192", Sha256, 24, 60, 6),
    mt(0x28, "XMSSMT-SHA2_60/12_192", Sha256, 24, 60, 12),
    mt(0x29, "XMSSMT-SHAKE256_20/2_256", Shake256, 32, 20, 2),
    mt(0x2A, "XMSSMT-SHAKE256_20/4_256", Shake256, 32, 20, 4),
    mt(0x2B, "XMSSMT-SHAKE256_40/2_256", Shake256, 32, 40, 2),
    mt(0x2C, "XMSSMT-SHAKE256_40/4_256", Shake256, 32, 40, 4),
    mt(0x2D, "XMSSMT-SHAKE256_40/8_256", Shake256, 32, 40, 8),
    mt(0x2E, "XMSSMT-SHAKE256_60/3_256", Shake256, 32, 60, 3),
    mt(0x2F, "XMSSMT-SHAKE256_60/6_256", Shake256, 32, 60, 6),
    mt(0x30, "XMSSMT-SHAKE256_60/12_256", Shake256, 32, 60, 12),
    mt(0x31, "XMSSMT-SHAKE256_20/2_192", Shake256, 24, 20, 2),
    mt(0x32, "XMSSMT-SHAKE256_20/4_192", Shake256, 24, 20, 4),
    mt(0x33, "XMSSMT-SHAKE256_40/2_192", Shake256, 24, 40, 2),
    mt(0x34, "XMSSMT-SHAKE256_40/4_192", Shake256, 24, 40, 4),
    mt(0x35, "XMSSMT-SHAKE256_40/8_192", Shake256, 24, 40, 8),
    mt(0x36, "XMSSMT-SHAKE256_60/3_192", Shake256, 24, 60, 3),
    mt(0x37, "XMSSMT-SHAKE256_60/6_192", Shake256, 24, 60, 6),
    mt(0x38, "XMSSMT-SHAKE256_60/12_192", Shake256, 24, 60, 12),
];

/// The parameter set with this name (case-insensitive), XMSS or XMSS^MT.
///
/// # Errors
/// [`Error::Malformed`] for any other name.
pub fn by_name(name: &str) -> Result<&'static XmssParams, Error> {
    XMSS.iter()
        .chain(XMSS_MT.iter())
        .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
        .ok_or(Error::Malformed(
            "unknown XMSS or XMSS^MT parameter set name",
        ))
}

/// The parameter set with this OID in the XMSS (`multi_tree` false) or XMSS^MT registry.
///
/// # Errors
/// [`Error::UnknownType`] for an OID the registry does not have here.
pub fn by_oid(oid: u32, multi_tree: bool) -> Result<&'static XmssParams, Error> {
    let (set, what): (&[XmssParams], _) = if multi_tree {
        (&XMSS_MT, "XMSS^MT")
    } else {
        (&XMSS, "XMSS")
    };
    set.iter()
        .find(|p| p.oid == oid)
        .ok_or(Error::UnknownType(what, oid))
}

// ------------------------------------------------------------------------ hashing (RFC 8391 §5)

const F: u8 = 0;
const H: u8 = 1;
const H_MSG: u8 = 2;
const PRF: u8 = 3;
const PRF_KEYGEN: u8 = 4;

/// Hash(toByte(domain, pad) ‖ parts…), n bytes.
fn thash(p: &XmssParams, domain: u8, parts: &[&[u8]]) -> Node {
    let mut prefix = [0u8; 32];
    let pad = p.pad();
    prefix[pad - 1] = domain;
    let mut all: Vec<&[u8]> = Vec::with_capacity(parts.len() + 1);
    all.push(&prefix[..pad]);
    all.extend_from_slice(parts);
    hash(p.hash, p.n, &all)
}

/// A hash address (RFC 8391 §2.5): eight 32-bit words.
#[derive(Clone, Copy, Default)]
struct Adrs([u32; 8]);

const OTS: u32 = 0;
const LTREE: u32 = 1;
const HASH_TREE: u32 = 2;

impl Adrs {
    fn new(layer: u32, tree: u64, kind: u32) -> Self {
        let t = tree.to_be_bytes();
        let mut a = [0u32; 8];
        a[0] = layer;
        a[1] = u32::from_be_bytes([t[0], t[1], t[2], t[3]]);
        a[2] = u32::from_be_bytes([t[4], t[5], t[6], t[7]]);
        a[3] = kind;
        Self(a)
    }

    fn with(mut self, word: usize, value: u32) -> Self {
        self.0[word] = value;
        self
    }

    fn bytes(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (chunk, w) in out.chunks_exact_mut(4).zip(self.0) {
            chunk.copy_from_slice(&w.to_be_bytes());
        }
        out
    }
}

fn xor(a: &Node, b: &Node, n: usize) -> Node {
    let mut out = [0u8; 32];
    for i in 0..n {
        out[i] = a[i] ^ b[i];
    }
    out
}

/// RAND_HASH (RFC 8391 Algorithm 7): H(KEY, (LEFT ⊕ BM_0) ‖ (RIGHT ⊕ BM_1)).
fn rand_hash(p: &XmssParams, left: &Node, right: &Node, seed: &[u8], adrs: Adrs) -> Node {
    let key = thash(p, PRF, &[seed, &adrs.with(7, 0).bytes()]);
    let bm0 = thash(p, PRF, &[seed, &adrs.with(7, 1).bytes()]);
    let bm1 = thash(p, PRF, &[seed, &adrs.with(7, 2).bytes()]);
    let n = p.n;
    thash(
        p,
        H,
        &[
            &key[..n],
            &xor(left, &bm0, n)[..n],
            &xor(right, &bm1, n)[..n],
        ],
    )
}

/// Many thash calls of one domain at once in the engine's lanes: Hash(toByte(domain, pad) ‖
/// input) for each `input_len`-byte input laid end to end in `inputs`; n bytes each.
fn thash_many(p: &XmssParams, domain: u8, input_len: usize, inputs: &[u8]) -> Wiped<u8> {
    let pad = p.pad();
    let msg_len = pad + input_len;
    let count = inputs.len() / input_len;
    let mut msgs = Wiped::filled(0u8, count * msg_len);
    for (m, input) in msgs
        .chunks_exact_mut(msg_len)
        .zip(inputs.chunks_exact(input_len))
    {
        m[pad - 1] = domain;
        m[pad..].copy_from_slice(input);
    }
    let mut out = Wiped::filled(0u8, count * p.n);
    crate::lms::engine(p.hash).hash_many(msg_len, &msgs, p.n, &mut out);
    out
}

/// PRF(SEED, ADRS) for each address, n bytes each, in lanes.
fn prf_many(p: &XmssParams, seed: &[u8], addresses: impl Iterator<Item = Adrs>) -> Wiped<u8> {
    let n = p.n;
    let mut inputs = Vec::new();
    for a in addresses {
        inputs.extend_from_slice(seed);
        inputs.extend_from_slice(&a.bytes());
    }
    thash_many(p, PRF, n + 32, &inputs)
}

/// WOTS+ chains (RFC 8391 Algorithm 2) of one-time key `ots`, all at once in the engine's
/// lanes: chain `c.id` = i from step `c.at` to `c.end`. The keys and bitmasks of every step
/// (two PRF calls each) do not depend on the chain values, so they are computed first, in
/// lanes; then each step is F(KEY, tmp ⊕ BM) for every chain still running.
fn chains(p: &XmssParams, seed: &[u8], ots: Adrs, chains: &mut [Chain]) {
    let n = p.n;
    let mut first = Vec::with_capacity(chains.len());
    let mut steps = 0usize;
    for c in chains.iter() {
        first.push((steps, c.at));
        steps += (c.end - c.at) as usize;
    }
    let addresses = chains.iter().flat_map(|c| {
        (c.at..c.end).flat_map(move |j| {
            let a = ots.with(5, c.id).with(6, j);
            [a.with(7, 0), a.with(7, 1)]
        })
    });
    let keys = prf_many(p, seed, addresses);
    let pad = p.pad();
    pqkit_hash::chains(
        crate::lms::engine(p.hash),
        pad + 2 * n,
        n,
        chains,
        |k, c, msg| {
            let (start, at) = first[k];
            let step = start + (c.at - at) as usize;
            let key = &keys[2 * step * n..(2 * step + 1) * n];
            let bm = &keys[(2 * step + 1) * n..(2 * step + 2) * n];
            msg[..pad].fill(0);
            msg[pad - 1] = F;
            msg[pad..pad + n].copy_from_slice(key);
            for (m, (v, b)) in msg[pad + n..].iter_mut().zip(c.value.iter().zip(bm)) {
                *m = v ^ b;
            }
        },
    );
}

/// The digits WOTS+ signs: base-16 digits of the n-byte message and of its checksum.
fn digits(p: &XmssParams, msg: &[u8]) -> Vec<u32> {
    let mut out: Vec<u32> = msg[..p.n]
        .iter()
        .flat_map(|b| [u32::from(b >> 4), u32::from(b & 15)])
        .collect();
    let csum: u32 = out.iter().map(|d| 15 - d).sum::<u32>() << 4;
    let c = csum.to_be_bytes();
    out.extend([
        u32::from(c[2] >> 4),
        u32::from(c[2] & 15),
        u32::from(c[3] >> 4),
    ]);
    out
}

/// L-tree (RFC 8391 Algorithm 8): compresses the WOTS+ public key to one node, a level at a
/// time: each level's RAND_HASH calls (three PRF calls and H each) run together in lanes.
fn ltree(p: &XmssParams, mut pk: Vec<Node>, seed: &[u8], adrs: Adrs) -> Node {
    let n = p.n;
    let mut height = 0u32;
    while pk.len() > 1 {
        let half = pk.len() / 2;
        let at = |index: u32| adrs.with(5, height).with(6, index);
        let keys = prf_many(
            p,
            seed,
            (0u32..)
                .take(half)
                .flat_map(|i| [at(i).with(7, 0), at(i).with(7, 1), at(i).with(7, 2)]),
        );
        let mut inputs = Wiped::filled(0u8, half * 3 * n);
        for (i, input) in inputs.chunks_exact_mut(3 * n).enumerate() {
            let k = &keys[3 * i * n..3 * (i + 1) * n];
            input[..n].copy_from_slice(&k[..n]);
            for b in 0..n {
                input[n + b] = pk[2 * i][b] ^ k[n + b];
                input[2 * n + b] = pk[2 * i + 1][b] ^ k[2 * n + b];
            }
        }
        let nodes = thash_many(p, H, 3 * n, &inputs);
        for (i, node) in nodes.chunks_exact(n).enumerate() {
            pk[i] = [0u8; 32];
            pk[i][..n].copy_from_slice(node);
        }
        if pk.len() % 2 == 1 {
            pk[half] = pk[pk.len() - 1];
            pk.truncate(half + 1);
        } else {
            pk.truncate(half);
        }
        height += 1;
    }
    pk[0]
}

/// The root a WOTS+ signature and authentication path lead to (RFC 8391 Algorithm 13).
#[allow(clippy::too_many_arguments)]
fn root_from_sig(
    p: &XmssParams,
    leaf: u32,
    wots_sig: &[u8],
    auth: &[u8],
    msg: &[u8],
    seed: &[u8],
    layer: u32,
    tree: u64,
) -> Node {
    let n = p.n;
    let ots = Adrs::new(layer, tree, OTS).with(4, leaf);
    let mut c: Vec<Chain> = (0u32..)
        .zip(digits(p, msg).into_iter().zip(wots_sig.chunks_exact(n)))
        .map(|(i, (d, s))| Chain::new(i, d, 15, s))
        .collect();
    chains(p, seed, ots, &mut c);
    let pk: Vec<Node> = c.iter().map(|c| c.value).collect();
    let mut node = ltree(p, pk, seed, Adrs::new(layer, tree, LTREE).with(4, leaf));
    for (k, sibling) in (0u32..).zip(auth.chunks_exact(n)) {
        let mut s = [0u8; 32];
        s[..n].copy_from_slice(sibling);
        let a = Adrs::new(layer, tree, HASH_TREE)
            .with(5, k)
            .with(6, leaf >> (k + 1));
        node = if (leaf >> k) & 1 == 0 {
            rand_hash(p, &node, &s, seed, a)
        } else {
            rand_hash(p, &s, &node, seed, a)
        };
    }
    node
}

/// The low `bits` (≤ 20) bits of `value`.
fn low_bits(value: u64, bits: u8) -> u32 {
    u32::try_from(value & ((1u64 << bits) - 1)).unwrap_or(0)
}

fn to_byte(value: u64, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    let b = value.to_be_bytes();
    let take = len.min(8);
    out[len - take..].copy_from_slice(&b[8 - take..]);
    out
}

/// M' = H_msg(r ‖ root ‖ toByte(idx, n), M) (RFC 8391 §4.1.9).
fn message_hash(p: &XmssParams, r: &[u8], root: &[u8], idx: u64, message: &[u8]) -> Node {
    thash(p, H_MSG, &[r, root, &to_byte(idx, p.n), message])
}

// ---------------------------------------------------------------------------- verification

/// An XMSS or XMSS^MT public key: OID ‖ root ‖ SEED.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XmssPublicKey {
    /// Parameter set.
    pub params: &'static XmssParams,
    /// The root (first n bytes).
    pub root: Node,
    /// The public SEED (first n bytes).
    pub seed: Node,
}

impl XmssPublicKey {
    /// Decodes a public key of the XMSS (`multi_tree` false) or XMSS^MT registry.
    ///
    /// # Errors
    /// [`Error::UnknownType`] for an unknown OID, [`Error::Malformed`] for a wrong length.
    pub fn from_bytes(bytes: &[u8], multi_tree: bool) -> Result<Self, Error> {
        let oid = crate::lms::u32_at(bytes, 0)?;
        let params = by_oid(oid, multi_tree)?;
        if bytes.len() != params.public_key_len() {
            return Err(Error::Malformed("XMSS public key length"));
        }
        let n = params.n;
        let mut root = [0u8; 32];
        let mut seed = [0u8; 32];
        root[..n].copy_from_slice(&bytes[4..4 + n]);
        seed[..n].copy_from_slice(&bytes[4 + n..]);
        Ok(Self { params, root, seed })
    }

    /// Encodes the key: 4 + 2n bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let n = self.params.n;
        let mut out = self.params.oid.to_be_bytes().to_vec();
        out.extend_from_slice(&self.root[..n]);
        out.extend_from_slice(&self.seed[..n]);
        out
    }

    /// The index a signature claims (which one-time key it used). Does not verify.
    ///
    /// # Errors
    /// [`Error::Malformed`] for a signature of the wrong length.
    pub fn index(&self, signature: &[u8]) -> Result<u64, Error> {
        let p = self.params;
        if signature.len() != p.signature_len() {
            return Err(Error::Malformed("XMSS signature length"));
        }
        Ok(signature[..p.idx_len()]
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    /// Verifies a signature (RFC 8391 Algorithms 14 and 17).
    ///
    /// # Errors
    /// [`Error::Malformed`] for a signature of the wrong length, [`Error::Invalid`] for one
    /// that does not verify.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> Result<(), Error> {
        let p = self.params;
        let idx = self.index(signature)?;
        if idx >= p.signatures() {
            return Err(Error::Invalid);
        }
        let n = p.n;
        let seed = &self.seed[..n];
        let mut at = p.idx_len();
        let r = &signature[at..at + n];
        at += n;
        let mut node = message_hash(p, r, &self.root[..n], idx, message);
        let th = p.tree_height();
        let (mut tree, mut leaf);
        tree = idx;
        for layer in 0..u32::from(p.d) {
            leaf = low_bits(tree, th);
            tree >>= th;
            let wots = &signature[at..at + p.wots_len() * n];
            at += p.wots_len() * n;
            let auth = &signature[at..at + usize::from(th) * n];
            at += usize::from(th) * n;
            node = root_from_sig(p, leaf, wots, auth, &node[..n], seed, layer, tree);
        }
        if !bool::from(subtle::ConstantTimeEq::ct_eq(&node[..n], &self.root[..n])) {
            return Err(Error::Invalid);
        }
        Ok(())
    }
}

// --------------------------------------------------------------------------------- signing

/// The leaves of one XMSS tree (layer, tree index) of a key.
pub struct XmssLeaves {
    params: &'static XmssParams,
    layer: u32,
    tree: u64,
    s_xmss: Zeroizing<Vec<u8>>,
    seed: Vec<u8>,
}

impl XmssLeaves {
    fn wots_sign(&self, leaf: u32, msg: &[u8]) -> Vec<u8> {
        let p = self.params;
        let ots = Adrs::new(self.layer, self.tree, OTS).with(4, leaf);
        let d = digits(p, msg);
        let mut c = self.secrets(ots, |i| d[i]);
        chains(p, &self.seed, ots, &mut c);
        c.iter().flat_map(|c| c.value[..p.n].to_vec()).collect()
    }

    /// The WOTS+ secret key elements of one-time key `ots` as chains from step 0 to `end(i)`
    /// (SP 800-208 §5: PRF_keygen(S_XMSS, SEED ‖ ADRS)), in lanes.
    fn secrets(&self, ots: Adrs, end: impl Fn(usize) -> u32) -> Wiped<Chain> {
        let p = self.params;
        let mut inputs = Wiped::with_capacity(p.wots_len() * (2 * p.n + 32));
        for i in (0u32..).take(p.wots_len()) {
            inputs.extend_from_slice(&self.s_xmss);
            inputs.extend_from_slice(&self.seed);
            inputs.extend_from_slice(&ots.with(5, i).bytes());
        }
        let sk = thash_many(p, PRF_KEYGEN, 2 * p.n + 32, &inputs);
        Wiped::from_vec(
            (0u32..)
                .zip(sk.chunks_exact(p.n))
                .enumerate()
                .map(|(k, (i, x))| Chain::new(i, 0, end(k), x))
                .collect(),
        )
    }
}

impl TreeHasher for XmssLeaves {
    fn height(&self) -> u8 {
        self.params.tree_height()
    }

    fn node_len(&self) -> usize {
        self.params.n
    }

    /// u32 layer ‖ u64 tree index.
    fn identity(&self) -> Vec<u8> {
        let mut out = self.layer.to_be_bytes().to_vec();
        out.extend_from_slice(&self.tree.to_be_bytes());
        out
    }

    fn leaf(&self, leaf: u32) -> Node {
        let p = self.params;
        let ots = Adrs::new(self.layer, self.tree, OTS).with(4, leaf);
        let mut c = self.secrets(ots, |_| 15);
        chains(p, &self.seed, ots, &mut c);
        let pk: Vec<Node> = c.iter().map(|c| c.value).collect();
        ltree(
            p,
            pk,
            &self.seed,
            Adrs::new(self.layer, self.tree, LTREE).with(4, leaf),
        )
    }

    fn parent(&self, height: u8, index: u32, left: &Node, right: &Node) -> Node {
        let a = Adrs::new(self.layer, self.tree, HASH_TREE)
            .with(5, u32::from(height) - 1)
            .with(6, index);
        rand_hash(self.params, left, right, &self.seed, a)
    }
}

/// An XMSS or XMSS^MT signing key in memory: one tree per layer on the current path, the
/// signatures linking each tree's root to the layer above, and each lower layer's next tree,
/// built a few leaves per signature. Which indices are unused is the caller's business
/// ([`crate::state`]).
pub struct XmssSigner {
    params: &'static XmssParams,
    sk_prf: Zeroizing<Vec<u8>>,
    s_xmss: Zeroizing<Vec<u8>>,
    seed: Vec<u8>,
    root: Node,
    /// trees[j]: layer j's tree in use.
    trees: Vec<MerkleTree<XmssLeaves>>,
    /// links[j]: layer j+1's WOTS+ signature and path over layer j's root.
    links: Vec<Vec<u8>>,
    /// upcoming[j]: layer j's next tree (the top layer has one tree).
    upcoming: Vec<Option<Upcoming<XmssLeaves>>>,
    /// Saved trees and builders not taken yet (until the first signature).
    cache: TreeCache,
    threads: usize,
}

impl XmssSigner {
    /// Bytes of each signature (RFC 8391 §4.1.8, §4.2.4).
    pub fn signature_len(&self) -> usize {
        self.params.signature_len()
    }

    /// Generates the key from S_XMSS, SK_PRF and SEED (n bytes each) on `threads` threads:
    /// the top tree (2^(h/d) leaves) and the first tree of every layer below.
    ///
    /// # Errors
    /// [`Error::Malformed`] for inputs of the wrong length.
    pub fn generate(
        params: &'static XmssParams,
        s_xmss: &[u8],
        sk_prf: &[u8],
        seed: &[u8],
        threads: usize,
    ) -> Result<Self, Error> {
        Self::open(
            params,
            s_xmss,
            sk_prf,
            seed,
            0,
            threads,
            TreeCache::default(),
        )
    }

    /// The key ready to sign index `idx`: the trees of its path taken from `cache` where it
    /// holds them and computed on `threads` threads where not.
    ///
    /// # Errors
    /// As [`XmssSigner::generate`].
    pub fn open(
        params: &'static XmssParams,
        s_xmss: &[u8],
        sk_prf: &[u8],
        seed: &[u8],
        idx: u64,
        threads: usize,
        cache: TreeCache,
    ) -> Result<Self, Error> {
        let n = params.n;
        if s_xmss.len() != n || sk_prf.len() != n || seed.len() != n {
            return Err(Error::Malformed("XMSS seeds must be n bytes each"));
        }
        let mut me = Self {
            params,
            sk_prf: Zeroizing::new(sk_prf.to_vec()),
            s_xmss: Zeroizing::new(s_xmss.to_vec()),
            seed: seed.to_vec(),
            root: [0u8; 32],
            trees: Vec::new(),
            links: Vec::new(),
            upcoming: (0..params.d).map(|_| None).collect(),
            cache,
            threads,
        };
        let path = me.path(idx.min(params.signatures() - 1));
        for (layer, &(tree, _)) in (0u32..).zip(&path) {
            let leaves = me.leaves(layer, tree);
            let tree = me.cache.take_tree(leaves, threads, SUBTREE_HEIGHT);
            me.trees.push(tree);
        }
        // The top layer's single tree's root is the public root.
        me.root = me.trees[usize::from(params.d) - 1].root();
        me.links = me.links_for(&path);
        Ok(me)
    }

    fn leaves(&self, layer: u32, tree: u64) -> XmssLeaves {
        XmssLeaves {
            params: self.params,
            layer,
            tree,
            s_xmss: self.s_xmss.clone(),
            seed: self.seed.clone(),
        }
    }

    /// The public key.
    pub fn public_key(&self) -> XmssPublicKey {
        let mut seed = [0u8; 32];
        seed[..self.params.n].copy_from_slice(&self.seed);
        XmssPublicKey {
            params: self.params,
            root: self.root,
            seed,
        }
    }

    /// Bytes of tree nodes kept in memory, next trees included.
    pub fn cache_bytes(&self) -> usize {
        kept_bytes(&self.trees, &self.upcoming)
    }

    /// The trees and next trees, to save; with the saved entries not taken yet.
    pub fn save_cache(&self) -> TreeCache {
        saved(&self.cache, &self.trees, &self.upcoming)
    }

    /// Height of each layer's tree, h/d: a top-layer one-time key covers capacity / 2^(h/d)
    /// signatures (XMSS: one).
    pub fn top_height(&self) -> u8 {
        self.params.tree_height()
    }

    /// Number of signatures, 2^h.
    pub fn capacity(&self) -> u64 {
        self.params.signatures()
    }

    /// The (tree index, leaf) of each layer for index `idx`, bottom first.
    fn path(&self, idx: u64) -> Vec<(u64, u32)> {
        let th = self.params.tree_height();
        let mut tree = idx;
        (0..self.params.d)
            .map(|_| {
                let leaf = low_bits(tree, th);
                tree >>= th;
                (tree, leaf)
            })
            .collect()
    }

    /// The link signatures along `path`: each layer above 0 signs the root of the tree below
    /// with its leaf (WOTS+ signature ‖ auth path).
    fn links_for(&mut self, path: &[(u64, u32)]) -> Vec<Vec<u8>> {
        let n = self.params.n;
        (1..usize::from(self.params.d))
            .map(|layer| {
                let (_, leaf) = path[layer];
                let below = self.trees[layer - 1].root();
                let mut link = self.trees[layer].hasher.wots_sign(leaf, &below[..n]);
                for node in self.trees[layer].auth_path(leaf) {
                    link.extend_from_slice(&node[..n]);
                }
                link
            })
            .collect()
    }

    /// Makes every layer's tree the one index `idx` passes through (the paced next tree, or a
    /// saved or computed one after a jump); re-signs the links when a tree changed.
    fn sync(&mut self, idx: u64) {
        let path = self.path(idx);
        let mut changed = false;
        for (layer, &(tree, _)) in (0u32..).zip(&path) {
            let slot = layer as usize;
            if self.trees[slot].hasher.tree != tree {
                let leaves = self.leaves(layer, tree);
                self.trees[slot] =
                    self.cache
                        .next_tree(&mut self.upcoming[slot], leaves, self.threads);
                changed = true;
            }
        }
        if changed {
            self.links = self.links_for(&path);
        }
    }

    /// Advances every lower layer's next tree at index `idx`.
    fn pace(&mut self, idx: u64) {
        let th = u32::from(self.params.tree_height());
        let capacity = self.capacity();
        // Saved builders are taken here at the first signature; the rest is stale.
        let mut cache = std::mem::take(&mut self.cache);
        for layer in 0..self.params.d - 1 {
            let bits = th * (u32::from(layer) + 1);
            let slot = usize::from(layer);
            let mut upcoming = self.upcoming[slot].take();
            Upcoming::keep(
                &mut upcoming,
                next_start(idx, bits, capacity),
                idx,
                |start| {
                    let leaves = self.leaves(u32::from(layer), start >> bits);
                    cache.take_builder(leaves, SUBTREE_HEIGHT)
                },
            );
            self.upcoming[slot] = upcoming;
        }
    }

    /// Signs `message` with index `idx` (RFC 8391 Algorithms 12 and 16). The caller
    /// guarantees each index is used once. Costs one WOTS+ signature plus, paced, about one
    /// leaf per layer.
    ///
    /// # Errors
    /// [`Error::Exhausted`] when `idx` ≥ 2^h.
    pub(crate) fn sign_index(&mut self, idx: u64, message: &[u8]) -> Result<Vec<u8>, Error> {
        let p = self.params;
        if idx >= p.signatures() {
            return Err(Error::Exhausted);
        }
        self.sync(idx);
        let (_, leaf) = self.path(idx)[0];
        let n = p.n;
        let r = thash(p, PRF, &[&self.sk_prf, &to_byte(idx, 32)]);
        let digest = message_hash(p, &r[..n], &self.root[..n], idx, message);
        let mut out = to_byte(idx, p.idx_len());
        out.extend_from_slice(&r[..n]);
        out.extend_from_slice(&self.trees[0].hasher.wots_sign(leaf, &digest[..n]));
        for node in self.trees[0].auth_path(leaf) {
            out.extend_from_slice(&node[..n]);
        }
        for link in &self.links {
            out.extend_from_slice(link);
        }
        self.pace(idx);
        Ok(out)
    }
}

impl std::fmt::Debug for XmssSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XmssSigner")
            .field("params", &self.params.name)
            .field("secrets", &"<secret>")
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_lengths_match_rfc_8391() {
        // RFC 8391 §5.3 / §5.4 tables: XMSS-SHA2_10_256 2500 bytes, XMSSMT-SHA2_20/2_256 4963,
        // 60/12_256 27688; SP 800-208 XMSS-SHA2_10_192 1492.
        let len = |name| by_name(name).expect(name).signature_len();
        assert_eq!(len("XMSS-SHA2_10_256"), 2500);
        assert_eq!(len("XMSSMT-SHA2_20/2_256"), 4963);
        assert_eq!(len("XMSSMT-SHA2_60/12_256"), 27688);
        assert_eq!(len("XMSS-SHA2_10_192"), 1492);
    }

    #[test]
    fn multithreaded_keygen_gives_the_single_threaded_key() {
        for name in ["XMSS-SHA2_10_192", "XMSSMT-SHA2_20/4_256"] {
            let p = by_name(name).expect("set");
            let one = XmssSigner::generate(p, &[4; 32][..p.n], &[5; 32][..p.n], &[6; 32][..p.n], 1);
            let four =
                XmssSigner::generate(p, &[4; 32][..p.n], &[5; 32][..p.n], &[6; 32][..p.n], 4);
            assert_eq!(
                one.expect("1 thread").public_key(),
                four.expect("4 threads").public_key(),
                "{name}"
            );
        }
    }

    #[test]
    fn xmss_mt_signs_across_tree_boundaries() {
        // XMSSMT-SHA2_20/4_256: four layers of height-5 trees.
        let p = by_name("XMSSMT-SHA2_20/4_256").expect("set");
        let mut key = XmssSigner::generate(p, &[1; 32], &[2; 32], &[3; 32], 2).expect("key");
        let pk = XmssPublicKey::from_bytes(&key.public_key().to_bytes(), true).expect("pk");
        for idx in [0u64, 1, 31, 32, 1023, 1024, 1 << 15, (1 << 20) - 1, 5] {
            let msg = idx.to_be_bytes();
            let sig = key.sign_index(idx, &msg).expect("sign");
            assert_eq!(sig.len(), p.signature_len());
            assert_eq!(pk.index(&sig), Ok(idx));
            assert_eq!(pk.verify(&msg, &sig), Ok(()), "idx {idx}");
            assert!(pk.verify(b"other", &sig).is_err());
        }
        assert_eq!(key.sign_index(1 << 20, b"m"), Err(Error::Exhausted));
    }
}
