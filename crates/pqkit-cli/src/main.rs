//! `pqkit`: fully post-quantum TLS 1.3, PKI and measurement from one command.

mod commands;
mod session;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// pqkit — post-quantum TLS 1.3, PKI and measurement.
#[derive(Parser)]
#[command(name = "pqkit", version, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "\
Examples:
  pqkit demo                                   # PQ TLS 1.3 in one process, print the table
  pqkit pki init --sig ML-DSA-65 --dir pki     # CA, server and client certificates
  pqkit server --cert pki/server.pem --key pki/server.key --ca pki/ca.pem --mutual --port 4433
  pqkit client --ca pki/ca.pem --cert pki/client.pem --key pki/client.key --port 4433";

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
    /// Connect over TLS 1.3, send a message, print the reply and the negotiated parameters.
    #[command(
        after_help = "Example:\n  pqkit client --ca pki/ca.pem --cert pki/client.pem \
                            --key pki/client.key --port 4433 --groups X25519MLKEM768"
    )]
    Client(ClientArgs),
    /// Certificates and keys.
    #[command(subcommand)]
    Pki(PkiCommand),
}

#[derive(Args)]
struct DemoArgs {
    /// Named group for the key exchange.
    #[arg(long, default_value = "X25519MLKEM768")]
    group: String,
    /// Signature algorithm of the CA, server and client certificates.
    #[arg(long, default_value = "ML-DSA-65")]
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
    /// PKCS#8 private key PEM.
    #[arg(long)]
    key: PathBuf,
    /// CA certificate(s) PEM to verify client certificates against.
    #[arg(long)]
    ca: Option<PathBuf>,
    /// Require a client certificate (needs --ca).
    #[arg(long)]
    mutual: bool,
    /// Named groups in preference order, comma-separated.
    #[arg(
        long,
        alias = "group",
        value_delimiter = ',',
        default_value = "X25519MLKEM768,SecP256r1MLKEM768,SecP384r1MLKEM1024,MLKEM768,MLKEM1024,MLKEM512"
    )]
    groups: Vec<String>,
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on (0 picks a free one and prints it).
    #[arg(long, default_value_t = 4433)]
    port: u16,
    /// Exit after this many connections (0 = serve until killed).
    #[arg(long, default_value_t = 0)]
    count: u64,
    /// Answer with this text instead of echoing.
    #[arg(long)]
    reply: Option<String>,
    /// One JSON line per connection instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct ClientArgs {
    /// CA certificate(s) PEM to verify the server against.
    #[arg(long)]
    ca: PathBuf,
    /// Client certificate chain PEM, for mutual authentication.
    #[arg(long, requires = "key")]
    cert: Option<PathBuf>,
    /// Client PKCS#8 private key PEM.
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
        #[arg(long, default_value = "ML-DSA-65")]
        sig: String,
        /// Output directory.
        #[arg(long, default_value = "pki")]
        dir: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(a) => commands::demo(&a.group, &a.sig, a.dir.as_deref(), a.json),
        Command::Server(a) => commands::server(&commands::ServerOptions {
            cert: a.cert,
            key: a.key,
            ca: a.ca,
            mutual: a.mutual,
            groups: a.groups,
            host: a.host,
            port: a.port,
            count: a.count,
            reply: a.reply,
            json: a.json,
        }),
        Command::Client(a) => commands::client(&commands::ClientOptions {
            ca: a.ca,
            auth: a.cert.zip(a.key),
            groups: a.groups,
            host: a.host,
            port: a.port,
            server_name: a.server_name,
            message: a.message,
            expect_group: a.expect_group,
            json: a.json,
        }),
        Command::Pki(PkiCommand::Init { sig, dir }) => commands::pki_init(&sig, &dir),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pqkit: {e}");
            ExitCode::FAILURE
        }
    }
}
