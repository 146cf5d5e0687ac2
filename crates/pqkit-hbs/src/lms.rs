//! LM-OTS (RFC 8554 §4), LMS (§5) and HSS (§6) on SHA-256, SHA-256/192 and SHAKE256
//! (SP 800-208 §4): key derivation (Appendix A), leaves, signing and verification.
//!
//! Every function here is stateless: which one-time key may be used is the business of
//! [`crate::state`].

use sha2::Digest;
use sha3::digest::{ExtendableOutput, Update, XofReader};

use pqkit_hash::{
    Chain, ChainEnds, IdField, Layout, ManyHash, Sha256Prefix, Shake, Wiped, append_values,
};

use crate::Error;
use crate::params::{HashFn, LmsParams, OtsParams, check_pair, lms_by_code, ots_by_code};

/// A hash output or tree node: the first n (24 or 32) bytes are used.
pub type Node = [u8; 32];

/// The 16-byte key-pair identifier I (RFC 8554 §5.3).
pub type Identifier = [u8; 16];

const D_PBLC: [u8; 2] = [0x80, 0x80];
const D_MESG: [u8; 2] = [0x81, 0x81];
const D_LEAF: [u8; 2] = [0x82, 0x82];
const D_INTR: [u8; 2] = [0x83, 0x83];

/// H(parts…) truncated to `n` bytes. Messages up to 256 bytes (the message hash Q of a short
/// message, the randomizer C, an HSS child's I and SEED) are gathered on the stack and hashed
/// in one call of the engine's SHA-256 (SHA-NI where the CPU has it); tree nodes have their
/// own fixed-size gathering ([`node_hash`]).
pub(crate) fn hash(f: HashFn, n: usize, parts: &[&[u8]]) -> Node {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    if f == HashFn::Sha256 && len <= 256 {
        let mut buf = [0u8; 256];
        let mut at = 0;
        for p in parts {
            pqkit_hash::copy(&mut buf[at..at + p.len()], p);
            at += p.len();
        }
        let out = hash_message(f, n, &buf[..len]);
        // The parts may be secret (SEED in the randomizer).
        pqkit_hash::wipe(&mut buf);
        return out;
    }
    let mut out = [0u8; 32];
    match f {
        HashFn::Sha256 => {
            let mut h = sha2::Sha256::new();
            for p in parts {
                Digest::update(&mut h, p);
            }
            out.copy_from_slice(&h.finalize());
        }
        HashFn::Shake256 => {
            let mut h = sha3::Shake256::default();
            for p in parts {
                h.update(p);
            }
            h.finalize_xof().read(&mut out[..n]);
        }
    }
    out[n..].fill(0);
    out
}

/// H(msg) truncated to `n` bytes, in one call.
fn hash_message(f: HashFn, n: usize, msg: &[u8]) -> Node {
    let mut out = [0u8; 32];
    match f {
        HashFn::Sha256 => out = Sha256Prefix::NONE.hash(msg),
        HashFn::Shake256 => {
            let mut h = sha3::Shake256::default();
            h.update(msg);
            h.finalize_xof().read(&mut out[..n]);
        }
    }
    out[n..].fill(0);
    out
}

/// The most chains an LM-OTS key has: p of LMOTS_*_N32_W1 (RFC 8554 §4.1).
const MAX_P: usize = 265;

/// coef(S, i, w): the i-th w-bit digit of S, most significant first (RFC 8554 §3.1.3).
fn coef(s: &[u8], i: usize, w: u8) -> u8 {
    let wz = usize::from(w);
    let shift = 8 - (wz * (i % (8 / wz)) + wz);
    // (byte >> shift) keeps at most 8 bits; the mask keeps w of them.
    let mask = u8::MAX >> (8 - w);
    (s[i * wz / 8] >> shift) & mask
}

/// The digits Q ‖ Cksm(Q) a message hash signs (RFC 8554 §4.4–4.5): the first p entries.
fn digits(ots: &OtsParams, q_hash: &[u8]) -> [u8; MAX_P] {
    let u = (8 * ots.n).div_ceil(usize::from(ots.w));
    let mut out = [0u8; MAX_P];
    // coef(Q, i, w) for every i: each byte gives 8/w digits, most significant first.
    fn split<const W: usize>(q: &[u8], out: &mut [u8]) {
        let mask = u8::MAX >> (8 - W);
        for (digits, &byte) in out.chunks_exact_mut(8 / W).zip(q) {
            for (k, d) in digits.iter_mut().enumerate() {
                *d = (byte >> (8 - W * (k + 1))) & mask;
            }
        }
    }
    let (q, digits) = (&q_hash[..ots.n], &mut out[..u]);
    match ots.w {
        1 => split::<1>(q, digits),
        2 => split::<2>(q, digits),
        4 => split::<4>(q, digits),
        _ => split::<8>(q, digits),
    }
    let sum: u32 = out[..u]
        .iter()
        .map(|&d| u32::from(ots.max_digit() - d))
        .sum();
    // u16str(sum << ls): the shifted sum fits 16 bits by the choice of ls (Appendix B).
    let shifted = (sum << ots.ls).to_be_bytes();
    for (i, d) in out[u..ots.p].iter_mut().enumerate() {
        *d = coef(&shifted[2..], i, ots.w);
    }
    out
}

/// The engine's hash for a hash function (`pqkit-hash`: SHA-256 lanes or SHAKE256 lanes).
pub(crate) fn engine(f: HashFn) -> &'static dyn ManyHash {
    static SHA256: Sha256Prefix = Sha256Prefix::NONE;
    static SHAKE256: Shake = Shake::SHAKE256;
    match f {
        HashFn::Sha256 => &SHA256,
        HashFn::Shake256 => &SHAKE256,
    }
}

/// Runs the chains of one-time key `q` in parallel lanes: chain `c.id` = i from `c.at` to
/// `c.end`, step j hashing I ‖ u32str(q) ‖ u16str(i) ‖ u8str(j) ‖ tmp (RFC 8554 Algorithm 1,
/// 3, 4b: 23 + n bytes, one SHA-256 block).
fn run_chains(ots: &OtsParams, id: &Identifier, q: u32, chains: &mut [Chain]) {
    let (layout, shared) = chain_messages(ots, id, q);
    let i = IdField { at: 20, bytes: 2 };
    pqkit_hash::shared_chains(
        engine(ots.hash),
        &layout,
        i,
        &shared[..layout.msg_len],
        chains,
    );
}

/// The layout of one-time key `q`'s chain steps and the part every chain's messages share,
/// I ‖ u32str(q) (the first 23 + n bytes; u16str(i) goes at byte 20, i < p ≤ 265).
fn chain_messages(ots: &OtsParams, id: &Identifier, q: u32) -> (Layout, [u8; 23 + 32]) {
    let n = ots.n;
    let layout = Layout {
        msg_len: 23 + n,
        step_at: 22,
        step_bytes: 1,
        value_at: 23,
        n,
    };
    let mut shared = [0u8; 23 + 32];
    shared[..16].copy_from_slice(id);
    shared[16..20].copy_from_slice(&q.to_be_bytes());
    (layout, shared)
}

/// Runs the chains of one-time key `q` from their secret starts to digit `end(i)`:
/// x_q\[i\] = H(I ‖ u32str(q) ‖ u16str(i) ‖ u8str(0xff) ‖ SEED) (RFC 8554 Appendix A), then the
/// steps j = 0 … end(i) − 1. With an n-byte SEED the start has the shape of a chain step with
/// j = 0xff and tmp = SEED, and the one-byte counter of the steps after it wraps to 0x00, 0x01,
/// …: so start and steps run as one chain from 0xff to 0x100 + end(i) in the engine's chain
/// kernels. Another SEED length hashes the starts as plain messages first.
fn run_from_seed(
    ots: &OtsParams,
    id: &Identifier,
    seed: &[u8],
    q: u32,
    end: impl Fn(usize) -> u8,
) -> Wiped<Chain> {
    let mut chains = Wiped::from_vec(
        (0u32..)
            .take(ots.p)
            .enumerate()
            .map(|(k, i)| Chain::new(i, 0xff, 0x100 + u32::from(end(k)), &[]))
            .collect(),
    );
    if seed.len() == ots.n {
        for c in chains.iter_mut() {
            pqkit_hash::copy(&mut c.value[..ots.n], seed);
        }
    } else {
        let msg_len = 23 + seed.len();
        let mut msgs = Wiped::filled(0u8, ots.p * msg_len);
        for (i, m) in (0u16..).zip(msgs.chunks_exact_mut(msg_len)) {
            m[..16].copy_from_slice(id);
            m[16..20].copy_from_slice(&q.to_be_bytes());
            m[20..22].copy_from_slice(&i.to_be_bytes());
            m[22] = 0xff;
            m[23..].copy_from_slice(seed);
        }
        let mut x = Wiped::filled(0u8, ots.p * ots.n);
        engine(ots.hash).hash_many(msg_len, &msgs, ots.n, &mut x);
        for (c, x) in chains.iter_mut().zip(x.chunks_exact(ots.n)) {
            pqkit_hash::copy(&mut c.value[..ots.n], x);
            c.at = 0x100;
        }
    }
    run_chains(ots, id, q, &mut chains);
    chains
}

/// The LM-OTS public key K of one-time key `q` (RFC 8554 Algorithm 1), from SEED: the p chains
/// run together in the engine's lanes.
pub fn ots_public_key(ots: &OtsParams, id: &Identifier, seed: &[u8], q: u32) -> Node {
    let chains = run_from_seed(ots, id, seed, q, |_| ots.max_digit());
    public_key_of(ots, id, q, &chains)
}

/// K = H(I ‖ u32str(q) ‖ u16str(D_PBLC) ‖ z\[0\] ‖ … ‖ z\[p−1\]) over the chain ends
/// (22 + p·n bytes, up to 8 502): SHA-256 gathers them a kilobyte at a time on the stack and
/// hashes each kilobyte's whole blocks as it fills (no 8.5 KB buffer to clear per call).
fn public_key_of(ots: &OtsParams, id: &Identifier, q: u32, ends: &[Chain]) -> Node {
    let n = ots.n;
    let mut header = [0u8; 22];
    header[..16].copy_from_slice(id);
    header[16..20].copy_from_slice(&q.to_be_bytes());
    header[20..22].copy_from_slice(&D_PBLC);
    if ots.hash != HashFn::Sha256 {
        let mut h = sha3::Shake256::default();
        h.update(&header);
        ends.iter().for_each(|c| h.update(&c.value[..n]));
        let mut out = [0u8; 32];
        h.finalize_xof().read(&mut out[..n]);
        return out;
    }
    const PIECE: usize = 1024;
    let mut buf = [0u8; PIECE];
    buf[..22].copy_from_slice(&header);
    let (mut at, mut prefix) = (22, Sha256Prefix::NONE);
    for c in ends {
        if at + n > PIECE {
            let whole = at / 64 * 64;
            prefix = prefix.then(&buf[..whole]);
            buf.copy_within(whole..at, 0);
            at -= whole;
        }
        pqkit_hash::copy(&mut buf[at..at + n], &c.value[..n]);
        at += n;
    }
    let mut out = prefix.hash(&buf[..at]);
    out[n..].fill(0);
    out
}

/// The deterministic randomizer C = H(I ‖ u32str(q) ‖ u16str(0xFFFD) ‖ u8str(0xff) ‖ SEED)
/// of RFC 9858 Appendix A (the test vectors' choice; pqkit signs with it too, so a signature
/// re-made after a crash for the same q and message is the same signature).
pub(crate) fn randomizer(ots: &OtsParams, id: &Identifier, seed: &[u8], q: u32) -> Node {
    hash(
        ots.hash,
        ots.n,
        &[id, &q.to_be_bytes(), &[0xff, 0xfd], &[0xff], seed],
    )
}

/// LM-OTS signature of `message` with one-time key `q` (RFC 8554 Algorithm 3):
/// u32str(type) ‖ C ‖ y\[0\] ‖ … ‖ y\[p−1\], [`OtsParams::signature_len`] bytes.
pub(crate) fn ots_sign(
    ots: &OtsParams,
    id: &Identifier,
    seed: &[u8],
    q: u32,
    message: &[u8],
) -> Vec<u8> {
    let c = randomizer(ots, id, seed, q);
    let qb = q.to_be_bytes();
    let q_hash = hash(ots.hash, ots.n, &[id, &qb, &D_MESG, &c[..ots.n], message]);
    let mut out = Vec::with_capacity(ots.signature_len());
    out.extend_from_slice(&ots.code.to_be_bytes());
    out.extend_from_slice(&c[..ots.n]);
    let d = digits(ots, &q_hash[..ots.n]);
    let chains = run_from_seed(ots, id, seed, q, |i| d[i]);
    append_values(&chains, ots.n, &mut out);
    out
}

/// The candidate public key Kc an LM-OTS signature yields (RFC 8554 Algorithm 4b).
///
/// # Errors
/// [`Error::Malformed`] for a signature of the wrong type or length.
pub fn ots_candidate(
    ots: &OtsParams,
    id: &Identifier,
    q: u32,
    signature: &[u8],
    message: &[u8],
) -> Result<Node, Error> {
    if signature.len() != ots.signature_len() || signature[..4] != ots.code.to_be_bytes() {
        return Err(Error::Malformed("LM-OTS signature type or length"));
    }
    let c = &signature[4..4 + ots.n];
    let qb = q.to_be_bytes();
    let q_hash = hash(ots.hash, ots.n, &[id, &qb, &D_MESG, c, message]);
    let digits = digits(ots, &q_hash[..ots.n]);
    // K's buffer on the stack, as long as W2's or W1's needs (zeroed each call).
    let len = 22 + ots.p * ots.n;
    let signed = &signature[4 + ots.n..];
    Ok(if len <= W2_K {
        candidate_key::<W2_K>(ots, id, q, &digits, signed)
    } else {
        candidate_key::<{ 22 + MAX_P * 32 }>(ots, id, q, &digits, signed)
    })
}

/// The longest K message of LMOTS_*_W2 and shorter: 22 + 133 · 32 bytes.
const W2_K: usize = 22 + 133 * 32;

/// K = H(I ‖ u32str(q) ‖ u16str(D_PBLC) ‖ z\[0\] ‖ … ‖ z\[p − 1\]) from the signature's
/// y\[i\] (`signed`) and the signed digits: the chains' ends written straight into K's
/// message, `LEN` ≥ 22 + p·n bytes on the stack.
fn candidate_key<const LEN: usize>(
    ots: &OtsParams,
    id: &Identifier,
    q: u32,
    digits: &[u8],
    signed: &[u8],
) -> Node {
    let len = 22 + ots.p * ots.n;
    let mut k = [0u8; LEN];
    k[..16].copy_from_slice(id);
    k[16..20].copy_from_slice(&q.to_be_bytes());
    k[20..22].copy_from_slice(&D_PBLC);
    let (layout, shared) = chain_messages(ots, id, q);
    let ends = ChainEnds {
        starts: &digits[..ots.p],
        values: signed,
        end: u32::from(ots.max_digit()),
    };
    let i = IdField { at: 20, bytes: 2 };
    let shared = &shared[..layout.msg_len];
    pqkit_hash::shared_chains_to_end(engine(ots.hash), &layout, i, shared, ends, &mut k[22..len]);
    hash_message(ots.hash, ots.n, &k[..len])
}

/// Leaf node r = 2^h + q: H(I ‖ u32str(r) ‖ u16str(D_LEAF) ‖ K) (RFC 8554 §5.3).
pub fn leaf(lms: &LmsParams, id: &Identifier, q: u32, ots_public: &Node) -> Node {
    node_hash(
        lms,
        id,
        (1u32 << lms.h) + q,
        D_LEAF,
        [ots_public, &[0; 32]],
        1,
    )
}

/// Internal node r: H(I ‖ u32str(r) ‖ u16str(D_INTR) ‖ left ‖ right) (RFC 8554 §5.3).
pub fn interior(lms: &LmsParams, id: &Identifier, r: u32, left: &Node, right: &Node) -> Node {
    node_hash(lms, id, r, D_INTR, [left, right], 2)
}

/// H(I ‖ u32str(r) ‖ u16str(d) ‖ the first `count` of `nodes`): the message (22 + 64 bytes at
/// most, all public) gathered on the stack with fixed-size copies and hashed in one call,
/// which measured faster than [`hash`]'s general gathering (a verification hashes h + 1 nodes
/// in sequence; `pqkit bench crypto` measures it).
fn node_hash(
    lms: &LmsParams,
    id: &Identifier,
    r: u32,
    d: [u8; 2],
    nodes: [&Node; 2],
    count: usize,
) -> Node {
    let m = lms.m;
    let mut msg = [0u8; 22 + 64];
    msg[..16].copy_from_slice(id);
    msg[16..20].copy_from_slice(&r.to_be_bytes());
    msg[20..22].copy_from_slice(&d);
    // Each node's 32 bytes, the next written over the tail of a shorter (m = 24) one.
    msg[22..54].copy_from_slice(nodes[0]);
    msg[22 + m..54 + m].copy_from_slice(nodes[1]);
    hash_message(lms.hash, m, &msg[..22 + count * m])
}

/// An LMS public key: u32str(LMS type) ‖ u32str(LM-OTS type) ‖ I ‖ T\[1\] (RFC 8554 §5.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LmsPublicKey {
    /// LMS parameters.
    pub lms: &'static LmsParams,
    /// LM-OTS parameters.
    pub ots: &'static OtsParams,
    /// I.
    pub id: Identifier,
    /// The root T\[1\] (first m bytes).
    pub root: Node,
}

impl LmsPublicKey {
    /// Encodes the key, [`LmsParams::public_key_len`] bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.lms.public_key_len());
        out.extend_from_slice(&self.lms.code.to_be_bytes());
        out.extend_from_slice(&self.ots.code.to_be_bytes());
        out.extend_from_slice(&self.id);
        out.extend_from_slice(&self.root[..self.lms.m]);
        out
    }

    /// Decodes a key from the front of `bytes`; returns it and the bytes after it.
    ///
    /// # Errors
    /// [`Error::UnknownType`], [`Error::Mismatch`] or [`Error::Malformed`] (too short).
    pub fn parse(bytes: &[u8]) -> Result<(Self, &[u8]), Error> {
        let lms = lms_by_code(u32_at(bytes, 0)?)?;
        let ots = ots_by_code(u32_at(bytes, 4)?)?;
        check_pair(lms, ots)?;
        let rest = bytes
            .get(8..)
            .filter(|r| r.len() >= 16 + lms.m)
            .ok_or(Error::Malformed("LMS public key too short"))?;
        let mut id = [0u8; 16];
        id.copy_from_slice(&rest[..16]);
        let mut root = [0u8; 32];
        root[..lms.m].copy_from_slice(&rest[16..16 + lms.m]);
        Ok((Self { lms, ots, id, root }, &rest[16 + lms.m..]))
    }

    /// Verifies an LMS signature (RFC 8554 Algorithm 6a) taken from the front of `signature`;
    /// returns the bytes after it (an HSS signature continues there).
    ///
    /// # Errors
    /// [`Error::Malformed`] for an undecodable signature, [`Error::Invalid`] for one that does
    /// not verify.
    pub fn verify_prefix<'s>(
        &self,
        message: &[u8],
        signature: &'s [u8],
    ) -> Result<&'s [u8], Error> {
        let q = u32_at(signature, 0)?;
        let ots_len = self.ots.signature_len();
        let ots_sig = signature
            .get(4..4 + ots_len)
            .ok_or(Error::Malformed("LMS signature too short"))?;
        if u32_at(signature, 4 + ots_len)? != self.lms.code {
            return Err(Error::Malformed(
                "LMS signature type differs from the key's",
            ));
        }
        let path_start = 8 + ots_len;
        let path_len = usize::from(self.lms.h) * self.lms.m;
        let path = signature
            .get(path_start..path_start + path_len)
            .ok_or(Error::Malformed("LMS signature too short"))?;
        if u64::from(q) >= self.lms.leaves() {
            return Err(Error::Invalid);
        }
        let kc = ots_candidate(self.ots, &self.id, q, ots_sig, message)?;
        let node = if self.lms.hash == HashFn::Sha256 && self.lms.m == 32 {
            let leaf = (1u32 << self.lms.h) + q;
            pqkit_hash::sha256_path_root(leaf, &kc, path, |r, kind| {
                let d = match kind {
                    pqkit_hash::PathNode::Leaf => D_LEAF,
                    pqkit_hash::PathNode::Interior => D_INTR,
                };
                let mut head = [0u8; pqkit_hash::PATH_HEAD];
                head[..16].copy_from_slice(&self.id);
                head[16..20].copy_from_slice(&r.to_be_bytes());
                head[20..].copy_from_slice(&d);
                head
            })
        } else {
            self.root_of(q, &kc, path)
        };
        if !bool::from(subtle::ConstantTimeEq::ct_eq(&node[..], &self.root[..])) {
            return Err(Error::Invalid);
        }
        Ok(&signature[path_start + path_len..])
    }

    /// The root that leaf q's OTS public key `kc` and its authentication `path` yield, a node
    /// at a time (RFC 8554 Algorithm 6a, step 4).
    fn root_of(&self, q: u32, kc: &Node, path: &[u8]) -> Node {
        let mut r = (1u32 << self.lms.h) + q;
        let mut node = leaf(self.lms, &self.id, q, kc);
        for sibling in path.chunks_exact(self.lms.m) {
            let mut s = [0u8; 32];
            s[..self.lms.m].copy_from_slice(sibling);
            node = if r & 1 == 1 {
                interior(self.lms, &self.id, r / 2, &s, &node)
            } else {
                interior(self.lms, &self.id, r / 2, &node, &s)
            };
            r /= 2;
        }
        node
    }

    /// Verifies a whole LMS signature (nothing may follow it).
    ///
    /// # Errors
    /// As [`LmsPublicKey::verify_prefix`]; [`Error::Malformed`] for trailing bytes.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> Result<(), Error> {
        if !self.verify_prefix(message, signature)?.is_empty() {
            return Err(Error::Malformed("bytes after the LMS signature"));
        }
        Ok(())
    }
}

pub(crate) fn u32_at(bytes: &[u8], at: usize) -> Result<u32, Error> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or(Error::Malformed("truncated"))
}

/// An HSS public key: u32str(L) ‖ the top LMS public key (RFC 8554 §6.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HssPublicKey {
    /// Number of levels L, 1–8.
    pub levels: u32,
    /// The top-level LMS public key.
    pub top: LmsPublicKey,
}

impl HssPublicKey {
    /// Encodes the key: 4 + the LMS public key, in bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.levels.to_be_bytes().to_vec();
        out.extend_from_slice(&self.top.to_bytes());
        out
    }

    /// Decodes a key.
    ///
    /// # Errors
    /// [`Error::Malformed`] for L outside 1–8, a bad LMS key or trailing bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let levels = u32_at(bytes, 0)?;
        if !(1..=8).contains(&levels) {
            return Err(Error::Malformed("HSS levels outside 1–8"));
        }
        let (top, rest) = LmsPublicKey::parse(&bytes[4..])?;
        if !rest.is_empty() {
            return Err(Error::Malformed("bytes after the HSS public key"));
        }
        Ok(Self { levels, top })
    }

    /// Verifies an HSS signature (RFC 8554 Algorithm 8): u32str(Nspk) ‖ (LMS signature,
    /// LMS public key) × Nspk ‖ final LMS signature.
    ///
    /// # Errors
    /// [`Error::Malformed`] for an undecodable signature, [`Error::Invalid`] for one that does
    /// not verify.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> Result<(), Error> {
        // Nspk + 1 levels; Nspk is the signer's word, so no overflow on u32::MAX.
        if u32_at(signature, 0)?.checked_add(1) != Some(self.levels) {
            return Err(Error::Invalid);
        }
        for level in self.split(signature)? {
            level
                .key
                .verify(level.signed.unwrap_or(message), level.signature)?;
        }
        Ok(())
    }
}

/// One level of an HSS signature.
struct Level<'s> {
    /// The level's LMS public key (the top key, or the one the level above signed).
    key: LmsPublicKey,
    /// Its LMS signature (the last level's: everything after the signed keys).
    signature: &'s [u8],
    /// What it signed: the next level's public key, or `None` for the message.
    signed: Option<&'s [u8]>,
}

impl HssPublicKey {
    /// The levels of an HSS signature under this key, top first (RFC 8554 §6.2: u32str(Nspk)
    /// ‖ (LMS signature, LMS public key) × Nspk ‖ final LMS signature). Does not verify.
    fn split<'s>(&self, signature: &'s [u8]) -> Result<Vec<Level<'s>>, Error> {
        let nspk = u32_at(signature, 0)?;
        if nspk.checked_add(1) != Some(self.levels) {
            return Err(Error::Malformed("HSS signature level count"));
        }
        let mut key = self.top.clone();
        let mut rest = &signature[4..];
        let mut out = Vec::with_capacity(self.levels as usize);
        for _ in 0..nspk {
            // The signed public key follows the signature: find its end by parsing both.
            let len = signed_len(&key, rest)?;
            let (next, after) = LmsPublicKey::parse(&rest[len..])?;
            out.push(Level {
                key,
                signature: &rest[..len],
                signed: Some(&rest[len..rest.len() - after.len()]),
            });
            key = next;
            rest = after;
        }
        signed_len(&key, rest)?;
        out.push(Level {
            key,
            signature: rest,
            signed: None,
        });
        Ok(out)
    }

    /// The leaf index q of each level in an HSS signature under this key, top first —
    /// which one-time keys it used. Does not verify.
    ///
    /// # Errors
    /// [`Error::Malformed`] for an undecodable signature.
    pub fn leaf_indices(&self, signature: &[u8]) -> Result<Vec<u32>, Error> {
        self.split(signature)?
            .iter()
            .map(|l| u32_at(l.signature, 0))
            .collect()
    }

    /// The signer's counter value an HSS signature used: the levels' leaf indices joined, h
    /// bits each (as [`crate::hss::HssSigner`] splits it). Does not verify.
    ///
    /// # Errors
    /// [`Error::Malformed`] for an undecodable signature.
    pub fn counter(&self, signature: &[u8]) -> Result<u64, Error> {
        self.split(signature)?.iter().try_fold(0u64, |acc, l| {
            Ok((acc << l.key.lms.h) | u64::from(u32_at(l.signature, 0)?))
        })
    }
}

/// Length of the LMS signature at the front of `signature` under `key`, in bytes.
fn signed_len(key: &LmsPublicKey, signature: &[u8]) -> Result<usize, Error> {
    let len = key.lms.signature_len(key.ots);
    if signature.len() < len {
        return Err(Error::Malformed("LMS signature too short"));
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lanes give what one buffered hash per step gives (RFC 8554 Algorithm 1's loop),
    /// for both hash functions, n = 24 and 32, chains of different starts and lengths, on
    /// every hash path this CPU supports.
    #[test]
    #[allow(clippy::cast_possible_truncation, reason = "small test values")]
    fn chains_in_lanes_are_the_buffered_chains() {
        for isa in pqkit_hash::Isa::supported() {
            for (f, n) in [
                (HashFn::Sha256, 32usize),
                (HashFn::Sha256, 24),
                (HashFn::Shake256, 32),
            ] {
                let ots = crate::params::OTS
                    .iter()
                    .find(|o| o.hash == f && o.n == n && o.w == 4)
                    .expect("LM-OTS W4");
                let id: Identifier = core::array::from_fn(|k| k as u8 ^ 0x5a);
                let q: u32 = 0x0102_0304;
                // Chains of different starts and lengths, and chains whose one-byte step
                // counter wraps from 0xff to 0x00 (the chain starts x_q[i] run as step 0xff).
                let mut chains: Vec<Chain> =
                    (0..37u32)
                        .map(|i| Chain::new(i, i % 5, 15 - i % 3, &[i as u8; 32][..n]))
                        .chain((37..60u32).map(|i| {
                            Chain::new(i, 0xfe + i % 2, 0x100 + i % 4, &[i as u8; 32][..n])
                        }))
                        .collect();
                let mut want = chains.clone();
                for c in &mut want {
                    for j in c.at..c.end {
                        let i = (c.id as u16).to_be_bytes();
                        c.value = hash(
                            f,
                            n,
                            &[&id, &q.to_be_bytes(), &i, &[j as u8], &c.value[..n]],
                        );
                    }
                    c.at = c.end;
                }
                pqkit_hash::dispatch::with_isa(isa, || run_chains(ots, &id, q, &mut chains))
                    .expect("supported");
                assert_eq!(chains, want, "{isa} {f:?} n {n}");
            }
        }
    }
}
