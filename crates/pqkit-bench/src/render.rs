//! Tables as aligned text or Markdown, built from the measurements' rows.

use crate::row::Row;
use crate::{boundary, handshake, tls};

/// A titled table of strings.
#[derive(Clone, Debug)]
pub struct Table {
    /// Title line.
    pub title: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Cells, row by row.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with a title and column headers.
    pub fn new(title: &str, headers: &[&str]) -> Self {
        Self {
            title: title.to_owned(),
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Aligned columns for a terminal: text left, numbers right.
    pub fn to_text(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| -> String {
            cells
                .iter()
                .zip(&widths)
                .map(|(c, &w)| {
                    let pad = w.saturating_sub(c.chars().count());
                    if is_number(c) {
                        format!("{}{c}", " ".repeat(pad))
                    } else {
                        format!("{c}{}", " ".repeat(pad))
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_owned()
        };
        let mut out = format!("{}\n{}\n", self.title, line(&self.headers));
        for row in &self.rows {
            out.push_str(&line(row));
            out.push('\n');
        }
        out
    }

    /// An HTML table with a caption; cells escaped, numbers right-aligned.
    pub fn to_html(&self) -> String {
        let mut out = format!("<table><caption>{}</caption>\n<tr>", escape(&self.title));
        for h in &self.headers {
            out.push_str(&format!("<th>{}</th>", escape(h)));
        }
        out.push_str("</tr>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for c in row {
                let class = if is_number(c) { " class=\"n\"" } else { "" };
                out.push_str(&format!("<td{class}>{}</td>", escape(c)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        out
    }

    /// A GitHub-flavoured Markdown table under a `###` title.
    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "### {}\n\n| {} |\n|{}|\n",
            self.title,
            self.headers.join(" | "),
            vec!["---"; self.headers.len()].join("|")
        );
        for row in &self.rows {
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        out
    }
}

/// Right-aligned cells: those starting with a digit, without spaces.
fn is_number(cell: &str) -> bool {
    cell.starts_with(|ch: char| ch.is_ascii_digit()) && !cell.contains(' ')
}

/// `text` with the five HTML special characters escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_owned()
}

fn fixed(v: f64, digits: usize) -> String {
    format!("{v:.digits$}")
}

/// The `bench crypto` table.
pub fn crypto(rows: &[Row]) -> Table {
    let mut t = Table::new(
        "Primitive operations (single thread)",
        &[
            "algorithm",
            "operation",
            "implementation",
            "ops",
            "total ms",
            "mean µs",
            "median µs",
            "ops/s",
            "TSC cycles/op",
            "hash path",
            "limit µs",
        ],
    );
    for r in rows {
        let op = match r.signing {
            Some(mode) => format!("{} ({mode})", r.operation),
            None => r.operation.to_owned(),
        };
        t.rows.push(vec![
            r.algorithm.to_owned(),
            op,
            r.implementation.clone(),
            r.timing.iterations.to_string(),
            fixed(r.timing.total_ns as f64 / 1e6, 1),
            fixed(r.timing.mean_us(), 1),
            fixed(r.timing.median_us(), 1),
            fixed(r.timing.ops_per_sec, 1),
            r.timing
                .tsc_cycles_per_op
                .map_or_else(|| "-".to_owned(), |c| fixed(c, 0)),
            r.hash_path.unwrap_or("-").to_owned(),
            limit(r),
        ]);
    }
    t
}

/// The limit column: the row's limit in µs, or "-".
fn limit(r: &Row) -> String {
    r.limit_ns
        .map_or_else(|| "-".to_owned(), |l| fixed(l / 1e3, 1))
}

/// The peer family of an implementation: its first word ("liboqs", "libcrux", "RustCrypto").
fn family(implementation: &str) -> &str {
    implementation
        .split([' ', '-'])
        .next()
        .unwrap_or(implementation)
}

/// pqkit beside its peers, one row per (algorithm, operation) that has peers: mean µs per
/// implementation family and the ratio pqkit / fastest peer (below 1: pqkit is faster).
/// `None` when no peers ran.
pub fn crypto_peers(rows: &[Row]) -> Option<Table> {
    let mut families: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| !r.is_pqkit()) {
        if !families.contains(&family(&r.implementation)) {
            families.push(family(&r.implementation));
        }
    }
    if families.is_empty() {
        return None;
    }
    let mut headers = vec!["algorithm", "operation", "hash path", "pqkit µs"];
    let peer_headers: Vec<String> = families.iter().map(|f| format!("{f} µs")).collect();
    headers.extend(peer_headers.iter().map(String::as_str));
    headers.push("pqkit / fastest peer");
    headers.push("limit µs");
    let mut t = Table::new(
        "pqkit beside its peers (mean µs per operation, same run; ratio below 1: pqkit faster)",
        &headers,
    );
    for r in rows.iter().filter(|r| r.ratio_to_fastest_peer.is_some()) {
        // Stateful schemes have several pqkit rows per operation (threads, one tree): the
        // operation names which.
        let operation = match r.implementation.split_once(" (") {
            Some((_, which)) if r.kind == "stateful" || which.contains("threads") => {
                format!("{} ({which}", r.operation)
            }
            _ => r.operation.to_owned(),
        };
        let mut cells = vec![
            r.algorithm.to_owned(),
            operation,
            r.hash_path.unwrap_or("-").to_owned(),
            fixed(r.timing.mean_us(), 1),
        ];
        for f in &families {
            let peer = rows.iter().find(|p| {
                !p.is_pqkit()
                    && p.algorithm == r.algorithm
                    && p.operation == r.operation
                    && family(&p.implementation) == *f
            });
            cells.push(peer.map_or_else(|| "-".to_owned(), |p| fixed(p.timing.mean_us(), 1)));
        }
        cells.push(
            r.ratio_to_fastest_peer
                .map_or_else(String::new, |x| fixed(x, 2)),
        );
        cells.push(limit(r));
        t.rows.push(cells);
    }
    Some(t)
}

/// The `bench handshake` matrix.
pub fn handshake(rows: &[handshake::Row], skipped: &[handshake::Skipped]) -> Table {
    let mut t = Table::new(
        "TLS 1.3 handshakes (median ms; bytes on the wire incl. record headers and the two \
         application messages; heap peak/total KiB and allocations; stack KiB)",
        &[
            "signature",
            "group",
            "mutual",
            "client ms",
            "server ms",
            "C→S bytes",
            "S→C bytes",
            "total bytes",
            "client heap peak/total KiB (allocs)",
            "server heap peak/total KiB (allocs)",
            "client stack KiB",
            "server stack KiB",
        ],
    );
    let kib = |b: u64| fixed(b as f64 / 1024.0, 1);
    let stack = |s: Option<usize>| s.map_or_else(|| "-".to_owned(), |b| kib(b as u64));
    for r in rows {
        t.rows.push(vec![
            r.signature.to_owned(),
            r.group.clone(),
            yes_no(r.mutual),
            fixed(r.client_handshake_ms, 2),
            fixed(r.server_handshake_ms, 2),
            r.client_to_server_bytes.to_string(),
            r.server_to_client_bytes.to_string(),
            r.total_bytes.to_string(),
            format!(
                "{}/{} ({})",
                kib(r.client_heap.peak_bytes),
                kib(r.client_heap.total_bytes),
                r.client_heap.allocations
            ),
            format!(
                "{}/{} ({})",
                kib(r.server_heap.peak_bytes),
                kib(r.server_heap.total_bytes),
                r.server_heap.allocations
            ),
            stack(r.client_stack_bytes),
            stack(r.server_stack_bytes),
        ]);
    }
    for s in skipped {
        t.rows.push(vec![
            s.signature.to_owned(),
            s.group.clone(),
            yes_no(s.mutual),
            format!("skipped: {}", s.reason),
        ]);
    }
    t
}

/// Bytes by message type for each handshake row.
pub fn breakdown(rows: &[handshake::Row]) -> Table {
    let mut t = Table::new(
        "Bytes on the wire by message type",
        &[
            "signature",
            "group",
            "mutual",
            "direction",
            "kind",
            "count",
            "bytes",
        ],
    );
    for r in rows {
        for p in &r.breakdown {
            t.rows.push(vec![
                r.signature.to_owned(),
                r.group.clone(),
                yes_no(r.mutual),
                match p.direction {
                    crate::wire::Direction::ClientToServer => "C→S",
                    crate::wire::Direction::ServerToClient => "S→C",
                }
                .to_owned(),
                p.kind.clone(),
                p.count.to_string(),
                p.bytes.to_string(),
            ]);
        }
    }
    t
}

/// The `bench boundary` table.
pub fn boundary(rows: &[boundary::Row]) -> Table {
    let mut t = Table::new(
        "Signing inside vs outside the key's boundary (median ms)",
        &[
            "signer",
            "algorithm",
            "mode",
            "type",
            "message bytes",
            "bytes into signer",
            "outside ms",
            "inside ms",
            "total ms",
        ],
    );
    for r in rows {
        t.rows.push(vec![
            r.signer.clone(),
            r.algorithm.to_owned(),
            r.mode.clone(),
            r.boundary_type.to_owned(),
            r.message_bytes.to_string(),
            r.bytes_into_signer.to_string(),
            fixed(r.outside_ns / 1e6, 3),
            fixed(r.inside_ns / 1e6, 3),
            fixed(r.total_ns / 1e6, 3),
        ]);
    }
    t
}

/// The `bench tls` table.
pub fn tls(rows: &[tls::Row]) -> Table {
    let mut t = Table::new(
        "TLS 1.3 connections and bulk transfer (MB = 10^6 plaintext bytes)",
        &[
            "signature",
            "server key",
            "group",
            "mutual",
            "cipher suite",
            "pairs",
            "connections",
            "connections/s",
            "avg connect ms",
            "TX MB/s",
            "RX MB/s",
        ],
    );
    for r in rows {
        t.rows.push(vec![
            r.signature.to_owned(),
            r.server_key.clone(),
            r.group.clone(),
            yes_no(r.mutual),
            r.cipher_suite.clone(),
            r.pairs.to_string(),
            r.connections.to_string(),
            fixed(r.connections_per_sec, 1),
            fixed(r.mean_connect_ms, 2),
            fixed(r.tx_mb_per_sec, 1),
            fixed(r.rx_mb_per_sec, 1),
        ]);
    }
    t
}

/// `bench primitives`: one table per kind, one row per (algorithm, mode, operation,
/// implementation): the rate on one core, on every core, and the scaling factor.
pub fn primitives(rows: &[crate::primitives::Row]) -> Vec<Table> {
    use crate::primitives::Kind;
    let threads = rows.first().map_or(1, |r| r.threads);
    let all = format!("{threads} threads");
    let mut tables = Vec::new();
    for (kind, title, unit) in [
        (Kind::Cipher, "Block ciphers in modes (encryption)", "MB/s"),
        (Kind::Hash, "Hash functions", "MB/s"),
        (Kind::Signature, "Signatures", "ops/s"),
    ] {
        let one = format!("{unit}, 1 thread");
        let many = format!("{unit}, {all}");
        let mut t = Table::new(
            title,
            &[
                "algorithm",
                "mode",
                "operation",
                "implementation",
                &one,
                &many,
                "scaling",
            ],
        );
        for r in rows.iter().filter(|r| r.kind == kind) {
            let rate = |x: &crate::primitives::Rate| match x.mb_per_sec {
                Some(mb) => format!("{mb:.1}"),
                None => format!("{:.1}", x.ops_per_sec),
            };
            t.rows.push(vec![
                r.algorithm.clone(),
                r.mode.unwrap_or("-").to_owned(),
                r.operation.to_owned(),
                r.implementation.to_owned(),
                rate(&r.one_core),
                rate(&r.all_cores),
                format!("{:.2}×", r.scaling),
            ]);
        }
        if !t.rows.is_empty() {
            tables.push(t);
        }
    }
    tables
}

/// `bench handshake --preset`: the reference document's rows by its labels, pqkit's handshake
/// figures, and the KEM bytes compared exactly where the document's are known.
pub fn preset(preset: &crate::preset::Preset, rows: &[handshake::Row]) -> Table {
    let mut t = Table::new(
        &format!(
            "{} on this machine (the document's platform: {}; {})",
            preset.document, preset.platform, preset.missing
        ),
        &[
            "row",
            "signature",
            "group",
            "mutual",
            "client ms",
            "server ms",
            "C→S bytes",
            "S→C bytes",
            "KEM pk/ct bytes (pqkit)",
            "KEM pk/ct bytes (document)",
            "Δ pk/ct bytes",
        ],
    );
    for p in preset.rows {
        let ours = crate::preset::kem_bytes(p.group);
        let theirs = p.their_kem_bytes;
        for r in rows.iter().filter(|r| {
            r.signature == p.signature
                && pqkit_rustls::find_group(p.group)
                    .is_ok_and(|g| pqkit_rustls::group_name(g) == r.group)
        }) {
            t.rows.push(vec![
                p.label.to_owned(),
                r.signature.to_owned(),
                r.group.clone(),
                yes_no(r.mutual),
                fixed(r.client_handshake_ms, 2),
                fixed(r.server_handshake_ms, 2),
                r.client_to_server_bytes.to_string(),
                r.server_to_client_bytes.to_string(),
                ours.map_or_else(|| "-".to_owned(), |(pk, ct)| format!("{pk}/{ct}")),
                theirs.map_or_else(
                    || "not available".to_owned(),
                    |k| format!("{}/{} ({})", k.public_key, k.ciphertext, k.source),
                ),
                match (ours, theirs) {
                    (Some((pk, ct)), Some(k)) => format!(
                        "{:+}/{:+}",
                        pk as i64 - k.public_key as i64,
                        ct as i64 - k.ciphertext as i64
                    ),
                    _ => "-".to_owned(),
                },
            ]);
        }
    }
    t
}
