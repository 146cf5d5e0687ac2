//! ML-KEM (FIPS 203) and HQC behind RustCrypto's `kem` 0.3 traits (the version RustCrypto's
//! `ml-kem` 0.3 implements): one type per parameter set, its sizes in the types, so that code
//! written for any [`Kem`] — a generic HPKE or key-agreement layer — runs on pqkit's KEMs.
//!
//! | [`Kem`] | parameter set | encapsulation key | ciphertext | shared key | seed |
//! |---|---|---|---|---|---|
//! | [`MlKem512`] | ML-KEM-512 | 800 bytes | 768 bytes | 32 bytes | 64 bytes |
//! | [`MlKem768`] | ML-KEM-768 | 1 184 bytes | 1 088 bytes | 32 bytes | 64 bytes |
//! | [`MlKem1024`] | ML-KEM-1024 | 1 568 bytes | 1 568 bytes | 32 bytes | 64 bytes |
//! | [`Hqc1`] | HQC-1 | 2 241 bytes | 4 433 bytes | 32 bytes | 32 bytes |
//! | [`Hqc3`] | HQC-3 | 4 514 bytes | 8 978 bytes | 32 bytes | 32 bytes |
//! | [`Hqc5`] | HQC-5 | 7 237 bytes | 14 421 bytes | 32 bytes | 32 bytes |
//!
//! - Key generation ([`Generate`], [`Kem::generate_keypair_from_rng`]) draws the seed d ‖ z
//!   (FIPS 203 Algorithm 19 lines 1–2) from the generator; [`KeyInit`] and [`KeyExport`] of a
//!   decapsulation key are that seed (the form RFC 9935's PKCS#8 `seed` holds), so
//!   [`kem::FromSeed`] is FIPS 203 Algorithm 16, ML-KEM.KeyGen_internal.
//! - An encapsulation key comes from its bytes through [`TryKeyInit`], with FIPS 203 §7.2's
//!   input check (every coefficient below q), [`InvalidKey`] otherwise.
//! - [`Encapsulate::encapsulate_with_rng`] draws m (32 bytes, FIPS 203 Algorithm 20 line 1)
//!   from the caller's generator — who repeats m repeats the shared key, so the trait asks
//!   for a [`CryptoRng`]; [`Encapsulate::encapsulate`] uses the system's. Decapsulation
//!   (FIPS 203 Algorithm 21) never fails: a modified ciphertext gives the implicit-rejection
//!   key.
//!
//! HQC (specification 2025-08-22) the same way: the 32-byte seed is the key's [`KeyInit`]
//! form, one encapsulation draws m ‖ salt (32, 40 or 48 bytes) from the caller's generator,
//! and decapsulation rejects implicitly. The other KEMs of the catalogue have no such types:
//! BIKE, eFrodoKEM and Classic McEliece come from liboqs, which draws its randomness itself —
//! [`Generate`] and [`Encapsulate::encapsulate_with_rng`] would ignore the caller's generator.
//!
//! Decapsulation keys zeroize on drop and print no key material. What the traits hand out as
//! plain arrays is the caller's to wipe: a decapsulation key's [`KeyExport::to_bytes`] (the
//! seed) and every [`SharedKey`] — hold them in `zeroize::Zeroizing`.

use core::fmt;

use ::kem::common::array::{Array, ArraySize};
use ::kem::consts::{U32, U64, U768, U800};
use ::kem::{
    Ciphertext, Decapsulate, Decapsulator, Encapsulate, Generate, InvalidKey, Kem, Key, KeyExport,
    KeyInit, KeySizeUser, SharedKey, TryKeyInit,
};
use hybrid_array::sizes::{U1088, U1184, U1568, U2241, U4433, U4514, U7237, U8978, U14421};
use signature::rand_core::{CryptoRng, TryCryptoRng};
use zeroize::Zeroizing;

use crate::hqc::{HQC_1, HQC_3, HQC_5};
use crate::kem::{
    DecapsulationKey as AnyDecapsulationKey, EncapsulationKey as AnyEncapsulationKey,
};
use crate::ml_kem::{ML_KEM_512, ML_KEM_768, ML_KEM_1024};

/// Bytes of a key or ciphertext whose size its construction fixed (by its parameter set), as
/// an array of that size.
fn array<N: ArraySize>(bytes: &[u8]) -> Array<u8, N> {
    Array::try_from(bytes).expect("a size fixed by the parameter set")
}

/// One KEM parameter set as a RustCrypto [`Kem`]: the type, its two key types and the trait
/// impls. `$seed`/`$seed_len`: the seed the decapsulation key is made from (its [`KeyInit`]
/// form); `$m_len`: the bytes of one encapsulation's randomness, from the caller's generator.
macro_rules! seeded_kem {
    (
        $kem:ident, $ek:ident, $dk:ident, $alg:expr, $name:literal, $source:literal,
        $ek_size:ty, $ct_size:ty, $seed:ty, $seed_len:literal, $m_len:literal
    ) => {
        #[doc = concat!($name, " (", $source, ") as a RustCrypto [`Kem`] (the module docs).")]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $kem;

        impl Kem for $kem {
            type DecapsulationKey = $dk;
            type EncapsulationKey = $ek;
            type SharedKeySize = U32;
            type CiphertextSize = $ct_size;
        }

        #[doc = concat!("A checked ", $name, " encapsulation key.")]
        #[derive(Clone)]
        pub struct $ek(AnyEncapsulationKey);

        impl PartialEq for $ek {
            fn eq(&self, other: &Self) -> bool {
                self.0.as_bytes() == other.0.as_bytes()
            }
        }

        impl Eq for $ek {}

        impl $ek {
            /// pqkit's encapsulation key.
            pub fn as_pqkit(&self) -> &AnyEncapsulationKey {
                &self.0
            }
        }

        impl fmt::Debug for $ek {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let head: String = self.0.as_bytes()[..8]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                write!(f, "{}({head}…)", stringify!($ek))
            }
        }

        impl KeySizeUser for $ek {
            type KeySize = $ek_size;
        }

        impl TryKeyInit for $ek {
            fn new(key: &Key<Self>) -> Result<Self, InvalidKey> {
                $alg.encapsulation_key(key.as_slice())
                    .map(Self)
                    .map_err(|_| InvalidKey)
            }
        }

        impl KeyExport for $ek {
            fn to_bytes(&self) -> Key<Self> {
                array(self.0.as_bytes())
            }
        }

        impl Encapsulate for $ek {
            type Kem = $kem;

            fn encapsulate_with_rng<R: CryptoRng + ?Sized>(
                &self,
                rng: &mut R,
            ) -> (Ciphertext<$kem>, SharedKey<$kem>) {
                let mut m = Zeroizing::new([0u8; $m_len]);
                rng.fill_bytes(&mut *m);
                // m and the key are checked sizes: the derandomized encapsulation cannot fail.
                let (ct, ss) = self
                    .0
                    .encapsulate_deterministic(&*m)
                    .expect("encapsulation of a checked key");
                (array(&ct), array(ss.as_bytes()))
            }
        }

        #[doc = concat!("A ", $name, " decapsulation key from its seed; zeroized on drop.")]
        pub struct $dk {
            /// Made from a seed, which it keeps (zeroized on drop).
            inner: AnyDecapsulationKey,
            ek: $ek,
        }

        impl $dk {
            fn from_seed_bytes(seed: &[u8; $seed_len]) -> Self {
                // A seed of its size: key generation cannot fail.
                let inner = $alg
                    .generate_from_seed(seed)
                    .expect("key generation from a seed of its size");
                let ek = $ek(inner.encapsulation_key().clone());
                Self { inner, ek }
            }

            /// pqkit's decapsulation key.
            pub fn as_pqkit(&self) -> &AnyDecapsulationKey {
                &self.inner
            }
        }

        impl fmt::Debug for $dk {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($dk)).finish_non_exhaustive()
            }
        }

        impl KeySizeUser for $dk {
            type KeySize = $seed;
        }

        impl KeyInit for $dk {
            fn new(seed: &Key<Self>) -> Self {
                let mut bytes = Zeroizing::new([0u8; $seed_len]);
                bytes.copy_from_slice(seed.as_slice());
                Self::from_seed_bytes(&bytes)
            }
        }

        impl KeyExport for $dk {
            fn to_bytes(&self) -> Key<Self> {
                array(self.inner.seed().unwrap_or_default())
            }
        }

        impl Generate for $dk {
            fn try_generate_from_rng<R: TryCryptoRng + ?Sized>(
                rng: &mut R,
            ) -> Result<Self, R::Error> {
                let mut seed = Zeroizing::new([0u8; $seed_len]);
                rng.try_fill_bytes(&mut *seed)?;
                Ok(Self::from_seed_bytes(&seed))
            }
        }

        impl Decapsulator for $dk {
            type Kem = $kem;

            fn encapsulation_key(&self) -> &$ek {
                &self.ek
            }
        }

        impl Decapsulate for $dk {
            fn decapsulate(&self, ct: &Ciphertext<$kem>) -> SharedKey<$kem> {
                // A ciphertext of the right size: decapsulation cannot fail (a modified one
                // gives the implicit-rejection key).
                let ss = self
                    .inner
                    .decapsulate(ct.as_slice())
                    .expect("decapsulation of a sized ciphertext");
                array(ss.as_bytes())
            }
        }
    };
}

seeded_kem!(
    MlKem512,
    EncapsulationKey512,
    DecapsulationKey512,
    ML_KEM_512,
    "ML-KEM-512",
    "FIPS 203 Table 2",
    U800,
    U768,
    U64,
    64,
    32
);
seeded_kem!(
    MlKem768,
    EncapsulationKey768,
    DecapsulationKey768,
    ML_KEM_768,
    "ML-KEM-768",
    "FIPS 203 Table 2",
    U1184,
    U1088,
    U64,
    64,
    32
);
seeded_kem!(
    MlKem1024,
    EncapsulationKey1024,
    DecapsulationKey1024,
    ML_KEM_1024,
    "ML-KEM-1024",
    "FIPS 203 Table 2",
    U1568,
    U1568,
    U64,
    64,
    32
);
seeded_kem!(
    Hqc1,
    HqcEncapsulationKey1,
    HqcDecapsulationKey1,
    HQC_1,
    "HQC-1",
    "HQC specification 2025-08-22",
    U2241,
    U4433,
    U32,
    32,
    32
);
seeded_kem!(
    Hqc3,
    HqcEncapsulationKey3,
    HqcDecapsulationKey3,
    HQC_3,
    "HQC-3",
    "HQC specification 2025-08-22",
    U4514,
    U8978,
    U32,
    32,
    40
);
seeded_kem!(
    Hqc5,
    HqcEncapsulationKey5,
    HqcDecapsulationKey5,
    HQC_5,
    "HQC-5",
    "HQC specification 2025-08-22",
    U7237,
    U14421,
    U32,
    32,
    48
);
