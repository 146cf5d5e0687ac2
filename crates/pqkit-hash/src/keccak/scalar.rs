//! Keccak-f\[1600\] on one state in scalar code (FIPS 202 §3.3–3.4), plane by plane: a round
//! reads the lanes of its input through θ's D, ρ and π into the five lanes of one output
//! plane, applies χ and ι there and writes them into a second state (the rounds alternate
//! between the two), summing θ's column parities C for the next round from the lanes it
//! writes. Fewer loads, stores and live values than applying each step mapping to the whole
//! state in turn, as the `keccak` crate does ([`super::permute_portable`], which stays the
//! portable twin and the reference the tests compare this with).

use super::avx2::{RC, RHO, pi_source};

/// One round, Rnd(A, i_r) = ι(χ(π(ρ(θ(A)))), i_r) (FIPS 202 §3.3), from `a` into `e`, given
/// θ's column parities `c` of `a` (§3.2.1 step 1), which it replaces with those of `e`.
#[inline(always)]
fn round(a: &[u64; 25], e: &mut [u64; 25], c: &mut [u64; 5], rc: u64) {
    // θ step 2: D[x] = C[x − 1] ⊕ rot(C[x + 1], 1).
    let d: [u64; 5] = core::array::from_fn(|x| c[(x + 4) % 5] ^ c[(x + 1) % 5].rotate_left(1));
    let mut next = [0u64; 5];
    for y in 0..5 {
        // θ step 3, ρ (§3.2.2) and π (§3.2.3) into plane y: B[x, y] = rot(A[i] ⊕ D[i mod 5],
        // RHO[i]) for the lane i that π moves there.
        let b: [u64; 5] = core::array::from_fn(|x| {
            let i = pi_source(x, y);
            (a[i] ^ d[i % 5]).rotate_left(RHO[i])
        });
        // χ (§3.2.4).
        for x in 0..5 {
            let v = b[x] ^ (!b[(x + 1) % 5] & b[(x + 2) % 5]);
            e[x + 5 * y] = v;
            next[x] ^= v;
        }
    }
    // ι (§3.2.5) on lane (0, 0), and so on C[0].
    e[0] ^= rc;
    next[0] ^= rc;
    *c = next;
}

/// θ's column parities C[x] = A[x, 0] ⊕ … ⊕ A[x, 4] (FIPS 202 §3.2.1 step 1).
#[inline(always)]
fn parities(a: &[u64; 25]) -> [u64; 5] {
    core::array::from_fn(|x| a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20])
}

/// Keccak-f\[1600\] = KECCAK-p\[1600, 24\] (FIPS 202 §3.4) on `state`, in place. Inlined into
/// the caller, so compiled with its target features (BMI1 `andn`, BMI2 `rorx`).
#[inline(always)]
pub(super) fn permute(state: &mut [u64; 25]) {
    let mut e = [0u64; 25];
    let mut c = parities(state);
    for i in (0..24).step_by(2) {
        round(state, &mut e, &mut c, RC[i]);
        round(&e, state, &mut c, RC[i + 1]);
    }
    // The other state held round 23's input: a secret where the state is (a seed's stream).
    crate::wipe(core::slice::from_mut(&mut e));
}
