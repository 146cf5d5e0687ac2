//! slh_keygen_internal, slh_sign_internal and slh_verify_internal (FIPS 205 Algorithms 18–20):
//! M′ as the caller formats it, and the caller's randomness (`addrnd`) or none.
//!
//! # Security
//! Nothing here checks the sizes of keys and seeds against the parameter set (the callers do:
//! `pqkit_core::slh_dsa`), and [`sign`] takes its randomness from the caller: a signer that
//! passes the same `addrnd` with different keys or a predictable one gives up the hedge of
//! FIPS 205 §9.2. Use `pqkit_core::slh_dsa` unless you are running known-answer tests.

use zeroize::Zeroizing;

use crate::hash::Hasher;
use crate::params::{Params, low_bits};
use crate::tree::Levels;
use crate::{fors, tree};

/// SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root (4n bytes) from the three n-byte seeds given as one
/// 3n-byte slice (Algorithm 18).
pub fn keygen(p: &'static Params, seeds: &[u8]) -> Zeroizing<Vec<u8>> {
    expand(p, seeds).0
}

/// [`keygen`]'s key with the top tree it computed (PK.root is its root), for [`sign`]'s `top`.
pub fn expand(p: &'static Params, seeds: &[u8]) -> (Zeroizing<Vec<u8>>, Levels) {
    let n = p.n;
    let h = Hasher::new(p, &seeds[2 * n..3 * n]);
    let top = tree::top(&h, &seeds[..n]);
    let mut key = Zeroizing::new(Vec::with_capacity(4 * n));
    key.extend_from_slice(&seeds[..3 * n]);
    key.extend_from_slice(top.root(n));
    (key, top)
}

/// md, idx_tree and idx_leaf from the message digest (Algorithm 19, lines 7–12).
fn split_digest<'a>(p: &Params, digest: &'a [u8]) -> (&'a [u8], u64, u32) {
    let (md, rest) = digest.split_at(p.md_bytes());
    let (tree, rest) = rest.split_at(p.tree_bytes());
    let leaf = &rest[..p.leaf_bytes()];
    let to_int = |b: &[u8]| b.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x));
    let tree_bits = p.h - p.hp;
    let idx_tree = if tree_bits >= 64 {
        to_int(tree)
    } else {
        to_int(tree) & ((1u64 << tree_bits) - 1)
    };
    let idx_leaf = low_bits(to_int(leaf), p.hp);
    (md, idx_tree, idx_leaf)
}

/// The signature of M′ (given in parts) under the 4n-byte private key; `addrnd` of `None` is
/// the deterministic variant, opt_rand = PK.seed (Algorithm 19). `top` is the key's top tree
/// when the caller kept it ([`expand`]); the signature is the same either way.
pub fn sign(
    p: &'static Params,
    sk: &[u8],
    m: &[&[u8]],
    addrnd: Option<&[u8]>,
    top: Option<&Levels>,
) -> Vec<u8> {
    let n = p.n;
    let (sk_seed, sk_prf, pk_seed, pk_root) = (
        &sk[..n],
        &sk[n..2 * n],
        &sk[2 * n..3 * n],
        &sk[3 * n..4 * n],
    );
    debug_assert!(
        top.is_none_or(|t| t.root(n) == pk_root),
        "the cached top tree is the key's"
    );
    let h = Hasher::new(p, pk_seed);
    let r = h.prf_msg(sk_prf, addrnd.unwrap_or(pk_seed), m);
    let digest = h.h_msg(&r, pk_root, m);
    let (md, idx_tree, idx_leaf) = split_digest(p, &digest);
    let threads = crate::signing_threads();
    let (fors_sig, ht) = if threads > 1 {
        let (ht, (fors_sig, _)) = tree::sign_threaded(
            &h,
            sk_seed,
            idx_tree,
            idx_leaf,
            top,
            threads,
            || fors::sign(&h, sk_seed, md, idx_tree, idx_leaf),
            |(_, fors_pk)| fors_pk.clone(),
        );
        (fors_sig, ht)
    } else {
        let (fors_sig, fors_pk) = fors::sign(&h, sk_seed, md, idx_tree, idx_leaf);
        (
            fors_sig,
            tree::sign(&h, sk_seed, &fors_pk, idx_tree, idx_leaf, top),
        )
    };
    let mut sig = Vec::with_capacity(p.signature_bytes());
    sig.extend_from_slice(&r);
    sig.extend_from_slice(&fors_sig);
    sig.extend_from_slice(&ht);
    sig
}

/// Whether `sig` is a signature of M′ (given in parts) under the 2n-byte public key
/// (Algorithm 20). Any length is accepted as input; a wrong one is simply not valid.
pub fn verify(p: &'static Params, pk: &[u8], m: &[&[u8]], sig: &[u8]) -> bool {
    let n = p.n;
    if sig.len() != p.signature_bytes() || pk.len() != 2 * n {
        return false;
    }
    let (pk_seed, pk_root) = pk.split_at(n);
    let h = Hasher::new(p, pk_seed);
    let (r, rest) = sig.split_at(n);
    let (fors_sig, ht) = rest.split_at(p.fors_bytes());
    let digest = h.h_msg(r, pk_root, m);
    let (md, idx_tree, idx_leaf) = split_digest(p, &digest);
    let fors_pk = fors::public_key_from_signature(&h, fors_sig, md, idx_tree, idx_leaf);
    tree::verify(&h, &fors_pk, ht, idx_tree, idx_leaf, pk_root)
}
