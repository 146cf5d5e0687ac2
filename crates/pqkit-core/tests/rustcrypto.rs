//! pqkit's keys behind the RustCrypto `signature` traits: code generic over `Signer` and
//! `Verifier` signs and verifies with every signature algorithm of the catalogue, and
//! RustCrypto's own ML-DSA (ml-dsa 0.1) verifies what pqkit signs and the other way round.
//! (The same with a key held in a PKCS#11 token: pqkit-pkcs11's tests/token.rs.)

use std::convert::Infallible;

use pqkit_core::catalogue;
use pqkit_core::rustcrypto::{Signature, max_signature_size};
use signature::rand_core::{TryCryptoRng, TryRng};
use signature::{
    Keypair, MultipartSigner, MultipartVerifier, RandomizedSigner, SignatureEncoding, Signer,
    Verifier,
};

/// Third-party code: knows nothing of pqkit.
fn sign_generic<S: Signer<Sig>, Sig>(signer: &S, message: &[u8]) -> Sig {
    signer.sign(message)
}

fn verify_generic<V: Verifier<Sig>, Sig>(verifier: &V, message: &[u8], sig: &Sig) -> bool {
    verifier.verify(message, sig).is_ok()
}

/// A generator that repeats `seed`, byte after byte: the same seed, the same randomness.
struct Repeat(u8);

impl TryRng for Repeat {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(u32::from(self.0))
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(u64::from(self.0))
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        dst.fill(self.0);
        Ok(())
    }
}

impl TryCryptoRng for Repeat {}

/// A generator counting up from its first byte: each byte differs from the last (so halves
/// drawn in one call, such as ML-KEM's d ‖ z, differ).
struct Counting(u8);

impl TryRng for Counting {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(u32::from_le_bytes([0; 4].map(|_| self.next())))
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(u64::from_le_bytes([0; 8].map(|_| self.next())))
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        dst.iter_mut().for_each(|b| *b = self.next());
        Ok(())
    }
}

impl Counting {
    fn next(&mut self) -> u8 {
        let b = self.0;
        self.0 = self.0.wrapping_add(1);
        b
    }
}

impl TryCryptoRng for Counting {}

/// 64 bytes whose halves differ: d = 0..32, z = 32..64.
fn seed() -> [u8; 64] {
    let mut counting = Counting(0);
    core::array::from_fn(|_| counting.next())
}

/// A generator that always fails.
struct Broken;

#[derive(Debug)]
struct Dead;

impl std::fmt::Display for Dead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no entropy")
    }
}

impl std::error::Error for Dead {}

impl TryRng for Broken {
    type Error = Dead;
    fn try_next_u32(&mut self) -> Result<u32, Dead> {
        Err(Dead)
    }
    fn try_next_u64(&mut self) -> Result<u64, Dead> {
        Err(Dead)
    }
    fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Dead> {
        Err(Dead)
    }
}

impl TryCryptoRng for Broken {}

#[test]
fn every_catalogue_signature_signs_and_verifies_through_the_traits() {
    let message = b"a release, signed by code that only knows signature::Signer";
    for alg in catalogue::signatures() {
        let key = alg.generate().expect("generate");
        let vk = Keypair::verifying_key(&key);
        assert_eq!(vk, key.verifying_key(), "{}", alg.name);
        let sig: Signature = sign_generic(&key, message);
        assert!(
            sig.encoded_len() <= alg.signature_size && sig.encoded_len() > 0,
            "{}",
            alg.name
        );
        if !alg.signature_size_varies() {
            assert_eq!(sig.encoded_len(), alg.signature_size, "{}", alg.name);
        }
        assert!(verify_generic(&vk, message, &sig), "{}", alg.name);
        // The same bytes through the everyday API, and the other way.
        vk.verify(message, b"", sig.as_bytes()).expect(alg.name);
        let plain = key.sign(message, b"").expect("sign");
        let back = Signature::try_from(&plain[..]).expect("decode");
        assert!(verify_generic(&vk, message, &back), "{}", alg.name);
        // A flipped bit, another message: refused.
        let mut flipped = sig.to_vec();
        flipped[0] ^= 1;
        let flipped = Signature::try_from(&flipped[..]).expect("decode");
        assert!(!verify_generic(&vk, message, &flipped), "{}", alg.name);
        assert!(!verify_generic(&vk, b"another", &sig), "{}", alg.name);
        // Multipart: the parts as one message.
        let parts: [&[u8]; 3] = [&message[..10], &message[10..11], &message[11..]];
        let multi = key.try_multipart_sign(&parts).expect("multipart");
        assert!(verify_generic(&vk, message, &multi), "{}", alg.name);
        vk.multipart_verify(&parts, &sig).expect(alg.name);
        assert!(
            vk.multipart_verify(&parts[1..], &sig).is_err(),
            "{}",
            alg.name
        );
    }
}

#[test]
fn a_context_string_binds_the_signature() {
    for name in [
        "ML-DSA-65",
        "SLH-DSA-SHA2-128f",
        "MLDSA65-ECDSA-P256-SHA512",
    ] {
        let key = catalogue::signature(name)
            .and_then(|a| a.generate())
            .expect(name);
        let vk = key.verifying_key();
        let signer = key.with_context(b"firmware").expect("context");
        let sig = sign_generic(&signer, b"image");
        assert!(verify_generic(
            &vk.with_context(b"firmware").expect("context"),
            b"image",
            &sig
        ));
        assert!(
            !verify_generic(&vk, b"image", &sig),
            "{name}: empty context"
        );
        assert!(!verify_generic(
            &vk.with_context(b"firmwarf").expect("context"),
            b"image",
            &sig
        ));
        vk.verify(b"image", b"firmware", sig.as_bytes())
            .expect("the everyday API agrees");
        assert!(key.with_context(&[0; 256]).is_err(), "{name}: 256 bytes");
    }
    // Algorithms without a context string refuse one, and take the empty one.
    let ecdsa = catalogue::signature("ECDSA-P256")
        .and_then(|a| a.generate())
        .expect("ECDSA");
    assert!(ecdsa.with_context(b"x").is_err());
    assert!(ecdsa.with_context(b"").is_ok());
}

#[test]
fn randomized_signing_uses_the_callers_generator_where_the_standard_takes_randomness() {
    for name in [
        "ML-DSA-44",
        "SLH-DSA-SHAKE-128f",
        "MLDSA65-ECDSA-P256-SHA512",
    ] {
        let key = catalogue::signature(name)
            .and_then(|a| a.generate())
            .expect(name);
        let vk = key.verifying_key();
        let a = key.sign_with_rng(&mut Repeat(7), b"m");
        let b = key.sign_with_rng(&mut Repeat(7), b"m");
        let c = key.sign_with_rng(&mut Repeat(8), b"m");
        // Composite: the generator reaches the ML-DSA half (its first 3 309 bytes) only; the
        // ECDSA half draws its own nonce.
        let part = |s: &Signature| s.as_bytes()[..s.as_bytes().len().min(3309)].to_vec();
        assert_eq!(
            part(&a),
            part(&b),
            "{name}: the same randomness, the same signature"
        );
        assert_ne!(
            part(&a),
            part(&c),
            "{name}: other randomness, another signature"
        );
        assert!(verify_generic(&vk, b"m", &a) && verify_generic(&vk, b"m", &c));
        // A generator that fails is an error, not a signature without randomness.
        let e = key
            .try_sign_with_rng(&mut Broken, b"m")
            .expect_err("broken generator");
        let source = std::error::Error::source(&e).expect("the pqkit error");
        assert!(
            matches!(
                source.downcast_ref::<pqkit_core::Error>(),
                Some(pqkit_core::Error::Rng)
            ),
            "{name}: {source}"
        );
    }
    // Where a repeated generator would leak the key (Falcon's sampler, ECDSA's nonce) or the
    // algorithm takes none (Ed25519, RSA): the key's own randomness, the generator untouched.
    for name in ["Falcon-512", "ECDSA-P256", "Ed25519", "RSA-2048"] {
        let key = catalogue::signature(name)
            .and_then(|a| a.generate())
            .expect(name);
        let s = key.sign_with_rng(&mut Unused, b"m");
        assert!(verify_generic(&key.verifying_key(), b"m", &s), "{name}");
    }
}

/// A generator that must not be called.
struct Unused;

impl TryRng for Unused {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        unreachable!("the generator was used")
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        unreachable!("the generator was used")
    }
    fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Infallible> {
        unreachable!("the generator was used")
    }
}

impl TryCryptoRng for Unused {}

#[test]
fn signature_bytes_have_bounds() {
    assert!(Signature::try_from(&[][..]).is_err());
    let max = max_signature_size();
    assert_eq!(max, 49_856, "SLH-DSA-*-256f (FIPS 205 Table 2)");
    assert!(Signature::try_from(&vec![1u8; max][..]).is_ok());
    assert!(Signature::try_from(&vec![1u8; max + 1][..]).is_err());
    let s = Signature::try_from(&[0xab; 40][..]).expect("40 bytes");
    assert_eq!(format!("{s:?}"), "Signature(40 bytes: abababababababab…)");
    assert_eq!(s.to_bytes().as_ref(), &[0xab; 40][..]);
}

/// RustCrypto's ML-DSA verifies pqkit's signatures and pqkit verifies its, each through the
/// traits, and the same seed ξ gives both the same key (FIPS 204 Algorithm 6).
#[test]
fn rustcrypto_ml_dsa_interoperates_both_ways() {
    macro_rules! both_ways {
        ($name:expr, $p:ty) => {{
            let xi = [0x5a; 32];
            let ours = catalogue::signature($name)
                .and_then(|a| a.signing_key_from_seed(&xi))
                .expect($name);
            let theirs = ml_dsa::SigningKey::<$p>::from_seed(&xi.into());
            let their_vk = theirs.verifying_key();
            assert_eq!(
                their_vk.encode().as_slice(),
                ours.verifying_key().as_bytes(),
                "{}: the same seed, the same key",
                $name
            );
            // pqkit → ml-dsa.
            let sig: Signature = sign_generic(&ours, b"interop");
            let as_theirs = ml_dsa::Signature::<$p>::try_from(sig.as_bytes()).expect("decode");
            assert!(
                verify_generic(&their_vk, b"interop", &as_theirs),
                "{}",
                $name
            );
            // ml-dsa → pqkit.
            let theirs_sig: ml_dsa::Signature<$p> = sign_generic(&theirs, b"interop");
            let as_ours = Signature::try_from(theirs_sig.encode().as_slice()).expect("decode");
            assert!(
                verify_generic(&ours.verifying_key(), b"interop", &as_ours),
                "{}",
                $name
            );
            assert!(!verify_generic(
                &ours.verifying_key(),
                b"interop!",
                &as_ours
            ));
        }};
    }
    both_ways!("ML-DSA-44", ml_dsa::MlDsa44);
    both_ways!("ML-DSA-65", ml_dsa::MlDsa65);
    both_ways!("ML-DSA-87", ml_dsa::MlDsa87);
}

mod kem_traits {
    use ::kem::{
        Decapsulate, Decapsulator, Encapsulate, FromSeed, Generate, Kem, KeyExport, KeyInit,
        TryKeyInit,
    };
    use pqkit_core::rustcrypto::kem::{Hqc1, Hqc3, Hqc5, MlKem512, MlKem768, MlKem1024};

    use super::*;

    /// Third-party code: any KEM with infallible decapsulation.
    fn agree<K: Kem>(rng: &mut Repeat) -> bool
    where
        K::DecapsulationKey: Decapsulate,
    {
        let (dk, ek) = K::generate_keypair_from_rng(rng);
        let (ct, sent) = ek.encapsulate();
        dk.decapsulate(&ct) == sent
    }

    /// Through the traits only: sizes, seeds, checks, implicit rejection, and pqkit's own
    /// API agreeing byte for byte.
    fn one_set<K>(name: &str, ek_size: usize, ct_size: usize)
    where
        K: Kem + FromSeed<SeedSize = ::kem::consts::U64>,
        K::DecapsulationKey: Decapsulate + KeyInit + KeyExport + std::fmt::Debug,
    {
        assert!(agree::<K>(&mut Repeat(1)), "{name}");
        let alg = catalogue::kem(name).expect(name);
        let seed = seed();
        let (dk, ek) = K::from_seed(&seed.into());
        assert_eq!(dk.to_bytes().as_slice(), &seed[..], "{name}: the seed form");
        let ours = alg.generate_from_seed(&seed).expect("seed");
        assert_eq!(
            ek.to_bytes().as_slice(),
            ours.encapsulation_key().as_bytes()
        );
        assert_eq!(ek.to_bytes().len(), ek_size, "{name}");
        assert_eq!(dk.encapsulation_key(), &ek);
        // Generation draws d ‖ z from the generator, in that order: the same key.
        let again = K::DecapsulationKey::generate_from_rng(&mut Counting(0));
        assert_eq!(again.to_bytes().as_slice(), &seed[..]);
        assert_eq!(again.encapsulation_key(), &ek);
        // m from the caller's generator: what encapsulate_deterministic gives for that m.
        let (ct, ss) = ek.encapsulate_with_rng(&mut Repeat(9));
        assert_eq!(ct.len(), ct_size, "{name}");
        let (ct2, ss2) = ours
            .encapsulation_key()
            .encapsulate_deterministic(&[9u8; 32])
            .expect("deterministic");
        assert_eq!((ct.as_slice(), ss.as_slice()), (&ct2[..], ss2.as_bytes()));
        assert_eq!(dk.decapsulate(&ct), ss);
        // A modified ciphertext: the implicit-rejection key, not the shared key.
        let mut bad = ct.clone();
        bad[0] ^= 1;
        assert_ne!(dk.decapsulate(&bad), ss, "{name}");
        assert_eq!(
            dk.decapsulate(&bad).as_slice(),
            ours.decapsulate(&bad).expect("decapsulate").as_bytes()
        );
        // FIPS 203 §7.2: a coefficient of q or more is not an encapsulation key.
        let mut unchecked = ek.to_bytes();
        unchecked[0] = 0xff;
        unchecked[1] |= 0x0f;
        assert!(
            <K::EncapsulationKey as TryKeyInit>::new(&unchecked).is_err(),
            "{name}"
        );
        assert!(<K::EncapsulationKey as TryKeyInit>::new_from_slice(&unchecked[1..]).is_err());
        // No key material in Debug.
        let shown = format!("{dk:?}");
        assert!(
            !shown.contains("0001") && !shown.contains("20212223"),
            "{shown}"
        );
    }

    /// HQC through the traits: the 32-byte seed, m ‖ salt from the caller's generator, implicit
    /// rejection — pqkit's own API agreeing byte for byte.
    fn hqc_set<K>(name: &str, ek_size: usize, ct_size: usize, m_len: usize)
    where
        K: Kem + FromSeed<SeedSize = ::kem::consts::U32>,
        K::DecapsulationKey: Decapsulate + KeyInit + KeyExport + std::fmt::Debug,
    {
        assert!(agree::<K>(&mut Repeat(1)), "{name}");
        let alg = catalogue::kem(name).expect(name);
        assert_eq!(alg.encapsulation_randomness_size, m_len, "{name}");
        let seed: [u8; 32] = seed()[..32].try_into().expect("32 bytes");
        let (dk, ek) = K::from_seed(&seed.into());
        assert_eq!(dk.to_bytes().as_slice(), &seed[..], "{name}: the seed form");
        let ours = alg.generate_from_seed(&seed).expect("seed");
        assert_eq!(
            ek.to_bytes().as_slice(),
            ours.encapsulation_key().as_bytes()
        );
        assert_eq!(ek.to_bytes().len(), ek_size, "{name}");
        assert_eq!(dk.encapsulation_key(), &ek);
        let again = K::DecapsulationKey::generate_from_rng(&mut Counting(0));
        assert_eq!(again.to_bytes().as_slice(), &seed[..]);
        // m ‖ salt from the caller's generator: what encapsulate_deterministic gives for it.
        let (ct, ss) = ek.encapsulate_with_rng(&mut Repeat(9));
        assert_eq!(ct.len(), ct_size, "{name}");
        let (ct2, ss2) = ours
            .encapsulation_key()
            .encapsulate_deterministic(&vec![9u8; m_len])
            .expect("deterministic");
        assert_eq!((ct.as_slice(), ss.as_slice()), (&ct2[..], ss2.as_bytes()));
        assert_eq!(dk.decapsulate(&ct), ss);
        let (ct3, _) = ek.encapsulate_with_rng(&mut Repeat(10));
        assert_ne!(ct3, ct, "{name}: the generator decides the ciphertext");
        let mut bad = ct.clone();
        bad[0] ^= 1;
        assert_ne!(dk.decapsulate(&bad), ss, "{name}");
        assert_eq!(
            dk.decapsulate(&bad).as_slice(),
            ours.decapsulate(&bad).expect("decapsulate").as_bytes()
        );
        assert!(<K::EncapsulationKey as TryKeyInit>::new_from_slice(&ek.to_bytes()[1..]).is_err());
        let shown = format!("{dk:?}");
        assert!(
            !shown.contains("0001") && !shown.contains("1011"),
            "{shown}"
        );
    }

    #[test]
    fn hqc_through_the_kem_traits() {
        hqc_set::<Hqc1>("HQC-1", 2241, 4433, 32);
        hqc_set::<Hqc3>("HQC-3", 4514, 8978, 40);
        hqc_set::<Hqc5>("HQC-5", 7237, 14421, 48);
    }

    #[test]
    fn ml_kem_through_the_kem_traits() {
        one_set::<MlKem512>("ML-KEM-512", 800, 768);
        one_set::<MlKem768>("ML-KEM-768", 1184, 1088);
        one_set::<MlKem1024>("ML-KEM-1024", 1568, 1568);
    }

    /// RustCrypto's ML-KEM (ml-kem 0.3) and pqkit's, each through the traits: the same seed
    /// gives the same encapsulation key, and each decapsulates what the other encapsulated.
    fn interop<Ours, Theirs>(name: &str)
    where
        Ours: Kem + FromSeed<SeedSize = ::kem::consts::U64>,
        Theirs: Kem<CiphertextSize = Ours::CiphertextSize, SharedKeySize = Ours::SharedKeySize>
            + FromSeed<SeedSize = ::kem::consts::U64>,
        Ours::DecapsulationKey: Decapsulate,
        Theirs::DecapsulationKey: Decapsulate,
    {
        let seed = seed();
        let (our_dk, our_ek) = Ours::from_seed(&seed.into());
        let (their_dk, their_ek) = Theirs::from_seed(&seed.into());
        assert_eq!(
            our_ek.to_bytes().as_slice(),
            their_ek.to_bytes().as_slice(),
            "{name}: the same seed, the same key"
        );
        // Each loads the other's encapsulation key from its bytes, encapsulates, and the other
        // decapsulates.
        let ours_to_them =
            <Ours::EncapsulationKey as TryKeyInit>::new_from_slice(&their_ek.to_bytes())
                .expect("their key, loaded by pqkit");
        let theirs_to_us =
            <Theirs::EncapsulationKey as TryKeyInit>::new_from_slice(&our_ek.to_bytes())
                .expect("our key, loaded by ml-kem");
        let (ct, ss) = ours_to_them.encapsulate();
        assert_eq!(their_dk.decapsulate(&ct), ss, "{name}: pqkit to ml-kem");
        let (ct, ss) = theirs_to_us.encapsulate();
        assert_eq!(our_dk.decapsulate(&ct), ss, "{name}: ml-kem to pqkit");
        // Implicit rejection (FIPS 203 Algorithm 18 line 7: J(z ‖ c)) agrees too: z is the
        // seed's second half.
        let (mut ct, ss) = our_ek.encapsulate();
        ct[5] ^= 0x80;
        let (ours, theirs) = (our_dk.decapsulate(&ct), their_dk.decapsulate(&ct));
        assert_eq!(ours, theirs, "{name}: the same rejection key");
        assert_ne!(ours, ss, "{name}");
    }

    #[test]
    fn rustcrypto_ml_kem_interoperates_both_ways() {
        interop::<MlKem512, ml_kem::MlKem512>("ML-KEM-512");
        interop::<MlKem768, ml_kem::MlKem768>("ML-KEM-768");
        interop::<MlKem1024, ml_kem::MlKem1024>("ML-KEM-1024");
    }
}
