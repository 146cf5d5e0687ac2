//! The portable SHA-256 compression (FIPS 180-4 §6.2.2): the twin the SIMD kernels are
//! tested against.

use super::{ChainGroup, K};

/// Compresses one 64-byte block into `state`.
pub(crate) fn compress(state: &mut [u32; 8], block: &[u8; 64]) {
    let mut w = [0u32; 64];
    for (i, word) in block.chunks_exact(4).enumerate() {
        w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
    }
    for t in 16..64 {
        let s0 = w[t - 15].rotate_right(7) ^ w[t - 15].rotate_right(18) ^ (w[t - 15] >> 3);
        let s1 = w[t - 2].rotate_right(17) ^ w[t - 2].rotate_right(19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16]
            .wrapping_add(s0)
            .wrapping_add(w[t - 7])
            .wrapping_add(s1);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for t in 0..64 {
        let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let ch = (e & f) ^ (!e & g);
        let t1 = h
            .wrapping_add(s1)
            .wrapping_add(ch)
            .wrapping_add(K[t])
            .wrapping_add(w[t]);
        let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        let t2 = s0.wrapping_add(maj);
        h = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = s.wrapping_add(v);
    }
}

/// One group of W one-block chains, lane by lane and step by step (see [`ChainGroup`]): the
/// reference the pipelined chain kernels are tested against. `values[l][..n]` is lane `l`'s
/// running value (the bytes after n are left alone).
///
/// # Panics
/// When the group's layout does not fit one block (see [`ChainGroup::check`]).
#[cfg_attr(not(test), allow(dead_code))] // the twin of the SIMD group kernels
pub(crate) fn chains<const W: usize>(g: &ChainGroup<'_, W>, values: &mut [[u8; 32]; W]) {
    g.check();
    let n = g.n;
    // One compression of `block` with step j and `value` written in; the digest's first n
    // bytes become the value.
    let step = |block: &mut [u8; 64], j: u32, value: &mut [u8; 32]| {
        block[g.step_at..g.step_at + g.step_bytes]
            .copy_from_slice(&j.to_be_bytes()[4 - g.step_bytes..]);
        block[g.value_at..g.value_at + n].copy_from_slice(&value[..n]);
        let mut state = g.midstate;
        compress(&mut state, block);
        for (bytes, w) in value[..n].chunks_exact_mut(4).zip(state) {
            bytes.copy_from_slice(&w.to_be_bytes());
        }
    };
    for (l, value) in values.iter_mut().enumerate() {
        let mut block = g.templates[l];
        if let Some((word, mask)) = g.prelude {
            let mut b = block;
            let x = u32::from_be_bytes(b[4 * word..4 * word + 4].try_into().expect("4 bytes"));
            b[4 * word..4 * word + 4].copy_from_slice(&(x ^ mask).to_be_bytes());
            step(&mut b, g.at[l], value);
            crate::wipe(&mut b);
        }
        for j in g.at[l]..g.end[l] {
            step(&mut block, j, value);
        }
        crate::wipe(&mut block);
    }
}
