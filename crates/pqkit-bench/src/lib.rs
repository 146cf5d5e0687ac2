//! pqkit-bench: measurement on the user's own machine, peers side by side in the same run.
//!
//! - [`crypto`]: ops/s, µs and TSC cycles per operation for every catalogue algorithm and the
//!   stateful hash-based schemes ([`stateful`]).
//! - [`handshake`]: the (signature × named group) TLS 1.3 matrix — time, bytes on the wire by
//!   message type ([`wire`]), heap per side ([`heap`]), stack per side ([`stack`]).
//! - [`tls`]: connections/s, connect time and bulk MB/s each way (tls_bench style).
//! - [`servers`]: TLS servers side by side under a load generator ([`load`]): `pqkit server`,
//!   `pqkit proxy`, OpenSSL `s_server`, Go — connections/s, latency percentiles, server CPU.
//! - [`boundary`]: signing time versus message size inside and outside the key's boundary.
//! - [`ledger`]: stateful signatures per second with each reservation ledger (none, SQLite,
//!   an etcd cluster for one and several signers; [`etcd`] starts one).
//! - [`primitives`]: AES modes, GOST ciphers, SHA/GOST/Kupyna hashes, ECDSA, Ed25519 and RSA
//!   in MB/s and ops/s, on one core and on every core.
//! - [`render`]: aligned text, Markdown and HTML tables; [`plot`]: SVG plots.
//! - [`suite`]: each benchmark as JSON + tables + plots, and the `pqkit report` HTML page.
//! - [`reference`]: the reference documents' own figures, as data; [`documents`]: one page per
//!   document with pqkit's figures beside them.
//!
//! Every report names the machine ([`machine::Machine`]): CPU, SIMD features, build profile,
//! timer and backends. Timings are medians of repeated runs; comparisons are ratios measured
//! in the same run. Heap figures need the program to install [`heap::TrackingAllocator`]; the
//! library installs no global allocator.

pub mod boundary;
pub mod crypto;
pub mod documents;
pub mod engine;
pub mod etcd;
pub mod handshake;
pub mod heap;
pub mod ledger;
pub mod load;
pub mod machine;
#[cfg(feature = "peers")]
pub mod peers;
pub mod plot;
pub mod preset;
pub mod primitives;
pub mod reference;
pub mod render;
pub mod row;
pub mod servers;
pub mod stack;
pub mod stateful;
pub mod suite;
pub mod timing;
pub mod tls;
pub mod wire;

/// The JSON schema every report follows; bumped on any incompatible change. The schema itself
/// is `schema/pqkit-bench-1.json` in this crate ([`SCHEMA_JSON`]).
pub const SCHEMA: &str = "pqkit-bench/1";

/// The JSON Schema (draft 2020-12) of [`SCHEMA`].
pub const SCHEMA_JSON: &str = include_str!("../schema/pqkit-bench-1.json");

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
