//! PEM (RFC 7468) and DER input: certificates, CSRs, PKCS#8 private keys and SPKI public
//! keys. Every reader takes PEM or DER (told apart by the bytes) and `-` for standard input;
//! files are written through [`crate::output`].

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
/// Lenient where OpenSSL is (RFC 7468 §3 "lax" parsing): base64 wrapped at any width or on
/// one line, CRLF line ends, blank lines and text between blocks; RFC 1421 header lines
/// (`Name: value`) are skipped, but an encrypted block (`Proc-Type: 4,ENCRYPTED`) is refused.
///
/// # Errors
/// [`Error::Malformed`] for a block without its END line, with mismatched labels or bad base64.
pub fn decode_all(text: &str, label: &str) -> Result<Vec<Vec<u8>>, Error> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(BEGIN) {
        let after = &rest[start + BEGIN.len()..];
        let close = after
            .find(DASHES)
            .ok_or(Error::malformed("PEM", "unterminated BEGIN line"))?;
        let got_label = &after[..close];
        let body_and_rest = &after[close + DASHES.len()..];
        let end = body_and_rest
            .find(END)
            .ok_or(Error::malformed("PEM", "BEGIN without END"))?;
        let body = &body_and_rest[..end];
        let after_end = &body_and_rest[end + END.len()..];
        let end_close = after_end
            .find(DASHES)
            .ok_or(Error::malformed("PEM", "unterminated END line"))?;
        if after_end[..end_close] != *got_label {
            return Err(Error::malformed("PEM", "BEGIN and END labels differ"));
        }
        rest = &after_end[end_close + DASHES.len()..];
        if got_label == label {
            out.push(decode_body(body)?);
        }
    }
    Ok(out)
}

/// The base64 body of one block, without header lines and white space.
fn decode_body(body: &str) -> Result<Vec<u8>, Error> {
    let mut b64 = String::with_capacity(body.len());
    for line in body.lines() {
        if line.contains(':') {
            if line.contains("ENCRYPTED") {
                return Err(Error::malformed(
                    "PEM",
                    "encrypted PEM is not supported (decrypt it first, e.g. openssl pkcs8)",
                ));
            }
            continue;
        }
        b64.extend(line.chars().filter(|c| !c.is_ascii_whitespace()));
    }
    <base64ct::Base64 as base64ct::Encoding>::decode_vec(&b64)
        .map_err(|e| Error::malformed("PEM", format!("bad base64: {e}")))
}

/// The most bytes [`read_input`] reads from one key, certificate, chain, CRL, signature or
/// message file: 64 MiB (the largest key pqkit reads, a Classic McEliece 8192128 public key in
/// PEM, is under 2 MiB; a chain of a hundred SLH-DSA-256s certificates under 8 MiB).
pub const MAX_INPUT: u64 = 64 << 20;

/// Reads a whole input file of at most [`MAX_INPUT`] bytes; `-` is standard input.
///
/// # Errors
/// [`Error::Io`] naming the file; [`Error::Input`] for one that is not a regular file or is
/// too long.
pub fn read_input(path: &Path) -> Result<Zeroizing<Vec<u8>>, Error> {
    read_input_limited(path, MAX_INPUT)
}

/// Reads a whole input file of at most `limit` bytes; `-` is standard input (read up to the
/// limit). A named file must be a regular file: a FIFO, a device or a directory is refused
/// before anything is read (opened without blocking, so a FIFO with no writer cannot hang
/// the program), and one longer than `limit` is refused by its size, unread.
///
/// # Errors
/// [`Error::Io`] naming the file; [`Error::Input`] for one that is not a regular file or is
/// longer than `limit`.
pub fn read_input_limited(path: &Path, limit: u64) -> Result<Zeroizing<Vec<u8>>, Error> {
    use std::io::Read;
    let mut bytes = Zeroizing::new(Vec::new());
    if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(Path::new("standard input"), e))?;
        if bytes.len() as u64 > limit {
            return Err(too_long(Path::new("standard input"), limit));
        }
        return Ok(bytes);
    }
    let file = open_regular(path, limit)?;
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_long(path, limit));
    }
    Ok(bytes)
}

fn too_long(path: &Path, limit: u64) -> Error {
    Error::Input {
        path: path.display().to_string(),
        reason: format!("longer than {limit} bytes, the most pqkit reads from one input"),
    }
}

/// Checks, without reading it, that `path` is an input [`read_input`] would read: `-`, or a
/// regular file of at most [`MAX_INPUT`] bytes that can be opened (a FIFO is refused, not
/// waited on).
///
/// # Errors
/// As [`read_input`].
pub fn check_input(path: &Path) -> Result<(), Error> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    open_regular(path, MAX_INPUT).map(drop)
}

/// Opens `path` for reading without blocking (a FIFO is refused, not waited on), and refuses
/// it unless it is a regular file of at most `limit` bytes: for inputs read as a stream (the
/// content of `pqkit cms`), whatever their length.
///
/// # Errors
/// [`Error::Io`]; [`Error::Input`] for a FIFO, device, directory or longer file.
pub fn open_regular(path: &Path, limit: u64) -> Result<std::fs::File, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::Input {
            path: path.display().to_string(),
            reason: "not a regular file (a FIFO, a device or a directory); to read a stream, \
                     name it - and redirect standard input"
                .to_owned(),
        });
    }
    if meta.len() > limit {
        return Err(too_long(path, limit));
    }
    Ok(file)
}

/// The DER objects in `bytes`: the blocks labelled `label` when it is PEM text, else the
/// DER itself — one object, or for certificates several concatenated.
///
/// # Errors
/// [`Error::Malformed`] for bad PEM, or bytes that are neither PEM nor DER.
pub fn decode_pem_or_der(bytes: &[u8], label: &str) -> Result<Vec<Vec<u8>>, Error> {
    if let Ok(text) = core::str::from_utf8(bytes)
        && text.contains(BEGIN)
    {
        return decode_all(text, label);
    }
    if bytes.first() != Some(&0x30) {
        return Err(Error::malformed(
            "input",
            format!("neither PEM ({label}) nor DER"),
        ));
    }
    if label != CERTIFICATE {
        return Ok(vec![bytes.to_vec()]);
    }
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let len = der_length(rest).ok_or(Error::malformed("DER", "truncated or bad length"))?;
        out.push(rest[..len].to_vec());
        rest = &rest[len..];
    }
    Ok(out)
}

/// Length in bytes of the DER TLV at the start of `bytes`, when it fits in `bytes`.
fn der_length(bytes: &[u8]) -> Option<usize> {
    use der::{Decode, Encode, Header, SliceReader};
    let mut reader = SliceReader::new(bytes).ok()?;
    let header = Header::decode(&mut reader).ok()?;
    let total = usize::try_from((header.encoded_len().ok()? + header.length).ok()?).ok()?;
    (total <= bytes.len()).then_some(total)
}

/// Reads every certificate from a PEM or DER file (`-`: standard input), in order.
///
/// # Errors
/// [`Error::Io`], [`Error::Malformed`], or [`Error::NoPem`] when the file holds none.
pub fn read_certificates(path: &Path) -> Result<Vec<Vec<u8>>, Error> {
    let bytes = read_input(path)?;
    let certs = decode_pem_or_der(&bytes, CERTIFICATE).map_err(|e| e.in_file(path))?;
    if certs.is_empty() {
        return Err(Error::NoPem {
            path: path.display().to_string(),
            label: CERTIFICATE,
        });
    }
    Ok(certs)
}

/// Reads the first object labelled `label` from a PEM or DER file (`-`: standard input).
///
/// # Errors
/// [`Error::Io`], [`Error::Malformed`], or [`Error::NoPem`].
pub fn read_one(path: &Path, label: &'static str) -> Result<Zeroizing<Vec<u8>>, Error> {
    let bytes = read_input(path)?;
    if label == PRIVATE_KEY
        && let Ok(text) = core::str::from_utf8(&bytes)
        && let Some(other) = ["ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"]
            .iter()
            .find(|l| text.contains(&format!("{BEGIN}{l}{DASHES}")))
        && !text.contains(&format!("{BEGIN}{PRIVATE_KEY}{DASHES}"))
    {
        return Err(Error::Malformed {
            what: "private key",
            detail: format!(
                "{}: the key is in a {other} block; pqkit reads unencrypted PKCS#8 (PRIVATE \
                 KEY): convert it with `openssl pkcs8 -topk8 -nocrypt`",
                path.display()
            ),
        });
    }
    decode_pem_or_der(&bytes, label)
        .map_err(|e| e.in_file(path))?
        .into_iter()
        .next()
        .map(Zeroizing::new)
        .ok_or_else(|| Error::NoPem {
            path: path.display().to_string(),
            label,
        })
}

/// Reads the first PKCS#8 private key from a PEM or DER file.
///
/// # Errors
/// [`Error::Io`], [`Error::Malformed`], or [`Error::NoPem`].
pub fn read_private_key(path: &Path) -> Result<Zeroizing<Vec<u8>>, Error> {
    read_one(path, PRIVATE_KEY)
}

const BEGIN: &str = "-----BEGIN ";
const END: &str = "-----END ";
const DASHES: &str = "-----";

#[cfg(test)]
mod tests {
    use super::*;

    const DER: &[u8] = &[0x30, 0x03, 0x02, 0x01, 0x07];

    #[test]
    fn pem_is_read_at_any_width_and_on_one_line() {
        let der: Vec<u8> = (0..200u8).collect();
        let b64 = <base64ct::Base64 as base64ct::Encoding>::encode_string(&der);
        for width in [64, 76, 1, 3, b64.len()] {
            let lines: Vec<&str> = b64
                .as_bytes()
                .chunks(width)
                .map(|c| core::str::from_utf8(c).expect("ascii"))
                .collect();
            for eol in ["\n", "\r\n"] {
                let text = format!(
                    "junk before{eol}-----BEGIN CERTIFICATE-----{eol}{}{eol}-----END CERTIFICATE-----{eol}",
                    lines.join(eol)
                );
                assert_eq!(
                    decode_all(&text, CERTIFICATE).expect("pem"),
                    vec![der.clone()]
                );
            }
        }
        let one = format!("-----BEGIN CERTIFICATE-----{b64}-----END CERTIFICATE-----");
        assert_eq!(
            decode_all(&one, CERTIFICATE).expect("pem"),
            vec![der.clone()]
        );
        assert_eq!(
            decode_all(&encode(CERTIFICATE, &der).expect("pem"), CERTIFICATE).expect("pem"),
            vec![der]
        );
    }

    #[test]
    fn bad_pem_is_an_error_never_a_panic() {
        let good = encode(PRIVATE_KEY, DER).expect("pem");
        for n in 0..good.len() {
            let _ = decode_all(&good[..n], PRIVATE_KEY);
        }
        let mismatched = good.replace("END PRIVATE KEY", "END CERTIFICATE");
        assert!(decode_all(&mismatched, PRIVATE_KEY).is_err());
        let bad = good.replace('M', "!");
        assert!(decode_all(&bad, PRIVATE_KEY).is_err());
        let encrypted = "-----BEGIN PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: x\n\nMAA=\n-----END PRIVATE KEY-----\n";
        assert!(decode_all(encrypted, PRIVATE_KEY).is_err());
    }

    #[test]
    fn der_is_recognised_and_concatenated_certificates_split() {
        assert_eq!(
            decode_pem_or_der(DER, PRIVATE_KEY).expect("der"),
            vec![DER.to_vec()]
        );
        let two = [DER, DER].concat();
        assert_eq!(
            decode_pem_or_der(&two, CERTIFICATE).expect("der"),
            vec![DER.to_vec(), DER.to_vec()]
        );
        assert!(decode_pem_or_der(&two[..7], CERTIFICATE).is_err());
        assert!(decode_pem_or_der(b"hello", CERTIFICATE).is_err());
        assert!(decode_pem_or_der(b"", PRIVATE_KEY).is_err());
    }
}
