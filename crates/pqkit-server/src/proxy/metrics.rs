//! What `pqkit proxy` exposes at `/metrics`, in the OpenMetrics text format (which Prometheus
//! scrapes; <https://prometheus.io/docs/specs/om/open_metrics_spec/>), encoded by the
//! Prometheus project's own `prometheus-client`.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `pqkit_proxy_handshakes_total` | counter | `group`, `scheme` (the proxy's certificate key's signature scheme; a resumed handshake signs nothing), `client_scheme` (the client's, or `none`), `kind` (`full`, `resumed`) |
//! | `pqkit_proxy_handshake_failures_total` | counter | `reason` (`alert_sent`, `alert_received`, `timeout`, `closed`, `resumption_refused`, `protocol`, `io`), `alert` (RFC 8446 §6 name, or `none`) |
//! | `pqkit_proxy_handshake_seconds` | histogram | — (0.25 ms to 4.1 s, doubling) |
//! | `pqkit_proxy_bytes_total` | counter | `direction` (`from_client`, `from_upstream`): application bytes relayed |
//! | `pqkit_proxy_upstream_failures_total` | counter | — (connection or TLS to the target failed) |
//! | `pqkit_proxy_reloads_total` | counter | `result` (`ok`, `failed`): SIGHUP reloads |
//! | `pqkit_proxy_connections_open` | gauge | — |
//! | `pqkit_proxy_connections_total` | counter | — (accepted and served) |
//! | `pqkit_proxy_connections_refused_total` | counter | — (closed at once at `--max-connections`) |

use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Method, Request, Response, StatusCode};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use rustls::{AlertDescription, ServerConnection};
use tokio::net::TcpListener;

use crate::Counters;

/// The content type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The proxy's metrics (see the module docs), shared by its connection tasks.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    handshakes: Family<HandshakeLabels, Counter>,
    failures: Family<FailureLabels, Counter>,
    handshake_seconds: Histogram,
    bytes: Family<DirectionLabels, Counter>,
    upstream_failures: Counter,
    reloads: Family<ResultLabels, Counter>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HandshakeLabels {
    group: String,
    scheme: String,
    client_scheme: String,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    reason: &'static str,
    alert: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DirectionLabels {
    direction: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

/// Which way relayed bytes went.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Direction {
    FromClient,
    FromUpstream,
}

impl Metrics {
    /// Metrics for a proxy whose accept loop counts into `connections`.
    pub fn new(connections: Arc<Counters>) -> Self {
        let mut registry = Registry::with_prefix("pqkit_proxy");
        let handshakes = Family::default();
        registry.register(
            "handshakes",
            "TLS handshakes completed with clients",
            handshakes.clone(),
        );
        let failures = Family::default();
        registry.register(
            "handshake_failures",
            "TLS handshakes with clients that failed, by the alert sent or received",
            failures.clone(),
        );
        let handshake_seconds = Histogram::new(exponential_buckets(0.000_25, 2.0, 15));
        registry.register(
            "handshake_seconds",
            "Server-side TLS handshake time, from the first ClientHello byte to the client's \
             Finished",
            handshake_seconds.clone(),
        );
        let bytes = Family::default();
        registry.register("bytes", "Application bytes relayed", bytes.clone());
        let upstream_failures = Counter::default();
        registry.register(
            "upstream_failures",
            "Connections to the target (TCP or TLS) that failed",
            upstream_failures.clone(),
        );
        let reloads = Family::default();
        registry.register(
            "reloads",
            "Certificate and key reloads (SIGHUP)",
            reloads.clone(),
        );
        registry.register_collector(Box::new(Connections(connections)));
        Self {
            registry,
            handshakes,
            failures,
            handshake_seconds,
            bytes,
            upstream_failures,
            reloads,
        }
    }

    /// The metrics in the OpenMetrics text format, ending with `# EOF`.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }

    /// Counts a reload.
    pub fn reloaded(&self, ok: bool) {
        self.reloads
            .get_or_create(&ResultLabels {
                result: if ok { "ok" } else { "failed" },
            })
            .inc();
    }

    pub(crate) fn handshake(
        &self,
        conn: &ServerConnection,
        scheme: &str,
        client_scheme: Option<rustls::SignatureScheme>,
        took: Duration,
    ) {
        let labels = HandshakeLabels {
            group: conn
                .negotiated_key_exchange_group()
                .map_or_else(String::new, pqkit_rustls::group_name),
            scheme: scheme.to_owned(),
            client_scheme: client_scheme
                .map_or_else(|| "none".to_owned(), pqkit_rustls::scheme::name),
            kind: match conn.handshake_kind() {
                Some(rustls::HandshakeKind::Resumed) => "resumed",
                _ => "full",
            },
        };
        self.handshakes.get_or_create(&labels).inc();
        self.handshake_seconds.observe(took.as_secs_f64());
    }

    /// Counts a failed handshake; returns its reason and alert, as labelled.
    pub(crate) fn handshake_failed(&self, e: &io::Error) -> (&'static str, String) {
        let (reason, alert) = failure(e);
        self.failures
            .get_or_create(&FailureLabels {
                reason,
                alert: alert.clone(),
            })
            .inc();
        (reason, alert)
    }

    pub(crate) fn upstream_failed(&self) {
        self.upstream_failures.inc();
    }

    /// The counter of bytes relayed in `direction`.
    pub(crate) fn bytes(&self, direction: Direction) -> Counter {
        self.bytes
            .get_or_create(&DirectionLabels {
                direction: match direction {
                    Direction::FromClient => "from_client",
                    Direction::FromUpstream => "from_upstream",
                },
            })
            .clone()
    }
}

/// Why a handshake failed, as the metric's `reason` and `alert` labels. rustls sends the alert
/// its error maps to: exactly known for certificate errors (rustls's own `From`), decryption
/// failures and missing client certificates; other protocol errors count as `protocol`.
fn failure(e: &io::Error) -> (&'static str, String) {
    let none = || "none".to_owned();
    if let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        let sent = |a: AlertDescription| ("alert_sent", alert_name(a));
        return match tls {
            rustls::Error::AlertReceived(a) => ("alert_received", alert_name(*a)),
            rustls::Error::InvalidCertificate(c) => sent(AlertDescription::from(c.clone())),
            rustls::Error::NoCertificatesPresented => sent(AlertDescription::CertificateRequired),
            rustls::Error::DecryptError => sent(AlertDescription::BadRecordMac),
            _ => ("protocol", none()),
        };
    }
    match e.kind() {
        io::ErrorKind::TimedOut => ("timeout", none()),
        io::ErrorKind::PermissionDenied => ("resumption_refused", none()),
        io::ErrorKind::UnexpectedEof
        | io::ErrorKind::ConnectionReset
        | io::ErrorKind::BrokenPipe => ("closed", none()),
        _ => ("io", none()),
    }
}

/// An alert's name as the TLS registry spells it (RFC 8446 §6, RFC 5246 §7.2, RFC 8701 aside),
/// else `alert_<code>`.
fn alert_name(a: AlertDescription) -> String {
    const NAMES: &[(u8, &str)] = &[
        (0, "close_notify"),
        (10, "unexpected_message"),
        (20, "bad_record_mac"),
        (21, "decryption_failed"),
        (22, "record_overflow"),
        (30, "decompression_failure"),
        (40, "handshake_failure"),
        (41, "no_certificate"),
        (42, "bad_certificate"),
        (43, "unsupported_certificate"),
        (44, "certificate_revoked"),
        (45, "certificate_expired"),
        (46, "certificate_unknown"),
        (47, "illegal_parameter"),
        (48, "unknown_ca"),
        (49, "access_denied"),
        (50, "decode_error"),
        (51, "decrypt_error"),
        (60, "export_restriction"),
        (70, "protocol_version"),
        (71, "insufficient_security"),
        (80, "internal_error"),
        (86, "inappropriate_fallback"),
        (90, "user_canceled"),
        (100, "no_renegotiation"),
        (109, "missing_extension"),
        (110, "unsupported_extension"),
        (111, "certificate_unobtainable"),
        (112, "unrecognized_name"),
        (113, "bad_certificate_status_response"),
        (114, "bad_certificate_hash_value"),
        (115, "unknown_psk_identity"),
        (116, "certificate_required"),
        (120, "no_application_protocol"),
        (121, "ech_required"),
    ];
    let code = u8::from(a);
    NAMES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or_else(|| format!("alert_{code}"), |(_, name)| (*name).to_owned())
}

/// The accept loop's [`Counters`], read at each scrape.
#[derive(Debug)]
struct Connections(Arc<Counters>);

impl Collector for Connections {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let load = |n: &std::sync::atomic::AtomicU64| n.load(Ordering::Relaxed);
        let open = ConstGauge::new(i64::try_from(load(&self.0.in_flight)).unwrap_or(i64::MAX));
        open.encode(encoder.encode_descriptor(
            "connections_open",
            "Client connections open now",
            None,
            open.metric_type(),
        )?)?;
        let served = ConstCounter::new(load(&self.0.served));
        served.encode(encoder.encode_descriptor(
            "connections",
            "Client connections accepted and served",
            None,
            served.metric_type(),
        )?)?;
        let refused = ConstCounter::new(load(&self.0.refused));
        refused.encode(encoder.encode_descriptor(
            "connections_refused",
            "Client connections closed at once because --max-connections were open",
            None,
            refused.metric_type(),
        )?)?;
        Ok(())
    }
}

/// Scrape connections served at once.
const SCRAPE_CONNECTIONS: usize = 8;

/// The largest request read, in bytes (a scraper's GET is a few hundred).
const MAX_REQUEST_BYTES: usize = 8 * 1024;

/// Answers `GET /metrics` on `listener` with [`Metrics::encode`] (HTTP/1.1, one request per
/// connection; any other path 404, any other method 405), until the task is dropped. At most
/// 8 connections at once (more are closed at once), each with 10 s and an 8 KiB request.
pub async fn serve_metrics(listener: TcpListener, metrics: Arc<Metrics>) {
    // A scraper needs one connection; a few more are served, the rest closed at once.
    let places = Arc::new(tokio::sync::Semaphore::new(SCRAPE_CONNECTIONS));
    loop {
        let (socket, peer) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "metrics: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(place) = places.clone().try_acquire_owned() else {
            tracing::debug!(%peer, "metrics: too many connections, closed");
            continue;
        };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let _place = place;
            let service = hyper::service::service_fn(move |request: Request<_>| {
                let metrics = metrics.clone();
                async move { Ok::<_, Infallible>(answer(&request, &metrics)) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .keep_alive(false)
                .max_buf_size(MAX_REQUEST_BYTES)
                .serve_connection(hyper_util::rt::TokioIo::new(socket), service);
            match tokio::time::timeout(Duration::from_secs(10), connection).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "metrics: connection failed"),
                Err(_) => tracing::debug!(%peer, "metrics: connection timed out"),
            }
        });
    }
}

fn answer<B>(request: &Request<B>, metrics: &Metrics) -> Response<Full<Bytes>> {
    let status = |code: StatusCode, text: &'static str| {
        let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
        *r.status_mut() = code;
        r
    };
    if request.uri().path() != "/metrics" {
        return status(
            StatusCode::NOT_FOUND,
            "not found: the metrics are at /metrics\n",
        );
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut r = status(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n");
        r.headers_mut().insert(
            hyper::header::ALLOW,
            hyper::header::HeaderValue::from_static("GET, HEAD"),
        );
        return r;
    }
    let mut r = Response::new(Full::new(Bytes::from(metrics.encode())));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(CONTENT_TYPE),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alert_names_are_rfc_8446_names() {
        assert_eq!(alert_name(AlertDescription::AccessDenied), "access_denied");
        assert_eq!(
            alert_name(AlertDescription::BadCertificate),
            "bad_certificate"
        );
        assert_eq!(alert_name(AlertDescription::UnknownCA), "unknown_ca");
        assert_eq!(
            alert_name(AlertDescription::UnknownPSKIdentity),
            "unknown_psk_identity"
        );
        assert_eq!(alert_name(AlertDescription::Unknown(200)), "alert_200");
    }
}
