//! `pqkit list` and `pqkit sizes`: the catalogue as tables, sizes measured from real keys.

use pqkit_core::catalogue;
use pqkit_core::sig::SignatureAlgorithm;
use serde::Serialize;

use crate::failure::Result;

/// Rough per-certificate overhead next to the key and signature (names, validity, extensions,
/// DER headers), in bytes; used only to say which chains can exceed rustls's cap.
const CERT_OVERHEAD: usize = 700;

#[derive(Serialize)]
struct Entry {
    name: &'static str,
    aliases: Vec<&'static str>,
    kind: &'static str,
    nist_category: u8,
    tls_code_point: Option<String>,
    tls_name: Option<&'static str>,
    tls_source: Option<&'static str>,
    oid: &'static str,
    public_key_bytes: usize,
    private_key_bytes: usize,
    signature_or_ciphertext_bytes: usize,
    tls: String,
    /// The standard (or submission) and the implementation pqkit runs.
    source: String,
}

fn tls_usability(a: &SignatureAlgorithm) -> String {
    let Some(cp) = a.tls_scheme else {
        return "no: no TLS code point".into();
    };
    if cp.value == 0x0401 {
        return "certificates only: TLS 1.3 CertificateVerify needs RSA-PSS (RFC 8446 §4.2.3)"
            .into();
    }
    if !a.family.is_post_quantum() {
        return "yes (rustls aws-lc-rs)".into();
    }
    // Certificate + CertificateVerify of one flight must fit rustls's buffer: the
    // CertificateVerify plus `sigs - 1` certificates signed with this algorithm (leaf,
    // intermediate), each estimated as key + signature + overhead.
    let cert = a.signature_size + a.verifying_key_size + CERT_OVERHEAD;
    let flight = |sigs: usize| pqkit_rustls::flight_size(vec![cert; sigs - 1], a.signature_size);
    let cap = pqkit_rustls::MAX_HANDSHAKE_MESSAGE_SIZE;
    if flight(3) <= cap {
        "yes".into()
    } else if flight(2) <= cap {
        format!(
            "yes, leaf signed by the root; with an intermediate of this algorithm the flight \
             (~{} B) exceeds rustls's {cap}-byte handshake buffer",
            flight(3)
        )
    } else {
        format!(
            "only as a leaf under a CA with smaller signatures: leaf signed by this algorithm + \
             CertificateVerify (~{} B) exceed rustls's {cap}-byte handshake buffer",
            flight(2)
        )
    }
}

/// Whether a KEM's pure group is offered: ML-KEM's by default, the others when named; a KEM
/// without a group, why.
fn kem_tls_usability(k: &pqkit_core::kem::KemAlgorithm) -> String {
    match k.tls_group {
        Some(_) if k.family == pqkit_core::kem::KemFamily::MlKem => "yes (named group)".into(),
        Some(_) => "yes (named group, offered when named)".into(),
        None => format!(
            "no: the {}-byte encapsulation key exceeds a key share's 65535 bytes \
             (RFC 8446 §4.2.8); for `pqkit kem`",
            k.encapsulation_key_size
        ),
    }
}

fn group_tls_usability(g: &pqkit_core::hybrid::KeyExchangeGroup) -> String {
    if g.kem.family == pqkit_core::kem::KemFamily::MlKem {
        "yes (named group)".into()
    } else {
        "yes (named group, offered when named)".into()
    }
}

fn entries() -> Vec<Entry> {
    let mut out: Vec<Entry> = catalogue::signatures()
        .iter()
        .map(|a| Entry {
            name: a.name,
            aliases: a.aliases.to_vec(),
            kind: a.family.name(),
            nist_category: a.category,
            tls_code_point: a.tls_scheme.map(|c| format!("0x{:04X}", c.value)),
            tls_name: a.tls_scheme.map(|c| c.iana),
            tls_source: a.tls_scheme.map(|c| c.source),
            oid: a.oid,
            public_key_bytes: a.verifying_key_size,
            private_key_bytes: a.signing_key_size,
            signature_or_ciphertext_bytes: a.signature_size,
            tls: tls_usability(a),
            source: format!("{}; {}", a.standard, a.backend_name()),
        })
        .collect();
    for k in catalogue::kems() {
        out.push(Entry {
            name: k.name,
            aliases: k.aliases.to_vec(),
            kind: "KEM",
            nist_category: k.category,
            tls_code_point: k.tls_group.map(|c| format!("0x{:04X}", c.value)),
            tls_name: k.tls_group.map(|c| c.iana),
            tls_source: k.tls_group.map(|c| c.source),
            oid: k.oid,
            public_key_bytes: k.encapsulation_key_size,
            private_key_bytes: k.decapsulation_key_size,
            signature_or_ciphertext_bytes: k.ciphertext_size,
            tls: kem_tls_usability(k),
            source: format!("{}; {}", k.standard, k.backend_name()),
        });
    }
    for g in catalogue::groups().iter().filter(|g| g.classical.is_some()) {
        out.push(Entry {
            name: g.name,
            aliases: g.aliases.to_vec(),
            kind: "hybrid group",
            nist_category: g.category(),
            tls_code_point: Some(format!("0x{:04X}", g.code_point.value)),
            tls_name: Some(g.code_point.iana),
            tls_source: Some(g.code_point.source),
            oid: "-",
            public_key_bytes: g.client_share_size(),
            private_key_bytes: 0,
            signature_or_ciphertext_bytes: g.server_share_size(),
            tls: group_tls_usability(g),
            source: format!("{} + {}", g.classical.map_or("-", |c| c.name), g.kem.name),
        });
    }
    out
}

/// `pqkit list`.
pub(crate) fn list(json: bool) -> Result<()> {
    let entries = entries();
    if json {
        println!("{}", serde_json::to_string_pretty(&entries)?);
        return Ok(());
    }
    println!(
        "{:<26} {:<12} {:>3} {:<28} {:<26} {:>7} {:>6} {:>6}  TLS / source / aliases",
        "algorithm", "kind", "cat", "TLS code point", "OID", "pk", "sk", "sig/ct"
    );
    for e in &entries {
        let cp = match (&e.tls_code_point, e.tls_name) {
            (Some(v), Some(n)) => format!("{v} {n}"),
            _ => "-".into(),
        };
        println!(
            "{:<26} {:<12} {:>3} {:<28} {:<26} {:>7} {:>6} {:>6}  {}",
            e.name,
            e.kind,
            e.nist_category,
            cp,
            e.oid,
            e.public_key_bytes,
            e.private_key_bytes,
            e.signature_or_ciphertext_bytes,
            e.tls
        );
        println!("{:<26} source: {}", "", e.source);
        if !e.aliases.is_empty() {
            println!("{:<26} aliases: {}", "", e.aliases.join(", "));
        }
    }
    println!(
        "\nSizes in bytes (pk: public key as in the SPKI; sk: expanded private key; sig: largest \
         signature; ct: ciphertext; for hybrid groups: client share / server share). \
         Round-3 names (Kyber, SPHINCS+) resolve with a note: the final standards differ. \
         FrodoKEM is eFrodoKEM (round 3, no salt); BIKE and eFrodoKEM keys serve one key \
         exchange and are not written to files."
    );
    Ok(())
}

#[derive(Serialize)]
struct SignatureSizes {
    algorithm: &'static str,
    public_key: usize,
    private_key_seed: Option<usize>,
    private_key_expanded: Option<usize>,
    private_key_pkcs8: usize,
    signature: usize,
    signature_max: usize,
    variable_length: bool,
}

#[derive(Serialize)]
struct KemSizes {
    algorithm: &'static str,
    public_key: usize,
    private_key_seed: usize,
    private_key_expanded: usize,
    ciphertext: usize,
    shared_secret: usize,
}

#[derive(Serialize)]
struct GroupSizes {
    group: &'static str,
    code_point: String,
    client_share: usize,
    server_share: usize,
    shared_secret: usize,
}

#[derive(Serialize)]
struct Sizes {
    note: &'static str,
    signatures: Vec<SignatureSizes>,
    kems: Vec<KemSizes>,
    groups: Vec<GroupSizes>,
}

fn measure() -> Result<Sizes> {
    let mut signatures = Vec::new();
    for a in catalogue::signatures() {
        eprint!("\rmeasuring {:<40}", a.name);
        let key = a.generate()?;
        let sig = key.sign(b"pqkit sizes", &[])?;
        key.verifying_key().verify(b"pqkit sizes", &[], &sig)?;
        let pkcs8 = pqkit_pki::key::signing_key_to_pkcs8(&key, pqkit_pki::key::KeyFormat::Seed)?;
        let variable = a.signature_size_varies();
        if sig.len() > a.signature_size || (!variable && sig.len() != a.signature_size) {
            return Err(crate::failure::Failure::other(format!(
                "{}: measured a {}-byte signature against the catalogue's {}",
                a.name,
                sig.len(),
                a.signature_size
            )));
        }
        signatures.push(SignatureSizes {
            algorithm: a.name,
            public_key: key.verifying_key().as_bytes().len(),
            private_key_seed: key.seed().map(<[u8]>::len),
            private_key_expanded: key.expanded().map(|e| e.len()),
            private_key_pkcs8: pkcs8.len(),
            signature: sig.len(),
            signature_max: a.signature_size,
            variable_length: variable,
        });
    }
    let mut kems = Vec::new();
    for k in catalogue::kems() {
        let dk = k.generate()?;
        let (ct, ss) = dk.encapsulation_key().encapsulate()?;
        kems.push(KemSizes {
            algorithm: k.name,
            public_key: dk.encapsulation_key().as_bytes().len(),
            private_key_seed: dk.seed().map_or(0, <[u8]>::len),
            private_key_expanded: dk.expanded().len(),
            ciphertext: ct.len(),
            shared_secret: ss.as_bytes().len(),
        });
    }
    let mut groups = Vec::new();
    for g in catalogue::groups() {
        let client = g.start()?;
        let (server_share, secret) = g.encapsulate(client.share())?;
        groups.push(GroupSizes {
            group: g.name,
            code_point: format!("0x{:04X}", g.code_point.value),
            client_share: client.share().len(),
            server_share: server_share.len(),
            shared_secret: secret.len(),
        });
    }
    eprint!("\r{:<50}\r", "");
    Ok(Sizes {
        note: "bytes; measured from freshly generated keys, signatures and ciphertexts",
        signatures,
        kems,
        groups,
    })
}

fn opt(v: Option<usize>) -> String {
    v.map_or_else(|| "-".into(), |n| n.to_string())
}

/// `pqkit sizes`.
pub(crate) fn sizes(json: bool, markdown: bool) -> Result<()> {
    let s = measure()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
        return Ok(());
    }
    let sig_rows: Vec<Vec<String>> = s
        .signatures
        .iter()
        .map(|r| {
            vec![
                r.algorithm.to_owned(),
                r.public_key.to_string(),
                opt(r.private_key_seed),
                opt(r.private_key_expanded),
                r.private_key_pkcs8.to_string(),
                if r.variable_length {
                    format!("{} (max {})", r.signature, r.signature_max)
                } else {
                    r.signature.to_string()
                },
            ]
        })
        .collect();
    let kem_rows: Vec<Vec<String>> = s
        .kems
        .iter()
        .map(|r| {
            vec![
                r.algorithm.to_owned(),
                r.public_key.to_string(),
                r.private_key_seed.to_string(),
                r.private_key_expanded.to_string(),
                r.ciphertext.to_string(),
                r.shared_secret.to_string(),
            ]
        })
        .collect();
    let group_rows: Vec<Vec<String>> = s
        .groups
        .iter()
        .map(|r| {
            vec![
                r.group.to_owned(),
                r.code_point.clone(),
                r.client_share.to_string(),
                r.server_share.to_string(),
                r.shared_secret.to_string(),
            ]
        })
        .collect();
    let tables = [
        (
            "Signature algorithms (bytes)",
            vec![
                "algorithm",
                "public key",
                "private key (seed)",
                "private key (expanded)",
                "PKCS#8 (default form)",
                "signature",
            ],
            sig_rows,
        ),
        (
            "KEMs (bytes)",
            vec![
                "algorithm",
                "public key",
                "private key (seed)",
                "private key (expanded)",
                "ciphertext",
                "shared secret",
            ],
            kem_rows,
        ),
        (
            "TLS key-exchange groups (bytes)",
            vec![
                "group",
                "code point",
                "client share",
                "server share",
                "shared secret",
            ],
            group_rows,
        ),
    ];
    for (title, header, rows) in &tables {
        if markdown {
            println!("### {title}\n");
            println!("| {} |", header.join(" | "));
            println!("|{}", "---|".repeat(header.len()));
            for r in rows {
                println!("| {} |", r.join(" | "));
            }
        } else {
            println!("{title}");
            let widths: Vec<usize> = (0..header.len())
                .map(|i| {
                    rows.iter()
                        .map(|r| r[i].len())
                        .chain([header[i].len()])
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let line = |cells: Vec<&str>| {
                cells
                    .iter()
                    .zip(&widths)
                    .enumerate()
                    .map(|(i, (c, w))| {
                        if i == 0 {
                            format!("{c:<w$}")
                        } else {
                            format!("{c:>w$}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("  ")
            };
            println!("{}", line(header.clone()));
            for r in rows {
                println!("{}", line(r.iter().map(String::as_str).collect()));
            }
        }
        println!();
    }
    println!(
        "Measured on this machine from freshly generated keys and outputs. Variable-length \
         signatures (ECDSA DER, Falcon compressed) show this run's size and the largest possible."
    );
    Ok(())
}
