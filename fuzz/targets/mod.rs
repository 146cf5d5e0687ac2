//! The fuzz targets: each takes arbitrary bytes and drives one of pqkit's decoders or
//! protocol endpoints with them. A target returns normally for every input; a panic, a hang or
//! a crash is a finding.
//!
//! Used by the AFL++ harness (`fuzz/src/main.rs`, one binary, the target named on its command
//! line) and by the corpus replay in the workspace tests
//! (`crates/pqkit-cli/tests/fuzz_corpus.rs`), which runs every file of `fuzz/corpus/<target>`
//! and `fuzz/regressions/<target>` through its target.

mod crypto;
mod files;
mod stateful;
mod tls;

/// A target: drives one decoder or endpoint with arbitrary bytes.
pub(crate) type Target = fn(&[u8]);

/// Every target: its name (the corpus directory) and its function.
pub(crate) const TARGETS: &[(&str, Target)] = &[
    ("pem_der", files::pem_der),
    ("pkcs8_key", files::pkcs8_key),
    ("spki", files::spki),
    ("certificate_path", files::certificate_path),
    ("csr", files::csr),
    ("cms_signed_data", files::cms_signed_data),
    ("hbs_public_key", stateful::public_key),
    ("hbs_signature", stateful::signature),
    ("hbs_state_file", stateful::state_file),
    ("signature_verify", crypto::signature_verify),
    ("kem_decapsulate", crypto::kem_decapsulate),
    ("key_share", crypto::key_share),
    ("tls_server", tls::server),
    ("tls_client", tls::client),
];

/// The target called `name`.
pub(crate) fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}
