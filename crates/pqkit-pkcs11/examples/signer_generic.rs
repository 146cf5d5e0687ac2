//! Third-party code generic over RustCrypto's `signature::Signer` signs with pqkit keys:
//! ML-DSA-65 and SLH-DSA-SHA2-128f in memory and, given a `pkcs11:` URI (RFC 7512), a key in a
//! PKCS#11 token — the same function, unchanged.
//!
//! ```text
//! cargo run -p pqkit-pkcs11 --example signer_generic -- \
//!     ['pkcs11:token=main;object=release-key' [file:PIN-FILE]]
//! ```
//!
//! The module comes from the URI's `module-path` or `PQKIT_PKCS11_MODULE`; the PIN from the
//! second argument (`file:PATH` or `env:NAME`) or `PQKIT_PKCS11_PIN`.

use pqkit_core::rustcrypto::Signature;
use pqkit_pkcs11::client::{Options, TokenKey};
use signature::{Keypair, Signer, Verifier};

/// Knows nothing of pqkit: signs with any key that has a verifying key, and checks the
/// signature before handing it out.
fn sign_and_check<K, S>(key: &K, message: &[u8]) -> Result<S, signature::Error>
where
    K: Signer<S> + Keypair,
    K::VerifyingKey: Verifier<S>,
{
    let signature = key.try_sign(message)?;
    key.verifying_key().verify(message, &signature)?;
    Ok(signature)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let message = b"release 1.2.3";
    for name in ["ML-DSA-65", "SLH-DSA-SHA2-128f"] {
        let key = pqkit_core::catalogue::signature(name)?.generate()?;
        let signature: Signature = sign_and_check(&key, message)?;
        println!("{name} in memory: {} bytes", signature.as_bytes().len());
    }
    let mut args = std::env::args().skip(1);
    if let Some(uri) = args.next() {
        let options = Options {
            module: None,
            pin_source: args.next(),
        };
        let key = TokenKey::open(&uri, &options)?.into_signing_key()?;
        let signature: Signature = sign_and_check(&key, message)?;
        println!(
            "{} in the token: {} bytes",
            key.algorithm().name,
            signature.as_bytes().len()
        );
    }
    Ok(())
}
