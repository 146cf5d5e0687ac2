//! PEM files (RFC 7468): certificates and PKCS#8 private keys.

use std::path::Path;

use der::pem::LineEnding;
use zeroize::Zeroizing;

use crate::error::Error;

/// PEM label of a certificate.
pub const CERTIFICATE: &str = "CERTIFICATE";
/// PEM label of a PKCS#10 certificate signing request (RFC 7468 §7).
pub const CERTIFICATE_REQUEST: &str = "CERTIFICATE REQUEST";
/// PEM label of a PKCS#8 private key.
pub const PRIVATE_KEY: &str = "PRIVATE KEY";
/// PEM label of an SPKI public key.
pub const PUBLIC_KEY: &str = "PUBLIC KEY";

/// Encodes DER as one PEM block with `label`.
///
/// # Errors
/// [`Error::Malformed`] if encoding fails.
pub fn encode(label: &'static str, der: &[u8]) -> Result<String, Error> {
    der::pem::encode_string(label, LineEnding::LF, der).map_err(|e| Error::malformed("PEM", e))
}

/// Decodes every PEM block in `text` labelled `label`, in order; other blocks are skipped.
///
/// # Errors
/// [`Error::Malformed`] for a block that does not decode.
pub fn decode_all(text: &str, label: &str) -> Result<Vec<Vec<u8>>, Error> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let block = &rest[start..];
        let end_marker = "-----END ";
        let Some(end) = block.find(end_marker) else {
            return Err(Error::malformed("PEM", "BEGIN without END"));
        };
        let after_end = &block[end + end_marker.len()..];
        let close = after_end
            .find("-----")
            .ok_or(Error::malformed("PEM", "unterminated END"))?;
        let block_len = end + end_marker.len() + close + 5;
        let (got_label, der) = der::pem::decode_vec(&block.as_bytes()[..block_len])
            .map_err(|e| Error::malformed("PEM", e))?;
        if got_label == label {
            out.push(der);
        }
        rest = &block[block_len..];
    }
    Ok(out)
}

/// Reads every certificate from a PEM file, in order.
///
/// # Errors
/// [`Error::Io`], [`Error::Malformed`], or [`Error::NoPem`] when the file holds none.
pub fn read_certificates(path: &Path) -> Result<Vec<Vec<u8>>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let certs = decode_all(&text, CERTIFICATE)?;
    if certs.is_empty() {
        return Err(Error::NoPem {
            path: path.display().to_string(),
            label: CERTIFICATE,
        });
    }
    Ok(certs)
}

/// Reads the first PKCS#8 private key from a PEM file.
///
/// # Errors
/// [`Error::Io`], [`Error::Malformed`], or [`Error::NoPem`].
pub fn read_private_key(path: &Path) -> Result<Zeroizing<Vec<u8>>, Error> {
    let text = Zeroizing::new(std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?);
    decode_all(&text, PRIVATE_KEY)?
        .into_iter()
        .next()
        .map(Zeroizing::new)
        .ok_or_else(|| Error::NoPem {
            path: path.display().to_string(),
            label: PRIVATE_KEY,
        })
}

/// Writes `text` to `path`. A private key (`secret`) replaces any existing file (never following
/// a symlink there) and is created with mode 0600 on Unix.
///
/// # Errors
/// [`Error::Io`].
pub fn write(path: &Path, text: &str, secret: bool) -> Result<(), Error> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if secret {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(path, e)),
            _ => {}
        }
        options.create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
    } else {
        options.create(true).truncate(true);
    }
    let mut file = options.open(path).map_err(|e| Error::io(path, e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn rewriting_a_key_file_makes_it_private_again() {
        use std::os::unix::fs::PermissionsExt;
        let path = std::env::temp_dir().join(format!("pqkit-pem-{}.key", std::process::id()));
        std::fs::write(&path, "old").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        write(&path, "new", true).expect("write key");
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new");
        std::fs::remove_file(&path).ok();
    }
}
