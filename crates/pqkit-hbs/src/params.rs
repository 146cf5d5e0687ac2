//! LMS and LM-OTS parameter sets: RFC 8554 §4.1 / §5.1 (SHA-256, n = 32) and SP 800-208 §4
//! (SHA-256/192, SHAKE256/256 and SHAKE256/192), with their IANA type codes.

use crate::Error;

/// The hash behind a parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashFn {
    /// SHA-256, truncated to n bytes when n = 24 (SHA-256/192, SP 800-208 §4.1).
    Sha256,
    /// SHAKE256 with an n-byte output (SP 800-208 §4.2).
    Shake256,
}

/// An LM-OTS parameter set (RFC 8554 §4.1, SP 800-208 §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OtsParams {
    /// IANA LM-OTS type code.
    pub code: u32,
    /// Name, e.g. "LMOTS_SHA256_N32_W4".
    pub name: &'static str,
    /// Hash.
    pub hash: HashFn,
    /// Hash output length, in bytes (24 or 32).
    pub n: usize,
    /// Winternitz parameter: bits per chain digit (1, 2, 4 or 8).
    pub w: u8,
    /// Number of n-byte chains.
    pub p: usize,
    /// Left shift of the checksum.
    pub ls: u8,
}

impl OtsParams {
    /// LM-OTS signature length, in bytes: 4 + n·(p + 1) (RFC 8554 §4.5).
    pub fn signature_len(&self) -> usize {
        4 + self.n * (self.p + 1)
    }

    /// The largest chain digit, 2^w − 1.
    pub fn max_digit(&self) -> u8 {
        u8::MAX >> (8 - self.w)
    }
}

/// An LMS parameter set (RFC 8554 §5.1, SP 800-208 §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LmsParams {
    /// IANA LMS type code.
    pub code: u32,
    /// Name, e.g. "LMS_SHA256_M32_H10".
    pub name: &'static str,
    /// Hash.
    pub hash: HashFn,
    /// Node length, in bytes (24 or 32).
    pub m: usize,
    /// Tree height.
    pub h: u8,
}

impl LmsParams {
    /// Number of one-time keys, 2^h.
    pub fn leaves(&self) -> u64 {
        1u64 << self.h
    }

    /// LMS signature length with `ots`, in bytes: 4 + LM-OTS signature + 4 + h·m
    /// (RFC 8554 §5.4).
    pub fn signature_len(&self, ots: &OtsParams) -> usize {
        8 + ots.signature_len() + usize::from(self.h) * self.m
    }

    /// LMS public key length, in bytes: 4 + 4 + 16 + m (RFC 8554 §5.3).
    pub fn public_key_len(&self) -> usize {
        24 + self.m
    }
}

/// u = ⌈8n/w⌉, v = ⌈(⌊log2((2^w − 1)·u)⌋ + 1)/w⌉, p = u + v, ls = 16 − v·w (RFC 8554
/// Appendix B).
#[allow(clippy::cast_possible_truncation)] // ls = 16 − v·w ≤ 16 (const fn: no try_from)
const fn ots(code: u32, name: &'static str, hash: HashFn, n: usize, w: u8) -> OtsParams {
    let wz = w as usize;
    let u = (8 * n).div_ceil(wz);
    let max = ((1usize << wz) - 1) * u;
    let bits = (usize::BITS - max.leading_zeros()) as usize; // ⌊log2⌋ + 1
    let v = bits.div_ceil(wz);
    OtsParams {
        code,
        name,
        hash,
        n,
        w,
        p: u + v,
        ls: (16 - v * wz) as u8,
    }
}

use HashFn::{Sha256, Shake256};

/// Every LM-OTS parameter set: codes 1–4 (RFC 8554), 5–16 (SP 800-208 / RFC 9858 registry).
pub const OTS: [OtsParams; 16] = [
    ots(1, "LMOTS_SHA256_N32_W1", Sha256, 32, 1),
    ots(2, "LMOTS_SHA256_N32_W2", Sha256, 32, 2),
    ots(3, "LMOTS_SHA256_N32_W4", Sha256, 32, 4),
    ots(4, "LMOTS_SHA256_N32_W8", Sha256, 32, 8),
    ots(5, "LMOTS_SHA256_N24_W1", Sha256, 24, 1),
    ots(6, "LMOTS_SHA256_N24_W2", Sha256, 24, 2),
    ots(7, "LMOTS_SHA256_N24_W4", Sha256, 24, 4),
    ots(8, "LMOTS_SHA256_N24_W8", Sha256, 24, 8),
    ots(9, "LMOTS_SHAKE_N32_W1", Shake256, 32, 1),
    ots(10, "LMOTS_SHAKE_N32_W2", Shake256, 32, 2),
    ots(11, "LMOTS_SHAKE_N32_W4", Shake256, 32, 4),
    ots(12, "LMOTS_SHAKE_N32_W8", Shake256, 32, 8),
    ots(13, "LMOTS_SHAKE_N24_W1", Shake256, 24, 1),
    ots(14, "LMOTS_SHAKE_N24_W2", Shake256, 24, 2),
    ots(15, "LMOTS_SHAKE_N24_W4", Shake256, 24, 4),
    ots(16, "LMOTS_SHAKE_N24_W8", Shake256, 24, 8),
];

const fn lms(code: u32, name: &'static str, hash: HashFn, m: usize, h: u8) -> LmsParams {
    LmsParams {
        code,
        name,
        hash,
        m,
        h,
    }
}

/// Every LMS parameter set: codes 5–9 (RFC 8554), 10–24 (SP 800-208 / RFC 9858 registry).
pub const LMS: [LmsParams; 20] = [
    lms(5, "LMS_SHA256_M32_H5", Sha256, 32, 5),
    lms(6, "LMS_SHA256_M32_H10", Sha256, 32, 10),
    lms(7, "LMS_SHA256_M32_H15", Sha256, 32, 15),
    lms(8, "LMS_SHA256_M32_H20", Sha256, 32, 20),
    lms(9, "LMS_SHA256_M32_H25", Sha256, 32, 25),
    lms(10, "LMS_SHA256_M24_H5", Sha256, 24, 5),
    lms(11, "LMS_SHA256_M24_H10", Sha256, 24, 10),
    lms(12, "LMS_SHA256_M24_H15", Sha256, 24, 15),
    lms(13, "LMS_SHA256_M24_H20", Sha256, 24, 20),
    lms(14, "LMS_SHA256_M24_H25", Sha256, 24, 25),
    lms(15, "LMS_SHAKE_M32_H5", Shake256, 32, 5),
    lms(16, "LMS_SHAKE_M32_H10", Shake256, 32, 10),
    lms(17, "LMS_SHAKE_M32_H15", Shake256, 32, 15),
    lms(18, "LMS_SHAKE_M32_H20", Shake256, 32, 20),
    lms(19, "LMS_SHAKE_M32_H25", Shake256, 32, 25),
    lms(20, "LMS_SHAKE_M24_H5", Shake256, 24, 5),
    lms(21, "LMS_SHAKE_M24_H10", Shake256, 24, 10),
    lms(22, "LMS_SHAKE_M24_H15", Shake256, 24, 15),
    lms(23, "LMS_SHAKE_M24_H20", Shake256, 24, 20),
    lms(24, "LMS_SHAKE_M24_H25", Shake256, 24, 25),
];

/// The LM-OTS parameter set with this type code.
///
/// # Errors
/// [`Error::UnknownType`] for any other code.
pub fn ots_by_code(code: u32) -> Result<&'static OtsParams, Error> {
    OTS.iter()
        .find(|p| p.code == code)
        .ok_or(Error::UnknownType("LM-OTS", code))
}

/// The LMS parameter set with this type code.
///
/// # Errors
/// [`Error::UnknownType`] for any other code.
pub fn lms_by_code(code: u32) -> Result<&'static LmsParams, Error> {
    LMS.iter()
        .find(|p| p.code == code)
        .ok_or(Error::UnknownType("LMS", code))
}

/// The LMS parameter set with this name, e.g. "LMS_SHA256_M32_H10" (case-insensitive).
///
/// # Errors
/// [`Error::Malformed`] for any other name.
pub fn lms_by_name(name: &str) -> Result<&'static LmsParams, Error> {
    LMS.iter()
        .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
        .ok_or(Error::Malformed("unknown LMS parameter set name"))
}

/// The LM-OTS parameter set with this name, e.g. "LMOTS_SHA256_N32_W4" (case-insensitive).
///
/// # Errors
/// [`Error::Malformed`] for any other name.
pub fn ots_by_name(name: &str) -> Result<&'static OtsParams, Error> {
    OTS.iter()
        .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
        .ok_or(Error::Malformed("unknown LM-OTS parameter set name"))
}

/// Checks that an LMS set and an LM-OTS set may be combined: same hash, m = n
/// (SP 800-208 §4).
///
/// # Errors
/// [`Error::Mismatch`] otherwise.
pub fn check_pair(lms: &LmsParams, ots: &OtsParams) -> Result<(), Error> {
    if lms.hash != ots.hash || lms.m != ots.n {
        return Err(Error::Mismatch(lms.name, ots.name));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_and_ls_match_rfc_8554_table_and_sp_800_208() {
        // RFC 8554 §4.1 table: p = 265, 133, 67, 34; ls = 7, 6, 4, 0.
        let n32: Vec<(usize, u8)> = OTS[..4].iter().map(|o| (o.p, o.ls)).collect();
        assert_eq!(n32, [(265, 7), (133, 6), (67, 4), (34, 0)]);
        // SP 800-208 (n = 24): p = 200, 101, 51, 26; ls = 8, 6, 4, 0.
        let n24: Vec<(usize, u8)> = OTS[4..8].iter().map(|o| (o.p, o.ls)).collect();
        assert_eq!(n24, [(200, 8), (101, 6), (51, 4), (26, 0)]);
        // SHAKE sets have the shapes of the SHA-256 sets of the same n.
        for i in 0..8 {
            assert_eq!((OTS[8 + i].p, OTS[8 + i].ls), (OTS[i].p, OTS[i].ls));
        }
    }
}
