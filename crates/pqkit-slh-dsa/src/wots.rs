//! WOTS+ (FIPS 205 §5) for many key pairs of one XMSS tree at once: public keys
//! (Algorithm 6) with, for one of them, the signature (Algorithm 7); and the public key from a
//! signature (Algorithm 8).

use pqkit_hash::Chain;
use pqkit_hash::Wiped;

use crate::address::{Adrs, Type};
use crate::hash::{Hasher, Kind};
use crate::params::W;

/// The len base-w digits of an n-byte message with its checksum (Algorithm 7, lines 1–10;
/// lg_w = 4, len2 = 3).
pub(crate) fn digits(msg: &[u8]) -> Vec<u32> {
    let mut out: Vec<u32> = msg
        .iter()
        .flat_map(|b| [u32::from(b >> 4), u32::from(b & 15)])
        .collect();
    // csum ≪ ((8 − (len2·lg_w mod 8)) mod 8) = csum ≪ 4, as 2 bytes, first 3 digits.
    let csum: u32 = out.iter().map(|d| W - 1 - d).sum::<u32>() << 4;
    out.extend([(csum >> 12) & 15, (csum >> 8) & 15, (csum >> 4) & 15]);
    out
}

/// The address of a chain of key pair `first + id / len`, chain `id % len` (type WOTS_HASH).
fn chain_address(adrs: &Adrs, first: u32, lens: u32) -> impl Fn(&Chain) -> Adrs + Copy {
    let mut hash = *adrs;
    hash.set_type(Type::WotsHash);
    move |c: &Chain| {
        let mut a = hash;
        a.set_key_pair(first + c.id / lens);
        a.set_chain(c.id % lens);
        a
    }
}

/// The chains of key pairs `first .. first + count` of the tree at `adrs` (layer and tree
/// address set), each from its secret start PRF(PK.seed, SK.seed, skADRS) (Algorithm 6, lines
/// 1–5) run to step `end(key pair, chain)`, all in the engine's lanes.
fn run(
    h: &Hasher,
    sk_seed: &[u8],
    adrs: &Adrs,
    first: u32,
    count: u32,
    end: impl Fn(u32, usize) -> u32,
) -> Wiped<Chain> {
    let lens = h.p.len32();
    let mut chains = Wiped::from_vec(
        (0..count * lens)
            .map(|id| Chain::new(id, 0, end(first + id / lens, (id % lens) as usize), sk_seed))
            .collect::<Vec<Chain>>(),
    );
    h.chains_from_prf(
        &mut chains[..],
        (Type::WotsHash, Type::WotsPrf),
        chain_address(adrs, first, lens),
    );
    chains
}

/// Key pairs `first .. first + count` of the tree at `adrs` (layer and tree address set):
/// their WOTS+ public keys (n bytes each, end to end), and — when `sign` names one of them
/// and the digits of its message — that key pair's signature (len·n bytes).
pub(crate) fn public_keys(
    h: &Hasher,
    sk_seed: &[u8],
    adrs: &Adrs,
    first: u32,
    count: u32,
    sign: Option<(u32, &[u32])>,
) -> (Wiped<u8>, Option<Vec<u8>>) {
    let (n, len) = (h.p.n, h.p.len());
    let signer = sign.and_then(|(kp, d)| (first..first + count).contains(&kp).then_some((kp, d)));
    let mut chains = run(h, sk_seed, adrs, first, count, |kp, i| match signer {
        Some((signer, d)) if kp == signer => d[i],
        _ => W - 1,
    });
    let signature = signer.map(|(kp, _)| {
        // The signature is each chain at its digit (Algorithm 7); then finish those chains.
        let at = (kp - first) as usize * len;
        let mine = &mut chains[at..at + len];
        let mut sig = Vec::with_capacity(len * n);
        pqkit_hash::append_values(mine, n, &mut sig);
        mine.iter_mut().for_each(|c| c.end = W - 1);
        h.chains(mine, chain_address(adrs, first, h.p.len32()));
        sig
    });
    (compress(h, adrs, first, &chains), signature)
}

/// The WOTS+ signature of `msg` (n bytes) by key pair `kp` of the tree at `adrs`
/// (Algorithm 7): len·n bytes.
pub(crate) fn sign(h: &Hasher, sk_seed: &[u8], adrs: &Adrs, kp: u32, msg: &[u8]) -> Vec<u8> {
    let d = digits(msg);
    let chains = run(h, sk_seed, adrs, kp, 1, |_, i| d[i]);
    let mut sig = Vec::with_capacity(chains.len() * h.p.n);
    pqkit_hash::append_values(&chains, h.p.n, &mut sig);
    sig
}

/// T_len over each key pair's chain ends (Algorithm 6, lines 9–12).
fn compress(h: &Hasher, adrs: &Adrs, first: u32, chains: &[Chain]) -> Wiped<u8> {
    let (n, len) = (h.p.n, h.p.len());
    let mut pk = *adrs;
    pk.set_type(Type::WotsPk);
    let mut batch = h.batch(len * n, chains.len() / len);
    for (kp, ends) in (first..).zip(chains.chunks_exact(len)) {
        pk.set_key_pair(kp);
        batch.push(h, &pk, |out| {
            for (o, c) in out.chunks_exact_mut(n).zip(ends) {
                pqkit_hash::copy(o, &c.value[..n]);
            }
        });
    }
    h.hash(Kind::Long, &batch)
}

/// The WOTS+ public key of key pair `kp` from a signature `sig` (len·n bytes) of `msg`
/// (Algorithm 8).
pub(crate) fn public_key_from_signature(
    h: &Hasher,
    adrs: &Adrs,
    kp: u32,
    sig: &[u8],
    msg: &[u8],
) -> Wiped<u8> {
    let n = h.p.n;
    let len = h.p.len32();
    let mut chains: Vec<Chain> = digits(msg)
        .into_iter()
        .zip(sig.chunks_exact(n))
        .zip(0..)
        .map(|((d, s), i)| Chain::new(i, d, W - 1, s))
        .collect();
    let mut hash = *adrs;
    hash.set_type(Type::WotsHash);
    hash.set_key_pair(kp);
    h.chains(&mut chains, |c| {
        let mut a = hash;
        a.set_chain(c.id % len);
        a
    });
    compress(h, adrs, kp, &chains)
}
