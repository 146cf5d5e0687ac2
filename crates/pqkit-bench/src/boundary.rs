//! `bench boundary`: signing time versus message size, split at the key's security boundary
//! (the HSM paper's Table 2). Type A: the whole message enters the signer (pure ML-DSA,
//! SLH-DSA, Falcon, ECDSA over M). Type B: the message is hashed outside and only a digest or
//! μ crosses — ML-DSA external μ (FIPS 204 Algorithm 7 with μ from outside, 64 bytes),
//! HashML-DSA and HashSLH-DSA (FIPS 204 Algorithm 4, FIPS 205 Algorithm 23), and ECDSA over
//! H(M) (FIPS 186-5 §6.4.1) — and a detached CMS SignedData with signed attributes
//! (`pqkit_pki::cms::sign`, RFC 5652): only the signed attributes' DER crosses.

use pqkit_core::prehash::PreHash;
use pqkit_core::sig::{SignatureAlgorithm, SigningKey, SigningRandomness};
use serde::Serialize;

use crate::Progress;
use crate::timing::{Budget, measure};

/// The message sizes of the HSM paper: 1 KiB to 10 MiB, in bytes.
pub const DEFAULT_SIZES: [usize; 5] = [1 << 10, 10 << 10, 100 << 10, 1 << 20, 10 << 20];

/// How a message reaches the signer.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// The message enters the signer (type A).
    Pure,
    /// ML-DSA μ computed outside (type B).
    ExternalMu,
    /// The digest computed outside (type B): HashML-DSA / HashSLH-DSA, or ECDSA over H(M).
    PreHash(PreHash),
    /// A detached CMS SignedData with signed attributes (type B): the content's digest (the
    /// algorithm's CMS profile) and the attributes outside, one signature over the attributes'
    /// DER inside. Measured end to end (`pqkit_pki::cms::sign`); "inside" is one signature
    /// over a message of the attributes' length, "outside" the rest.
    Cms,
}

impl Mode {
    fn name(self, alg: &SignatureAlgorithm) -> String {
        match self {
            Self::Pure => "pure".to_owned(),
            Self::ExternalMu => "external μ".to_owned(),
            Self::Cms => "CMS SignedData, detached".to_owned(),
            Self::PreHash(h) => match alg.family.name() {
                "ML-DSA" => format!("HashML-DSA {}", h.name()),
                "SLH-DSA" => format!("HashSLH-DSA {}", h.name()),
                _ => format!("digest {}", h.name()),
            },
        }
    }
}

/// The algorithms and modes of the table.
pub fn default_cases() -> Vec<(&'static SignatureAlgorithm, Mode)> {
    use pqkit_core::classical::ECDSA_P256_SHA256;
    use pqkit_core::falcon::FALCON_512;
    use pqkit_core::ml_dsa::ML_DSA_65;
    use pqkit_core::slh_dsa::SLH_DSA_SHA2_128F;
    vec![
        (&ML_DSA_65, Mode::Pure),
        (&ML_DSA_65, Mode::ExternalMu),
        (&ML_DSA_65, Mode::PreHash(PreHash::Sha512)),
        (&ML_DSA_65, Mode::Cms),
        (&SLH_DSA_SHA2_128F, Mode::Pure),
        (&SLH_DSA_SHA2_128F, Mode::PreHash(PreHash::Sha256)),
        (&SLH_DSA_SHA2_128F, Mode::Cms),
        (&FALCON_512, Mode::Pure),
        (&ECDSA_P256_SHA256, Mode::Pure),
        (&ECDSA_P256_SHA256, Mode::PreHash(PreHash::Sha256)),
    ]
}

/// One (signer, algorithm, mode, message size) measurement.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Where the key is and how it is reached: "pqkit-core, in process", or a PKCS#11 token
    /// ("PKCS#11 <token> via <module>").
    pub signer: String,
    /// Canonical algorithm name.
    pub algorithm: &'static str,
    /// "pure", "external μ", "HashML-DSA SHA-512", …
    pub mode: String,
    /// "A" (the message enters the signer) or "B" (only a digest or μ does).
    pub boundary_type: &'static str,
    /// Message size, in bytes.
    pub message_bytes: usize,
    /// Bytes that cross into the signer, in bytes.
    pub bytes_into_signer: usize,
    /// Median time hashing outside the signer, in ns (0 for type A).
    pub outside_ns: f64,
    /// Median time inside the signer, in ns.
    pub inside_ns: f64,
    /// outside + inside, in ns.
    pub total_ns: f64,
}

/// The signer of the keys in process (pqkit-core).
pub const IN_PROCESS: &str = "pqkit-core, in process";

/// Gives the key of each algorithm for a signer; `Ok(None)` skips the algorithm (a token that
/// does not offer it).
pub type KeySource<'a> =
    dyn FnMut(&'static SignatureAlgorithm) -> Result<Option<SigningKey>, String> + 'a;

/// Runs the benchmark for `cases` × `sizes` with keys generated in process.
///
/// # Errors
/// A signing error (as text).
pub fn run(
    cases: &[(&'static SignatureAlgorithm, Mode)],
    sizes: &[usize],
    budget: Budget,
) -> Result<Vec<Row>, String> {
    run_with(
        IN_PROCESS,
        &mut |alg| alg.generate().map(Some).map_err(|e| e.to_string()),
        cases,
        sizes,
        budget,
    )
}

/// Runs the benchmark for `cases` × `sizes` with the keys of `keys` — e.g. keys in a PKCS#11
/// token, where type A sends the whole message across the token's interface and type B only
/// the digest or μ.
///
/// # Errors
/// A signing error (as text).
pub fn run_with(
    signer: &str,
    keys: &mut KeySource<'_>,
    cases: &[(&'static SignatureAlgorithm, Mode)],
    sizes: &[usize],
    budget: Budget,
) -> Result<Vec<Row>, String> {
    let e = |e: pqkit_core::Error| e.to_string();
    let progress = Progress::new("bench boundary", (cases.len() * sizes.len()) as u64);
    let mut rows = Vec::new();
    for &(alg, mode) in cases {
        let Some(key) = keys(alg)? else {
            eprintln!("bench boundary: {signer} offers no {}; skipped", alg.name);
            continue;
        };
        let vk = key.verifying_key();
        let r = SigningRandomness::Hedged;
        // One signature first: a token (or the RPC before it) may not offer this mode's
        // mechanism; that case is skipped and said so, not measured.
        let probe = match mode {
            Mode::Pure => key.sign_with(b"probe", &[], r).map(drop),
            Mode::ExternalMu => vk
                .external_mu(b"probe", &[])
                .and_then(|mu| key.sign_mu(&mu, r))
                .map(drop),
            Mode::PreHash(hash) => key
                .sign_prehashed(hash, &hash.digest(b"probe"), &[], r)
                .map(drop),
            Mode::Cms => key.sign_with(b"probe", &[], r).map(drop),
        };
        if let Err(err) = probe {
            if signer == IN_PROCESS {
                return Err(e(err));
            }
            eprintln!(
                "bench boundary: {signer} cannot sign {} {}: {err}; skipped",
                alg.name,
                mode.name(alg)
            );
            continue;
        }
        // A self-signed code-signing certificate for the key: a CMS signer needs one.
        let certificate = match mode {
            Mode::Cms => Some(
                pqkit_pki::cert::issue_self_signed(
                    &pqkit_pki::cert::CertRequest::new(
                        pqkit_pki::cert::Profile::CodeSigning,
                        "bench boundary",
                    ),
                    &key,
                )
                .map_err(|e| e.to_string())?,
            ),
            _ => None,
        };
        for &size in sizes {
            progress.step(&format!("{} {} {size} B", alg.name, mode.name(alg)));
            let message: Vec<u8> = (0..size)
                .map(|i| u8::try_from(i % 251).unwrap_or(0))
                .collect();
            let (outside, inside, crossing) = match mode {
                Mode::Pure => {
                    let inside = measure(budget, || key.sign_with(&message, &[], r).map(drop));
                    (None, inside.map_err(e)?, size)
                }
                Mode::ExternalMu => {
                    let outside = measure(budget, || vk.external_mu(&message, &[]).map(drop));
                    let mu = vk.external_mu(&message, &[]).map_err(e)?;
                    let inside = measure(budget, || key.sign_mu(&mu, r).map(drop));
                    (Some(outside.map_err(e)?), inside.map_err(e)?, mu.len())
                }
                Mode::PreHash(hash) => {
                    let outside = measure::<pqkit_core::Error>(budget, || {
                        std::hint::black_box(hash.digest(&message));
                        Ok(())
                    });
                    let digest = hash.digest(&message);
                    let inside = measure(budget, || {
                        key.sign_prehashed(hash, &digest, &[], r).map(drop)
                    });
                    (Some(outside.map_err(e)?), inside.map_err(e)?, digest.len())
                }
                Mode::Cms => {
                    let certificate = certificate.clone().unwrap_or_default();
                    let options = pqkit_pki::cms::SignOptions {
                        attached: false,
                        ..pqkit_pki::cms::SignOptions::default()
                    };
                    let sign = || {
                        let mut signers = [pqkit_pki::cms::Signer {
                            certificate: certificate.clone(),
                            key: pqkit_pki::cms::SignerKey::Key(&key),
                            digest: None,
                        }];
                        pqkit_pki::cms::sign(&mut signers, &mut &message[..], &options)
                    };
                    let der = sign().map_err(|e| e.to_string())?;
                    let attributes = pqkit_pki::cms::describe(&der)
                        .ok()
                        .and_then(|d| d.signers.first().and_then(|s| s.signed_attributes_bytes))
                        .unwrap_or(0);
                    let total = measure(budget, || sign().map(drop)).map_err(|e| e.to_string())?;
                    let attrs = vec![0x31u8; attributes];
                    let inside =
                        measure(budget, || key.sign_with(&attrs, &[], r).map(drop)).map_err(e)?;
                    let total_ns = total.median_ns;
                    let mut outside = total;
                    outside.median_ns = (total_ns - inside.median_ns).max(0.0);
                    (Some(outside), inside, attributes)
                }
            };
            let outside_ns = outside.map_or(0.0, |t| t.median_ns);
            rows.push(Row {
                signer: signer.to_owned(),
                algorithm: alg.name,
                mode: mode.name(alg),
                boundary_type: if matches!(mode, Mode::Pure) { "A" } else { "B" },
                message_bytes: size,
                bytes_into_signer: crossing,
                outside_ns,
                inside_ns: inside.median_ns,
                total_ns: outside_ns + inside.median_ns,
            });
        }
    }
    progress.finish();
    Ok(rows)
}
