//! `pqkit proxy`: post-quantum TLS in front of a TCP service ([`pqkit_server::proxy`]), with
//! its certificate and key reloaded on SIGHUP and its metrics served at `/metrics`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pqkit_core::catalogue;
use pqkit_server::proxy::{AllowList, Metrics, Termination, Upstream};

use crate::commands::{self, ServerTls};
use crate::failure::{Context, Failure, Result};

/// Options of `pqkit proxy`.
pub(crate) struct ProxyOptions {
    pub(crate) listen: String,
    pub(crate) target: String,
    /// The server side: certificate, key, client CA and allow-list, groups, resumption.
    pub(crate) tls: ServerTls,
    /// TLS to the target: its CA, the name its certificate must carry, the proxy's own
    /// certificate and key for it.
    pub(crate) target_tls: Option<TargetTls>,
    pub(crate) metrics: Option<String>,
    pub(crate) max_connections: usize,
    pub(crate) timeouts: pqkit_rustls::session::Timeouts,
    pub(crate) workers: usize,
    pub(crate) drain: Duration,
}

/// Origination: how the proxy speaks TLS to its target.
pub(crate) struct TargetTls {
    pub(crate) ca: PathBuf,
    pub(crate) name: Option<String>,
    pub(crate) auth: Option<(PathBuf, PathBuf)>,
    pub(crate) groups: Vec<String>,
}

/// The allow-list of `--allow-*` options: at least one of them (or `--allow-all`) with `--ca`,
/// none without.
pub(crate) fn allow_list(
    ca: bool,
    any: bool,
    dns: Vec<String>,
    uri: Vec<String>,
    ip: Vec<std::net::IpAddr>,
    pins: &[String],
) -> Result<Option<AllowList>> {
    if let Some(w) = dns.iter().find(|d| d.contains('*')) {
        return Err(Failure::usage(format!(
            "--allow-dns {w:?}: names are matched exactly, wildcards are not expanded (a \
             certificate for {w:?} itself would match); list each name"
        )));
    }
    let list = AllowList {
        any,
        dns,
        uri,
        ip,
        spki_sha256: pins
            .iter()
            .map(|p| AllowList::parse_pin(p).map_err(Failure::usage))
            .collect::<Result<_>>()?,
    };
    match (ca, list.is_empty()) {
        (true, true) => Err(Failure::usage(
            "--ca asks for client certificates: say whom to admit with --allow-dns, \
             --allow-uri, --allow-ip, --allow-spki-sha256, or --allow-all",
        )),
        (false, false) => Err(Failure::usage(
            "--allow-* options need --ca (the CA of the client certificates)",
        )),
        (true, false) => Ok(Some(list)),
        (false, true) => Ok(None),
    }
}

/// `pqkit proxy` (see [`pqkit_server::proxy`]): listens on `listen`, relays to `target`;
/// SIGHUP rereads the certificate, key and client CA (a failed reload keeps the current ones
/// and is logged); SIGTERM or SIGINT drains as `pqkit server` does.
pub(crate) fn proxy(o: ProxyOptions) -> Result<()> {
    if o.max_connections == 0 {
        return Err(Failure::usage("--max-connections must be at least 1"));
    }
    for (flag, address) in [("--listen", Some(&o.listen)), ("--target", Some(&o.target))]
        .into_iter()
        .chain([("--metrics", o.metrics.as_ref())])
    {
        if let Some(address) = address {
            check_address(flag, address)?;
        }
    }
    let upstream = Arc::new(Upstream {
        tls: o
            .target_tls
            .as_ref()
            .map(|t| target_config(t, &o.target))
            .transpose()?,
        address: o.target.clone(),
    });
    let tls = Arc::new(o.tls);
    let (config, seen, leaf) = commands::server_tls(&tls)?;
    let scheme = key_scheme(&leaf, &tls.cert)?;
    let termination = Arc::new(Termination::new(config, seen, scheme));
    let counters = Arc::new(pqkit_server::Counters::default());
    let metrics = Arc::new(Metrics::new(counters.clone()));
    let runtime = commands::service_runtime(o.workers)?;
    let served = runtime.block_on(async {
        // The handlers are in place before the ready line: a supervisor's SIGHUP or SIGTERM
        // right after it must not meet the default action (which ends the process).
        let stop = pqkit_server::stop_on_signals()?;
        let hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
        let scrape = match &o.metrics {
            Some(address) => {
                let l = tokio::net::TcpListener::bind(address.as_str())
                    .await
                    .about(address)?;
                eprintln!("pqkit proxy metrics on http://{}/metrics", l.local_addr()?);
                Some(tokio::spawn(pqkit_server::proxy::metrics::serve_metrics(
                    l,
                    metrics.clone(),
                )))
            }
            None => None,
        };
        let listener = tokio::net::TcpListener::bind(o.listen.as_str())
            .await
            .about(&o.listen)?;
        eprintln!(
            "pqkit proxy listening on {} -> {}{} (groups {}, client auth {}, at most {} \
             connections, {} workers)",
            listener.local_addr()?,
            o.target,
            if upstream.tls.is_some() {
                " over TLS"
            } else {
                ""
            },
            tls.groups.join(","),
            if tls.client_ca.is_some() {
                "required"
            } else {
                "off"
            },
            o.max_connections,
            o.workers
        );
        let reload = tokio::spawn(reload_on_hangup(
            hangup,
            tls.clone(),
            termination.clone(),
            metrics.clone(),
        ));
        let options = pqkit_server::Options {
            max_connections: o.max_connections,
            timeouts: o.timeouts,
            count: 0,
            drain: o.drain,
            counters,
        };
        let summary = pqkit_server::proxy(
            listener,
            termination.clone(),
            upstream.clone(),
            options,
            metrics,
            stop,
        )
        .await;
        reload.abort();
        if let Some(s) = scrape {
            s.abort();
        }
        summary.log();
        Ok(())
    });
    // As in `pqkit server`: the workers end before the keys, which may live in a PKCS#11
    // module (the proxy's own, and its key towards the target).
    drop(runtime);
    drop(termination);
    drop(upstream);
    served
}

/// Rereads the certificate, key and client CA at each SIGHUP, off the workers; a reload that
/// fails keeps the configuration in place.
async fn reload_on_hangup(
    mut hangup: tokio::signal::unix::Signal,
    tls: Arc<ServerTls>,
    termination: Arc<Termination>,
    metrics: Arc<Metrics>,
) {
    while hangup.recv().await.is_some() {
        let files = tls.clone();
        let built = tokio::task::spawn_blocking(move || {
            let (config, seen, leaf) = commands::server_tls(&files)?;
            Ok::<_, Failure>((config, seen, key_scheme(&leaf, &files.cert)?))
        })
        .await;
        match built {
            Ok(Ok((config, seen, scheme))) => {
                termination.replace(config, seen, scheme);
                metrics.reloaded(true);
                tracing::warn!(cert = %tls.cert.display(), "reloaded on SIGHUP");
            }
            Ok(Err(e)) => {
                metrics.reloaded(false);
                tracing::error!(error = %e, "reload failed; the current certificate stays");
            }
            Err(e) => {
                metrics.reloaded(false);
                tracing::error!(error = %e, "reload failed; the current certificate stays");
            }
        }
    }
}

/// The TLS 1.3 signature scheme of the key certified by `leaf` (read from `cert`, the chain
/// the configuration serves), by its IANA name (else its algorithm's name): the metrics'
/// `scheme` label.
fn key_scheme(leaf: &[u8], cert: &std::path::Path) -> Result<String> {
    let algorithm = pqkit_pki::describe::describe(leaf, None)
        .about(cert.display())?
        .public_key_algorithm;
    Ok(catalogue::signature(&algorithm)
        .ok()
        .and_then(|a| a.tls_scheme)
        .map_or(algorithm, |cp| cp.iana.to_owned()))
}

/// The client configuration and server name for TLS to `target`.
fn target_config(
    t: &TargetTls,
    target: &str,
) -> Result<(
    Arc<rustls::ClientConfig>,
    rustls_pki_types::ServerName<'static>,
)> {
    let provider = commands::provider_for(&t.groups)?;
    let roots = commands::read_roots(&t.ca)?;
    let auth = match &t.auth {
        Some((cert, key)) => Some((commands::read_chain(cert)?, commands::read_key(key)?)),
        None => None,
    };
    let about = match &t.auth {
        Some((cert, key)) => format!(
            "{} with {}",
            cert.display(),
            pqkit_pkcs11::client::redacted(&key.to_string_lossy())
        ),
        None => t.ca.display().to_string(),
    };
    let (config, _seen) = pqkit_rustls::client_config(provider, &roots, auth).about(about)?;
    let (flag, host) = match &t.name {
        Some(n) => ("--target-name", n.clone()),
        None if target.starts_with("unix:") => {
            return Err(Failure::usage(
                "--tls-target to a unix: socket needs --target-name (the name its certificate \
                 carries)",
            ));
        }
        None => ("--target (its host)", host_of(target).to_owned()),
    };
    let name = commands::server_name(&host)
        .map_err(|e| Failure::usage(format!("{flag} {host:?}: not a server name: {e}")))?;
    Ok((Arc::new(config), name))
}

/// `address` must be `host:port` with a port number (the host is resolved when used) — or,
/// for `--target`, `unix:PATH`.
fn check_address(flag: &str, address: &str) -> Result<()> {
    if flag == "--target"
        && let Some(path) = address.strip_prefix("unix:")
    {
        return if path.is_empty() {
            Err(Failure::usage(
                "--target unix: needs the socket's path (unix:/run/app.sock)",
            ))
        } else {
            Ok(())
        };
    }
    let port = address
        .rsplit_once(':')
        .map(|(host, port)| (host, port.parse::<u16>()));
    match port {
        Some((host, Ok(_))) if !host.is_empty() => Ok(()),
        _ => Err(Failure::usage(format!(
            "{flag} {address:?}: give host:port (e.g. 127.0.0.1:8443, [::1]:8443, db.internal:5432)"
        ))),
    }
}

/// The host of `host:port` (`[v6]:port` too).
fn host_of(address: &str) -> &str {
    let host = address.rsplit_once(':').map_or(address, |(h, _)| h);
    host.trim_start_matches('[').trim_end_matches(']')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_of_an_address() {
        assert_eq!(host_of("db.internal:5432"), "db.internal");
        assert_eq!(host_of("[::1]:443"), "::1");
        assert_eq!(host_of("localhost"), "localhost");
        assert!(check_address("--target", "db:5432").is_ok());
        assert!(check_address("--target", "[::1]:443").is_ok());
        assert!(check_address("--target", "unix:/run/app.sock").is_ok());
        assert!(check_address("--listen", "unix:/run/app.sock").is_err());
        for bad in ["db", ":443", "db:", "db:http", "db:70000", "unix:"] {
            assert!(check_address("--target", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_allow_list_needs_a_ca_and_a_ca_needs_an_allow_list() {
        assert!(allow_list(true, false, vec![], vec![], vec![], &[]).is_err());
        assert!(allow_list(false, false, vec!["a".into()], vec![], vec![], &[]).is_err());
        assert!(
            allow_list(false, false, vec![], vec![], vec![], &[])
                .expect("allow list")
                .is_none()
        );
        assert!(
            allow_list(true, true, vec![], vec![], vec![], &[])
                .expect("allow list")
                .is_some()
        );
        assert!(allow_list(true, false, vec![], vec![], vec![], &["00".into()]).is_err());
        assert!(allow_list(true, false, vec!["*.example".into()], vec![], vec![], &[]).is_err());
    }
}
