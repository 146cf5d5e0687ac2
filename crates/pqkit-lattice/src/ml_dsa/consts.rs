//! The constants of ML-DSA's ring R_q = Z_q\[X\]/(X^256 + 1) (FIPS 204 §2.3, §4) and the NTT's
//! twiddle factors (FIPS 204 Appendix B, times R = 2^32), in the layouts the portable code
//! ([`super::poly`]) and the SIMD kernels ([`super::simd`]) both read: a leaf module, so that
//! neither of the two has to import the other for them.

/// n, the number of coefficients (FIPS 204 §2.3).
pub(crate) const N: usize = 256;
/// The modulus q = 2^23 − 2^13 + 1 (FIPS 204 §4, Table 1).
pub(crate) const Q: i32 = 8_380_417;
/// q⁻¹ mod 2^32.
pub(crate) const QINV: i32 = 58_728_449;
/// d, the bits dropped from t (FIPS 204 §4, Table 1).
pub(crate) const D: u32 = 13;
/// R²/256 mod q: the inverse NTT's final factor, 256⁻¹ times R (FIPS 204 Algorithm 42,
/// line 21's f = 8347681 = 256⁻¹, here leaving the result times R).
pub(crate) const INV_256_R2: i32 = 41_978;

/// ζ^BitRev₈(i) · R mod q, centred (FIPS 204 Appendix B's table, times R), ζ = 1753.
pub(crate) const ZETAS: [i32; N] = {
    let mut z = [0i32; N];
    let mut i = 0;
    while i < N {
        let e = (i as u8).reverse_bits() as u64;
        // ζ^e mod q by square-and-multiply, then times 2^32.
        let (mut acc, mut base, mut k) = (1u64, 1753u64, e);
        while k > 0 {
            if k & 1 == 1 {
                acc = acc * base % Q as u64;
            }
            base = base * base % Q as u64;
            k >>= 1;
        }
        let r = ((acc << 32) % Q as u64) as i32;
        z[i] = if r > Q / 2 { r - Q } else { r };
        i += 1;
    }
    z
};

/// Lanes per row: one AVX2 register of 32-bit lanes.
pub(crate) const W: usize = 8;

/// Per-lane twiddles of the three in-row layers, for the 8 × 8 blocks as transposed: lane i of
/// block b holds what was row 8b + i, so coefficient 8·(8b + i) + j (j the former lane, now the
/// row within the block) is in group 8b + i of len 4, 2·(8b + i) + ⌊j/4⌋ of len 2 and
/// 4·(8b + i) + ⌊j/2⌋ of len 1. `inverse` gives the inverse NTT's −ζ of the same group.
const fn lane_zetas<const PARTS: usize>(base: usize, inverse: bool) -> [[[i32; W]; PARTS]; 4] {
    let mut z = [[[0; W]; PARTS]; 4];
    let mut b = 0;
    while b < 4 {
        let mut h = 0;
        while h < PARTS {
            let mut i = 0;
            while i < W {
                let g = PARTS * (8 * b + i) + h;
                z[b][h][i] = if inverse {
                    -ZETAS[2 * base - 1 - g]
                } else {
                    ZETAS[base + g]
                };
                i += 1;
            }
            h += 1;
        }
        b += 1;
    }
    z
}

/// Each twiddle times q⁻¹ mod 2^32 (the AVX2 kernels' Montgomery products take both).
const fn times_qinv<const PARTS: usize>(z: [[[i32; W]; PARTS]; 4]) -> [[[i32; W]; PARTS]; 4] {
    let mut out = z;
    let mut b = 0;
    while b < 4 {
        let mut h = 0;
        while h < PARTS {
            let mut i = 0;
            while i < W {
                out[b][h][i] = z[b][h][i].wrapping_mul(QINV);
                i += 1;
            }
            h += 1;
        }
        b += 1;
    }
    out
}

pub(crate) const Z4: [[[i32; W]; 1]; 4] = lane_zetas::<1>(32, false);
pub(crate) const Z2: [[[i32; W]; 2]; 4] = lane_zetas::<2>(64, false);
pub(crate) const Z1: [[[i32; W]; 4]; 4] = lane_zetas::<4>(128, false);
pub(crate) const IZ4: [[[i32; W]; 1]; 4] = lane_zetas::<1>(32, true);
pub(crate) const IZ2: [[[i32; W]; 2]; 4] = lane_zetas::<2>(64, true);
pub(crate) const IZ1: [[[i32; W]; 4]; 4] = lane_zetas::<4>(128, true);
pub(crate) const Z4Q: [[[i32; W]; 1]; 4] = times_qinv(Z4);
pub(crate) const Z2Q: [[[i32; W]; 2]; 4] = times_qinv(Z2);
pub(crate) const Z1Q: [[[i32; W]; 4]; 4] = times_qinv(Z1);
pub(crate) const IZ4Q: [[[i32; W]; 1]; 4] = times_qinv(IZ4);
pub(crate) const IZ2Q: [[[i32; W]; 2]; 4] = times_qinv(IZ2);
pub(crate) const IZ1Q: [[[i32; W]; 4]; 4] = times_qinv(IZ1);
