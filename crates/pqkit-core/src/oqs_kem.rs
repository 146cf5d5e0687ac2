//! The KEMs pqkit takes from liboqs: BIKE, FrodoKEM and Classic McEliece.
//!
//! liboqs 0.13.0 (through the `oqs` crate, built from source with cmake) carries the
//! submitters' code for all three: BIKE's "additional" implementation (spec 5.1, round 4),
//! FrodoKEM round 3 — which the ISO draft calls eFrodoKEM, the variant for ephemeral keys,
//! and liboqs 0.16 renames so (its `FrodoKEM-*` is now the salted variant, 32 bytes longer
//! ciphertexts) — and Classic McEliece's round-4 code. Each passes liboqs's own known-answer
//! digests in `tests/oqs_kat.rs`; liboqs 0.16.0's digests for eFrodoKEM are the same.
//!
//! None has a seed form in liboqs 0.13 (its `length_keypair_seed` is 0): keys come from the OS
//! RNG and are stored in their expanded form. Sizes are liboqs's (`kem_bike.h`,
//! `kem_frodokem.h`, `kem_classic_mceliece.h`); the tests check them against the library.
//!
//! OIDs: oqs-provider assigns no OIDs to these KEMs (its `OQS_OID_*` entries are NULL);
//! pqkit uses the arc Bouncy Castle defines for them (1.3.6.1.4.1.22554.5.x,
//! `BCObjectIdentifiers`). The key bytes under them are liboqs's, not Bouncy Castle's (its
//! BIKE private key is h0 ‖ h1 ‖ σ, and it now writes the ISO/IEC 18033-2 amendment's OIDs
//! for some sets): pqkit's key files of these KEMs are for pqkit. TLS code points are
//! oqs-provider's (`oqs-template/generate.yml`, private-use values 65024–65082).
//!
//! # Security
//! The `oqs` crate's key and secret buffers are moved into zeroizing ones (no copy is left
//! behind); what liboqs leaves in its own stack frames and error paths is out of reach.

use std::sync::OnceLock;

use oqs::kem::{Algorithm, Kem};
use zeroize::Zeroizing;

use crate::code_point::TlsCodePoint;
use crate::error::Error;
use crate::kem::{KemAlgorithm, KemBackend, KemFamily, KeyPair};

const BACKEND: &str = "liboqs";

/// One liboqs KEM, opened once per process.
struct Liboqs {
    alg: Algorithm,
    /// The family's check of a key, where it has one.
    check: KeyCheck,
    kem: OnceLock<Option<Kem>>,
}

/// What a key is checked for before use, besides the pairwise test.
#[derive(Clone, Copy)]
enum KeyCheck {
    /// FrodoKEM: every entry of Sᵀ (n̄·n little-endian 16-bit words at `offset`) lies in the
    /// support of the error distribution χ, [−bound, bound] (FrodoKEM spec §2.2.4, Table
    /// of the CDFs: 12, 10 and 6 for FrodoKEM-640/976/1344). A damaged entry that stays
    /// small changes B'·S by a uniform vector, which the pairwise test catches; a large one
    /// can slip through it — the decoding tolerates it for some ciphertexts only.
    FrodoSecret {
        offset: usize,
        entries: usize,
        bound: u16,
    },
    /// Classic McEliece: the key pair is checked position by position. One random
    /// encapsulation touches t of the n positions, so a damaged column of T (H = [I_mt | T],
    /// mt rows of ⌈k/8⌉ bytes, column j of T at bit j) or a damaged support element passes a
    /// pairwise test with probability about 1 − t/n. Here error vectors of weight t cover
    /// every position and separate every pair of positions; for each, the syndrome
    /// C = H·e is computed from the encapsulation key, and decapsulating C must give
    /// K = SHAKE256(1 ‖ e ‖ C) (Classic McEliece round 4, §2.4.5 Encap and §2.4.6 Decap).
    McElieceColumns { n: usize, mt: usize, t: usize },
    /// BIKE: the secret key holds h0 and h1 twice, as D indices each (wlist, 32-bit
    /// little-endian) and as r-bit vectors (bin); both forms must agree, each index below r
    /// and all D distinct (BIKE spec 5.1 §2.2, KeyGen: wt(h0) = wt(h1) = d). A damaged index
    /// can survive one pairwise test — the bit-flipping decoder tolerates a little noise —
    /// and would raise the decoding-failure rate unseen.
    BikeSecret { r: usize, d: usize },
}

impl Liboqs {
    const fn new(alg: Algorithm, check: KeyCheck) -> Self {
        Self {
            alg,
            check,
            kem: OnceLock::new(),
        }
    }

    fn kem(&self) -> Result<&Kem, Error> {
        self.kem
            .get_or_init(|| {
                oqs::init();
                Kem::new(self.alg).ok()
            })
            .as_ref()
            .ok_or(Error::Backend(BACKEND))
    }
}

impl KemBackend for Liboqs {
    fn name(&self) -> &'static str {
        "liboqs 0.13"
    }

    fn generate_from_seed(&self, _seed: &[u8]) -> Result<KeyPair, Error> {
        Err(Error::Unsupported(
            "liboqs 0.13 has no seed form for this KEM",
        ))
    }

    fn check_key_pair(&self, dk: &[u8], ek: &[u8]) -> Result<(), Error> {
        let KeyCheck::McElieceColumns { n, mt, t } = self.check else {
            return Ok(());
        };
        let row_bytes = (n - mt).div_ceil(8);
        let bit = |bytes: &[u8], i: usize| (bytes[i / 8] >> (i % 8)) & 1;
        // Three partitions of the n positions: blocks of t, and the classes modulo c and c + 1
        // (c = ⌈n/t⌉). A pair of positions shares a block only if they are less than t
        // apart, and shares both classes only if c(c + 1) > t divides their distance: some
        // vector holds exactly one of them, so swapped support elements (a damaged Beneš
        // control bit) show too. Classes hold at most t positions; each vector is topped up
        // to weight t with the lowest positions it lacks.
        let c = n.div_ceil(t);
        let blocks = (0..n.div_ceil(t)).map(|b| (b * t..n.min((b + 1) * t)).collect::<Vec<_>>());
        let classes = |m: usize| (0..m).map(move |r| (r..n).step_by(m).collect::<Vec<_>>());
        for mut positions in blocks.chain(classes(c)).chain(classes(c + 1)) {
            let mut e = vec![0u8; n / 8];
            for &p in &positions {
                e[p / 8] |= 1 << (p % 8);
            }
            for p in 0..n {
                if positions.len() == t {
                    break;
                }
                if bit(&e, p) == 0 {
                    e[p / 8] |= 1 << (p % 8);
                    positions.push(p);
                }
            }
            // Syndrome: s_i = e_i ⊕ (⊕_j T[i][j]·e_{mt+j}).
            let mut syndrome = vec![0u8; mt.div_ceil(8)];
            for i in 0..mt {
                let row = &ek[i * row_bytes..(i + 1) * row_bytes];
                let mut b = bit(&e, i);
                for &p in positions.iter().filter(|&&p| p >= mt) {
                    b ^= bit(row, p - mt);
                }
                syndrome[i / 8] |= b << (i % 8);
            }
            let mut expected = [0u8; 32];
            let mut h = sha3::Shake256::default();
            sha3::digest::Update::update(&mut h, &[1]);
            sha3::digest::Update::update(&mut h, &e);
            sha3::digest::Update::update(&mut h, &syndrome);
            sha3::digest::XofReader::read(
                &mut sha3::digest::ExtendableOutput::finalize_xof(h),
                &mut expected,
            );
            let got = self.decapsulate(dk, &syndrome)?;
            if !bool::from(subtle::ConstantTimeEq::ct_eq(&got[..], &expected[..])) {
                return Err(Error::InvalidKey(
                    "Classic McEliece key pair (a vector the encapsulation key encodes does \
                     not decode to itself: one of the keys is damaged)",
                ));
            }
        }
        Ok(())
    }

    fn check_decapsulation_key(&self, dk: &[u8]) -> Result<(), Error> {
        match self.check {
            KeyCheck::McElieceColumns { .. } => Ok(()),
            KeyCheck::BikeSecret { r, d } => {
                bike_secret_agrees(dk, r, d)
                    .then_some(())
                    .ok_or(Error::InvalidKey(
                        "BIKE decapsulation key (its index and vector forms of h0, h1 \
                         disagree: the secret part is damaged)",
                    ))
            }
            KeyCheck::FrodoSecret {
                offset,
                entries,
                bound,
            } => {
                let words = dk
                    .get(offset..offset + 2 * entries)
                    .ok_or(Error::InvalidKey("FrodoKEM decapsulation key"))?;
                // Constant time over the secret: no branch on an entry.
                let outside = words.chunks_exact(2).fold(0u16, |acc, w| {
                    let v = u16::from_le_bytes([w[0], w[1]]);
                    // |v| as a 16-bit two's-complement value, then whether it exceeds bound.
                    let magnitude = magnitude(v);
                    acc | (bound.wrapping_sub(magnitude) >> 15)
                });
                if outside == 0 {
                    Ok(())
                } else {
                    Err(Error::InvalidKey(
                        "FrodoKEM decapsulation key (an entry of S lies outside the error \
                         distribution: the secret part is damaged)",
                    ))
                }
            }
        }
    }

    fn generate(&self) -> Result<KeyPair, Error> {
        let (pk, sk) = self.kem()?.keypair().map_err(|_| Error::Backend(BACKEND))?;
        let sk = Zeroizing::new(sk.into_vec());
        Ok((pk.into_vec(), sk))
    }

    fn encapsulate(&self, ek: &[u8]) -> Result<(Vec<u8>, Zeroizing<Vec<u8>>), Error> {
        let kem = self.kem()?;
        let ek = kem
            .public_key_from_bytes(ek)
            .ok_or(Error::Backend(BACKEND))?;
        let (ct, ss) = kem.encapsulate(ek).map_err(|_| Error::Backend(BACKEND))?;
        Ok((ct.into_vec(), Zeroizing::new(ss.into_vec())))
    }

    fn decapsulate(&self, dk: &[u8], ct: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        let kem = self.kem()?;
        let dk = kem
            .secret_key_from_bytes(dk)
            .ok_or(Error::Backend(BACKEND))?;
        let ct = kem
            .ciphertext_from_bytes(ct)
            .ok_or(Error::Backend(BACKEND))?;
        let ss = kem
            .decapsulate(dk, ct)
            .map_err(|_| Error::Backend(BACKEND))?;
        Ok(Zeroizing::new(ss.into_vec()))
    }
}

/// Whether a BIKE secret key's wlist and bin forms of h0 and h1 agree
/// ([`KeyCheck::BikeSecret`]), in time independent of the secret indices: each index is spread
/// over every byte of its vector with masks.
fn bike_secret_agrees(dk: &[u8], r: usize, d: usize) -> bool {
    use subtle::{ConditionallySelectable, ConstantTimeEq, ConstantTimeLess};
    let r_bytes = r.div_ceil(8);
    let (wlist, rest) = dk.split_at(2 * d * 4);
    let mut ok = subtle::Choice::from(1);
    for half in 0..2 {
        let bin = &rest[half * r_bytes..(half + 1) * r_bytes];
        let mut expected = vec![0u8; r_bytes];
        for i in 0..d {
            let at = 4 * (half * d + i);
            let idx = u32::from_le_bytes([wlist[at], wlist[at + 1], wlist[at + 2], wlist[at + 3]]);
            ok &= idx.ct_lt(&u32::try_from(r).unwrap_or(u32::MAX));
            let (byte, bit) = (idx >> 3, 1u8 << (idx & 7));
            for (b, e) in (0u32..).zip(expected.iter_mut()) {
                *e |= u8::conditional_select(&0, &bit, b.ct_eq(&byte));
            }
        }
        // D distinct indices set D bits; a repeated one sets fewer.
        let weight: u32 = expected.iter().map(|b| b.count_ones()).sum();
        ok &= weight.ct_eq(&u32::try_from(d).unwrap_or(0));
        ok &= expected[..].ct_eq(bin);
    }
    ok.into()
}

/// |v| of a 16-bit two's-complement value, without a branch: v XOR its sign mask, minus the
/// mask.
fn magnitude(v: u16) -> u16 {
    let mask = 0u16.wrapping_sub(v >> 15);
    (v ^ mask).wrapping_sub(mask)
}

/// The sizes of one liboqs KEM, in bytes.
struct Sizes {
    ek: usize,
    dk: usize,
    ct: usize,
    ss: usize,
    /// IND-CCA2 claimed (liboqs's `ind_cca`).
    ind_cca: bool,
    /// Meant for keys that serve one key exchange.
    ephemeral: bool,
    /// Where the encapsulation key lies in the decapsulation key.
    ek_offset: Option<usize>,
}

/// An oqs-provider private-use code point.
const fn oqs_group(value: u16, iana: &'static str) -> Option<TlsCodePoint> {
    Some(TlsCodePoint::oqs_provider(value, iana))
}

#[allow(clippy::too_many_arguments)]
const fn kem(
    name: &'static str,
    aliases: &'static [&'static str],
    family: KemFamily,
    category: u8,
    sizes: Sizes,
    oid: &'static str,
    tls_group: Option<TlsCodePoint>,
    standard: &'static str,
    backend: &'static Liboqs,
) -> KemAlgorithm {
    KemAlgorithm {
        name,
        aliases,
        family,
        category,
        encapsulation_key_size: sizes.ek,
        decapsulation_key_size: sizes.dk,
        seed_size: 0,
        ciphertext_size: sizes.ct,
        shared_secret_size: sizes.ss,
        encapsulation_randomness_size: 0,
        ind_cca: sizes.ind_cca,
        ephemeral: sizes.ephemeral,
        encapsulation_key_offset: sizes.ek_offset,
        oid,
        tls_group,
        standard,
        backend,
    }
}

const BIKE: &str = "BIKE spec 5.1 (NIST round 4)";
const FRODO: &str = "eFrodoKEM (FrodoKEM round 3; ISO/IEC 18033-2 draft amendment)";
const MCELIECE: &str = "Classic McEliece (NIST round 4)";

/// BIKE's secret key is wlist (D·2 indices of 4 bytes) ‖ h0 ‖ h1 ‖ pk ‖ σ (32): the
/// encapsulation key sits before the final 32 bytes (liboqs `additional_r4/types.h`, `sk_t`).
/// BIKE's IND-CCA claim rests on a decoding-failure rate that is extrapolated, not proven
/// (liboqs marks it not IND-CCA): its keys are for one key exchange.
const fn bike(ek: usize, dk: usize, ct: usize) -> Sizes {
    Sizes {
        ek,
        dk,
        ct,
        ss: 32,
        ind_cca: false,
        ephemeral: true,
        ek_offset: Some(dk - 32 - ek),
    }
}

/// FrodoKEM's secret key is s (len_s) ‖ pk ‖ Sᵀ ‖ pkh (FrodoKEM spec §2.2.10); len_s is the
/// shared-secret length. eFrodoKEM is meant for ephemeral keys (few ciphertexts per key).
const fn frodo(ek: usize, dk: usize, ct: usize, ss: usize) -> Sizes {
    Sizes {
        ek,
        dk,
        ct,
        ss,
        ind_cca: true,
        ephemeral: true,
        ek_offset: Some(ss),
    }
}

/// Classic McEliece's secret key holds the Goppa code, not the public matrix.
const fn mceliece(ek: usize, dk: usize, ct: usize) -> Sizes {
    Sizes {
        ek,
        dk,
        ct,
        ss: 32,
        ind_cca: true,
        ephemeral: false,
        ek_offset: None,
    }
}

macro_rules! backend {
    ($name:ident, $alg:ident, frodo($n:literal, $len_s:literal, $ek:literal, $bound:literal)) => {
        // Sᵀ follows s (len_s bytes) and the encapsulation key; it has n̄·n = 8·n entries.
        static $name: Liboqs = Liboqs::new(
            Algorithm::$alg,
            KeyCheck::FrodoSecret {
                offset: $len_s + $ek,
                entries: 8 * $n,
                bound: $bound,
            },
        );
    };
    ($name:ident, $alg:ident, bike(r = $r:literal, d = $d:literal)) => {
        static $name: Liboqs = Liboqs::new(Algorithm::$alg, KeyCheck::BikeSecret { r: $r, d: $d });
    };
    ($name:ident, $alg:ident, mceliece(n = $n:literal, m = $m:literal, t = $t:literal)) => {
        static $name: Liboqs = Liboqs::new(
            Algorithm::$alg,
            KeyCheck::McElieceColumns {
                n: $n,
                mt: $m * $t,
                t: $t,
            },
        );
    };
}

backend!(OQS_BIKE_L1, BikeL1, bike(r = 12323, d = 71));
backend!(OQS_BIKE_L3, BikeL3, bike(r = 24659, d = 103));
backend!(OQS_BIKE_L5, BikeL5, bike(r = 40973, d = 137));
backend!(OQS_FRODO_640_AES, FrodoKem640Aes, frodo(640, 16, 9616, 12));
backend!(
    OQS_FRODO_640_SHAKE,
    FrodoKem640Shake,
    frodo(640, 16, 9616, 12)
);
backend!(OQS_FRODO_976_AES, FrodoKem976Aes, frodo(976, 24, 15632, 10));
backend!(
    OQS_FRODO_976_SHAKE,
    FrodoKem976Shake,
    frodo(976, 24, 15632, 10)
);
backend!(
    OQS_FRODO_1344_AES,
    FrodoKem1344Aes,
    frodo(1344, 32, 21520, 6)
);
backend!(
    OQS_FRODO_1344_SHAKE,
    FrodoKem1344Shake,
    frodo(1344, 32, 21520, 6)
);
backend!(
    OQS_MCELIECE_348864,
    ClassicMcEliece348864,
    mceliece(n = 3488, m = 12, t = 64)
);
backend!(
    OQS_MCELIECE_348864F,
    ClassicMcEliece348864f,
    mceliece(n = 3488, m = 12, t = 64)
);
backend!(
    OQS_MCELIECE_460896,
    ClassicMcEliece460896,
    mceliece(n = 4608, m = 13, t = 96)
);
backend!(
    OQS_MCELIECE_460896F,
    ClassicMcEliece460896f,
    mceliece(n = 4608, m = 13, t = 96)
);
backend!(
    OQS_MCELIECE_6688128,
    ClassicMcEliece6688128,
    mceliece(n = 6688, m = 13, t = 128)
);
backend!(
    OQS_MCELIECE_6688128F,
    ClassicMcEliece6688128f,
    mceliece(n = 6688, m = 13, t = 128)
);
backend!(
    OQS_MCELIECE_6960119,
    ClassicMcEliece6960119,
    mceliece(n = 6960, m = 13, t = 119)
);
backend!(
    OQS_MCELIECE_6960119F,
    ClassicMcEliece6960119f,
    mceliece(n = 6960, m = 13, t = 119)
);
backend!(
    OQS_MCELIECE_8192128,
    ClassicMcEliece8192128,
    mceliece(n = 8192, m = 13, t = 128)
);
backend!(
    OQS_MCELIECE_8192128F,
    ClassicMcEliece8192128f,
    mceliece(n = 8192, m = 13, t = 128)
);

/// BIKE-L1, category 1: encapsulation key 1541, decapsulation key 5223, ciphertext 1573,
/// shared secret 32 bytes. TLS: bikel1 (65040, oqs-provider).
pub static BIKE_L1: KemAlgorithm = kem(
    "BIKE-L1",
    &["bikel1"],
    KemFamily::Bike,
    1,
    bike(1541, 5223, 1573),
    "1.3.6.1.4.1.22554.5.8.1",
    oqs_group(65040, "bikel1"),
    BIKE,
    &OQS_BIKE_L1,
);

/// BIKE-L3, category 3: encapsulation key 3083, decapsulation key 10105, ciphertext 3115,
/// shared secret 32 bytes. TLS: bikel3 (65043, oqs-provider).
pub static BIKE_L3: KemAlgorithm = kem(
    "BIKE-L3",
    &["bikel3"],
    KemFamily::Bike,
    3,
    bike(3083, 10105, 3115),
    "1.3.6.1.4.1.22554.5.8.2",
    oqs_group(65043, "bikel3"),
    BIKE,
    &OQS_BIKE_L3,
);

/// BIKE-L5, category 5: encapsulation key 5122, decapsulation key 16494, ciphertext 5154,
/// shared secret 32 bytes. TLS: bikel5 (65046, oqs-provider).
pub static BIKE_L5: KemAlgorithm = kem(
    "BIKE-L5",
    &["bikel5"],
    KemFamily::Bike,
    5,
    bike(5122, 16494, 5154),
    "1.3.6.1.4.1.22554.5.8.3",
    oqs_group(65046, "bikel5"),
    BIKE,
    &OQS_BIKE_L5,
);

/// eFrodoKEM-640-AES, category 1: encapsulation key 9616, decapsulation key 19888, ciphertext
/// 9720, shared secret 16 bytes. TLS: efrodo640aes (65024, oqs-provider).
pub static EFRODOKEM_640_AES: KemAlgorithm = kem(
    "eFrodoKEM-640-AES",
    &["efrodo640aes", "eFrodoKEM640AES"],
    KemFamily::FrodoKem,
    1,
    frodo(9616, 19888, 9720, 16),
    "1.3.6.1.4.1.22554.5.2.1",
    oqs_group(65024, "efrodo640aes"),
    FRODO,
    &OQS_FRODO_640_AES,
);

/// eFrodoKEM-640-SHAKE, category 1: sizes as eFrodoKEM-640-AES. TLS: efrodo640shake (65027).
pub static EFRODOKEM_640_SHAKE: KemAlgorithm = kem(
    "eFrodoKEM-640-SHAKE",
    &["efrodo640shake", "eFrodoKEM640SHAKE"],
    KemFamily::FrodoKem,
    1,
    frodo(9616, 19888, 9720, 16),
    "1.3.6.1.4.1.22554.5.2.2",
    oqs_group(65027, "efrodo640shake"),
    FRODO,
    &OQS_FRODO_640_SHAKE,
);

/// eFrodoKEM-976-AES, category 3: encapsulation key 15632, decapsulation key 31296, ciphertext
/// 15744, shared secret 24 bytes. TLS: efrodo976aes (65030, oqs-provider).
pub static EFRODOKEM_976_AES: KemAlgorithm = kem(
    "eFrodoKEM-976-AES",
    &["efrodo976aes", "eFrodoKEM976AES"],
    KemFamily::FrodoKem,
    3,
    frodo(15632, 31296, 15744, 24),
    "1.3.6.1.4.1.22554.5.2.3",
    oqs_group(65030, "efrodo976aes"),
    FRODO,
    &OQS_FRODO_976_AES,
);

/// eFrodoKEM-976-SHAKE, category 3: sizes as eFrodoKEM-976-AES. TLS: efrodo976shake (65033).
pub static EFRODOKEM_976_SHAKE: KemAlgorithm = kem(
    "eFrodoKEM-976-SHAKE",
    &["efrodo976shake", "eFrodoKEM976SHAKE"],
    KemFamily::FrodoKem,
    3,
    frodo(15632, 31296, 15744, 24),
    "1.3.6.1.4.1.22554.5.2.4",
    oqs_group(65033, "efrodo976shake"),
    FRODO,
    &OQS_FRODO_976_SHAKE,
);

/// eFrodoKEM-1344-AES, category 5: encapsulation key 21520, decapsulation key 43088,
/// ciphertext 21632, shared secret 32 bytes. TLS: efrodo1344aes (65036, oqs-provider).
pub static EFRODOKEM_1344_AES: KemAlgorithm = kem(
    "eFrodoKEM-1344-AES",
    &["efrodo1344aes", "eFrodoKEM1344AES"],
    KemFamily::FrodoKem,
    5,
    frodo(21520, 43088, 21632, 32),
    "1.3.6.1.4.1.22554.5.2.5",
    oqs_group(65036, "efrodo1344aes"),
    FRODO,
    &OQS_FRODO_1344_AES,
);

/// eFrodoKEM-1344-SHAKE, category 5: sizes as eFrodoKEM-1344-AES. TLS: efrodo1344shake (65038).
pub static EFRODOKEM_1344_SHAKE: KemAlgorithm = kem(
    "eFrodoKEM-1344-SHAKE",
    &["efrodo1344shake", "eFrodoKEM1344SHAKE"],
    KemFamily::FrodoKem,
    5,
    frodo(21520, 43088, 21632, 32),
    "1.3.6.1.4.1.22554.5.2.6",
    oqs_group(65038, "efrodo1344shake"),
    FRODO,
    &OQS_FRODO_1344_SHAKE,
);

macro_rules! mceliece {
    ($(#[$doc:meta])* $name:ident, $canonical:literal, $alias:literal, $cat:literal,
     ($ek:literal, $dk:literal, $ct:literal), $oid:literal, $backend:ident) => {
        $(#[$doc])*
        ///
        /// No TLS named group: the encapsulation key does not fit a TLS 1.3 key share, whose
        /// `key_exchange` field holds at most 65,535 bytes (RFC 8446 §4.2.8).
        pub static $name: KemAlgorithm = kem(
            $canonical,
            &[$alias],
            KemFamily::ClassicMcEliece,
            $cat,
            mceliece($ek, $dk, $ct),
            $oid,
            None,
            MCELIECE,
            &$backend,
        );
    };
}

mceliece!(
    /// Classic-McEliece-348864, category 1: encapsulation key 261120, decapsulation key 6492,
    /// ciphertext 96, shared secret 32 bytes.
    CLASSIC_MCELIECE_348864, "Classic-McEliece-348864", "mceliece348864", 1,
    (261_120, 6492, 96), "1.3.6.1.4.1.22554.5.1.1", OQS_MCELIECE_348864
);
mceliece!(
    /// Classic-McEliece-348864f (faster key generation), category 1: sizes as 348864.
    CLASSIC_MCELIECE_348864F, "Classic-McEliece-348864f", "mceliece348864f", 1,
    (261_120, 6492, 96), "1.3.6.1.4.1.22554.5.1.2", OQS_MCELIECE_348864F
);
mceliece!(
    /// Classic-McEliece-460896, category 3: encapsulation key 524160, decapsulation key
    /// 13608, ciphertext 156, shared secret 32 bytes.
    CLASSIC_MCELIECE_460896, "Classic-McEliece-460896", "mceliece460896", 3,
    (524_160, 13608, 156), "1.3.6.1.4.1.22554.5.1.3", OQS_MCELIECE_460896
);
mceliece!(
    /// Classic-McEliece-460896f, category 3: sizes as 460896.
    CLASSIC_MCELIECE_460896F, "Classic-McEliece-460896f", "mceliece460896f", 3,
    (524_160, 13608, 156), "1.3.6.1.4.1.22554.5.1.4", OQS_MCELIECE_460896F
);
mceliece!(
    /// Classic-McEliece-6688128, category 5: encapsulation key 1044992, decapsulation key
    /// 13932, ciphertext 208, shared secret 32 bytes.
    CLASSIC_MCELIECE_6688128, "Classic-McEliece-6688128", "mceliece6688128", 5,
    (1_044_992, 13932, 208), "1.3.6.1.4.1.22554.5.1.5", OQS_MCELIECE_6688128
);
mceliece!(
    /// Classic-McEliece-6688128f, category 5: sizes as 6688128.
    CLASSIC_MCELIECE_6688128F, "Classic-McEliece-6688128f", "mceliece6688128f", 5,
    (1_044_992, 13932, 208), "1.3.6.1.4.1.22554.5.1.6", OQS_MCELIECE_6688128F
);
mceliece!(
    /// Classic-McEliece-6960119, category 5: encapsulation key 1047319, decapsulation key
    /// 13948, ciphertext 194, shared secret 32 bytes.
    CLASSIC_MCELIECE_6960119, "Classic-McEliece-6960119", "mceliece6960119", 5,
    (1_047_319, 13948, 194), "1.3.6.1.4.1.22554.5.1.7", OQS_MCELIECE_6960119
);
mceliece!(
    /// Classic-McEliece-6960119f, category 5: sizes as 6960119.
    CLASSIC_MCELIECE_6960119F, "Classic-McEliece-6960119f", "mceliece6960119f", 5,
    (1_047_319, 13948, 194), "1.3.6.1.4.1.22554.5.1.8", OQS_MCELIECE_6960119F
);
mceliece!(
    /// Classic-McEliece-8192128, category 5: encapsulation key 1357824, decapsulation key
    /// 14120, ciphertext 208, shared secret 32 bytes.
    CLASSIC_MCELIECE_8192128, "Classic-McEliece-8192128", "mceliece8192128", 5,
    (1_357_824, 14120, 208), "1.3.6.1.4.1.22554.5.1.9", OQS_MCELIECE_8192128
);
mceliece!(
    /// Classic-McEliece-8192128f, category 5: sizes as 8192128.
    CLASSIC_MCELIECE_8192128F, "Classic-McEliece-8192128f", "mceliece8192128f", 5,
    (1_357_824, 14120, 208), "1.3.6.1.4.1.22554.5.1.10", OQS_MCELIECE_8192128F
);

/// Every liboqs KEM of the catalogue, in catalogue order.
pub(crate) static KEMS: &[&KemAlgorithm] = &[
    &BIKE_L1,
    &BIKE_L3,
    &BIKE_L5,
    &EFRODOKEM_640_AES,
    &EFRODOKEM_640_SHAKE,
    &EFRODOKEM_976_AES,
    &EFRODOKEM_976_SHAKE,
    &EFRODOKEM_1344_AES,
    &EFRODOKEM_1344_SHAKE,
    &CLASSIC_MCELIECE_348864,
    &CLASSIC_MCELIECE_348864F,
    &CLASSIC_MCELIECE_460896,
    &CLASSIC_MCELIECE_460896F,
    &CLASSIC_MCELIECE_6688128,
    &CLASSIC_MCELIECE_6688128F,
    &CLASSIC_MCELIECE_6960119,
    &CLASSIC_MCELIECE_6960119F,
    &CLASSIC_MCELIECE_8192128,
    &CLASSIC_MCELIECE_8192128F,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// liboqs's method names are pqkit's canonical names; each size is the library's own.
    #[test]
    fn sizes_are_liboqs_sizes() {
        let backends = [
            &OQS_BIKE_L1,
            &OQS_BIKE_L3,
            &OQS_BIKE_L5,
            &OQS_FRODO_640_AES,
            &OQS_FRODO_640_SHAKE,
            &OQS_FRODO_976_AES,
            &OQS_FRODO_976_SHAKE,
            &OQS_FRODO_1344_AES,
            &OQS_FRODO_1344_SHAKE,
            &OQS_MCELIECE_348864,
            &OQS_MCELIECE_348864F,
            &OQS_MCELIECE_460896,
            &OQS_MCELIECE_460896F,
            &OQS_MCELIECE_6688128,
            &OQS_MCELIECE_6688128F,
            &OQS_MCELIECE_6960119,
            &OQS_MCELIECE_6960119F,
            &OQS_MCELIECE_8192128,
            &OQS_MCELIECE_8192128F,
        ];
        assert_eq!(backends.len(), KEMS.len());
        for b in backends {
            let kem = b.kem().expect("liboqs has it enabled");
            let name = kem.algorithm().name();
            // liboqs 0.13 names eFrodoKEM "FrodoKEM" (0.16 renamed it).
            let alg = KEMS
                .iter()
                .find(|k| k.name == name || k.name.strip_prefix('e') == Some(name))
                .unwrap_or_else(|| panic!("{name} is not in the catalogue"));
            assert!(
                core::ptr::addr_eq(alg.backend, b),
                "{name}: another backend"
            );
            assert_eq!(
                kem.length_public_key(),
                alg.encapsulation_key_size,
                "{name}"
            );
            assert_eq!(
                kem.length_secret_key(),
                alg.decapsulation_key_size,
                "{name}"
            );
            assert_eq!(kem.length_ciphertext(), alg.ciphertext_size, "{name}");
            assert_eq!(kem.length_shared_secret(), alg.shared_secret_size, "{name}");
            assert_eq!(kem.length_keypair_seed(), 0, "{name}");
            assert_eq!(kem.is_ind_cca(), alg.ind_cca, "{name}");
            assert_eq!(kem.claimed_nist_level(), alg.category, "{name}");
        }
    }

    #[test]
    fn round_trip_and_embedded_encapsulation_key() {
        for alg in KEMS {
            let dk = alg.generate().expect("keygen");
            let (ct, ss) = dk.encapsulation_key().encapsulate().expect("encapsulate");
            assert_eq!(ct.len(), alg.ciphertext_size);
            assert_eq!(ss.as_bytes().len(), alg.shared_secret_size);
            assert_eq!(
                dk.decapsulate(&ct).expect("decapsulate"),
                ss,
                "{}",
                alg.name
            );
            let mut bad = ct.clone();
            bad[0] ^= 1;
            assert_ne!(
                dk.decapsulate(&bad).expect("decapsulate"),
                ss,
                "{}",
                alg.name
            );
            assert!(dk.seed().is_none());
            assert!(alg.generate_from_seed(&[0; 64]).is_err());
            let ek = dk.encapsulation_key().as_bytes();
            match alg.encapsulation_key_offset {
                Some(at) => {
                    assert_eq!(&dk.expanded()[at..at + ek.len()], ek, "{}", alg.name);
                    let again = alg
                        .decapsulation_key_from_expanded(dk.expanded())
                        .expect("expanded");
                    assert_eq!(again.encapsulation_key().as_bytes(), ek);
                }
                None => assert!(alg.decapsulation_key_from_expanded(dk.expanded()).is_err()),
            }
            let again = alg
                .decapsulation_key_from_parts(dk.expanded(), ek)
                .expect("parts");
            assert_eq!(again.decapsulate(&ct).expect("decapsulate"), ss);
        }
    }

    /// A damaged entry of FrodoKEM's secret matrix can pass one pairwise test (the decoding
    /// tolerates it for some ciphertexts): the range check refuses it whatever the ciphertext.
    #[test]
    fn frodo_secret_outside_the_error_distribution_is_refused() {
        for (alg, len_s, bound) in [
            (&EFRODOKEM_640_AES, 16, 12),
            (&EFRODOKEM_976_SHAKE, 24, 10),
            (&EFRODOKEM_1344_AES, 32, 6),
        ] {
            let dk = alg.generate().expect("keygen");
            let s_at = len_s + alg.encapsulation_key_size;
            for (entry, value) in [
                (0, bound + 1),
                (3, 0x8000),
                (7, 0u16.wrapping_sub(bound + 1)),
            ] {
                let mut bad = dk.expanded().to_vec();
                bad[s_at + 2 * entry..s_at + 2 * entry + 2].copy_from_slice(&value.to_le_bytes());
                assert!(
                    matches!(
                        alg.decapsulation_key_from_expanded(&bad),
                        Err(Error::InvalidKey(_))
                    ),
                    "{}: S entry {entry} = {value:#06x}",
                    alg.name
                );
            }
            for ok in [bound, 0u16.wrapping_sub(bound), 0] {
                let mut edge = dk.expanded().to_vec();
                edge[s_at..s_at + 2].copy_from_slice(&ok.to_le_bytes());
                assert!(
                    alg.backend.check_decapsulation_key(&edge).is_ok(),
                    "{ok:#06x}"
                );
            }
        }
        assert_eq!(magnitude(0xFFFF), 1);
        assert_eq!(magnitude(0x8000), 0x8000);
        assert_eq!(magnitude(5), 5);
    }

    /// A changed index of h0 or h1 in wlist, or a flipped bit of their vectors, is refused.
    #[test]
    fn a_damaged_bike_secret_is_refused() {
        for (alg, d) in [(&BIKE_L1, 71), (&BIKE_L5, 137)] {
            let dk = alg.generate().expect("keygen");
            assert!(alg.backend.check_decapsulation_key(dk.expanded()).is_ok());
            let bin = 2 * d * 4;
            for at in [
                0,
                3,
                4 * d + 1,
                bin,
                bin + 700,
                bin + alg.encapsulation_key_size + 5,
            ] {
                let mut bad = dk.expanded().to_vec();
                bad[at] ^= 0x01;
                assert!(
                    matches!(
                        alg.decapsulation_key_from_expanded(&bad),
                        Err(Error::InvalidKey(_))
                    ),
                    "{} byte {at}",
                    alg.name
                );
            }
        }
    }

    /// One flipped bit of T fails about 2 % of random encapsulations only; the column check
    /// finds it wherever it is.
    #[test]
    fn a_damaged_mceliece_encapsulation_key_is_refused_whichever_column() {
        for alg in [&CLASSIC_MCELIECE_348864, &CLASSIC_MCELIECE_6960119F] {
            let dk = alg.generate().expect("keygen");
            let ek = dk.encapsulation_key().as_bytes();
            assert!(alg.backend.check_key_pair(dk.expanded(), ek).is_ok());
            for at in [0, 1, ek.len() / 3, ek.len() / 2 + 7, ek.len() - 1] {
                for bit in [0, 5] {
                    let mut bad = ek.to_vec();
                    bad[at] ^= 1 << bit;
                    // The last byte of a 6960119 row (677 bytes) has 3 padding bits no column
                    // uses: bit 5 there is one of them.
                    if alg.backend.check_key_pair(dk.expanded(), &bad).is_ok() {
                        let padding = alg.name.contains("6960119") && bit == 5 && at % 677 == 676;
                        assert!(padding, "{} byte {at}", alg.name);
                        continue;
                    }
                    assert!(matches!(
                        alg.decapsulation_key_from_parts(dk.expanded(), &bad),
                        Err(Error::InvalidKey(_))
                    ));
                }
            }
        }
    }

    #[test]
    fn a_key_pair_that_does_not_belong_together_is_refused() {
        for alg in [&BIKE_L1, &EFRODOKEM_640_SHAKE, &CLASSIC_MCELIECE_348864] {
            let one = alg.generate().expect("keygen");
            let two = alg.generate().expect("keygen");
            assert!(matches!(
                alg.decapsulation_key_from_parts(
                    one.expanded(),
                    two.encapsulation_key().as_bytes()
                ),
                Err(Error::InvalidKey(_))
            ));
        }
    }
}
