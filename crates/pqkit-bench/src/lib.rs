//! pqkit-bench: measurement on the user's own machine, peers side by side in the same run.
//!
//! - [`crypto`]: ops/s, µs and TSC cycles per operation for every catalogue algorithm.
//! - [`handshake`]: the (signature × named group) TLS 1.3 matrix — time, bytes on the wire by
//!   message type ([`wire`]), heap per side ([`heap`]), stack per side ([`stack`]).
//! - [`boundary`]: signing time versus message size inside and outside the key's boundary.
//! - [`render`]: aligned text tables, Markdown, and the JSON envelope ([`Report`]).
//!
//! Every report names the machine ([`machine::Machine`]): CPU, SIMD features, build profile,
//! timer and backends. Timings are medians of repeated runs; comparisons are ratios measured
//! in the same run. Linking this crate installs a counting global allocator ([`heap`]).

pub mod boundary;
pub mod crypto;
pub mod handshake;
pub mod heap;
pub mod machine;
pub mod render;
pub mod session;
pub mod stack;
pub mod timing;
pub mod wire;

use serde::Serialize;

/// The JSON schema every report follows; bumped on any incompatible change. The schema itself
/// is `schema/pqkit-bench-1.json` in this crate.
pub const SCHEMA: &str = "pqkit-bench/1";

/// The JSON envelope of every report.
#[derive(Debug, Serialize)]
pub struct Report<T: Serialize> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// "crypto", "handshake" or "boundary".
    pub kind: &'static str,
    /// Where it was measured.
    pub machine: machine::Machine,
    /// The measurement's own rows.
    #[serde(flatten)]
    pub body: T,
}

impl<T: Serialize> Report<T> {
    /// Wraps `body` with the schema name and this machine.
    pub fn new(kind: &'static str, body: T) -> Self {
        Self {
            schema: SCHEMA,
            kind,
            machine: machine::Machine::detect(),
            body,
        }
    }
}

/// A progress bar on stderr (drawn only when stderr is a terminal).
pub struct Progress(indicatif::ProgressBar);

impl Progress {
    /// A bar of `len` steps labelled `what`.
    pub fn new(what: &str, len: u64) -> Self {
        let bar = indicatif::ProgressBar::new(len);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(what.to_owned());
        Self(bar)
    }

    /// Starts the next step, named `msg`.
    pub fn step(&self, msg: &str) {
        if self.0.position() > 0 || !self.0.message().is_empty() {
            self.0.inc(1);
        }
        self.0.set_message(msg.to_owned());
    }

    /// Ends the bar and clears it.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}
