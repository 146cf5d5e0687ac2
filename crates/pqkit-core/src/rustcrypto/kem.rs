//! ML-KEM (FIPS 203) behind RustCrypto's `kem` 0.3 traits (the version RustCrypto's `ml-kem`
//! 0.3 implements): one type per parameter set, its sizes in the types, so that code written
//! for any [`Kem`] — a generic HPKE or key-agreement layer — runs on pqkit's ML-KEM.
//!
//! | [`Kem`] | parameter set | encapsulation key | ciphertext | shared key | seed |
//! |---|---|---|---|---|---|
//! | [`MlKem512`] | ML-KEM-512 | 800 bytes | 768 bytes | 32 bytes | 64 bytes |
//! | [`MlKem768`] | ML-KEM-768 | 1 184 bytes | 1 088 bytes | 32 bytes | 64 bytes |
//! | [`MlKem1024`] | ML-KEM-1024 | 1 568 bytes | 1 568 bytes | 32 bytes | 64 bytes |
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
use hybrid_array::sizes::{U1088, U1184, U1568};
use signature::rand_core::{CryptoRng, TryCryptoRng};
use zeroize::Zeroizing;

use crate::kem::{
    DecapsulationKey as AnyDecapsulationKey, EncapsulationKey as AnyEncapsulationKey,
};
use crate::ml_kem::{ML_KEM_512, ML_KEM_768, ML_KEM_1024};

/// Bytes of a key or ciphertext whose size its construction fixed (by its parameter set), as
/// an array of that size.
fn array<N: ArraySize>(bytes: &[u8]) -> Array<u8, N> {
    Array::try_from(bytes).expect("a size fixed by the parameter set")
}

macro_rules! ml_kem {
    ($kem:ident, $ek:ident, $dk:ident, $alg:expr, $name:literal, $ek_size:ty, $ct_size:ty) => {
        #[doc = concat!($name, " (FIPS 203 Table 2) as a RustCrypto [`Kem`] (the module docs).")]
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
                let mut m = Zeroizing::new([0u8; 32]);
                rng.fill_bytes(&mut *m);
                // m and the key are checked sizes: ML-KEM.Encaps_internal cannot fail.
                let (ct, ss) = self
                    .0
                    .encapsulate_deterministic(&*m)
                    .expect("ML-KEM encapsulation of a checked key");
                (array(&ct), array(ss.as_bytes()))
            }
        }

        #[doc = concat!("A ", $name, " decapsulation key from its seed d ‖ z; zeroized on drop.")]
        pub struct $dk {
            /// Made from a seed, which it keeps (zeroized on drop).
            inner: AnyDecapsulationKey,
            ek: $ek,
        }

        impl $dk {
            fn from_seed_bytes(seed: &[u8; 64]) -> Self {
                // 64 bytes: ML-KEM.KeyGen_internal cannot fail.
                let inner = $alg
                    .generate_from_seed(seed)
                    .expect("ML-KEM key generation from a 64-byte seed");
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
            type KeySize = U64;
        }

        impl KeyInit for $dk {
            fn new(seed: &Key<Self>) -> Self {
                let mut bytes = Zeroizing::new([0u8; 64]);
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
                let mut seed = Zeroizing::new([0u8; 64]);
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
                    .expect("ML-KEM decapsulation of a sized ciphertext");
                array(ss.as_bytes())
            }
        }
    };
}

ml_kem!(
    MlKem512,
    EncapsulationKey512,
    DecapsulationKey512,
    ML_KEM_512,
    "ML-KEM-512",
    U800,
    U768
);
ml_kem!(
    MlKem768,
    EncapsulationKey768,
    DecapsulationKey768,
    ML_KEM_768,
    "ML-KEM-768",
    U1184,
    U1088
);
ml_kem!(
    MlKem1024,
    EncapsulationKey1024,
    DecapsulationKey1024,
    ML_KEM_1024,
    "ML-KEM-1024",
    U1568,
    U1568
);
