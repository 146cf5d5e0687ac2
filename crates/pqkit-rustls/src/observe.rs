//! Verifiers that record the signature scheme of the peer's CertificateVerify, so a report can
//! say which scheme each side actually signed with.

use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, Error, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

/// The scheme of the last CertificateVerify a verifier checked.
#[derive(Debug, Default)]
pub struct PeerScheme(Mutex<Option<SignatureScheme>>);

impl PeerScheme {
    /// The recorded scheme, if the peer sent a CertificateVerify.
    pub fn get(&self) -> Option<SignatureScheme> {
        self.0.lock().ok().and_then(|g| *g)
    }

    /// Forgets the recorded scheme (call before each connection when a configuration is reused).
    pub fn clear(&self) {
        if let Ok(mut g) = self.0.lock() {
            *g = None;
        }
    }

    fn set(&self, scheme: SignatureScheme) {
        if let Ok(mut g) = self.0.lock() {
            *g = Some(scheme);
        }
    }
}

/// The handshake-signature methods shared by both verifiers: delegate to `inner`, and record
/// the scheme of a TLS 1.3 CertificateVerify that verified.
macro_rules! signature_checks_that_record {
    () => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, Error> {
            self.inner.verify_tls12_signature(message, cert, dss)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, Error> {
            let valid = self.inner.verify_tls13_signature(message, cert, dss)?;
            self.seen.set(dss.scheme);
            Ok(valid)
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.inner.supported_verify_schemes()
        }
    };
}

/// Wraps a server-certificate verifier and records the server's CertificateVerify scheme.
#[derive(Debug)]
pub struct ObservingServerVerifier {
    inner: Arc<dyn ServerCertVerifier>,
    seen: Arc<PeerScheme>,
}

impl ObservingServerVerifier {
    /// Wraps `inner`; the scheme lands in the returned [`PeerScheme`].
    pub fn new(inner: Arc<dyn ServerCertVerifier>) -> (Self, Arc<PeerScheme>) {
        let seen = Arc::new(PeerScheme::default());
        (
            Self {
                inner,
                seen: seen.clone(),
            },
            seen,
        )
    }
}

impl ServerCertVerifier for ObservingServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    signature_checks_that_record!();
}

/// Wraps a client-certificate verifier and records the client's CertificateVerify scheme.
#[derive(Debug)]
pub struct ObservingClientVerifier {
    inner: Arc<dyn ClientCertVerifier>,
    seen: Arc<PeerScheme>,
}

impl ObservingClientVerifier {
    /// Wraps `inner`; the scheme lands in the returned [`PeerScheme`].
    pub fn new(inner: Arc<dyn ClientCertVerifier>) -> (Self, Arc<PeerScheme>) {
        let seen = Arc::new(PeerScheme::default());
        (
            Self {
                inner,
                seen: seen.clone(),
            },
            seen,
        )
    }
}

impl ClientCertVerifier for ObservingClientVerifier {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        self.inner
            .verify_client_cert(end_entity, intermediates, now)
    }

    signature_checks_that_record!();
}
