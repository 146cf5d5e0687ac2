//! One Markdown page per reference document ([`crate::reference`]): each of its tables that
//! pqkit reproduces, every compared figure printed beside pqkit's from the same report, with
//! the seed line it was copied from. `pqkit report` writes them beside `index.html`; the book's
//! "Measured figures" chapter holds the pages of one run on the machine each page names.
//!
//! How a pair is compared depends on the document's unit: for a time (ns, µs, ms, s, cycles)
//! the ratio is theirs ÷ pqkit's, for a rate (ops/s, MB/s) pqkit's ÷ theirs — above 1, pqkit
//! is faster on this machine than the document's implementation was on its own —, and for
//! bytes and counts the difference, pqkit's − theirs. Machines differ: a ratio says how far
//! apart two implementations on two machines are, and the spread of ratios down a table says
//! where pqkit's relative cost differs from theirs.

use serde_json::Value;

use crate::machine::Machine;
use crate::reference::{Document, Filter, Mapping, RefTable};

/// The result sets a mapping may name.
pub const KINDS: [&str; 6] = [
    "crypto",
    "handshake",
    "tls",
    "boundary",
    "primitives",
    "catalogue",
];

/// The rows a page draws on: every measurement's `rows` by kind, and the catalogue's sizes.
pub struct Results<'a> {
    sets: Vec<(&'a str, &'a [Value])>,
    catalogue: Vec<Value>,
}

impl<'a> Results<'a> {
    /// The `rows` of each `(kind, JSON body)` of a report (several of one kind are searched
    /// in order) and the catalogue's algorithm sizes.
    pub fn new(bodies: &[(&'a str, &'a Value)]) -> Self {
        let sets = bodies
            .iter()
            .filter_map(|&(kind, body)| Some((kind, body.get("rows")?.as_array()?.as_slice())))
            .collect();
        Self {
            sets,
            catalogue: catalogue_sizes(),
        }
    }

    /// The number `m` names, converted to the document's unit; `None` when no row matches
    /// (not measured in this run) or the field is not a number.
    pub fn figure(&self, m: &Mapping) -> Option<f64> {
        let catalogue = [("catalogue", self.catalogue.as_slice())];
        let row = self
            .sets
            .iter()
            .chain(&catalogue)
            .filter(|(kind, _)| *kind == m.kind)
            .flat_map(|(_, rows)| rows.iter())
            .find(|row| {
                m.filter
                    .iter()
                    .all(|f| lookup(row, &f.key).is_some_and(|x| matches(x, f)))
            })?;
        let x = lookup(row, &m.field)?.as_f64()?;
        // A heap figure of 0 is a run without pqkit's counting allocator (`pqkit-heap` not
        // beside `pqkit`), not a handshake that allocated nothing.
        if x == 0.0 && m.field.contains("heap") {
            return None;
        }
        m.convert.apply(x)
    }
}

/// The value at a dotted path.
fn lookup<'v>(row: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(row, |v, key| v.get(key))
}

/// A JSON value against a filter: a string exactly (or by its start), anything else as its
/// JSON text.
fn matches(value: &Value, f: &Filter) -> bool {
    match value {
        Value::String(s) if f.prefix => s.starts_with(&f.value),
        Value::String(s) => *s == f.value,
        other => serde_json::to_string(other).is_ok_and(|text| text == f.value),
    }
}

/// Every catalogue algorithm's name and sizes in bytes, as `pqkit list --json` gives them.
fn catalogue_sizes() -> Vec<Value> {
    use pqkit_core::catalogue;
    let sig = catalogue::signatures().iter().map(|a| {
        (
            a.name,
            a.verifying_key_size,
            a.signing_key_size,
            a.signature_size,
        )
    });
    let kem = catalogue::kems().iter().map(|k| {
        (
            k.name,
            k.encapsulation_key_size,
            k.decapsulation_key_size,
            k.ciphertext_size,
        )
    });
    sig.chain(kem)
        .map(|(name, public, private, sig_or_ct)| {
            serde_json::json!({
                "name": name,
                "public_key_bytes": public,
                "private_key_bytes": private,
                "signature_or_ciphertext_bytes": sig_or_ct,
            })
        })
        .collect()
}

/// How a unit compares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scale {
    /// Less is faster.
    Time,
    /// More is faster.
    Rate,
    /// Bytes, counts: compared by difference.
    Amount,
}

fn scale(unit: &str) -> Scale {
    match unit.trim() {
        "ns" | "us" | "µs" | "ms" | "s" | "cycles" => Scale::Time,
        u if u.ends_with("/s") => Scale::Rate,
        _ => Scale::Amount,
    }
}

/// A figure with about four significant digits (whole numbers whole).
fn number(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        // Digits after the point for four significant ones: 1.234, 0.01234 (up to 12).
        let decimals = (0..12usize)
            .find(|&d| a * 10f64.powi(i32::try_from(d).unwrap_or(0)) >= 1000.0)
            .unwrap_or(12);
        format!("{v:.*}", decimals)
    }
}

/// A ratio with three significant digits (two decimals below 10).
fn ratio(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}×")
    } else if r >= 10.0 {
        format!("{r:.1}×")
    } else {
        format!("{r:.2}×")
    }
}

/// The comparison cell of one pair.
fn compare(unit: &str, theirs: f64, ours: f64) -> String {
    match scale(unit) {
        Scale::Time if ours > 0.0 => ratio(theirs / ours),
        Scale::Rate if theirs > 0.0 => ratio(ours / theirs),
        Scale::Amount => {
            let d = ours - theirs;
            if d == 0.0 {
                "same".into()
            } else {
                format!("{}{}", if d > 0.0 { "+" } else { "−" }, number(d.abs()))
            }
        }
        _ => "—".into(),
    }
}

/// Markdown cell text: no pipes or line breaks.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// Every document's page: `(file name, Markdown)`, e.g. `("m4-paper.md", …)`, from a
/// report's `(kind, JSON body)` pairs. `run` says which suite produced them ("standard",
/// "quick").
pub fn pages(
    docs: &[Document],
    machine: &Machine,
    bodies: &[(&str, &Value)],
    run: &str,
) -> Vec<(String, String)> {
    let results = Results::new(bodies);
    docs.iter()
        .map(|d| (format!("{}.md", d.key), page(d, machine, &results, run)))
        .collect()
}

fn page(d: &Document, machine: &Machine, results: &Results<'_>, run: &str) -> String {
    let mut out = format!(
        "# {}\n\n<!-- Generated by `pqkit report`; do not edit by hand. -->\n\n\
         pqkit's figures: the {run} suite of `pqkit report` on {}.\n\n\
         The document's figures are copied as printed from `../shared/seeds/{}`; the last \
         column gives the line of that file each one is on. Ratios: for a time, theirs ÷ \
         pqkit's; for a rate, pqkit's ÷ theirs (above 1, pqkit is faster here than the \
         document's implementation was on its machine); for bytes and counts, pqkit's − \
         theirs. \"not in this run\": the report did not measure that row (the quick suite \
         measures a few; heap figures need `pqkit-heap` beside `pqkit`).\n\n",
        d.title,
        machine.line(),
        d.seed
    );
    for n in &d.notes {
        out.push_str(&format!("{n}\n\n"));
    }
    let (compared, other): (Vec<&RefTable>, Vec<&RefTable>) =
        d.tables.iter().partition(|t| !t.mappings.is_empty());
    for t in compared {
        out.push_str(&table(t, results));
    }
    if !other.is_empty() {
        out.push_str("## Tables not compared\n\n");
        for t in other {
            out.push_str(&format!(
                "- {} (`{}`, line {}, {} figures).",
                t.caption,
                t.id,
                t.line,
                t.cells.len()
            ));
            for n in &t.notes {
                out.push_str(&format!(" {n}"));
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

fn table(t: &RefTable, results: &Results<'_>) -> String {
    let mut out = format!(
        "## {}\n\nTable `{}`, line {}. Their platform: {}\n\n",
        t.caption, t.id, t.line, t.platform
    );
    for n in &t.notes {
        out.push_str(&format!("- {n}\n"));
    }
    if !t.notes.is_empty() {
        out.push('\n');
    }
    out.push_str(
        "| row | column | theirs | pqkit | unit | ratio | pqkit runs | line |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let mut measured = 0;
    for m in &t.mappings {
        let Some(c) = t
            .cells
            .iter()
            .find(|c| c.row == m.row && c.column == m.column)
        else {
            continue;
        };
        let ours = results.figure(m);
        measured += usize::from(ours.is_some());
        let what: Vec<&str> = m
            .filter
            .iter()
            .filter(|f| f.key != "implementation" && f.key != "mutual")
            .map(|f| f.value.as_str())
            .collect();
        let runs = match &m.note {
            Some(n) => format!("{} ({n})", what.join(", ")),
            None => what.join(", "),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            cell(&c.row),
            cell(&c.column),
            number(c.value),
            ours.map_or_else(|| "not in this run".into(), number),
            cell(&c.unit),
            ours.map_or_else(|| "—".into(), |o| compare(&c.unit, c.value, o)),
            cell(&runs),
            c.line
        ));
    }
    out.push_str(&format!(
        "\n{} of the table's {} figures compared; {} measured in this run.\n\n",
        t.mappings.len(),
        t.cells.len(),
        measured
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_compare_the_right_way_round() {
        assert_eq!(compare("ms", 10.0, 2.0), "5.00×");
        assert_eq!(compare("ops/s", 100.0, 400.0), "4.00×");
        assert_eq!(compare("bytes", 800.0, 800.0), "same");
        assert_eq!(compare("bytes", 800.0, 832.0), "+32");
        assert_eq!(compare("bytes", 2249.0, 2241.0), "−8");
        assert_eq!(compare("ms", 1.0, 3.0), "0.33×");
        assert_eq!(number(0.000_48), "0.0004800");
        assert_eq!(number(12.345_6), "12.35");
        assert_eq!(number(49_648.0), "49648");
        assert_eq!(compare("MB/s", 1.0, 1234.0), "1234×");
    }

    #[test]
    fn a_mapping_finds_its_row_and_converts() {
        let body = serde_json::json!({"rows": [
            {"algorithm": "ML-KEM-512", "operation": "keygen", "mean_ns": 20000.0},
            {"algorithm": "ML-KEM-768", "operation": "keygen", "mean_ns": 30000.0, "mutual": true},
        ]});
        let results = Results::new(&[("crypto", &body)]);
        let mapping = |filter: &[(&str, &str)], field: &str, convert| Mapping {
            row: "Kyber768".into(),
            column: "Key Generate".into(),
            kind: "crypto".into(),
            filter: filter
                .iter()
                .map(|(k, v)| Filter {
                    key: (*k).to_owned(),
                    value: (*v).to_owned(),
                    prefix: false,
                })
                .collect(),
            field: field.into(),
            convert,
            note: None,
        };
        use crate::reference::Convert::{Inverse, Scale};
        let ms = results.figure(&mapping(
            &[("algorithm", "ML-KEM-768"), ("mutual", "true")],
            "mean_ns",
            Scale(1e-6),
        ));
        assert_eq!(ms, Some(0.03));
        let per_s = results.figure(&mapping(
            &[("algorithm", "ML-KEM-512")],
            "mean_ns",
            Inverse(1e9),
        ));
        assert_eq!(per_s, Some(50000.0));
        let mut by_prefix = mapping(&[("algorithm", "ML-KEM-")], "mean_ns", Scale(1.0));
        assert_eq!(results.figure(&by_prefix), None, "exact unless ^=");
        by_prefix.filter[0].prefix = true;
        assert_eq!(
            results.figure(&by_prefix),
            Some(20000.0),
            "the first row that starts so"
        );
        assert_eq!(
            results.figure(&mapping(&[("algorithm", "HQC-1")], "mean_ns", Scale(1.0))),
            None
        );
        let size = Mapping {
            kind: "catalogue".into(),
            ..mapping(&[("name", "ML-KEM-768")], "public_key_bytes", Scale(1.0))
        };
        assert_eq!(results.figure(&size), Some(1184.0));
    }
}
