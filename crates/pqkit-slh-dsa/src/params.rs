//! The twelve SLH-DSA parameter sets (FIPS 205 Table 2) and the sizes derived from them.

/// The hash family of a parameter set (FIPS 205 §11.1, §11.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// SHA-256 for F and PRF; SHA-256 (n = 16) or SHA-512 (n = 24, 32) for H, T_l, H_msg and
    /// PRF_msg (§11.2.1, §11.2.2).
    Sha2,
    /// SHAKE256 for everything (§11.1).
    Shake,
}

/// One parameter set: n, h, d, h′, a, k (bytes or counts as in FIPS 205 Table 2; lg_w = 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// The standard's name.
    pub name: &'static str,
    pub(crate) family: Family,
    /// Security parameter: bytes per hash output.
    pub n: usize,
    /// Total hypertree height.
    pub(crate) h: u32,
    /// Hypertree layers.
    pub(crate) d: u32,
    /// Height of each XMSS tree, h′ = h / d.
    pub(crate) hp: u32,
    /// FORS tree height.
    pub(crate) a: u32,
    /// FORS trees.
    pub(crate) k: u32,
    /// Message digest bytes.
    pub(crate) m: usize,
}

/// Winternitz parameter w = 2^lg_w = 16 in every set.
pub(crate) const W: u32 = 16;

/// The low `bits` (< 32) bits of `x`.
pub(crate) fn low_bits(x: u64, bits: u32) -> u32 {
    u32::try_from(x & ((1u64 << bits) - 1)).expect("fewer than 32 bits")
}

impl Params {
    /// WOTS+ chains: len = len1 + len2 = 2n + 3 (FIPS 205 §5, lg_w = 4).
    pub(crate) const fn len(&self) -> usize {
        2 * self.n + 3
    }

    /// len as a u32 (≤ 67).
    #[allow(clippy::cast_possible_truncation, reason = "n ≤ 32")]
    pub(crate) const fn len32(&self) -> u32 {
        2 * self.n as u32 + 3
    }

    /// Bytes of md: ⌈k·a / 8⌉ (Algorithm 19, line 7).
    pub(crate) const fn md_bytes(&self) -> usize {
        (self.k as usize * self.a as usize).div_ceil(8)
    }

    /// Bytes of tmp_idx_tree: ⌈(h − h′) / 8⌉.
    pub(crate) const fn tree_bytes(&self) -> usize {
        ((self.h - self.hp) as usize).div_ceil(8)
    }

    /// Bytes of tmp_idx_leaf: ⌈h′ / 8⌉.
    pub(crate) const fn leaf_bytes(&self) -> usize {
        (self.hp as usize).div_ceil(8)
    }

    /// FORS signature bytes: k·(1 + a)·n.
    pub(crate) const fn fors_bytes(&self) -> usize {
        self.k as usize * (1 + self.a as usize) * self.n
    }

    /// One XMSS signature of the hypertree: (len + h′)·n.
    pub(crate) const fn xmss_bytes(&self) -> usize {
        (self.len() + self.hp as usize) * self.n
    }

    /// The signature: (1 + k(1 + a) + h + d·len)·n bytes (Algorithm 20, line 1).
    pub const fn signature_bytes(&self) -> usize {
        self.n + self.fors_bytes() + self.d as usize * self.xmss_bytes()
    }

    /// Whether H and T_l use SHA-512 (SHA2 sets of security categories 3 and 5, §11.2.2).
    pub(crate) fn sha512(&self) -> bool {
        self.family == Family::Sha2 && self.n > 16
    }
}

macro_rules! params {
    ($id:ident, $name:literal, $fam:ident, $n:literal, $h:literal, $d:literal, $hp:literal,
     $a:literal, $k:literal, $m:literal) => {
        #[doc = concat!($name, " (FIPS 205 Table 2): n = ", $n, ", h = ", $h, ", d = ", $d, ", h′ = ", $hp, ", a = ", $a, ", k = ", $k, ", m = ", $m, ".")]
        pub const $id: Params = Params {
            name: $name,
            family: Family::$fam,
            n: $n,
            h: $h,
            d: $d,
            hp: $hp,
            a: $a,
            k: $k,
            m: $m,
        };
    };
}

params!(
    SHA2_128S,
    "SLH-DSA-SHA2-128s",
    Sha2,
    16,
    63,
    7,
    9,
    12,
    14,
    30
);
params!(
    SHA2_128F,
    "SLH-DSA-SHA2-128f",
    Sha2,
    16,
    66,
    22,
    3,
    6,
    33,
    34
);
params!(
    SHA2_192S,
    "SLH-DSA-SHA2-192s",
    Sha2,
    24,
    63,
    7,
    9,
    14,
    17,
    39
);
params!(
    SHA2_192F,
    "SLH-DSA-SHA2-192f",
    Sha2,
    24,
    66,
    22,
    3,
    8,
    33,
    42
);
params!(
    SHA2_256S,
    "SLH-DSA-SHA2-256s",
    Sha2,
    32,
    64,
    8,
    8,
    14,
    22,
    47
);
params!(
    SHA2_256F,
    "SLH-DSA-SHA2-256f",
    Sha2,
    32,
    68,
    17,
    4,
    9,
    35,
    49
);
params!(
    SHAKE_128S,
    "SLH-DSA-SHAKE-128s",
    Shake,
    16,
    63,
    7,
    9,
    12,
    14,
    30
);
params!(
    SHAKE_128F,
    "SLH-DSA-SHAKE-128f",
    Shake,
    16,
    66,
    22,
    3,
    6,
    33,
    34
);
params!(
    SHAKE_192S,
    "SLH-DSA-SHAKE-192s",
    Shake,
    24,
    63,
    7,
    9,
    14,
    17,
    39
);
params!(
    SHAKE_192F,
    "SLH-DSA-SHAKE-192f",
    Shake,
    24,
    66,
    22,
    3,
    8,
    33,
    42
);
params!(
    SHAKE_256S,
    "SLH-DSA-SHAKE-256s",
    Shake,
    32,
    64,
    8,
    8,
    14,
    22,
    47
);
params!(
    SHAKE_256F,
    "SLH-DSA-SHAKE-256f",
    Shake,
    32,
    68,
    17,
    4,
    9,
    35,
    49
);

/// Every set, in the catalogue's order (SHA2 then SHAKE, FIPS 205 Table 2).
pub static ALL: [&Params; 12] = [
    &SHA2_128S,
    &SHA2_128F,
    &SHA2_192S,
    &SHA2_192F,
    &SHA2_256S,
    &SHA2_256F,
    &SHAKE_128S,
    &SHAKE_128F,
    &SHAKE_192S,
    &SHAKE_192F,
    &SHAKE_256S,
    &SHAKE_256F,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_sizes_are_table_2() {
        for (p, sig) in [
            (SHA2_128S, 7856),
            (SHA2_128F, 17088),
            (SHA2_192S, 16224),
            (SHA2_192F, 35664),
            (SHA2_256S, 29792),
            (SHA2_256F, 49856),
            (SHAKE_128S, 7856),
            (SHAKE_256F, 49856),
        ] {
            assert_eq!(p.signature_bytes(), sig, "{}", p.name);
            assert_eq!(p.h, p.d * p.hp, "{}", p.name);
        }
    }
}
