//! Named HSS shapes "L{levels}_H{height}_W{winternitz}": every level LMS_SHA256_M32_H{height}
//! with LMOTS_SHA256_N32_W{winternitz} (RFC 8554). The reference manual's ten presets are
//! [`PRESETS`]; any other combination of 1–8 levels, height 5/10/15/20/25 and W 1/2/4/8 parses
//! too.

use crate::Error;
use crate::hss::Level;
use crate::params::{HashFn, LMS, OTS};

/// The reference manual's ten LMS/HSS presets.
pub const PRESETS: [&str; 10] = [
    "L1_H15_W2",
    "L1_H15_W4",
    "L2_H10_W2",
    "L2_H10_W4",
    "L2_H10_W8",
    "L3_H5_W2",
    "L3_H5_W4",
    "L3_H5_W8",
    "L3_H10_W4",
    "L4_H5_W8",
];

/// A parsed shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Levels L, 1–8.
    pub levels: u8,
    /// Height of every level's tree.
    pub height: u8,
    /// Winternitz parameter of every level.
    pub w: u8,
}

impl Shape {
    /// Parses "L2_H10_W4" (case-insensitive).
    ///
    /// # Errors
    /// [`Error::Malformed`] for any other text or values outside the sets above.
    pub fn parse(name: &str) -> Result<Self, Error> {
        let bad = Error::Malformed("an HSS shape is L<1-8>_H<5|10|15|20|25>_W<1|2|4|8>");
        let upper = name.trim().to_ascii_uppercase();
        let mut parts = upper.split('_');
        let mut field = |prefix: char| -> Result<u8, Error> {
            parts
                .next()
                .and_then(|p| p.strip_prefix(prefix))
                .and_then(|v| v.parse().ok())
                .ok_or(bad.clone())
        };
        let shape = Self {
            levels: field('L')?,
            height: field('H')?,
            w: field('W')?,
        };
        if parts.next().is_some()
            || !(1..=8).contains(&shape.levels)
            || ![5, 10, 15, 20, 25].contains(&shape.height)
            || ![1, 2, 4, 8].contains(&shape.w)
        {
            return Err(bad);
        }
        Ok(shape)
    }

    /// Its name, "L2_H10_W4".
    pub fn name(&self) -> String {
        format!("L{}_H{}_W{}", self.levels, self.height, self.w)
    }

    /// The per-level parameter sets.
    pub fn levels(&self) -> Vec<Level> {
        let find_lms = LMS
            .iter()
            .find(|p| p.hash == HashFn::Sha256 && p.m == 32 && p.h == self.height);
        let find_ots = OTS
            .iter()
            .find(|p| p.hash == HashFn::Sha256 && p.n == 32 && p.w == self.w);
        match (find_lms, find_ots) {
            (Some(l), Some(o)) => vec![(l, o); usize::from(self.levels)],
            // parse() admits only heights and W values that exist.
            _ => Vec::new(),
        }
    }

    /// HSS signature length, in bytes (RFC 8554 §6.2).
    pub fn signature_len(&self) -> usize {
        hss_signature_len(&self.levels())
    }

    /// Number of signatures, 2^(L·h).
    pub fn signatures(&self) -> u64 {
        1u64.checked_shl(u32::from(self.levels) * u32::from(self.height))
            .unwrap_or(u64::MAX)
    }
}

pub use crate::hss::hss_signature_len;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_presets_sizes_and_counts() {
        // Signature sizes as RFC 8554 §6.2 composes them (L1_H15_W2: 4 + 8 + 4 + 32·134 +
        // 15·32 = 4784 bytes).
        let expected: [(usize, u64); 10] = [
            (4784, 1 << 15),
            (2672, 1 << 15),
            (9300, 1 << 20),
            (5076, 1 << 20),
            (2964, 1 << 20),
            (13496, 1 << 15),
            (7160, 1 << 15),
            (3992, 1 << 15),
            (7640, 1 << 30),
            (5340, 1 << 20),
        ];
        for (name, (len, count)) in PRESETS.iter().zip(expected) {
            let s = Shape::parse(name).expect(name);
            assert_eq!(s.name(), *name);
            assert_eq!((s.signature_len(), s.signatures()), (len, count), "{name}");
        }
        assert!(Shape::parse("L9_H5_W8").is_err());
        assert!(Shape::parse("L1_H6_W8").is_err());
        assert!(Shape::parse("L1_H5_W3").is_err());
        assert!(Shape::parse("L1_H5").is_err());
        assert!(Shape::parse("L1_H5_W8_X").is_err());
    }
}
