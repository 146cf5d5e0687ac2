//! `pqkit`: fully post-quantum TLS 1.3, PKI and measurement from one command.
//!
//! The command line lives here; two binaries run it: `pqkit` (the system allocator) and
//! `pqkit-heap` (pqkit-bench's counting allocator, started by `pqkit demo` and
//! `pqkit bench handshake` for their heap figures, see [`heap_rerun`]).

mod bench_cmd;
mod catalogue_cmd;
mod cms_cmd;
mod commands;
mod csr_cmd;
mod failure;
mod files;
mod hbs_cmd;
mod heap_rerun;
mod proxy_cmd;
mod token_cmd;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use pqkit_pki::output::Overwrite;

use crate::failure::Failure;

/// pqkit — post-quantum TLS 1.3, PKI and measurement.
#[derive(Parser)]
#[command(name = "pqkit", version, after_help = AFTER_HELP)]
struct Cli {
    /// Replace output files that exist (never a stateful key's state file, never an input).
    #[arg(long, global = true)]
    force: bool,
    /// The PKCS#11 module for `pkcs11:` key URIs (RFC 7512) that name none with module-path
    /// (else $PQKIT_PKCS11_MODULE).
    #[arg(long, global = true, value_name = "PATH")]
    pkcs11_module: Option<PathBuf>,
    /// Where the token PIN comes from for `pkcs11:` keys: file:PATH or env:NAME (else
    /// $PQKIT_PKCS11_PIN; none: no login).
    #[arg(long, global = true, value_name = "SOURCE")]
    pin_source: Option<String>,
    #[command(subcommand)]
    command: Command,
}

/// The examples, the file conventions and the exit statuses, after `--help`.
const AFTER_HELP: &str = concat!(
    "Examples:\n",
    "  pqkit demo                                   # PQ TLS 1.3 in one process, print the table\n",
    "  pqkit pki init --sig ML-DSA-65 --dir pki     # CA, server and client certificates\n",
    "  pqkit server --cert pki/server.pem --key pki/server.key --ca pki/ca.pem --mutual --port 4433\n",
    "  pqkit client --ca pki/ca.pem --cert pki/client.pem --key pki/client.key --port 4433\n",
    "  pqkit x509 verify --ca pki/ca.pem --purpose serverAuth pki/server.pem\n",
    "  pqkit list                                   # every algorithm, code point, OID and size\n",
    "  pqkit sizes --markdown                       # artifact sizes measured from real keys\n",
    "  pqkit keygen --alg ML-DSA-65 -o key.pem && pqkit sign --key key.pem -o doc.sig doc.pdf\n",
    "\n",
    "Files: every input may be PEM or DER, and - is standard input; - as an output is standard\n",
    "output. No command overwrites an existing file without --force; keys and other secrets\n",
    "are created with mode 0600.\n",
    "\n",
    "Environment:\n",
    "  PQKIT_HASH=portable|shani|avx2|avx512  the hash engine's instruction set (default: the\n",
    "     widest this CPU has)\n",
    "\n",
    "Exit status:\n",
    "  0  success (also when a reader closes standard output early: pqkit list | head -1)\n",
    "  1  verification failed (signature, certificate chain incl. a malformed certificate in\n",
    "     it, TLS peer)\n",
    "  2  usage error (unknown option, algorithm or name; an option the algorithm has no use\n",
    "     for; a FIFO, device or oversized file as an input; --threads beyond the CPUs)\n",
    "  3  any other failure (a file that cannot be read or written, malformed input, network)"
);

#[derive(Subcommand)]
enum Command {
    /// Run a mutually authenticated post-quantum TLS 1.3 connection in one process and report it.
    #[command(
        after_help = "Example:\n  pqkit demo --group SecP384r1MLKEM1024 --sig ML-DSA-87 --json"
    )]
    Demo(DemoArgs),
    /// Serve TLS 1.3: answer each connection by echoing its first message, then close.
    #[command(
        after_help = "Example:\n  pqkit server --cert pki/server.pem --key pki/server.key \
                            --ca pki/ca.pem --mutual --port 4433 --groups X25519MLKEM768"
    )]
    Server(ServerArgs),
    /// Put post-quantum TLS 1.3 in front of a TCP service: terminate clients' TLS (mutual TLS
    /// with an allow-list), relay to --target (over TLS too with --tls-target); SIGHUP reloads
    /// the certificate and key, /metrics reports.
    #[command(
        after_help = "Examples:\n  pqkit proxy --listen 0.0.0.0:8443 --target 127.0.0.1:8080 \
                            --cert pki/server.pem --key pki/server.key --ca pki/ca.pem \
                            --allow-dns client.example --metrics 127.0.0.1:9090\n  \
                            pqkit proxy --target db.internal:5432 --cert s.pem --key \
                            'pkcs11:token=pqkit;object=tls' --disable-authentication\n\n\
                            Exit status: 0 after SIGTERM/SIGINT and the drain; 2 for a usage \
                            error; 3 when a file cannot be read or an address cannot be bound."
    )]
    Proxy(Box<ProxyArgs>),
    /// Connect over TLS 1.3, send a message, print the reply and the negotiated parameters.
    #[command(
        after_help = "Example:\n  pqkit client --ca pki/ca.pem --cert pki/client.pem \
                            --key pki/client.key --port 4433 --groups X25519MLKEM768"
    )]
    Client(ClientArgs),
    /// Certificates and keys.
    #[command(subcommand)]
    Pki(PkiCommand),
    /// Measure on this machine: primitives, the TLS handshake matrix, TLS throughput, the
    /// signing boundary.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Run the standard measurement suite and write one HTML page with every table and plot,
    /// each benchmark's JSON and SVG files, and one Markdown page per reference document (its
    /// figures beside pqkit's).
    #[command(
        after_help = "Examples:\n  pqkit report --out report && xdg-open report/index.html\n  \
                      pqkit report --out /tmp/report --pages docs/src/perf/measured --force"
    )]
    Report {
        /// Output directory (created if missing).
        #[arg(long)]
        out: PathBuf,
        /// A suite of seconds instead of the full one (one algorithm of each kind, two
        /// handshake combinations, …).
        #[arg(long)]
        quick: bool,
        /// Write the reference-document pages (wolfssl.md, m4-paper.md, hsm-boundary.md,
        /// cipher-plus.md) into this directory instead of --out.
        #[arg(long)]
        pages: Option<PathBuf>,
    },
    /// Certificate signing requests (PKCS#10): create, show, sign.
    #[command(subcommand)]
    Csr(CsrCommand),
    /// Code and document signing: CMS SignedData (RFC 5652) with every signature algorithm.
    #[command(subcommand)]
    Cms(CmsCommand),
    /// Stateful hash-based signatures (LMS/HSS, XMSS, XMSS^MT): a state file that never reuses
    /// a one-time key.
    #[command(subcommand)]
    Hbs(HbsCommand),
    /// Print every algorithm: names, aliases, kind, NIST category, TLS code point, OID, sizes.
    #[command(after_help = "Example:\n  pqkit list --json")]
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Measure artifact sizes (keys, signatures, ciphertexts, key shares) from real keys.
    #[command(after_help = "Example:\n  pqkit sizes --markdown")]
    Sizes {
        /// Print JSON.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// Print Markdown tables.
        #[arg(long)]
        markdown: bool,
    },
    /// Generate a private key (PKCS#8 PEM; seed form by default).
    #[command(
        after_help = "Example:\n  pqkit keygen --alg ML-DSA-65 -o key.pem --pub pub.pem\n  \
                            pqkit keygen --alg ML-KEM-768 --format both -o kem.pem"
    )]
    Keygen {
        /// Algorithm (see `pqkit list`), e.g. ML-DSA-65, SLH-DSA-SHA2-128f, ML-KEM-768.
        #[arg(long)]
        alg: String,
        /// Derive from this seed (hex; ML-DSA 32 bytes, SLH-DSA 3n, ML-KEM 64).
        #[arg(long)]
        seed: Option<String>,
        /// Private key form for ML-DSA and ML-KEM: seed, expanded or both.
        #[arg(long, default_value = "seed", value_parser = files::parse_format)]
        format: pqkit_pki::key::KeyFormat,
        /// Output file.
        #[arg(short, long)]
        out: PathBuf,
        /// Also write the public key (SPKI PEM) here.
        #[arg(long = "pub")]
        public: Option<PathBuf>,
    },
    /// Print (or write) the public key (SPKI PEM) of a private key.
    #[command(after_help = "Example:\n  pqkit pubkey key.pem -o pub.pem")]
    Pubkey {
        /// PKCS#8 private key PEM — or an RFC 7512 `pkcs11:` URI of a key in a token.
        key: PathBuf,
        /// Output file (default: stdout).
        #[arg(short, long)]
        out: Option<PathBuf>,
    },
    /// Sign a file.
    #[command(
        after_help = "Examples:\n  pqkit sign --key key.pem -o doc.sig doc.pdf\n  \
                            pqkit sign --key key.pem --prehash SHA-512 -o doc.sig doc.pdf\n  \
                            pqkit sign --key key.pem --external-mu --context v1 -o doc.sig doc.pdf"
    )]
    Sign {
        /// PKCS#8 private key PEM — or an RFC 7512 `pkcs11:` URI of a key in a token.
        #[arg(long)]
        key: PathBuf,
        /// Signature output file (raw bytes).
        #[arg(short, long)]
        out: PathBuf,
        #[command(flatten)]
        mode: ModeArgs,
        /// Deterministic signing (FIPS 204 rnd = 0; FIPS 205 opt_rand = PK.seed).
        #[arg(long)]
        deterministic: bool,
        /// SLH-DSA: build the signature's FORS and hypertree trees on this many threads (the
        /// signature is the same bytes).
        #[arg(long, default_value_t = 1, value_parser = thread_count)]
        threads: usize,
        /// File to sign.
        file: PathBuf,
    },
    /// Verify a file's signature.
    #[command(after_help = "Example:\n  pqkit verify --pub pub.pem --signature doc.sig doc.pdf")]
    Verify {
        /// Public key PEM (SPKI), certificate PEM or private key PEM.
        #[arg(long = "pub")]
        public: PathBuf,
        /// Signature file (raw bytes).
        #[arg(long)]
        signature: PathBuf,
        #[command(flatten)]
        mode: ModeArgs,
        /// Signed file.
        file: PathBuf,
    },
    /// ML-KEM encapsulation and decapsulation with key files.
    #[command(subcommand)]
    Kem(KemCommand),
    /// Inspect and verify certificates.
    #[command(subcommand)]
    X509(X509Command),
    /// PKCS#11 tokens: create a pqkit token; list, generate and delete keys in any token.
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Create a pqkit token (a sealed directory) and add it to the module's configuration
    /// ($PQKIT_PKCS11_CONF or ~/.config/pqkit/pkcs11.json).
    #[command(after_help = "Example:\n  pqkit token init --label ca --so-pin 87654321 --pin 1234")]
    Init {
        /// Token label.
        #[arg(long)]
        label: String,
        /// Token directory (default ~/.local/share/pqkit/tokens/LABEL).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Security officer PIN.
        #[arg(long)]
        so_pin: String,
        /// User PIN.
        #[arg(long)]
        pin: String,
        /// Argon2id memory per PIN check, KiB (RFC 9106).
        #[arg(long, default_value_t = 65536)]
        kdf_memory_kib: u32,
        /// Argon2id passes.
        #[arg(long, default_value_t = 3)]
        kdf_passes: u32,
        /// Failed logins in a row that lock a PIN.
        #[arg(long, default_value_t = 10)]
        max_pin_attempts: u32,
        /// The shortest PIN the token takes, in bytes (4 to 255): a copied token directory can
        /// be attacked offline, each guess costing one Argon2id.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(4..=255))]
        min_pin_len: u32,
        /// The reservation ledger of the token's stateful keys (an SQLite file or
        /// etcd://HOST:PORT,…), recorded in the token (default: $PQKIT_HBS_LEDGER, else the
        /// default ledger of the user the module runs as).
        #[arg(long, value_name = "LEDGER")]
        ledger: Option<String>,
    },
    /// List tokens and their objects.
    List {
        /// Only this token (label).
        #[arg(long)]
        token: Option<String>,
    },
    /// Generate a key pair inside a token; prints its pkcs11: URI.
    #[command(
        after_help = "Example:\n  pqkit token keygen --token ca --alg ML-DSA-65 --label root --id 01"
    )]
    Keygen {
        /// Token label.
        #[arg(long)]
        token: String,
        /// Algorithm: ML-DSA-*, SLH-DSA-*, ML-KEM-*, ECDSA-P256/384/521, Ed25519.
        #[arg(long)]
        alg: String,
        /// Key label (CKA_LABEL).
        #[arg(long)]
        label: String,
        /// Key id (CKA_ID), hex.
        #[arg(long)]
        id: Option<String>,
    },
    /// Import a PKCS#8 private key (pqkit's token: it stays non-extractable) with its public
    /// key, or certificates (--cert); prints the key's pkcs11: URI.
    #[command(
        after_help = "Example:\n  pqkit token import --token ca --label root --id 01 pki/ca.key\n  \
                            pqkit token import --token ca --label root --id 01 --cert pki/ca.pem"
    )]
    Import {
        /// Token label.
        #[arg(long)]
        token: String,
        /// Object label (CKA_LABEL).
        #[arg(long)]
        label: String,
        /// Object id (CKA_ID), hex.
        #[arg(long)]
        id: Option<String>,
        /// The file holds certificates, not a private key.
        #[arg(long)]
        cert: bool,
        /// PKCS#8 private key or certificate file (PEM or DER).
        file: PathBuf,
    },
    /// Hold the configured tokens in this process and serve them on a Unix socket to modules
    /// with PQKIT_PKCS11_REMOTE=SOCKET (a process boundary for post-quantum keys; p11-kit's RPC
    /// forwards no post-quantum mechanism).
    #[command(
        after_help = "Example:\n  pqkit token serve --socket /run/pqkit/token.sock &\n  \
                            PQKIT_PKCS11_REMOTE=/run/pqkit/token.sock pqkit sign --key 'pkcs11:token=ca;object=root' -o doc.sig doc"
    )]
    Serve {
        /// The socket to create (mode 0600).
        #[arg(long)]
        socket: PathBuf,
    },
    /// Delete every object with a label.
    Delete {
        /// Token label.
        #[arg(long)]
        token: String,
        /// Object label.
        #[arg(long)]
        label: String,
    },
}

#[derive(Args)]
struct ModeArgs {
    /// Context string (FIPS 204 §5.2 / FIPS 205 §10.2), UTF-8, at most 255 bytes.
    #[arg(long, default_value = "")]
    context: String,
    /// HashML-DSA / HashSLH-DSA: hash the file outside the signer with this hash (SHA-256,
    /// SHA-512, SHA3-256, SHAKE-128, SHAKE-256, ...).
    #[arg(long, conflicts_with = "external_mu")]
    prehash: Option<String>,
    /// ML-DSA external μ: compute μ outside the signer; the signer sees 64 bytes.
    #[arg(long)]
    external_mu: bool,
    /// RSA keys: pss (RSASSA-PSS, the default) or pkcs1 (RSASSA-PKCS1-v1_5, RFC 8017 §8.2).
    #[arg(long, value_parser = files::parse_padding)]
    padding: Option<files::Padding>,
}

#[derive(Subcommand)]
enum KemCommand {
    /// Encapsulate to a public key: write the ciphertext and the shared secret (hex, 0600).
    #[command(
        after_help = "Example:\n  pqkit kem encapsulate --pub kem.pub -o ct.bin --secret ss.hex"
    )]
    Encapsulate {
        /// Encapsulation key (SPKI PEM).
        #[arg(long = "pub")]
        public: PathBuf,
        /// Ciphertext output.
        #[arg(short, long)]
        out: PathBuf,
        /// Shared secret output (hex).
        #[arg(long)]
        secret: PathBuf,
    },
    /// Decapsulate a ciphertext with a private key.
    #[command(
        after_help = "Example:\n  pqkit kem decapsulate --key kem.pem --ciphertext ct.bin --secret ss.hex"
    )]
    Decapsulate {
        /// Decapsulation key (PKCS#8 PEM).
        #[arg(long)]
        key: PathBuf,
        /// Ciphertext file.
        #[arg(long)]
        ciphertext: PathBuf,
        /// Shared secret output (hex).
        #[arg(long)]
        secret: PathBuf,
    },
}

#[derive(Args)]
struct BenchOutput {
    /// Print JSON (schema pqkit-bench/1).
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print Markdown tables.
    #[arg(long)]
    markdown: bool,
    /// Also write the plots as SVG files into this directory.
    #[arg(long, value_name = "DIR")]
    svg: Option<PathBuf>,
}

impl BenchOutput {
    fn get(self) -> bench_cmd::Output {
        bench_cmd::Output {
            json: self.json,
            markdown: self.markdown,
            svg: self.svg,
        }
    }
}

#[derive(Args)]
struct BenchBudget {
    /// Seconds of timed calls per operation (after one warm-up call).
    #[arg(long, default_value_t = 1.0)]
    min_time: f64,
    /// At least this many timed calls per operation.
    #[arg(long, default_value_t = 3)]
    min_iters: usize,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// ops/s, mean and median µs, TSC cycles per operation for every algorithm.
    #[command(
        after_help = "Example:\n  pqkit bench crypto --alg ML-DSA-65,ML-KEM-768,Falcon-512 --min-time 0.5"
    )]
    Crypto {
        /// Algorithms or groups, comma-separated (default: every one).
        #[arg(long, value_delimiter = ',')]
        alg: Vec<String>,
        /// Sign deterministically instead of hedged.
        #[arg(long)]
        deterministic: bool,
        /// pqkit-hash paths for the hash-based schemes (SLH-DSA, LMS/HSS, XMSS), comma-separated:
        /// avx512, avx2, shani, portable, or all (every path this CPU supports); default: the
        /// dispatched one (the widest, or PQKIT_HASH).
        #[arg(long, value_delimiter = ',')]
        hash_path: Vec<String>,
        /// Also time SLH-DSA signing on this many threads (a separate row; the single-thread
        /// rows are always there).
        #[arg(long, default_value_t = 1, value_parser = thread_count)]
        threads: usize,
        /// Measure each algorithm (pqkit and its peers) in this many rounds, --min-time split
        /// between them and the calls merged: every implementation's calls spread over the
        /// same stretch of time, so a busy moment of the machine does not fall on one alone.
        #[arg(long, default_value_t = 4)]
        rounds: usize,
        #[command(flatten)]
        budget: BenchBudget,
        #[command(flatten)]
        output: BenchOutput,
    },
    /// The classical primitive tables: AES (ECB/CBC/CTR/CFB/OFB/GCM), GOST ciphers, SHA-1/2/3,
    /// GOST and Kupyna hashes in MB/s; ECDSA, Ed25519 and RSA in ops/s; one core and every core.
    #[command(
        after_help = "Example:\n  pqkit bench primitives --only AES-128,SHA-256,ECDSA --min-time 0.5"
    )]
    Primitives {
        /// Keep algorithms whose name contains one of these, comma-separated (default: all).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Seconds of calls per row, on one thread and again on every thread.
        #[arg(long, default_value_t = 0.3)]
        min_time: f64,
        /// Bytes per call for ciphers and hashes.
        #[arg(long, default_value_t = 16384)]
        buffer: usize,
        /// Threads of the every-core column (default: one per core).
        #[arg(long, value_parser = thread_count)]
        threads: Option<usize>,
        #[command(flatten)]
        output: BenchOutput,
    },
    /// The (signature × named group) TLS 1.3 matrix: time, wire bytes, heap, stack.
    #[command(
        after_help = "Example:\n  pqkit bench handshake --sig ML-DSA-65,Falcon-512 \
                            --group X25519MLKEM768,MLKEM1024 --mutual on --markdown"
    )]
    Handshake {
        /// Signature algorithms, comma-separated (default: both references' set).
        #[arg(long, alias = "alg", value_delimiter = ',', conflicts_with = "preset")]
        sig: Vec<String>,
        /// Named groups, comma-separated (default: ML-KEM, the hybrids, X25519, P-256).
        #[arg(
            long,
            alias = "groups",
            value_delimiter = ',',
            conflicts_with = "preset"
        )]
        group: Vec<String>,
        /// A reference document's table instead of the matrix: m4-paper (the Cortex-M4 PQ TLS
        /// paper's rows, Dil2-Kyb1 … Dil2-Hqc1, RSA-/ECDSA-ECDHE, FFDHE-3072).
        #[arg(long)]
        preset: Option<String>,
        /// Client authentication: on, off or both.
        #[arg(long, default_value = "both", value_parser = ["on", "off", "both"])]
        mutual: String,
        /// Measured connections per combination (after one warm-up).
        #[arg(short = 'n', long, default_value_t = 5)]
        repetitions: usize,
        #[command(flatten)]
        output: BenchOutput,
    },
    /// tls_bench style: connections/s, average connect time, bulk MB/s each way
    /// (TLS_AES_256_GCM_SHA384), per signature algorithm and named group.
    #[command(
        after_help = "Example:\n  pqkit bench tls --sig ML-DSA-65 --group X25519MLKEM768,X25519 \
                            --seconds 2 --per-core"
    )]
    Tls {
        /// Signature algorithms, comma-separated (default: ML-DSA-44, ML-DSA-65, Falcon-512,
        /// ECDSA-P256).
        #[arg(long, alias = "alg", value_delimiter = ',')]
        sig: Vec<String>,
        /// Named groups, comma-separated (default: X25519MLKEM768, SecP256r1MLKEM768,
        /// MLKEM768, X25519).
        #[arg(long, alias = "groups", value_delimiter = ',')]
        group: Vec<String>,
        /// Seconds of connections, then seconds of bulk transfer (half each way), per
        /// combination.
        #[arg(long, default_value_t = 1.0)]
        seconds: f64,
        /// Client/server pairs running at once.
        #[arg(long, default_value_t = 1, conflicts_with = "per_core")]
        pairs: usize,
        /// One client/server pair per core.
        #[arg(long)]
        per_core: bool,
        /// Client authentication.
        #[arg(long)]
        mutual: bool,
        /// Also measure with each server key in this PKCS#11 token (pkcs11:token=LABEL,
        /// optionally ?module-path=…): `bench-<algorithm>` keys, generated there if missing,
        /// certificates from the same CA. The rows say where the server key is.
        #[arg(long)]
        token: Option<String>,
        #[command(flatten)]
        output: BenchOutput,
    },
    /// TLS servers side by side under a load generator: `pqkit server`, `pqkit proxy`,
    /// OpenSSL s_server and Go crypto/tls on the same certificate, rounds interleaved —
    /// connections/s, latency p50/p90/p99/p99.9, server CPU per connection (/proc).
    #[command(
        after_help = "Examples:\n  pqkit bench server --sig ML-DSA-65 --clients 8 \
                            --openssl ~/.cache/pqkit/openssl-3.6.3/bin/openssl --gotls ./gotls\n  \
                            pqkit bench server --sig ECDSA-P256 --rate 500 --busy\n\n\
                            The servers run as separate processes on 127.0.0.1; the load \
                            generator runs in this one, so the machine's cores are shared."
    )]
    Server {
        /// The certificates' signature algorithm.
        #[arg(long, alias = "alg", default_value = "ML-DSA-65")]
        sig: String,
        /// The named group.
        #[arg(long, default_value = "X25519MLKEM768")]
        group: String,
        /// Client threads, 1 to 1024 (each runs one connection at a time).
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=1024))]
        clients: u16,
        /// Seconds of load per server per round.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// Rounds; each runs every server once, in turn.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=100))]
        rounds: u16,
        /// Start this many connections per second (open loop); default: closed loop, each
        /// client starting its next connection when the last ends.
        #[arg(long)]
        rate: Option<f64>,
        /// Resume sessions from tickets instead of full handshakes.
        #[arg(long)]
        resume: bool,
        /// Leave `pqkit proxy` out.
        #[arg(long)]
        no_proxy: bool,
        /// OpenSSL's `openssl` (3.5 or newer) to compare with its s_server.
        #[arg(long, value_name = "PATH")]
        openssl: Option<PathBuf>,
        /// The gotls peer (../shared/peers/gotls, built with Go 1.27 for ML-DSA) to compare.
        #[arg(long, value_name = "PATH")]
        gotls: Option<PathBuf>,
        /// Keep one core busy with another process during the runs.
        #[arg(long)]
        busy: bool,
        /// Worker threads of `pqkit server` and `pqkit proxy` (default: one per core).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
        workers: Option<u16>,
        /// Seconds each connection may take.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        #[command(flatten)]
        output: BenchOutput,
    },
    /// Sign time vs message size, inside vs outside the key's boundary.
    #[command(after_help = "Example:\n  pqkit bench boundary --sizes 1024,1048576 --markdown")]
    Boundary {
        /// Message sizes in bytes, comma-separated (default 1 KiB, 10 KiB, 100 KiB, 1 MiB,
        /// 10 MiB).
        #[arg(long, value_delimiter = ',')]
        sizes: Vec<usize>,
        /// Also sign with keys in this PKCS#11 token (pkcs11:token=LABEL, optionally
        /// ?module-path=…; repeatable): `bench-<algorithm>` keys, generated there if missing.
        /// E.g. pqkit's token in process, and the same token behind `p11-kit server` through
        /// p11-kit-client.so.
        #[arg(long)]
        token: Vec<String>,
        #[command(flatten)]
        budget: BenchBudget,
        #[command(flatten)]
        output: BenchOutput,
    },
    /// Stateful signatures per second through a state file with each reservation ledger:
    /// none (the state file alone), SQLite, and an etcd cluster for one signer and for several
    /// signers sharing one key; the ledger's cost per signature beside the state file alone.
    #[command(
        after_help = "Without --etcd, a 3-member etcd cluster is started on 127.0.0.1 when an \
                      etcd binary is found (Debian: etcd-server; PQKIT_ETCD names another), and \
                      stopped afterwards.\n\n\
                      Example:\n  pqkit bench ledger --preset L1_H10_W4 --reserve 64 --markdown"
    )]
    Ledger {
        /// The HSS preset signed with (its whole range per round).
        #[arg(long, default_value = "L1_H10_W4")]
        preset: String,
        /// One-time keys reserved per ledger write.
        #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        reserve: u64,
        /// Signers sharing the key on etcd (besides the single signer).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=64))]
        signers: u64,
        /// An etcd cluster to use (etcd://HOST:PORT,…) instead of starting one.
        #[arg(long, value_name = "LEDGER", conflicts_with = "no_etcd")]
        etcd: Option<String>,
        /// Skip the etcd rows.
        #[arg(long)]
        no_etcd: bool,
        /// Seconds of signing per row (at least one whole key).
        #[arg(long, default_value_t = 2.0)]
        min_time: f64,
        /// Directory for the state files and the SQLite ledger (default: the temporary
        /// directory; put it on the disk the keys will live on).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        #[command(flatten)]
        output: BenchOutput,
    },
}

/// Where a stateful key's reservations are recorded.
#[derive(clap::Args, Clone, Debug, Default)]
struct LedgerArg {
    /// The reservation ledger: an SQLite file, or etcd://HOST:PORT[,HOST:PORT…][?ttl=S] for a
    /// key that several signers share (default: $PQKIT_HBS_LEDGER, else
    /// $XDG_STATE_HOME/pqkit/hbs-ledger.sqlite3).
    #[arg(long, value_name = "LEDGER")]
    ledger: Option<String>,
}

#[derive(Subcommand)]
enum HbsCommand {
    /// The presets: signature size in bytes and number of signatures, computed from the
    /// parameter sets.
    #[command(after_help = "Example:\n  pqkit hbs params")]
    Params {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Generate an HSS, XMSS or XMSS^MT key: its state file (secret; never copy it) and its
    /// public key (PEM SubjectPublicKeyInfo, RFC 9802).
    #[command(
        after_help = "Example:\n  pqkit hbs keygen --preset L2_H10_W4 --state fw.hss --pub fw.pub"
    )]
    Keygen {
        /// HSS shape L<levels>_H<height>_W<winternitz> (e.g. L2_H10_W4) or an XMSS / XMSS^MT
        /// set (e.g. XMSS-SHA2_10_256, XMSSMT-SHA2_20/2_256); see `pqkit hbs params`.
        #[arg(long)]
        preset: String,
        /// State file to create (refuses to overwrite one).
        #[arg(long)]
        state: PathBuf,
        /// Public key output (PEM SubjectPublicKeyInfo).
        #[arg(long = "pub")]
        public: PathBuf,
        /// Threads for key generation (default: all cores).
        #[arg(long, value_parser = thread_count)]
        threads: Option<usize>,
        #[command(flatten)]
        ledger: LedgerArg,
    },
    /// Sign a file with the next unused one-time key (persisted before the signature is
    /// written).
    #[command(after_help = "Example:\n  pqkit hbs sign --state fw.hss -o fw.bin.sig fw.bin")]
    Sign {
        /// State file — or a `pkcs11:` URI of an HSS/XMSS key in a token (the token keeps its state).
        #[arg(long)]
        state: PathBuf,
        /// Signature output (one file to sign).
        #[arg(
            short,
            long,
            required_unless_present = "out_dir",
            conflicts_with = "out_dir"
        )]
        out: Option<PathBuf>,
        /// Write each signature to DIR/<file name>.sig (several files to sign).
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
        /// Reserve this many one-time keys at once, in the state file and the ledger (at most
        /// as many as there are files; unused ones are skipped later).
        #[arg(long, default_value_t = 1)]
        reserve: u64,
        /// Threads for regenerating trees (default: all cores).
        #[arg(long, value_parser = thread_count)]
        threads: Option<usize>,
        #[command(flatten)]
        ledger: LedgerArg,
        /// The files to sign.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Verify an HSS, XMSS or XMSS^MT signature.
    #[command(
        after_help = "Example:\n  pqkit hbs verify --pub fw.pub --signature fw.bin.sig fw.bin"
    )]
    Verify {
        /// Public key (PEM SubjectPublicKeyInfo from `pqkit hbs keygen`).
        #[arg(long = "pub")]
        public: PathBuf,
        /// Signature file.
        #[arg(long)]
        signature: PathBuf,
        /// The signed file.
        file: PathBuf,
    },
    /// A self-signed root CA certificate for a stateful key (RFC 9802; spends one one-time
    /// key).
    #[command(
        after_help = "Example:\n  pqkit hbs keygen --preset L2_H10_W4 --state ca.hss --pub ca.pub\n  \
                      pqkit hbs ca --state ca.hss --subject 'CN=Firmware Root,O=pqkit' -o ca.pem"
    )]
    Ca {
        /// The CA's state file.
        #[arg(long)]
        state: PathBuf,
        /// Subject distinguished name, RFC 4514 form.
        #[arg(long)]
        subject: String,
        /// Validity in days from now.
        #[arg(long, default_value_t = 3650, value_parser = parse_days)]
        days: u64,
        /// Output certificate (PEM).
        #[arg(short, long)]
        out: PathBuf,
        #[command(flatten)]
        ledger: LedgerArg,
    },
    /// Issue a certificate signed by a stateful CA key (RFC 9802; spends one one-time key):
    /// for a CSR, or for a public key and a subject (e.g. another stateful key).
    #[command(
        after_help = "Examples:\n  pqkit hbs keygen --preset XMSSMT-SHA2_20/4_256 --state fw.xmssmt --pub fw.pub\n  \
                      pqkit hbs issue --state ca.hss --ca ca.pem --pub fw.pub \
                      --subject 'CN=firmware signing' --profile code-signing -o fw.pem\n  \
                      pqkit hbs issue --state ca.hss --ca ca.pem --csr device.csr --profile client -o device.pem"
    )]
    Issue {
        /// The CA's state file.
        #[arg(long)]
        state: PathBuf,
        /// The CA's certificate (PEM; the first certificate is used).
        #[arg(long)]
        ca: PathBuf,
        /// Certify this CSR (PEM; its signature must verify).
        #[arg(long, required_unless_present = "public", conflicts_with = "public")]
        csr: Option<PathBuf>,
        /// Certify this public key (PEM SubjectPublicKeyInfo, any algorithm)…
        #[arg(long = "pub", requires = "subject")]
        public: Option<PathBuf>,
        /// …with this subject distinguished name (RFC 4514).
        #[arg(long)]
        subject: Option<String>,
        /// Certificate profile: code-signing, server, client, intermediate or time-stamping.
        #[arg(long, default_value = "code-signing", value_parser = csr_cmd::parse_profile)]
        profile: pqkit_pki::cert::Profile,
        /// Validity in days from now.
        #[arg(long, default_value_t = 365, value_parser = parse_days)]
        days: u64,
        /// Output certificate (PEM).
        #[arg(short, long)]
        out: PathBuf,
        #[command(flatten)]
        ledger: LedgerArg,
    },
    /// Used and remaining one-time keys of a state file, and what its ledger records (takes no
    /// lock, writes nothing).
    #[command(after_help = "Example:\n  pqkit hbs status --state fw.hss")]
    Status {
        /// State file.
        #[arg(long)]
        state: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        ledger: LedgerArg,
    },
    /// The records of a reservation ledger: each key range's mark (every one-time key below it
    /// has been handed out) and who last moved it.
    #[command(after_help = "Example:\n  pqkit hbs ledger --ledger etcd://10.0.0.1:2379 --json")]
    Ledger {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        ledger: LedgerArg,
    },
    /// The public key of a state file (PEM SubjectPublicKeyInfo, RFC 9802); takes no lock.
    #[command(after_help = "Example:\n  pqkit hbs pubkey --state fw.hss -o fw.pub")]
    Pubkey {
        /// State file.
        #[arg(long)]
        state: PathBuf,
        /// Output (default: standard output).
        #[arg(short, long, default_value = "-")]
        out: PathBuf,
    },
    /// Make a copied, restored or moved state file the key again, or record it in a new ledger
    /// (read the warning it prints: two copies that sign reuse one-time keys).
    #[command(
        after_help = "A state file records the file it is (device, inode, path) and the ledger \
                      that records its reservations; a copy, a restored backup, a moved file, \
                      a file older than the ledger's mark or a key whose ledger was lost refuses \
                      to sign until adopted. The counter only moves forward, never below the \
                      ledger's mark.\n\n\
                      Examples:\n  pqkit hbs adopt --state fw.hss --skip 100 --yes\n  \
                      pqkit hbs adopt --state fw.hss --skip-to 4096 --yes"
    )]
    Adopt {
        /// State file.
        #[arg(long)]
        state: PathBuf,
        /// Move the counter on by this many one-time keys first: those the original may have
        /// used since this copy was taken.
        #[arg(long, default_value_t = 0, conflicts_with = "skip_to")]
        skip: u64,
        /// Move the counter to this one-time key (not below the file's counter nor the
        /// ledger's mark).
        #[arg(long, value_name = "N")]
        skip_to: Option<u64>,
        /// Adopt it (without --yes, only the warning is printed and nothing changes).
        #[arg(long)]
        yes: bool,
        /// The ledger that records the key is lost for good: record it in this one (its old
        /// record stays behind; a copy still recorded there could sign the same one-time keys).
        #[arg(long)]
        ledger_lost: bool,
        #[command(flatten)]
        ledger: LedgerArg,
    },
    /// Split what is left of an HSS, XMSS or XMSS^MT key into sector state files with disjoint
    /// ranges under the same public key, one per site that cannot share a ledger
    /// (draft-ietf-pquip-hbs-state §6). The key's own state file signs no more.
    #[command(
        after_help = "Each sector is a state file of its own, recorded in the ledger; one copied \
                      to another site is adopted there (`pqkit hbs adopt`), which records it in \
                      that site's ledger.\n\n\
                      Example:\n  pqkit hbs sector --state fw.hss --count 3 --out-dir sites"
    )]
    Sector {
        /// The key's state file.
        #[arg(long)]
        state: PathBuf,
        /// Sectors to make (2 or more).
        #[arg(long, value_parser = clap::value_parser!(u32).range(2..=4096))]
        count: u32,
        /// Directory for the sector files, named <state file name>.<i>of<count> (default: the
        /// state file's directory).
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
        /// Threads for regenerating trees (default: all cores).
        #[arg(long, value_parser = thread_count)]
        threads: Option<usize>,
        #[command(flatten)]
        ledger: LedgerArg,
    },
}

#[derive(Subcommand)]
enum CsrCommand {
    /// Make a CSR signed by the key it asks a certificate for (RFC 2986; SAN in an
    /// extensionRequest).
    #[command(
        after_help = "Example:\n  pqkit keygen --alg ML-DSA-65 -o device.key\n  \
                            pqkit csr create --key device.key --subject 'CN=device 7,O=pqkit' \
                            --dns device7.example --ip 10.0.0.7 -o device.csr"
    )]
    Create {
        /// The requester's PKCS#8 signing key (PEM) — or an RFC 7512 `pkcs11:` URI of a key in a token.
        #[arg(long)]
        key: PathBuf,
        /// Subject distinguished name, RFC 4514 form.
        #[arg(long)]
        subject: String,
        /// DNS name for the subjectAltName (repeatable): RFC 1034 preferred syntax, IDNs as
        /// A-labels, a left-most `*` label allowed.
        #[arg(long, value_parser = pqkit_pki::path::issued_dns_name)]
        dns: Vec<String>,
        /// IP address for the subjectAltName (repeatable).
        #[arg(long)]
        ip: Vec<std::net::IpAddr>,
        /// Output CSR (PEM).
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Decode a CSR and verify its signature.
    #[command(after_help = "Example:\n  pqkit csr show device.csr --json")]
    Show {
        /// CSR (PEM).
        csr: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Issue a certificate for a CSR whose signature verifies, signed by a CA.
    #[command(
        after_help = "Example:\n  pqkit csr sign --ca pki/ca.pem --ca-key pki/ca.key \
                            --profile server device.csr -o device.pem"
    )]
    Sign {
        /// CA certificate (PEM; the first certificate is used).
        #[arg(long)]
        ca: PathBuf,
        /// CA private key (PKCS#8 PEM) — or an RFC 7512 `pkcs11:` URI of a key in a token.
        #[arg(long)]
        ca_key: PathBuf,
        /// Certificate profile: server, client, intermediate, code-signing or time-stamping.
        #[arg(long, default_value = "server", value_parser = csr_cmd::parse_profile)]
        profile: pqkit_pki::cert::Profile,
        /// Validity in days from now.
        #[arg(long, default_value_t = 365, value_parser = parse_days)]
        days: u64,
        /// CSR (PEM).
        csr: PathBuf,
        /// Output certificate (PEM).
        #[arg(short, long)]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum CmsCommand {
    /// Sign a file into a CMS SignedData: attached or detached, with signed attributes
    /// (contentType, signingTime, messageDigest, CMSAlgorithmProtection) by default, one or
    /// more signers. ML-DSA per RFC 9882, SLH-DSA per RFC 9814, HSS/LMS per RFC 9708 and XMSS
    /// from a state file (the one-time key is reserved first), Falcon, ECDSA, Ed25519, RSA.
    #[command(
        after_help = "Examples:\n  pqkit cms sign --signer signer.pem --key signer.key -o fw.p7s --detached fw.bin\n  \
                      pqkit cms sign --signer pq.pem --key pq.key --signer ec.pem --key ec.key -o doc.p7m doc.pdf\n\n\
                      With signed attributes only their digest crosses to the key (a pkcs11: key never \
                      sees the content), and a detached signature streams a file of any size."
    )]
    Sign {
        /// The signer's certificate (PEM or DER: the first certificate; any after it, its chain,
        /// are included too); repeatable, one per --key.
        #[arg(long = "signer", value_name = "CERT", required = true)]
        signers: Vec<PathBuf>,
        /// The signer's key: PKCS#8 PEM, a `pkcs11:` URI, or a pqkit-hbs state file; repeatable,
        /// in the order of --signer.
        #[arg(long = "key", value_name = "KEY", required = true)]
        keys: Vec<PathBuf>,
        /// More certificates to include (intermediate CAs); repeatable.
        #[arg(long = "certfile", value_name = "FILE")]
        certificates: Vec<PathBuf>,
        /// Digest algorithm for every signer (default: each signature algorithm's CMS profile).
        #[arg(long, value_parser = cms_cmd::parse_digest)]
        digest: Option<pqkit_pki::cms::DigestAlgorithm>,
        /// Leave the content out of the SignedData (a detached signature).
        #[arg(long)]
        detached: bool,
        /// Sign the content itself, without signed attributes (the Linux kernel module style).
        #[arg(long)]
        no_signed_attributes: bool,
        /// Deterministic signing where the algorithm has it (ML-DSA, SLH-DSA).
        #[arg(long)]
        deterministic: bool,
        /// Write PEM (-----BEGIN CMS-----) instead of DER.
        #[arg(long)]
        pem: bool,
        /// Name each signer by its certificate's subjectKeyIdentifier (SignerInfo version 3)
        /// instead of issuer and serial number.
        #[arg(long)]
        subject_key_identifier: bool,
        #[command(flatten)]
        ledger: LedgerArg,
        /// Output file.
        #[arg(short, long)]
        out: PathBuf,
        /// The file to sign (- for standard input).
        file: PathBuf,
    },
    /// Verify a CMS SignedData: each signer's signed attributes, signature and certificate path
    /// to --ca (for codeSigning unless --purpose says otherwise), then --require.
    #[command(
        after_help = "Examples:\n  pqkit cms verify --ca ca.pem --content fw.bin fw.p7s\n  \
                      pqkit cms verify --ca ca.pem --require any --out doc.pdf doc.p7m\n\n\
                      Exit status 1 when the signed object or a required signer does not verify; \
                      each refused signer is named with its reason."
    )]
    Verify {
        /// Trusted CA certificate(s), PEM or DER.
        #[arg(long)]
        ca: PathBuf,
        /// Trusted CA certificate(s) of time-stamping authorities, for signers' RFC 3161
        /// tokens (default: --ca).
        #[arg(long, value_name = "FILE")]
        tsa_ca: Option<PathBuf>,
        /// The signed content, for a detached SignedData (- for standard input).
        #[arg(long)]
        content: Option<PathBuf>,
        /// More certificates (signers' and intermediate CAs'); repeatable.
        #[arg(long = "certfile", value_name = "FILE")]
        certificates: Vec<PathBuf>,
        /// Consider only the signers with this certificate; repeatable.
        #[arg(long = "signer", value_name = "CERT")]
        signers: Vec<PathBuf>,
        /// all: every signer considered must verify (default); any: at least one.
        #[arg(long, default_value = "all", value_parser = pqkit_pki::cms::Require::from_name)]
        require: pqkit_pki::cms::Require,
        /// What the signers' certificates must be for: codeSigning (default), any, …; several
        /// with commas.
        #[arg(long, value_delimiter = ',', value_parser = pqkit_pki::path::Purpose::from_name)]
        purpose: Vec<pqkit_pki::path::Purpose>,
        /// Validate the certificates at this time instead of now: RFC 3339, a date, or Unix
        /// seconds. A signer with a valid RFC 3161 time-stamp token is validated at the
        /// token's time instead (its TSA at this time).
        #[arg(long, value_parser = pqkit_pki::path::parse_time)]
        at: Option<std::time::SystemTime>,
        /// Write the attached content here once it verifies.
        #[arg(short, long)]
        out: Option<PathBuf>,
        /// The SignedData (PEM or DER).
        signed: PathBuf,
    },
    /// RFC 3161 time-stamping of a signer: write the signature value a time-stamping
    /// authority stamps (--signature-out), or add the TSA's token to the SignedData (--token).
    /// `cms verify` then validates the signer's certificate at the token's time.
    #[command(
        after_help = "Example (OpenSSL as the TSA):\n  pqkit cms timestamp --signature-out sig.bin fw.p7s\n  \
                      openssl ts -query -data sig.bin -sha512 -cert -out fw.tsq\n  \
                      openssl ts -reply -config tsa.cnf -queryfile fw.tsq -inkey tsa.key -signer tsa.pem -token_out -out fw.tst\n  \
                      pqkit cms timestamp --token fw.tst -o fw-stamped.p7s fw.p7s"
    )]
    Timestamp {
        /// Write the signer's signature value (raw bytes) to this file.
        #[arg(
            long,
            value_name = "FILE",
            conflicts_with = "token",
            required_unless_present = "token"
        )]
        signature_out: Option<PathBuf>,
        /// The TSA's time-stamp token (DER ContentInfo, as `openssl ts -reply -token_out` writes).
        #[arg(long, value_name = "FILE", requires = "out")]
        token: Option<PathBuf>,
        /// Which signer's signature value --signature-out writes (0 is the first, in the
        /// order `cms show` lists them); --token finds its signer by the token's imprint.
        #[arg(long, default_value_t = 0)]
        signer_index: usize,
        /// The time-stamped SignedData (DER).
        #[arg(short, long)]
        out: Option<PathBuf>,
        /// The SignedData (PEM or DER).
        signed: PathBuf,
    },
    /// Decode a CMS SignedData without verifying it: content, certificates, signers and their
    /// algorithms and attributes.
    #[command(after_help = "Example:\n  pqkit cms show fw.p7s --json")]
    Show {
        /// The SignedData (PEM or DER).
        signed: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum X509Command {
    /// Decode certificates: algorithms, key and signature sizes, validity, SAN.
    #[command(after_help = "Example:\n  pqkit x509 show pki/server.pem --json")]
    Show {
        /// Certificate PEM (one or a chain).
        cert: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Validate a certificate path (RFC 5280 §6): the leaf first, then intermediate CAs, to a
    /// trusted CA — names, signatures, validity, basicConstraints and pathLenConstraint,
    /// keyUsage, extendedKeyUsage for --purpose, name constraints, critical extensions, the
    /// leaf's name (--name), revocation (--crl).
    #[command(
        after_help = "Examples:\n  pqkit x509 verify --ca pki/ca.pem --name localhost pki/server.pem\n  \
                      pqkit x509 verify --ca ca.pem --purpose codeSigning --at 2030-01-01 fw.pem\n  \
                      pqkit x509 verify --ca roots.pem --untrusted ica.pem --crl ca.crl \\\n      \
                      --purpose serverAuth --name www.example.com --profile webpki leaf.pem\n\n\
                      Exit status 1 when the path does not validate (a malformed certificate \
                      included); the message names the certificate and the rule."
    )]
    Verify(X509VerifyArgs),
}

/// What `pqkit x509 verify` takes.
#[derive(Args)]
struct X509VerifyArgs {
    /// Trusted CA certificate(s), PEM or DER.
    #[arg(long)]
    ca: PathBuf,
    /// More certificates that may serve as intermediates (PEM or DER, any order); repeatable.
    #[arg(long, value_name = "FILE")]
    untrusted: Vec<PathBuf>,
    /// The name the leaf must present: a DNS name, an IP address or an e-mail address (told
    /// apart by syntax; RFC 9525 matching, subjectAltName only); repeatable.
    #[arg(long, value_parser = pqkit_pki::path::PeerName::parse)]
    name: Vec<pqkit_pki::path::PeerName>,
    /// What the leaf is for: serverAuth, clientAuth, codeSigning or any; several with commas.
    #[arg(
        long,
        default_value = "any",
        value_delimiter = ',',
        value_parser = pqkit_pki::path::Purpose::from_name
    )]
    purpose: Vec<pqkit_pki::path::Purpose>,
    /// Validate at this time instead of now: RFC 3339, a date, or Unix seconds.
    #[arg(long, value_parser = pqkit_pki::path::parse_time)]
    at: Option<std::time::SystemTime>,
    /// A CRL (PEM or DER) to check the path against (RFC 5280 §6.3); repeatable.
    #[arg(long, value_name = "FILE")]
    crl: Vec<PathBuf>,
    /// At most this many intermediate CAs (self-issued ones not counted).
    #[arg(long, value_name = "N")]
    max_depth: Option<usize>,
    /// rfc5280, or webpki: RFC 5280 and the CA/Browser Forum Baseline Requirements.
    #[arg(long, default_value = "rfc5280", value_parser = pqkit_pki::path::Profile::from_name)]
    profile: pqkit_pki::path::Profile,
    /// The chain (PEM or DER): the leaf first, then intermediate CAs.
    chain: PathBuf,
}

#[derive(Args)]
struct DemoArgs {
    /// Named group for the key exchange.
    #[arg(long, alias = "groups", default_value = "X25519MLKEM768")]
    group: String,
    /// Signature algorithm of the CA, server and client certificates.
    #[arg(long, alias = "alg", default_value = "ML-DSA-65")]
    sig: String,
    /// Use the PKI in this directory (from `pqkit pki init`) instead of a throwaway one.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct ServerArgs {
    /// Certificate chain PEM (leaf first).
    #[arg(long)]
    cert: PathBuf,
    /// PKCS#8 private key PEM — or an RFC 7512 `pkcs11:` URI of a key in a token.
    #[arg(long)]
    key: PathBuf,
    /// CA certificate(s) PEM to verify client certificates against.
    #[arg(long)]
    ca: Option<PathBuf>,
    /// Require a client certificate (needs --ca).
    #[arg(long)]
    mutual: bool,
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on (0 picks a free one and prints it).
    #[arg(long, default_value_t = 4433)]
    port: u16,
    /// Exit after serving this many connections (refused ones not counted) and letting them
    /// finish (0 = serve until SIGTERM or SIGINT).
    #[arg(long, default_value_t = 0)]
    count: u64,
    /// Answer with this text instead of echoing.
    #[arg(long)]
    reply: Option<String>,
    /// One JSON line per connection instead of text.
    #[arg(long)]
    json: bool,
    /// Seconds the rest of a connection may take after the handshake (the client's message,
    /// the reply and the close, together).
    #[arg(long, default_value_t = 20.0)]
    idle_timeout: f64,
    #[command(flatten)]
    service: ServiceArgs,
}

/// What `pqkit server` and `pqkit proxy` share: groups, limits, workers, shutdown, logs.
#[derive(Args)]
struct ServiceArgs {
    /// Named groups in preference order, comma-separated.
    #[arg(
        long,
        alias = "group",
        value_delimiter = ',',
        default_value = "X25519MLKEM768,SecP256r1MLKEM768,SecP384r1MLKEM1024,MLKEM768,MLKEM1024,MLKEM512"
    )]
    groups: Vec<String>,
    /// Connections served at once; one more is closed at once (and logged), not queued.
    #[arg(long, default_value_t = 256)]
    max_connections: usize,
    /// Worker threads serving connections, 1 to 1024 (default: one per core).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    workers: Option<u16>,
    /// Seconds connections in flight may take to finish after SIGTERM or SIGINT; those still
    /// open then, or at a second signal, are cut.
    #[arg(long, default_value_t = 10.0)]
    drain_timeout: f64,
    /// No session resumption: no session cache, no tickets (on by default: stateless
    /// tickets, keys rotated every 6 hours).
    #[arg(long)]
    no_resumption: bool,
    /// Log level on stderr.
    #[arg(long, default_value = "warn", value_parser = ["error", "warn", "info", "debug", "trace"])]
    log_level: String,
    /// Log format on stderr: text, or json (one object per line).
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    log_format: String,
    /// Seconds a client has to complete its handshake, from its connection.
    #[arg(long, default_value_t = 10.0)]
    handshake_timeout: f64,
}

impl ServiceArgs {
    /// Starts logging, checks the times; returns (handshake timeout, drain, workers).
    fn start(&self) -> failure::Result<(Duration, Duration, usize)> {
        logging(&self.log_level, self.log_format == "json");
        let handshake = seconds(self.handshake_timeout, "--handshake-timeout")?;
        let drain = seconds(self.drain_timeout, "--drain-timeout")?;
        let workers = self.workers.map_or_else(
            || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            usize::from,
        );
        Ok((handshake, drain, workers))
    }
}

#[derive(Args)]
struct ProxyArgs {
    /// Address to accept TLS clients on, host:port.
    #[arg(long, default_value = "127.0.0.1:8443")]
    listen: String,
    /// The service behind the proxy: host:port, or unix:PATH for a Unix-domain socket (plain
    /// unless --tls-target).
    #[arg(long)]
    target: String,
    /// Certificate chain PEM (leaf first) shown to clients; reread on SIGHUP.
    #[arg(long)]
    cert: PathBuf,
    /// PKCS#8 private key PEM — or an RFC 7512 `pkcs11:` URI of a key in a token; reread on
    /// SIGHUP.
    #[arg(long)]
    key: PathBuf,
    /// CA certificate(s) PEM of client certificates: clients must present one (mutual TLS),
    /// and be on the allow-list (--allow-*); reread on SIGHUP.
    #[arg(long, required_unless_present = "disable_authentication")]
    ca: Option<PathBuf>,
    /// Accept clients without certificates (needed when there is no --ca).
    #[arg(long, conflicts_with = "ca")]
    disable_authentication: bool,
    /// Admit every client whose certificate chain validates against --ca.
    #[arg(long)]
    allow_all: bool,
    /// Admit clients with this DNS subjectAltName (exact, any case; repeatable).
    #[arg(long, value_name = "NAME")]
    allow_dns: Vec<String>,
    /// Admit clients with this URI subjectAltName, e.g. a SPIFFE ID (exact; repeatable).
    #[arg(long, value_name = "URI")]
    allow_uri: Vec<String>,
    /// Admit clients with this IP address subjectAltName (repeatable).
    #[arg(long, value_name = "IP")]
    allow_ip: Vec<std::net::IpAddr>,
    /// Admit clients whose key has this SHA-256 SubjectPublicKeyInfo pin: 64 hex digits (as
    /// `pqkit x509 show` prints it) or base64 (RFC 7469); repeatable.
    #[arg(long, value_name = "PIN")]
    allow_spki_sha256: Vec<String>,
    /// Speak TLS 1.3 to the target too, verifying it against --target-ca.
    #[arg(long, requires = "target_ca")]
    tls_target: bool,
    /// CA certificate(s) PEM of the target's certificate.
    #[arg(long, requires = "tls_target")]
    target_ca: Option<PathBuf>,
    /// The name the target's certificate must carry (default: the host of --target).
    #[arg(long, requires = "tls_target")]
    target_name: Option<String>,
    /// Certificate chain PEM the proxy presents to the target, when it asks for one.
    #[arg(long, requires_all = ["tls_target", "target_key"])]
    target_cert: Option<PathBuf>,
    /// The key of --target-cert (PKCS#8 PEM or a `pkcs11:` URI).
    #[arg(long, requires = "target_cert")]
    target_key: Option<PathBuf>,
    /// Named groups offered to the target, in preference order (a key share for the first).
    #[arg(long, value_delimiter = ',', default_value = "X25519MLKEM768")]
    target_groups: Vec<String>,
    /// Serve metrics in the OpenMetrics text format at http://ADDRESS/metrics (host:port).
    #[arg(long, value_name = "ADDRESS")]
    metrics: Option<String>,
    /// Seconds a relayed connection may stay without a byte crossing either way.
    #[arg(long, default_value_t = 600.0)]
    idle_timeout: f64,
    #[command(flatten)]
    service: ServiceArgs,
}

#[derive(Args)]
struct ClientArgs {
    /// CA certificate(s) PEM to verify the server against.
    #[arg(long)]
    ca: PathBuf,
    /// Client certificate chain PEM, for mutual authentication.
    #[arg(long, requires = "key")]
    cert: Option<PathBuf>,
    /// Client PKCS#8 private key PEM — or an RFC 7512 `pkcs11:` URI of a key in a token.
    #[arg(long, requires = "cert")]
    key: Option<PathBuf>,
    /// Named groups in preference order, comma-separated; a key share is sent for the first.
    #[arg(
        long,
        alias = "group",
        value_delimiter = ',',
        default_value = "X25519MLKEM768"
    )]
    groups: Vec<String>,
    /// Server host.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Server port.
    #[arg(long, default_value_t = 4433)]
    port: u16,
    /// Name to verify in the server certificate (and send as SNI).
    #[arg(long, default_value = "localhost")]
    server_name: String,
    /// Message to send (not empty).
    #[arg(long, default_value = "hello pqkit!", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    message: String,
    /// Fail unless this group was negotiated.
    #[arg(long)]
    expect_group: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Seconds allowed to connect, to complete the handshake, and for the rest of the
    /// connection (each, not in all).
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Connections to make one after another, each a full handshake with its own report
    /// (1 to 100000); the first in a fresh process also pays for its cold start.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    connections: u32,
}

#[derive(Subcommand)]
enum PkiCommand {
    /// Write a root CA, a server and a client certificate with their PKCS#8 keys (seed form).
    #[command(
        after_help = "Example:\n  pqkit pki init --sig ML-DSA-65 --dir pki\n  \
                            pqkit pki init --sig ECDSA-P256 --dir pki-ec   # for peers without ML-DSA"
    )]
    Init {
        /// Signature algorithm for every certificate.
        #[arg(long, alias = "alg", default_value = "ML-DSA-65")]
        sig: String,
        /// Output directory.
        #[arg(long, default_value = "pki")]
        dir: PathBuf,
    },
    /// Write root CA -> intermediate CA -> server and client leaves, any algorithm per level.
    #[command(
        after_help = "Example:\n  pqkit pki issue --root ML-DSA-87 --intermediate ML-DSA-65 \
                            --leaf Falcon-512 --dir pki-chain"
    )]
    Issue {
        /// Root CA signature algorithm.
        #[arg(long, default_value = "ML-DSA-87")]
        root: String,
        /// Intermediate CA signature algorithm.
        #[arg(long, default_value = "ML-DSA-65")]
        intermediate: String,
        /// Leaf signature algorithm.
        #[arg(long, default_value = "ML-DSA-65")]
        leaf: String,
        /// Output directory.
        #[arg(long, default_value = "pki")]
        dir: PathBuf,
    },
}

impl ModeArgs {
    fn options(&self, deterministic: bool) -> failure::Result<files::SignOptions> {
        Ok(files::SignOptions {
            context: self.context.as_bytes().to_vec(),
            prehash: self
                .prehash
                .as_deref()
                .map(pqkit_core::prehash::PreHash::from_name)
                .transpose()
                .map_err(|e| Failure::usage(format!("--prehash: {e}")))?,
            external_mu: self.external_mu,
            deterministic,
            padding: self.padding,
        })
    }
}

/// `--threads N`: 1 to the number of CPUs this process may run on; more only makes the
/// threads wait for each other (`--threads 1000000` made one SLH-DSA signature crawl).
fn thread_count(text: &str) -> Result<usize, String> {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    match text.parse::<usize>() {
        Ok(n) if (1..=cpus).contains(&n) => Ok(n),
        _ => Err(format!(
            "{text:?}: a number of threads from 1 to {cpus}, the CPUs this process may use"
        )),
    }
}

/// A reader that closed standard output (`pqkit list | head -1`) ends the program quietly with
/// exit status 0, as coreutils' programs end: `println!` panics on EPIPE (Rust ignores
/// SIGPIPE), and this hook turns that panic into an exit. Any other failure to print (a full
/// disk, `>/dev/full`) is an output that could not be written: a message and exit status 3.
/// Every other panic is reported as before.
fn quiet_on_closed_stdout() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if let Some(why) = message.strip_prefix("failed printing to stdout: ") {
            if why.starts_with("Broken pipe") {
                std::process::exit(0);
            }
            // A full disk or a device that refuses: a failure to write an output (exit 3).
            eprintln!("pqkit: standard output: {}", failure::plain(why));
            std::process::exit(3);
        }
        report(info);
    }));
}

/// `PQKIT_HASH=portable|shani|avx2|avx512`: the hash path of the whole process (pqkit-hash
/// reads no environment; the program chooses). A name that is not a path, or a path this CPU
/// cannot run, is named on stderr and the detected path kept.
fn hash_path_from_env() {
    let Some(name) = std::env::var_os("PQKIT_HASH") else {
        return;
    };
    let name = name.to_string_lossy();
    if let Err(e) = pqkit_hash::dispatch::set_process_by_name(&name) {
        eprintln!(
            "pqkit: PQKIT_HASH={name:?}: {e}; hashing on the {} path",
            pqkit_hash::dispatch::process()
        );
    }
}

/// Parses the command line and runs the command; the exit status is the one `--help` lists.
pub fn run() -> ExitCode {
    quiet_on_closed_stdout();
    let cli = Cli::parse();
    // The commands with heap figures run on the counting allocator (`pqkit-heap`).
    if matches!(
        cli.command,
        Command::Demo(_) | Command::Bench(BenchCommand::Handshake { .. }) | Command::Report { .. }
    ) && let Some(status) = heap_rerun::metered_or_rerun()
    {
        return status;
    }
    hash_path_from_env();
    let g = Globals {
        force: cli.force,
        pkcs11_module: cli.pkcs11_module,
        pin_source: cli.pin_source,
    };
    let overwrite = g.overwrite();
    files::set_pkcs11(token_cmd::options(
        g.pkcs11_module.clone(),
        g.pin_source.clone(),
    ));
    let result = match cli.command {
        Command::Demo(a) => commands::demo(&a.group, &a.sig, a.dir.as_deref(), a.json),
        Command::Server(a) => server(a),
        Command::Proxy(a) => proxy(*a),
        Command::Client(a) => client(a),
        Command::Report { out, quick, pages } => {
            bench_cmd::report(&out, pages.as_deref(), quick, overwrite)
        }
        Command::List { json } => catalogue_cmd::list(json),
        Command::Sizes { json, markdown } => catalogue_cmd::sizes(json, markdown),
        Command::Keygen {
            alg,
            seed,
            format,
            out,
            public,
        } => files::keygen(
            &alg,
            seed.as_deref(),
            format,
            &out,
            public.as_deref(),
            overwrite,
        ),
        Command::Pubkey { key, out } => files::pubkey(&key, out.as_deref(), overwrite),
        Command::Sign {
            key,
            out,
            mode,
            deterministic,
            threads,
            file,
        } => {
            pqkit_core::slh_dsa::set_signing_threads(threads);
            mode.options(deterministic)
                .and_then(|o| files::sign(&key, &file, &out, &o, overwrite))
        }
        Command::Verify {
            public,
            signature,
            mode,
            file,
        } => mode
            .options(false)
            .and_then(|o| files::verify(&public, &file, &signature, &o)),
        Command::Pki(c) => pki(c, &g),
        Command::Bench(c) => bench(c, &g),
        Command::Hbs(c) => hbs(c, &g),
        Command::Token(c) => token(c, &g),
        Command::Csr(c) => csr(c, &g),
        Command::Cms(c) => cms(c, &g),
        Command::Kem(c) => kem(c, &g),
        Command::X509(c) => x509(c),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pqkit: {e}");
            e.exit_code()
        }
    }
}

/// `pqkit token …`.
fn token(command: TokenCommand, g: &Globals) -> failure::Result<()> {
    let options = token_cmd::options(g.pkcs11_module.clone(), g.pin_source.clone());
    match command {
        TokenCommand::Init {
            label,
            dir,
            so_pin,
            pin,
            kdf_memory_kib,
            kdf_passes,
            max_pin_attempts,
            min_pin_len,
            ledger,
        } => token_cmd::init(
            &label,
            dir.as_deref(),
            &so_pin,
            &pin,
            kdf_memory_kib,
            kdf_passes,
            max_pin_attempts,
            min_pin_len,
            ledger,
        ),
        TokenCommand::List { token } => token_cmd::list(token.as_deref(), &options),
        TokenCommand::Import {
            token,
            label,
            id,
            cert,
            file,
        } => token_cmd::import(&token, &file, cert, &label, id.as_deref(), &options),
        TokenCommand::Keygen {
            token,
            alg,
            label,
            id,
        } => token_cmd::keygen(&token, &alg, &label, id.as_deref(), &options),
        TokenCommand::Delete { token, label } => token_cmd::delete(&token, &label, &options),
        TokenCommand::Serve { socket } => token_cmd::serve(&socket, g.force),
    }
}

/// `pqkit server`.
fn server(a: ServerArgs) -> failure::Result<()> {
    let (handshake, drain, workers) = a.service.start()?;
    let idle = seconds(a.idle_timeout, "--idle-timeout")?;
    commands::server(&commands::ServerOptions {
        cert: a.cert,
        key: a.key,
        ca: a.ca,
        mutual: a.mutual,
        groups: a.service.groups,
        host: a.host,
        port: a.port,
        count: a.count,
        reply: a.reply,
        json: a.json,
        max_connections: a.service.max_connections,
        timeouts: pqkit_rustls::session::Timeouts { handshake, idle },
        workers,
        drain,
        resumption: !a.service.no_resumption,
    })
}

/// `pqkit proxy`.
fn proxy(a: ProxyArgs) -> failure::Result<()> {
    let (handshake, drain, workers) = a.service.start()?;
    let idle = seconds(a.idle_timeout, "--idle-timeout")?;
    let mutual = a.ca.is_some();
    let policy = proxy_cmd::allow_list(
        mutual,
        a.allow_all,
        a.allow_dns,
        a.allow_uri,
        a.allow_ip,
        &a.allow_spki_sha256,
    )?;
    proxy_cmd::proxy(proxy_cmd::ProxyOptions {
        listen: a.listen,
        target: a.target,
        tls: commands::ServerTls {
            cert: a.cert,
            key: a.key,
            client_ca: a.ca,
            policy: policy.map(|p| std::sync::Arc::new(p) as _),
            groups: a.service.groups,
            // With client certificates, every connection proves its client's key against the
            // CA and allow-list of the moment: rustls does not check a resumed session's
            // client again, so a ticket would let a client a reload removed back in.
            resumption: !a.service.no_resumption && !mutual,
        },
        target_tls: a.tls_target.then(|| proxy_cmd::TargetTls {
            ca: a.target_ca.unwrap_or_default(),
            name: a.target_name,
            auth: a.target_cert.zip(a.target_key),
            groups: a.target_groups,
        }),
        metrics: a.metrics,
        max_connections: a.service.max_connections,
        timeouts: pqkit_rustls::session::Timeouts { handshake, idle },
        workers,
        drain,
    })
}

/// Logs of the TLS service (`tracing`) on stderr at `level` ("warn" …), as text or JSON
/// lines; colours only on a terminal.
fn logging(level: &str, json: bool) {
    use std::io::IsTerminal as _;
    let level = level.parse().unwrap_or(tracing::Level::WARN);
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_ansi(std::io::stderr().is_terminal());
    // A subscriber already installed (none is, in the command) is kept.
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

/// `pqkit client`.
fn client(a: ClientArgs) -> failure::Result<()> {
    seconds(a.timeout, "--timeout").and_then(|timeout| {
        commands::client(&commands::ClientOptions {
            ca: a.ca,
            auth: a.cert.zip(a.key),
            groups: a.groups,
            host: a.host,
            port: a.port,
            server_name: a.server_name,
            message: a.message,
            expect_group: a.expect_group,
            json: a.json,
            timeout,
            connections: a.connections,
        })
    })
}

/// The options every subcommand may read (`--force`, `--pkcs11-module`, `--pin-source`).
struct Globals {
    force: bool,
    pkcs11_module: Option<PathBuf>,
    pin_source: Option<String>,
}

impl Globals {
    /// `--force` as the output files see it.
    fn overwrite(&self) -> Overwrite {
        Overwrite::from_force(self.force)
    }
}

/// `pqkit pki …`.
fn pki(command: PkiCommand, g: &Globals) -> failure::Result<()> {
    let overwrite = g.overwrite();
    match command {
        PkiCommand::Init { sig, dir } => commands::pki_init(&sig, &dir, overwrite),
        PkiCommand::Issue {
            root,
            intermediate,
            leaf,
            dir,
        } => files::pki_issue(&dir, &root, &intermediate, &leaf, overwrite),
    }
}

/// `pqkit bench …`.
fn bench(command: BenchCommand, g: &Globals) -> failure::Result<()> {
    match command {
        BenchCommand::Crypto {
            alg,
            deterministic,
            hash_path,
            threads,
            rounds,
            budget,
            output,
        } => bench_cmd::budget(budget.min_time, budget.min_iters).and_then(|budget| {
            let options = pqkit_bench::crypto::Options {
                algorithms: alg,
                budget,
                deterministic,
                hash_paths: bench_cmd::hash_paths(&hash_path)?,
                threads,
                rounds,
            };
            bench_cmd::print(pqkit_bench::suite::crypto(&options), &output.get())
        }),
        BenchCommand::Handshake {
            sig,
            group,
            preset,
            mutual,
            repetitions,
            output,
        } => {
            let mutual = match mutual.as_str() {
                "on" => vec![true],
                "off" => vec![false],
                _ => vec![false, true],
            };
            match preset {
                Some(name) => pqkit_bench::preset::find(&name)
                    .map_err(Failure::usage)
                    .and_then(|preset| {
                        bench_cmd::print(
                            pqkit_bench::suite::handshake_preset(preset, &mutual, repetitions),
                            &output.get(),
                        )
                    }),
                None => {
                    let defaults = pqkit_bench::handshake::Options::default();
                    let options = pqkit_bench::handshake::Options {
                        signatures: or_default(sig, defaults.signatures),
                        groups: or_default(group, defaults.groups),
                        mutual,
                        repetitions,
                    };
                    bench_cmd::print(pqkit_bench::suite::handshake(&options), &output.get())
                }
            }
        }
        BenchCommand::Server {
            sig,
            group,
            clients,
            seconds,
            rounds,
            rate,
            resume,
            no_proxy,
            openssl,
            gotls,
            busy,
            workers,
            timeout,
            output,
        } => {
            let duration = bench_cmd::seconds(seconds, "--seconds")?;
            let timeout = bench_cmd::seconds(timeout, "--timeout")?;
            if rate.is_some_and(|r| !(r > 0.0 && r <= 1e6)) {
                return Err(Failure::usage(
                    "--rate must be a number of connections per second above 0, at most 10^6",
                ));
            }
            let options = pqkit_bench::servers::Options {
                signature: sig,
                group,
                load: pqkit_bench::load::Load {
                    clients: usize::from(clients),
                    duration,
                    rate,
                    resume,
                    timeout,
                },
                rounds: usize::from(rounds),
                pqkit: heap_rerun::plain_executable()?,
                proxy: !no_proxy,
                openssl,
                gotls,
                busy,
                workers: workers.map(usize::from),
            };
            bench_cmd::print(pqkit_bench::suite::servers(&options), &output.get())
        }
        BenchCommand::Tls {
            sig,
            group,
            seconds,
            pairs,
            per_core,
            mutual,
            token,
            output,
        } => bench_cmd::seconds(seconds, "--seconds").and_then(|duration| {
            let defaults = pqkit_bench::tls::Options::default();
            let options = pqkit_bench::tls::Options {
                signatures: or_default(sig, defaults.signatures),
                groups: or_default(group, defaults.groups),
                duration,
                pairs: if per_core {
                    std::thread::available_parallelism().map_or(1, |n| n.get())
                } else {
                    pairs
                },
                mutual,
            };
            let pkcs11 = token_cmd::options(g.pkcs11_module.clone(), g.pin_source.clone());
            let mut source = token
                .as_deref()
                .map(|uri| token_cmd::bench_keys(uri, &pkcs11))
                .transpose()?;
            let token = source
                .as_mut()
                .map(|(name, keys)| (name.as_str(), &mut **keys));
            bench_cmd::print(pqkit_bench::suite::tls_with(&options, token), &output.get())
        }),
        BenchCommand::Ledger {
            preset,
            reserve,
            signers,
            etcd,
            no_etcd,
            min_time,
            dir,
            output,
        } => bench_cmd::seconds(min_time, "--min-time").and_then(|min_time| {
            let options = pqkit_bench::ledger::Options {
                preset,
                reserve,
                signers: usize::try_from(signers).unwrap_or(1),
                min_time,
                etcd,
                no_etcd,
                dir,
            };
            bench_cmd::print(pqkit_bench::suite::ledger(&options), &output.get())
        }),
        BenchCommand::Boundary {
            sizes,
            token,
            budget,
            output,
        } => bench_cmd::budget(budget.min_time, budget.min_iters).and_then(|budget| {
            let options = token_cmd::options(g.pkcs11_module.clone(), g.pin_source.clone());
            let mut sources = token
                .iter()
                .map(|uri| token_cmd::bench_keys(uri, &options))
                .collect::<failure::Result<Vec<_>>>()?;
            let mut signers: Vec<(String, &mut pqkit_bench::boundary::KeySource<'_>)> = sources
                .iter_mut()
                .map(|(name, source)| (name.clone(), &mut **source))
                .collect();
            bench_cmd::print(
                pqkit_bench::suite::boundary_with(&sizes, budget, &mut signers),
                &output.get(),
            )
        }),
        BenchCommand::Primitives {
            only,
            min_time,
            buffer,
            threads,
            output,
        } => bench_cmd::seconds(min_time, "--min-time").and_then(|min_time| {
            let mut options = pqkit_bench::primitives::Options {
                min_time,
                buffer,
                only,
                ..Default::default()
            };
            if let Some(t) = threads {
                options.threads = t.max(1);
            }
            if buffer == 0 || buffer % 64 != 0 {
                return Err(Failure::usage(
                    "--buffer: a positive multiple of 64 bytes (every block size divides it)",
                ));
            }
            bench_cmd::print(pqkit_bench::suite::primitives(&options), &output.get())
        }),
    }
}

/// `pqkit hbs …`.
fn hbs(command: HbsCommand, g: &Globals) -> failure::Result<()> {
    let overwrite = g.overwrite();
    match command {
        HbsCommand::Params { json } => hbs_cmd::params(json),
        HbsCommand::Keygen {
            preset,
            state,
            public,
            threads,
            ledger,
        } => hbs_cmd::keygen(
            &preset,
            &state,
            &public,
            threads,
            ledger.ledger.as_deref(),
            overwrite,
        ),
        HbsCommand::Sign {
            state,
            out,
            out_dir,
            reserve,
            threads,
            ledger,
            files,
        } => {
            let out = match (out.as_deref(), out_dir.as_deref()) {
                (Some(o), _) => Some(hbs_cmd::SignOutput::File(o)),
                (None, Some(d)) => Some(hbs_cmd::SignOutput::Dir(d)),
                (None, None) => None,
            };
            match out {
                Some(out) => hbs_cmd::sign(
                    &state,
                    &files,
                    out,
                    reserve,
                    threads,
                    ledger.ledger.as_deref(),
                    overwrite,
                ),
                None => Err(Failure::usage("give -o FILE or --out-dir DIR")),
            }
        }
        HbsCommand::Verify {
            public,
            signature,
            file,
        } => hbs_cmd::verify(&public, &file, &signature),
        HbsCommand::Status {
            state,
            json,
            ledger,
        } => hbs_cmd::status(&state, json, ledger.ledger.as_deref()),
        HbsCommand::Pubkey { state, out } => hbs_cmd::pubkey(&state, &out, overwrite),
        HbsCommand::Ledger { json, ledger } => hbs_cmd::ledger(json, ledger.ledger.as_deref()),
        HbsCommand::Sector {
            state,
            count,
            out_dir,
            threads,
            ledger,
        } => hbs_cmd::sector(
            &state,
            count,
            out_dir.as_deref(),
            threads,
            ledger.ledger.as_deref(),
        ),
        HbsCommand::Adopt {
            state,
            skip,
            skip_to,
            yes,
            ledger_lost,
            ledger,
        } => {
            let to = skip_to.map_or(pqkit_hbs::state::AdoptTo::Skip(skip), |n| {
                pqkit_hbs::state::AdoptTo::At(n)
            });
            hbs_cmd::adopt(&state, to, yes, ledger_lost, ledger.ledger.as_deref())
        }
        HbsCommand::Ca {
            state,
            subject,
            days,
            out,
            ledger,
        } => hbs_cmd::ca(
            &state,
            &subject,
            days,
            &out,
            ledger.ledger.as_deref(),
            overwrite,
        ),
        HbsCommand::Issue {
            state,
            ca,
            csr,
            public,
            subject,
            profile,
            days,
            out,
            ledger,
        } => hbs_cmd::Subject::from_args(csr.as_deref(), public.as_deref(), subject.as_deref())
            .and_then(|subject| {
                let request = hbs_cmd::Issue {
                    state: &state,
                    ca_cert: &ca,
                    subject,
                    profile,
                    days,
                    out: &out,
                    ledger: ledger.ledger.as_deref(),
                };
                hbs_cmd::issue(&request, overwrite)
            }),
    }
}

/// `pqkit cms …`.
fn cms(command: CmsCommand, g: &Globals) -> failure::Result<()> {
    let overwrite = g.overwrite();
    match command {
        CmsCommand::Sign {
            signers,
            keys,
            certificates,
            digest,
            detached,
            no_signed_attributes,
            deterministic,
            pem,
            subject_key_identifier,
            ledger,
            out,
            file,
        } => cms_cmd::sign(
            &cms_cmd::SignArgs {
                signers: &signers,
                keys: &keys,
                certificates: &certificates,
                digest,
                detached,
                signed_attributes: !no_signed_attributes,
                deterministic,
                pem,
                subject_key_identifier,
                ledger: ledger.ledger.as_deref(),
                out: &out,
                file: &file,
            },
            overwrite,
        ),
        CmsCommand::Verify {
            ca,
            tsa_ca,
            content,
            certificates,
            signers,
            require,
            purpose,
            at,
            out,
            signed,
        } => cms_cmd::verify(
            &cms_cmd::VerifyArgs {
                signed: &signed,
                content: content.as_deref(),
                ca: &ca,
                tsa_ca: tsa_ca.as_deref(),
                certificates: &certificates,
                signers: &signers,
                require,
                purposes: &purpose,
                at,
                out: out.as_deref(),
            },
            overwrite,
        ),
        CmsCommand::Timestamp {
            signature_out,
            token,
            signer_index,
            out,
            signed,
        } => cms_cmd::timestamp(
            &signed,
            signer_index,
            signature_out.as_deref(),
            token.as_deref().zip(out.as_deref()),
            overwrite,
        ),
        CmsCommand::Show { signed, json } => cms_cmd::show(&signed, json),
    }
}

/// `pqkit csr …`.
fn csr(command: CsrCommand, g: &Globals) -> failure::Result<()> {
    let overwrite = g.overwrite();
    match command {
        CsrCommand::Create {
            key,
            subject,
            dns,
            ip,
            out,
        } => csr_cmd::create(&key, &subject, &dns, &ip, &out, overwrite),
        CsrCommand::Show { csr, json } => csr_cmd::show(&csr, json),
        CsrCommand::Sign {
            ca,
            ca_key,
            profile,
            days,
            csr,
            out,
        } => csr_cmd::sign(&csr, &ca, &ca_key, profile, days, &out, overwrite),
    }
}

/// `pqkit kem …`.
fn kem(command: KemCommand, g: &Globals) -> failure::Result<()> {
    let overwrite = g.overwrite();
    match command {
        KemCommand::Encapsulate {
            public,
            out,
            secret,
        } => files::encapsulate(&public, &out, &secret, overwrite),
        KemCommand::Decapsulate {
            key,
            ciphertext,
            secret,
        } => files::decapsulate(&key, &ciphertext, &secret, overwrite),
    }
}

/// `pqkit x509 …`.
fn x509(command: X509Command) -> failure::Result<()> {
    match command {
        X509Command::Show { cert, json } => files::x509_show(&cert, json),
        X509Command::Verify(args) => files::x509_verify(&args),
    }
}

/// A timeout of `s` seconds from a command-line flag: more than 0, at most a day.
fn seconds(s: f64, flag: &str) -> failure::Result<Duration> {
    let d = bench_cmd::seconds(s, flag)?;
    if d.is_zero() || d > Duration::from_secs(24 * 3600) {
        return Err(Failure::usage(format!(
            "{flag} must be more than 0 seconds and at most a day (86400)"
        )));
    }
    Ok(d)
}

/// Certificate validity in days: 1 to 36 500 (100 years).
fn parse_days(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(d) if (1..=36_500).contains(&d) => Ok(d),
        _ => Err(format!("{s:?}: a number of days from 1 to 36500")),
    }
}

/// The user's list, or the default when they gave none.
fn or_default(given: Vec<String>, default: Vec<String>) -> Vec<String> {
    if given.is_empty() { default } else { given }
}
