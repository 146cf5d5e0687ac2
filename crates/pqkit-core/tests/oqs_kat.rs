//! Known-answer tests of the KEMs pqkit takes from liboqs (BIKE, FrodoKEM, Classic McEliece),
//! run through pqkit's own API.
//!
//! liboqs 0.13.0's `tests/kat_kem.c` regenerates the submitters' NIST KAT files
//! (`PQCkemKAT_*.rsp`): the NIST AES-256 CTR DRBG (`rng.c` of the NIST submission package),
//! seeded with the bytes 0..47, gives each count's 48-byte seed; the DRBG reseeded with that
//! seed gives the randomness of key generation and encapsulation. The SHA-256 of the whole
//! response file is kept in liboqs's `tests/KATs/kem/kats.json` ("all": 100 counts, 10 for
//! Classic McEliece). This test writes the same file byte for byte — liboqs draws its
//! randomness from the DRBG below through `OQS_randombytes_custom_algorithm` — and compares
//! digests, so every key, ciphertext and shared secret of every count is checked.
//!
//! The RNG hook is process-wide: this binary holds this one test.

#![cfg(feature = "liboqs")]
// The one `unsafe` of pqkit-core: installing liboqs's RNG callback and filling its buffer.
#![allow(unsafe_code)]

mod kem_kat;

use std::sync::Mutex;

use aes::Aes256;
use aes::cipher::{BlockCipherEncrypt, KeyInit};
use kem_kat::KatFile;
use pqkit_core::catalogue;

/// SHA-256 of the regenerated response files: liboqs 0.13.0, `tests/KATs/kem/kats.json`, "all"
/// (liboqs 0.13 names eFrodoKEM "FrodoKEM"; liboqs 0.16.0 lists the same digests under
/// "eFrodoKEM-*").
const DIGESTS: [(&str, &str); 19] = [
    (
        "BIKE-L1",
        "c1021bcf36875170f5102b3d3e31282ef2176c9306d4992ffd43bb1b09de48d1",
    ),
    (
        "BIKE-L3",
        "2b331fa24654efcd91b58df082e91f62835a378bd5fd92af5e0811445abbb8ca",
    ),
    (
        "BIKE-L5",
        "a94692ee958a57c0de7f098a5b7d982abb590a9e613d221836558df0e9e36e2a",
    ),
    (
        "eFrodoKEM-640-AES",
        "a88a05614f49b24b77f79fbf1c776fc2ebc7bd402e9e31e1276e169ff97ceec2",
    ),
    (
        "eFrodoKEM-640-SHAKE",
        "f8740e86aaa39773c435b7e8059f067b066b7393899e5c5e2a4ed778b45ed6a9",
    ),
    (
        "eFrodoKEM-976-AES",
        "b793bf980f0c44dfd5721d95f432d5addbeaa92913c97b0087310d2581567ee4",
    ),
    (
        "eFrodoKEM-976-SHAKE",
        "f737ac3f0fb09898b0f2c026581ecce1e15bd277e5b00fe1ecee7f334fa98b26",
    ),
    (
        "eFrodoKEM-1344-AES",
        "f9e9bcea7328c0bd66f60e152373809f5284538d8223c48ed37bf4c34d6c3e8d",
    ),
    (
        "eFrodoKEM-1344-SHAKE",
        "c591a6703793843fd900b5395e658ce2bfa22cae1c8333f3281a0bf06af59c94",
    ),
    (
        "Classic-McEliece-348864",
        "6dcd5dd585437593a5abbaad23ce560b1651909f2868085234a27ada5034be8e",
    ),
    (
        "Classic-McEliece-348864f",
        "4a3d89647e1f23e463eb7cebe8b663d57026c310070068b3600de9ee7084e580",
    ),
    (
        "Classic-McEliece-460896",
        "9aa66c72b1e53ae09faf8f8d3e91d9bb94fddc9b0f6e2f93d6626489eb74186a",
    ),
    (
        "Classic-McEliece-460896f",
        "fff312c1d39db961fc8f640804646b96a6dbe57a2f19febc5ba3c25bab08aee7",
    ),
    (
        "Classic-McEliece-6688128",
        "e770433a0594f0a3ec95892370eadce1ab6b298b5ebbf5c8b2ff475f8f6406f6",
    ),
    (
        "Classic-McEliece-6688128f",
        "16299fe24fadd0094dee10eaecb0003aa844728e39e641d36cc17a4c8440e2ae",
    ),
    (
        "Classic-McEliece-6960119",
        "f8749bfcbdc9750879a76585740a9031f5ac610caf092a541c9eb4ecd49f510c",
    ),
    (
        "Classic-McEliece-6960119f",
        "b7e07552276ba64133c8ccb0bac8169768c927a5ec0613aca7d5c62c821d8935",
    ),
    (
        "Classic-McEliece-8192128",
        "8c6a912012c40331c1ba27509a08e725be5b25e860dcdaef75bfaa4069d8ac9f",
    ),
    (
        "Classic-McEliece-8192128f",
        "0d0088952265b2b28db8a47d13218b741ba265f10d80e25ed594fa6958ee29e5",
    ),
];

/// The NIST KAT DRBG: AES-256 in counter mode without a derivation function (the NIST PQC
/// submission package's `rng.c`, after SP 800-90A §10.2.1).
#[derive(Clone)]
struct Drbg {
    key: [u8; 32],
    v: [u8; 16],
}

impl Drbg {
    /// `randombytes_init(entropy, NULL, 256)`.
    fn new(entropy: &[u8; 48]) -> Self {
        let mut d = Self {
            key: [0; 32],
            v: [0; 16],
        };
        d.update(Some(entropy));
        d
    }

    fn next_block(&mut self) -> [u8; 16] {
        // V = V + 1 as a 128-bit big-endian counter.
        self.v = (u128::from_be_bytes(self.v).wrapping_add(1)).to_be_bytes();
        let mut block = self.v.into();
        Aes256::new(&self.key.into()).encrypt_block(&mut block);
        block.into()
    }

    /// `AES256_CTR_DRBG_Update`.
    fn update(&mut self, provided: Option<&[u8; 48]>) {
        let mut temp = [0u8; 48];
        for chunk in temp.chunks_exact_mut(16) {
            chunk.copy_from_slice(&self.next_block());
        }
        if let Some(p) = provided {
            temp.iter_mut().zip(p).for_each(|(t, p)| *t ^= p);
        }
        self.key.copy_from_slice(&temp[..32]);
        self.v.copy_from_slice(&temp[32..]);
    }

    /// `randombytes`.
    fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(16) {
            let block = self.next_block();
            chunk.copy_from_slice(&block[..chunk.len()]);
        }
        self.update(None);
    }
}

/// The DRBG liboqs draws from while the test runs.
static RNG: Mutex<Option<Drbg>> = Mutex::new(None);

/// liboqs's `randombytes` while the test runs.
extern "C" fn randombytes(out: *mut u8, len: usize) {
    // SAFETY: liboqs calls its RNG with a writable buffer of `len` bytes that nothing else
    // touches during the call (`OQS_randombytes(uint8_t *random_array, size_t bytes)`).
    let out = unsafe { std::slice::from_raw_parts_mut(out, len) };
    RNG.lock()
        .expect("RNG lock")
        .as_mut()
        .expect("the test seeds the DRBG before liboqs runs")
        .fill(out);
}

/// `kem_kat(method_name, all = true)` of liboqs's `tests/kat_kem.c`, through pqkit-core; the
/// file's SHA-256.
fn response_file_digest(name: &str) -> String {
    let alg = catalogue::kem(name).expect("in the catalogue");
    let counts = if name.starts_with("Classic-McEliece") {
        10
    } else {
        100
    };
    let mut outer = Drbg::new(&core::array::from_fn(|i| u8::try_from(i).expect("< 48")));
    let mut file = KatFile::default();
    for count in 0..counts {
        let mut seed = [0u8; 48];
        outer.fill(&mut seed);
        *RNG.lock().expect("RNG lock") = Some(Drbg::new(&seed));
        let dk = alg.generate().expect("keygen");
        let (ct, ss) = dk.encapsulation_key().encapsulate().expect("encapsulate");
        file.record((count, counts), &seed, &dk, (&ct, &ss));
    }
    file.sha256_hex()
}

#[test]
fn liboqs_kems_reproduce_the_submitters_kat_files() {
    // SAFETY: the callback has the signature liboqs expects (`void (*)(uint8_t *, size_t)`)
    // and lives for the whole process; this binary runs no other liboqs code concurrently.
    unsafe { oqs_sys::rand::OQS_randombytes_custom_algorithm(Some(randombytes)) };
    for (name, want) in DIGESTS {
        assert_eq!(
            response_file_digest(name),
            want,
            "{name}: the KAT response file differs"
        );
        println!("{name}: KAT digest matches liboqs 0.13.0");
    }
    let liboqs_kems = catalogue::kems()
        .iter()
        .filter(|k| k.backend_name().starts_with("liboqs"))
        .count();
    assert_eq!(liboqs_kems, DIGESTS.len(), "every liboqs KEM has its KAT");
}
