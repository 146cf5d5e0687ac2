//! The reference documents' own figures (`../shared/seeds/`, whose README lists them), as data:
//! one tab-separated file per document in `reference/`, compiled in. Each figure is copied as
//! printed, with the line of the seed file it is on; beside it, where pqkit measures the same
//! thing, a mapping names the pqkit result that is compared with it. [`crate::documents`]
//! renders one page per document from these and a report's measurements.
//!
//! Line kinds (fields separated by tabs; `#` starts a comment line):
//!
//! | kind | fields |
//! |---|---|
//! | `document` | key (the page's file stem), title, seed file |
//! | `table` | id, caption, platform and conditions as the document states them, seed line |
//! | `row` | table id, row label, column, number, unit, seed line |
//! | `note` | table id (or `*` for the whole document), text |
//! | `pqkit` | table id, row label, column, result kind, filter, field, conversion[, note] |
//!
//! A `pqkit` line's result kind is a benchmark's JSON `kind` (`crypto`, `handshake`, `tls`,
//! `boundary`, `primitives`) or `catalogue` (the algorithms' sizes); its filter is
//! `key=value,…` over the fields of one JSON row (dotted keys reach into objects; a number or
//! boolean is compared as its JSON text; `key^=value` matches a string that starts with
//! `value`, for names that carry a backend's version); its field is a dotted path to a number; its
//! conversion turns that number into the document's unit: `x`, `x*K` or `K/x`.

/// One reference document.
#[derive(Clone, Debug, Default)]
pub struct Document {
    /// The page's file stem, e.g. "m4-paper".
    pub key: String,
    /// Its title.
    pub title: String,
    /// The seed file, e.g. "001_ac347e742201ada0.txt".
    pub seed: String,
    /// Notes on the whole document.
    pub notes: Vec<String>,
    /// Its numeric tables, in its order.
    pub tables: Vec<RefTable>,
}

/// One table of a reference document.
#[derive(Clone, Debug, Default)]
pub struct RefTable {
    /// Short id, e.g. "table2".
    pub id: String,
    /// Caption (in English).
    pub caption: String,
    /// Platform and conditions as the document states them.
    pub platform: String,
    /// First line of the table in the seed file.
    pub line: u32,
    /// Its figures, in the document's order.
    pub cells: Vec<Cell>,
    /// Notes on its comparison with pqkit.
    pub notes: Vec<String>,
    /// Which pqkit result each compared cell is set beside.
    pub mappings: Vec<Mapping>,
}

/// One figure of a reference table.
#[derive(Clone, Debug)]
pub struct Cell {
    /// Row label as printed.
    pub row: String,
    /// Column name (in English).
    pub column: String,
    /// The figure.
    pub value: f64,
    /// The figure as the data file gives it (the seed's digits, without thousands
    /// separators, with a decimal point).
    pub text: String,
    /// Its unit: "bytes", "ms", "ops/s", "MB/s", …
    pub unit: String,
    /// Line of the seed file it is on.
    pub line: u32,
}

/// The pqkit result compared with one cell.
#[derive(Clone, Debug)]
pub struct Mapping {
    /// The cell's row label.
    pub row: String,
    /// The cell's column.
    pub column: String,
    /// The result set: a benchmark's `kind`, or "catalogue".
    pub kind: String,
    /// What one result row must match.
    pub filter: Vec<Filter>,
    /// Dotted path to the number in that row.
    pub field: String,
    /// How the number becomes the document's unit.
    pub convert: Convert,
    /// What differs between the two figures, if anything.
    pub note: Option<String>,
}

/// One condition of a [`Mapping`]'s filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// Dotted path to the field.
    pub key: String,
    /// The text it is compared with.
    pub value: String,
    /// Whether a string field need only start with `value` (`key^=value`).
    pub prefix: bool,
}

impl Filter {
    fn parse(text: &str) -> Option<Self> {
        let (key, value) = text.split_once('=')?;
        let (key, prefix) = match key.strip_suffix('^') {
            Some(k) => (k, true),
            None => (key, false),
        };
        Some(Self {
            key: key.trim().to_owned(),
            value: value.trim().to_owned(),
            prefix,
        })
    }
}

/// A conversion from a pqkit figure to a reference unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Convert {
    /// `x * k` (`x` alone is `Scale(1.0)`).
    Scale(f64),
    /// `k / x`.
    Inverse(f64),
}

impl Convert {
    /// Applies the conversion; `None` for `k / 0`.
    pub fn apply(self, x: f64) -> Option<f64> {
        match self {
            Self::Scale(k) => Some(x * k),
            Self::Inverse(_) if x == 0.0 => None,
            Self::Inverse(k) => Some(k / x),
        }
    }

    fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text == "x" {
            return Some(Self::Scale(1.0));
        }
        if let Some(k) = text.strip_prefix("x*") {
            return k.trim().parse().ok().map(Self::Scale);
        }
        let k = text.strip_suffix("/x")?;
        k.trim().parse().ok().map(Self::Inverse)
    }
}

/// Every reference document, parsed.
///
/// # Errors
/// The file and line of the first malformed line (the files are compiled in, so a test runs
/// this once).
pub fn documents() -> Result<Vec<Document>, String> {
    SOURCES
        .iter()
        .map(|(file, text)| parse(text).map_err(|e| format!("reference/{file}: {e}")))
        .collect()
}

/// The documents, in the seeds' order.
const SOURCES: [(&str, &str); 4] = [
    ("wolfssl.tsv", include_str!("../reference/wolfssl.tsv")),
    ("m4-paper.tsv", include_str!("../reference/m4-paper.tsv")),
    (
        "hsm-boundary.tsv",
        include_str!("../reference/hsm-boundary.tsv"),
    ),
    (
        "cipher-plus.tsv",
        include_str!("../reference/cipher-plus.tsv"),
    ),
];

/// Parses one document's file.
fn parse(text: &str) -> Result<Document, String> {
    let mut doc = Document::default();
    for (n, line) in text.lines().enumerate() {
        let at = |why: &str| format!("line {}: {why}", n + 1);
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split('\t').map(str::trim).collect();
        let need = |count: usize| {
            if f.len() < count {
                Err(at(&format!("{} needs {} fields", f[0], count - 1)))
            } else {
                Ok(())
            }
        };
        let number = |s: &str| s.parse::<u32>().map_err(|_| at("not a line number"));
        let table = |doc: &mut Document, id: &str| -> Result<usize, String> {
            doc.tables
                .iter()
                .position(|t| t.id == id)
                .ok_or_else(|| at(&format!("no table {id:?} before this line")))
        };
        match f[0] {
            "document" => {
                need(4)?;
                doc.key = f[1].to_owned();
                doc.title = f[2].to_owned();
                doc.seed = f[3].to_owned();
            }
            "table" => {
                need(5)?;
                doc.tables.push(RefTable {
                    id: f[1].to_owned(),
                    caption: f[2].to_owned(),
                    platform: f[3].to_owned(),
                    line: number(f[4])?,
                    ..RefTable::default()
                });
            }
            "row" => {
                need(7)?;
                let t = table(&mut doc, f[1])?;
                doc.tables[t].cells.push(Cell {
                    row: f[2].to_owned(),
                    column: f[3].to_owned(),
                    value: f[4].parse().map_err(|_| at("not a number"))?,
                    text: f[4].to_owned(),
                    unit: f[5].to_owned(),
                    line: number(f[6])?,
                });
            }
            "note" if f.get(1) == Some(&"*") => {
                need(3)?;
                doc.notes.push(f[2].to_owned());
            }
            "note" => {
                need(3)?;
                let t = table(&mut doc, f[1])?;
                doc.tables[t].notes.push(f[2].to_owned());
            }
            "pqkit" => {
                need(8)?;
                let t = table(&mut doc, f[1])?;
                let filter = f[5]
                    .split(',')
                    .filter(|p| !p.trim().is_empty())
                    .map(|p| {
                        Filter::parse(p)
                            .ok_or_else(|| at(&format!("filter {p:?} is not key=value")))
                    })
                    .collect::<Result<_, _>>()?;
                let m = Mapping {
                    row: f[2].to_owned(),
                    column: f[3].to_owned(),
                    kind: f[4].to_owned(),
                    filter,
                    field: f[6].to_owned(),
                    convert: Convert::parse(f[7])
                        .ok_or_else(|| at("conversion is not x, x*K or K/x"))?,
                    note: f.get(8).filter(|s| !s.is_empty()).map(|s| (*s).to_owned()),
                };
                let cells = &doc.tables[t].cells;
                if !cells.iter().any(|c| c.row == m.row && c.column == m.column) {
                    return Err(at(&format!(
                        "no figure at row {:?}, column {:?} of table {}",
                        m.row, m.column, f[1]
                    )));
                }
                doc.tables[t].mappings.push(m);
            }
            other => return Err(at(&format!("unknown line kind {other:?}"))),
        }
    }
    if doc.key.is_empty() {
        return Err("no document line".into());
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_file_parses_and_maps_only_known_kinds() {
        let docs = documents().expect("the reference files parse");
        let keys: Vec<&str> = docs.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(keys, ["wolfssl", "m4-paper", "hsm-boundary", "cipher-plus"]);
        for d in &docs {
            assert!(!d.tables.is_empty(), "{}: no table", d.key);
            let mapped: usize = d.tables.iter().map(|t| t.mappings.len()).sum();
            assert!(mapped > 0, "{}: nothing compared with pqkit", d.key);
            for t in &d.tables {
                for m in &t.mappings {
                    assert!(
                        crate::documents::KINDS.contains(&m.kind.as_str()),
                        "{}/{}: unknown result kind {:?}",
                        d.key,
                        t.id,
                        m.kind
                    );
                }
            }
        }
    }

    #[test]
    fn the_seed_line_of_every_figure_holds_it() {
        // The seeds are beside the repository (`../shared/seeds`), as in CI.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/seeds");
        let Ok(names) = std::fs::read_dir(&dir) else {
            panic!("{}: the reference documents are missing", dir.display());
        };
        let names: Vec<_> = names.filter_map(Result::ok).map(|e| e.path()).collect();
        for d in documents().expect("parses") {
            let path = names
                .iter()
                .find(|p| p.file_name().is_some_and(|n| n == d.seed.as_str()))
                .unwrap_or_else(|| panic!("{}: seed {} not in {}", d.key, d.seed, dir.display()));
            let text = std::fs::read_to_string(path).expect("seed is text");
            let lines: Vec<&str> = text.lines().collect();
            for t in &d.tables {
                for c in &t.cells {
                    let line = (c.line as usize)
                        .checked_sub(1)
                        .and_then(|i| lines.get(i))
                        .copied()
                        .unwrap_or("");
                    // The figure verbatim, once thousands separators (spaces) are gone and a
                    // decimal comma is a point.
                    let printed: String = line
                        .chars()
                        .filter(|ch| !ch.is_whitespace())
                        .map(|ch| if ch == ',' { '.' } else { ch })
                        .collect();
                    assert!(
                        printed.contains(&c.text),
                        "{} {} {:?}/{:?} = {}: line {} of {} does not hold it",
                        d.key,
                        t.id,
                        c.row,
                        c.column,
                        c.text,
                        c.line,
                        d.seed
                    );
                }
            }
        }
    }
}
