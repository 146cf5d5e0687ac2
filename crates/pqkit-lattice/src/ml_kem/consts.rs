//! The constants of ML-KEM's ring R_q = Z_q\[X\]/(X^256 + 1) (FIPS 203 §2.4) that the portable
//! code ([`super::poly`]) and the SIMD kernels ([`super::simd`]) both read: a leaf module, so
//! that neither of the two has to import the other for them.

/// n, the number of coefficients (FIPS 203 §2.4).
pub(crate) const N: usize = 256;
/// The modulus q = 3329 (FIPS 203 §2.4).
pub(crate) const Q: i16 = 3329;
/// The room SampleNTT's rejection (`poly::rej_uniform`) needs: 256 coefficients plus one
/// block's worth of candidates (112), rounded up.
pub(crate) const REJ_BUF: usize = 384;
