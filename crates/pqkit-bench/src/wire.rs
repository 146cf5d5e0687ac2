//! Bytes on the wire, counted at the socket, and their breakdown by TLS message type.
//!
//! [`pqkit_rustls::session::Counting`] wraps a socket and counts (and optionally records) every byte in each
//! direction — TLS records with their 5-byte headers, so the totals match the sum of TCP
//! payloads in a packet capture. [`breakdown`] takes the two recorded streams of one TLS 1.3
//! connection and the traffic secrets rustls logged through [`Secrets`], decrypts each record
//! (RFC 8446 §5.2, keys from §7.3) and attributes every byte: the handshake messages by type,
//! ChangeCipherSpec, alerts, application data, and the record overhead (headers, AEAD tags,
//! inner content-type bytes). The parts add up to the counted totals exactly.

use std::sync::Mutex;

use aws_lc_rs::{aead, hkdf};
use pqkit_rustls::session::Transcript;
use rustls::CipherSuite;
use serde::Serialize;
use zeroize::Zeroizing;

/// The TLS 1.3 traffic secrets rustls logs (NSS key-log labels), kept for decrypting a
/// recorded connection. Set as `ClientConfig::key_log` of a measured connection only.
///
/// # Security
/// The secrets are zeroized on drop and never printed.
#[derive(Default)]
pub struct Secrets(Mutex<Vec<(String, Zeroizing<Vec<u8>>)>>);

impl core::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Secrets(..)")
    }
}

impl rustls::KeyLog for Secrets {
    fn log(&self, label: &str, _client_random: &[u8], secret: &[u8]) {
        if let Ok(mut v) = self.0.lock() {
            v.push((label.to_owned(), Zeroizing::new(secret.to_vec())));
        }
    }

    fn will_log(&self, _label: &str) -> bool {
        true
    }
}

impl Secrets {
    fn get(&self, label: &str) -> Option<Zeroizing<Vec<u8>>> {
        self.0
            .lock()
            .ok()?
            .iter()
            .rev()
            .find(|(l, _)| l == label)
            .map(|(_, s)| s.clone())
    }
}

/// Which way bytes went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Direction {
    /// Client to server.
    #[serde(rename = "client_to_server")]
    ClientToServer,
    /// Server to client.
    #[serde(rename = "server_to_client")]
    ServerToClient,
}

/// Bytes of one kind in one direction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Part {
    /// Which way.
    pub direction: Direction,
    /// A handshake message type in RFC 8446 spelling ("client_hello", "certificate", …),
    /// "change_cipher_spec", "alert", "application_data", or "record_overhead" (record
    /// headers, AEAD tags and inner content-type bytes).
    pub kind: String,
    /// How many messages of this kind (records, for "record_overhead").
    pub count: u64,
    /// Their bytes (handshake messages with their 4-byte headers).
    pub bytes: u64,
}

/// Attributes every byte of a recorded TLS 1.3 connection (seen from the client: `sent` is
/// client→server) to a message kind. The parts' bytes sum to `sent.len() + received.len()`.
///
/// # Errors
/// A record that does not parse or decrypt, a missing secret, or a cipher suite other than the
/// three of TLS 1.3.
pub fn breakdown(
    client: &Transcript,
    suite: CipherSuite,
    secrets: &Secrets,
) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    for (direction, bytes, handshake, application) in [
        (
            Direction::ClientToServer,
            &client.sent,
            "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
            "CLIENT_TRAFFIC_SECRET_0",
        ),
        (
            Direction::ServerToClient,
            &client.received,
            "SERVER_HANDSHAKE_TRAFFIC_SECRET",
            "SERVER_TRAFFIC_SECRET_0",
        ),
    ] {
        let keys = [handshake, application].map(|label| secrets.get(label));
        one_direction(direction, bytes, suite, keys, &mut parts)?;
    }
    Ok(parts)
}

/// The record-protection parameters of a TLS 1.3 suite (RFC 8446 Appendix B.4).
fn suite_parameters(
    suite: CipherSuite,
) -> Result<(&'static aead::Algorithm, hkdf::Algorithm), String> {
    match suite {
        CipherSuite::TLS13_AES_128_GCM_SHA256 => Ok((&aead::AES_128_GCM, hkdf::HKDF_SHA256)),
        CipherSuite::TLS13_AES_256_GCM_SHA384 => Ok((&aead::AES_256_GCM, hkdf::HKDF_SHA384)),
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => {
            Ok((&aead::CHACHA20_POLY1305, hkdf::HKDF_SHA256))
        }
        other => Err(format!("cannot decrypt cipher suite {other:?}")),
    }
}

struct Len(usize);

impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

/// HKDF-Expand-Label(secret, label, "", len) (RFC 8446 §7.1).
fn expand_label(
    alg: hkdf::Algorithm,
    secret: &[u8],
    label: &str,
    len: usize,
) -> Result<Zeroizing<Vec<u8>>, String> {
    let full = format!("tls13 {label}");
    let length = u16::try_from(len).map_err(|_| "label length".to_owned())?;
    let full_len = u8::try_from(full.len()).map_err(|_| "label length".to_owned())?;
    let mut info = Vec::with_capacity(4 + full.len());
    info.extend_from_slice(&length.to_be_bytes());
    info.push(full_len);
    info.extend_from_slice(full.as_bytes());
    info.push(0);
    let prk = hkdf::Prk::new_less_safe(alg, secret);
    let mut out = Zeroizing::new(vec![0u8; len]);
    prk.expand(&[&info], Len(len))
        .and_then(|okm| okm.fill(&mut out))
        .map_err(|_| "HKDF-Expand-Label failed".to_owned())?;
    Ok(out)
}

/// One direction's record protection: key, IV and sequence number (RFC 8446 §5.3).
struct Protection {
    key: aead::LessSafeKey,
    iv: Zeroizing<Vec<u8>>,
    sequence: u64,
}

impl Protection {
    fn new(suite: CipherSuite, secret: &[u8]) -> Result<Self, String> {
        let (aead_alg, hkdf_alg) = suite_parameters(suite)?;
        let key = expand_label(hkdf_alg, secret, "key", aead_alg.key_len())?;
        let iv = expand_label(hkdf_alg, secret, "iv", aead::NONCE_LEN)?;
        let key = aead::UnboundKey::new(aead_alg, &key).map_err(|_| "AEAD key".to_owned())?;
        Ok(Self {
            key: aead::LessSafeKey::new(key),
            iv,
            sequence: 0,
        })
    }

    /// Decrypts one record; returns (content type, content).
    fn open(&mut self, header: &[u8], fragment: &[u8]) -> Result<(u8, Vec<u8>), String> {
        let mut nonce = [0u8; aead::NONCE_LEN];
        nonce.copy_from_slice(&self.iv);
        for (n, s) in nonce[4..].iter_mut().zip(self.sequence.to_be_bytes()) {
            *n ^= s;
        }
        self.sequence += 1;
        let mut buf = fragment.to_vec();
        let plain = self
            .key
            .open_in_place(
                aead::Nonce::assume_unique_for_key(nonce),
                aead::Aad::from(header),
                &mut buf,
            )
            .map_err(|_| "a record did not decrypt".to_owned())?;
        // TLSInnerPlaintext: content ‖ type ‖ zero padding.
        let end = plain
            .iter()
            .rposition(|&b| b != 0)
            .ok_or("a record had no content type")?;
        Ok((plain[end], plain[..end].to_vec()))
    }
}

const HANDSHAKE: u8 = 22;
const CHANGE_CIPHER_SPEC: u8 = 20;
const ALERT: u8 = 21;
const APPLICATION_DATA: u8 = 23;
const FINISHED: u8 = 20;

/// RFC 8446 §4.1.3: the ServerHello.random of a HelloRetryRequest.
const HELLO_RETRY_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

fn handshake_name(kind: u8, body: &[u8]) -> String {
    match kind {
        1 => "client_hello",
        2 if body.get(2..34) == Some(&HELLO_RETRY_RANDOM[..]) => "hello_retry_request",
        2 => "server_hello",
        4 => "new_session_ticket",
        5 => "end_of_early_data",
        8 => "encrypted_extensions",
        11 => "certificate",
        13 => "certificate_request",
        15 => "certificate_verify",
        20 => "finished",
        24 => "key_update",
        other => return format!("handshake_type_{other}"),
    }
    .to_owned()
}

fn add(parts: &mut Vec<Part>, direction: Direction, kind: &str, bytes: usize) {
    let bytes = bytes as u64;
    match parts
        .iter_mut()
        .find(|p| p.direction == direction && p.kind == kind)
    {
        Some(p) => {
            p.count += 1;
            p.bytes += bytes;
        }
        None => parts.push(Part {
            direction,
            kind: kind.to_owned(),
            count: 1,
            bytes,
        }),
    }
}

fn one_direction(
    direction: Direction,
    mut stream: &[u8],
    suite: CipherSuite,
    secrets: [Option<Zeroizing<Vec<u8>>>; 2],
    parts: &mut Vec<Part>,
) -> Result<(), String> {
    let [handshake_secret, application_secret] = secrets;
    let mut protection: Option<Protection> = None;
    let mut epoch = 0; // 0 plaintext, 1 handshake keys, 2 application keys
    let mut pending: Vec<u8> = Vec::new(); // handshake bytes not yet a whole message
    while !stream.is_empty() {
        if stream.len() < 5 {
            return Err("a record header was cut".to_owned());
        }
        let (header, rest) = stream.split_at(5);
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        if rest.len() < len {
            return Err("a record was cut".to_owned());
        }
        let (fragment, after) = rest.split_at(len);
        stream = after;
        let (kind, content) = if header[0] == APPLICATION_DATA && epoch == 0 {
            epoch = 1;
            let secret = handshake_secret
                .as_ref()
                .ok_or("no handshake traffic secret was logged")?;
            let mut p = Protection::new(suite, secret)?;
            let opened = p.open(header, fragment)?;
            protection = Some(p);
            opened
        } else if header[0] == APPLICATION_DATA {
            protection
                .as_mut()
                .ok_or("no record protection")?
                .open(header, fragment)?
        } else {
            (header[0], fragment.to_vec())
        };
        add(parts, direction, "record_overhead", 5 + len - content.len());
        match kind {
            HANDSHAKE => {
                pending.extend_from_slice(&content);
                while pending.len() >= 4 {
                    let body_len = usize::from(pending[1]) << 16
                        | usize::from(pending[2]) << 8
                        | usize::from(pending[3]);
                    if pending.len() < 4 + body_len {
                        break;
                    }
                    let message: Vec<u8> = pending.drain(..4 + body_len).collect();
                    add(
                        parts,
                        direction,
                        &handshake_name(message[0], &message[4..]),
                        message.len(),
                    );
                    if message[0] == FINISHED && epoch == 1 {
                        epoch = 2;
                        let secret = application_secret
                            .as_ref()
                            .ok_or("no application traffic secret was logged")?;
                        protection = Some(Protection::new(suite, secret)?);
                    }
                }
            }
            CHANGE_CIPHER_SPEC => add(parts, direction, "change_cipher_spec", content.len()),
            ALERT => add(parts, direction, "alert", content.len()),
            APPLICATION_DATA => add(parts, direction, "application_data", content.len()),
            other => return Err(format!("unknown record content type {other}")),
        }
    }
    if !pending.is_empty() {
        return Err("a handshake message was cut".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hkdf_expand_label_matches_rfc_8448() {
        // RFC 8448 §3 (Simple 1-RTT Handshake): server handshake traffic secret → key, iv.
        let secret = [
            0xb6, 0x7b, 0x7d, 0x69, 0x0c, 0xc1, 0x6c, 0x4e, 0x75, 0xe5, 0x42, 0x13, 0xcb, 0x2d,
            0x37, 0xb4, 0xe9, 0xc9, 0x12, 0xbc, 0xde, 0xd9, 0x10, 0x5d, 0x42, 0xbe, 0xfd, 0x59,
            0xd3, 0x91, 0xad, 0x38,
        ];
        let key = expand_label(hkdf::HKDF_SHA256, &secret, "key", 16).expect("key");
        let iv = expand_label(hkdf::HKDF_SHA256, &secret, "iv", 12).expect("iv");
        assert_eq!(
            key.as_slice(),
            [
                0x3f, 0xce, 0x51, 0x60, 0x09, 0xc2, 0x17, 0x27, 0xd0, 0xf2, 0xe4, 0xe8, 0x6e, 0xe4,
                0x03, 0xbc
            ]
        );
        assert_eq!(
            iv.as_slice(),
            [
                0x5d, 0x31, 0x3e, 0xb2, 0x67, 0x12, 0x76, 0xee, 0x13, 0x00, 0x0b, 0x30
            ]
        );
    }
}
