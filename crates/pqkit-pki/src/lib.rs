//! pqkit-pki: X.509 certificates, PKCS#8 private keys and PEM files for every catalogue
//! signature algorithm, on RustCrypto `der`/`spki`/`pkcs8`/`x509-cert`.
//!
//! - [`key`]: PKCS#8 in RFC 9881 seed form (default) or "both" form; SPKI.
//! - [`cert`]: issue X.509 v3 certificates (root CA, intermediate CA, TLS server, TLS client).
//! - [`csr`]: create, verify and issue from PKCS#10 certificate signing requests.
//! - [`cms`]: CMS SignedData (RFC 5652) signing and verification with every algorithm.
//! - [`describe`]: a certificate in words (what `pqkit x509 show` prints).
//! - [`path`]: RFC 5280 path validation (on rustls-webpki) with CRLs, names and purposes.
//! - [`stateful`]: HSS, XMSS and XMSS^MT keys and signatures in X.509 (RFC 9802);
//!   [`stateful_ca`]: a CA whose key is a pqkit-hbs state file.
//! - [`pem`], [`output`]: bounded input reading, PEM/DER, files written all-or-nothing.
//! - [`Pki`]: a root CA (and optionally an intermediate CA) with a server and a client
//!   certificate, written to / read from PEM.

pub mod cert;
pub mod cms;
pub mod csr;
pub mod describe;
mod error;
pub mod key;
pub mod output;
pub mod path;
pub mod pem;
mod rule;
pub mod rustcrypto;
mod signature;
pub mod stateful;
pub mod stateful_ca;

use std::path::{Path, PathBuf};

use pqkit_core::sig::{SignatureAlgorithm, SigningKey};
use zeroize::Zeroizing;

pub use error::Error;

use crate::cert::{CertRequest, Issuer, Profile};
use crate::key::KeyFormat;
use crate::output::{Overwrite, PendingOutput, Sensitivity};

/// A root CA, an optional intermediate CA, and a server and a client certificate issued by the
/// last CA; each level may use its own algorithm.
pub struct Pki {
    /// The root CA certificate (DER).
    pub ca_cert: Vec<u8>,
    /// The root CA signing key.
    pub ca_key: SigningKey,
    /// The intermediate CA certificate (DER) and key, when the leaves are issued by one.
    pub intermediate: Option<(Vec<u8>, SigningKey)>,
    /// The server certificate (DER), SAN localhost and 127.0.0.1.
    pub server_cert: Vec<u8>,
    /// The server signing key.
    pub server_key: SigningKey,
    /// The client certificate (DER), SAN localhost and 127.0.0.1.
    pub client_cert: Vec<u8>,
    /// The client signing key.
    pub client_key: SigningKey,
}

/// Where [`Pki::write`] puts each file inside its directory.
#[derive(Clone, Debug)]
pub struct PkiPaths {
    /// `ca.pem`.
    pub ca_cert: PathBuf,
    /// `ca.key`.
    pub ca_key: PathBuf,
    /// `intermediate.pem` (written only when the PKI has an intermediate CA).
    pub intermediate_cert: PathBuf,
    /// `intermediate.key`.
    pub intermediate_key: PathBuf,
    /// `server.pem`.
    pub server_cert: PathBuf,
    /// `server.key`.
    pub server_key: PathBuf,
    /// `client.pem`.
    pub client_cert: PathBuf,
    /// `client.key`.
    pub client_key: PathBuf,
}

impl PkiPaths {
    /// The file names inside `dir`.
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            ca_cert: dir.join("ca.pem"),
            ca_key: dir.join("ca.key"),
            intermediate_cert: dir.join("intermediate.pem"),
            intermediate_key: dir.join("intermediate.key"),
            server_cert: dir.join("server.pem"),
            server_key: dir.join("server.key"),
            client_cert: dir.join("client.pem"),
            client_key: dir.join("client.key"),
        }
    }
}

impl Pki {
    /// Generates fresh keys for `alg` and issues the three certificates.
    ///
    /// # Errors
    /// [`Error::Crypto`] or [`Error::Malformed`].
    pub fn generate(alg: &'static SignatureAlgorithm) -> Result<Self, Error> {
        Self::generate_chain(alg, None, alg)
    }

    /// Generates root CA → (intermediate CA →) server and client leaves, with `root`,
    /// `intermediate` and `leaf` as the algorithms of each level.
    ///
    /// # Errors
    /// [`Error::Crypto`] or [`Error::Malformed`].
    pub fn generate_chain(
        root: &'static SignatureAlgorithm,
        intermediate: Option<&'static SignatureAlgorithm>,
        leaf: &'static SignatureAlgorithm,
    ) -> Result<Self, Error> {
        let ca_key = root.generate()?;
        let ca_cert =
            cert::issue_self_signed(&CertRequest::new(Profile::RootCa, "pqkit root CA"), &ca_key)?;
        let intermediate = intermediate
            .map(|alg| -> Result<_, Error> {
                let key = alg.generate()?;
                let cert = cert::issue(
                    &CertRequest::new(Profile::IntermediateCa, "pqkit intermediate CA"),
                    &key.verifying_key(),
                    Issuer {
                        certificate: &ca_cert,
                        key: &ca_key,
                    },
                )?;
                Ok((cert, key))
            })
            .transpose()?;
        let issuer = match &intermediate {
            Some((certificate, key)) => Issuer { certificate, key },
            None => Issuer {
                certificate: &ca_cert,
                key: &ca_key,
            },
        };
        let server_key = leaf.generate()?;
        let server_cert = cert::issue(
            &CertRequest::new(Profile::Server, "localhost"),
            &server_key.verifying_key(),
            issuer,
        )?;
        let client_key = leaf.generate()?;
        let client_cert = cert::issue(
            &CertRequest::new(Profile::Client, "pqkit client"),
            &client_key.verifying_key(),
            issuer,
        )?;
        Ok(Self {
            ca_cert,
            ca_key,
            intermediate,
            server_cert,
            server_key,
            client_cert,
            client_key,
        })
    }

    /// A server chain (DER, leaf first) for another server key — one in a PKCS#11 token, say
    /// — issued like [`Pki::server_cert`] (SAN localhost and 127.0.0.1) by the same CA.
    ///
    /// # Errors
    /// As [`Pki::generate`].
    pub fn server_chain_for(
        &self,
        key: &pqkit_core::sig::VerifyingKey,
    ) -> Result<Vec<Vec<u8>>, Error> {
        let issuer = match &self.intermediate {
            Some((certificate, key)) => Issuer { certificate, key },
            None => Issuer {
                certificate: &self.ca_cert,
                key: &self.ca_key,
            },
        };
        let cert = cert::issue(&CertRequest::new(Profile::Server, "localhost"), key, issuer)?;
        Ok(self.chain(&cert))
    }

    /// The chain a server sends (DER, leaf first): its certificate and the intermediate CA's.
    pub fn server_chain(&self) -> Vec<Vec<u8>> {
        self.chain(&self.server_cert)
    }

    /// The chain a client sends (DER, leaf first).
    pub fn client_chain(&self) -> Vec<Vec<u8>> {
        self.chain(&self.client_cert)
    }

    fn chain(&self, leaf: &[u8]) -> Vec<Vec<u8>> {
        core::iter::once(leaf.to_vec())
            .chain(self.intermediate.iter().map(|(c, _)| c.clone()))
            .collect()
    }

    /// Writes the PEM files into `dir` (created if missing): CA, server and client
    /// certificates (the leaves with the intermediate CA after them) and keys, plus the
    /// intermediate CA's when there is one; keys get mode 0600. Every file is claimed before
    /// any is written, so with [`Overwrite::Refuse`] an existing file (a CA key from an earlier
    /// run) leaves the directory as it was.
    ///
    /// # Errors
    /// [`Error::Exists`], [`Error::Io`] or [`Error::Malformed`].
    pub fn write(&self, dir: &Path, overwrite: Overwrite) -> Result<PkiPaths, Error> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let paths = PkiPaths::in_dir(dir);
        let mut certs = vec![
            (&paths.ca_cert, vec![self.ca_cert.clone()]),
            (&paths.server_cert, self.server_chain()),
            (&paths.client_cert, self.client_chain()),
        ];
        let mut keys = vec![
            (&paths.ca_key, &self.ca_key),
            (&paths.server_key, &self.server_key),
            (&paths.client_key, &self.client_key),
        ];
        if let Some((cert, key)) = &self.intermediate {
            certs.insert(1, (&paths.intermediate_cert, vec![cert.clone()]));
            keys.insert(1, (&paths.intermediate_key, key));
        }
        let mut files: Vec<(PendingOutput, Zeroizing<String>)> = Vec::new();
        for (path, chain) in certs {
            let mut text = String::new();
            for der in &chain {
                text.push_str(&pem::encode(pem::CERTIFICATE, der)?);
            }
            let claim = PendingOutput::claim(path, Sensitivity::Public, overwrite)?;
            files.push((claim, Zeroizing::new(text)));
        }
        for (path, key) in keys {
            let der = key::signing_key_to_pkcs8(key, KeyFormat::Seed)?;
            let text = Zeroizing::new(pem::encode(pem::PRIVATE_KEY, &der)?);
            files.push((
                PendingOutput::claim(path, Sensitivity::Secret, overwrite)?,
                text,
            ));
        }
        // All the files or none: a full disk leaves no CA certificate without its key.
        let (claims, texts): (Vec<PendingOutput>, Vec<Zeroizing<String>>) =
            files.into_iter().unzip();
        output::commit_all(
            claims
                .into_iter()
                .zip(texts.iter().map(|t| t.as_bytes()))
                .collect(),
        )?;
        Ok(paths)
    }

    /// Reads the files [`Self::write`] wrote (the intermediate CA when its files exist).
    ///
    /// # Errors
    /// [`Error::Io`], [`Error::NoPem`], [`Error::Malformed`] or [`Error::Crypto`].
    pub fn read(dir: &Path) -> Result<Self, Error> {
        let p = PkiPaths::in_dir(dir);
        let first_cert = |path: &Path| -> Result<Vec<u8>, Error> {
            pem::read_certificates(path)?
                .into_iter()
                .next()
                .ok_or_else(|| Error::NoPem {
                    path: path.display().to_string(),
                    label: pem::CERTIFICATE,
                })
        };
        let key = |path: &Path| key::signing_key_from_pkcs8(&pem::read_private_key(path)?);
        let intermediate = if p.intermediate_cert.exists() {
            Some((first_cert(&p.intermediate_cert)?, key(&p.intermediate_key)?))
        } else {
            None
        };
        Ok(Self {
            ca_cert: first_cert(&p.ca_cert)?,
            ca_key: key(&p.ca_key)?,
            intermediate,
            server_cert: first_cert(&p.server_cert)?,
            server_key: key(&p.server_key)?,
            client_cert: first_cert(&p.client_cert)?,
            client_key: key(&p.client_key)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use pqkit_core::classical::ECDSA_P256_SHA256;
    use pqkit_core::ml_dsa::{ML_DSA_44, ML_DSA_87};

    use super::*;

    #[test]
    fn chain_verifies_and_a_flipped_bit_does_not() {
        for alg in [&ML_DSA_44, &ML_DSA_87, &ECDSA_P256_SHA256] {
            let pki = Pki::generate(alg).expect("pki");
            cert::verify_signed_by(&pki.ca_cert, &pki.ca_cert).expect("root self-signed");
            cert::verify_signed_by(&pki.server_cert, &pki.ca_cert).expect("server");
            cert::verify_signed_by(&pki.client_cert, &pki.ca_cert).expect("client");
            let mut bad = pki.server_cert.clone();
            let n = bad.len();
            bad[n - 10] ^= 0x01;
            assert!(
                cert::verify_signed_by(&bad, &pki.ca_cert).is_err(),
                "{}",
                alg.name
            );
            // The server was not signed by the client's key.
            assert!(cert::verify_signed_by(&pki.server_cert, &pki.client_cert).is_err());
            // Issuing with a key that is not the CA certificate's key is refused.
            let wrong = Issuer {
                certificate: &pki.ca_cert,
                key: &pki.client_key,
            };
            let request = CertRequest::new(Profile::Server, "x");
            assert!(cert::issue(&request, &pki.server_key.verifying_key(), wrong).is_err());
        }
    }

    // Every decoder against every truncation, per algorithm: tests/every_algorithm.rs.
    #[test]
    fn truncated_pem_yields_no_certificate() {
        let pki = Pki::generate(&ML_DSA_44).expect("pki");
        let cert = &pki.server_cert;
        let text = pem::encode(pem::CERTIFICATE, cert).expect("pem");
        for n in 0..text.trim_end().len() {
            // Truncated PEM: either no complete block or a decode error; never a panic.
            if let Ok(blocks) = pem::decode_all(&text[..n], pem::CERTIFICATE) {
                assert!(
                    blocks.is_empty(),
                    "truncated PEM yielded a certificate at {n}"
                );
            }
        }
        assert_eq!(
            pem::decode_all(&text, pem::CERTIFICATE).expect("pem"),
            vec![cert.clone()]
        );
    }

    #[test]
    fn write_then_read_gives_the_same_keys() {
        let dir = std::env::temp_dir().join(format!("pqkit-pki-test-{}", std::process::id()));
        let pki = Pki::generate(&ML_DSA_44).expect("pki");
        pki.write(&dir, Overwrite::Refuse).expect("write");
        assert!(matches!(
            pki.write(&dir, Overwrite::Refuse),
            Err(Error::Exists(_))
        ));
        let back = Pki::read(&dir).expect("read");
        assert_eq!(
            back.server_key.verifying_key(),
            pki.server_key.verifying_key()
        );
        assert_eq!(back.ca_cert, pki.ca_cert);
        std::fs::remove_dir_all(&dir).ok();
    }
}
