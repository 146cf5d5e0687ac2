//! `pqkit bench server`'s load generator: many TLS 1.3 clients against one server over TCP,
//! each connection a full exchange (connect, handshake, a line sent, the answer's first bytes
//! read, close_notify, close), timed from its start to the answer.
//!
//! - **Closed loop** (no rate): `clients` threads, each starting its next connection when the
//!   last one ends; saturates the server when there are enough of them.
//! - **Open loop** ([`Load::rate`]): connections start on a fixed schedule, whatever the
//!   server's answers; a connection that waits for a free client thread is timed from its
//!   scheduled start, so a stalled server shows in the percentiles instead of slowing the
//!   schedule down (no coordinated omission).
//! - **New or resumed**: with [`Load::resume`], each client keeps the tickets it was given
//!   and resumes (RFC 8446 §2.2); else every connection is a full handshake.
//!
//! Failed connections are counted ([`Run::errors`], the first one's reason kept) and left out
//! of the latencies. The server's CPU time over the run comes from `/proc/PID/stat` (utime +
//! stime of the whole process), per connection; so does the load generator's own.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use rustls::{ClientConfig, ClientConnection};
use rustls_pki_types::ServerName;
use serde::Serialize;

/// The line each connection sends; servers answer it (echoed, reversed, or an HTTP line).
pub const REQUEST: &[u8] = b"ping\n";

/// How to load one server.
#[derive(Clone, Debug)]
pub struct Load {
    /// Client threads.
    pub clients: usize,
    /// How long connections are started for.
    pub duration: Duration,
    /// Connections started per second in all (open loop); `None`: closed loop.
    pub rate: Option<f64>,
    /// Resume sessions from tickets instead of full handshakes.
    pub resume: bool,
    /// Deadline of each socket operation of a connection (the connect, each read and write),
    /// and the longest a connection may wait for a free client thread (open loop).
    pub timeout: Duration,
}

/// A server under load.
#[derive(Clone, Debug)]
pub struct Server {
    /// Its name in the table ("pqkit server", "OpenSSL s_server 3.6.3", …).
    pub name: String,
    /// Where it listens.
    pub address: SocketAddr,
    /// Its process, for its CPU time (`None`: not measured).
    pub pid: Option<u32>,
}

/// One run of [`run`] against one server.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// The server's name.
    pub server: String,
    /// Connections completed.
    pub connections: u64,
    /// Connections that failed (refused, timed out, a TLS error).
    pub errors: u64,
    /// The first error, in words.
    pub first_error: Option<String>,
    /// Resumed handshakes among the completed connections.
    pub resumed: u64,
    /// Wall time from the first start to the last end, in seconds.
    pub seconds: f64,
    /// The server's CPU time (user + system) over the run, in seconds (`None`: not measured).
    pub server_cpu_seconds: Option<f64>,
    /// This process's CPU time over the run, in seconds: the clients, and whatever else it
    /// runs for the server (the echo service behind `pqkit proxy`).
    pub load_cpu_seconds: f64,
    /// Each completed connection's time from its (scheduled) start to the answer, in µs.
    #[serde(skip)]
    pub latencies_us: Vec<u32>,
}

/// Loads `server` with `load`, the clients configured by `config` (a fresh session cache per
/// client thread when resuming).
///
/// # Errors
/// When a client thread cannot be started or panics, or the server's `/proc/PID/stat` cannot
/// be read.
pub fn run(server: &Server, config: &ClientConfig, load: &Load) -> Result<Run, String> {
    let clients = load.clients.max(1);
    let name = ServerName::try_from("localhost").map_err(|e| e.to_string())?;
    let cpu_before = server.pid.map(cpu_seconds).transpose()?;
    let load_before = cpu_seconds(std::process::id())?;
    let start = Instant::now();
    let end = start + load.duration;
    let stop = Arc::new(AtomicBool::new(false));
    // Whatever ends this function, closed-loop clients already started stop.
    let _stop_on_return = StopOnDrop(stop.clone());
    let errors = Arc::new(AtomicU64::new(0));
    let first_error: Arc<Mutex<Option<String>>> = Arc::default();
    // Open loop: the schedule hands out start times; closed loop: none.
    let (jobs, schedule) = match load.rate {
        Some(rate) if rate > 0.0 => {
            let (send, receive) = mpsc::sync_channel::<Instant>(1 << 16);
            (Some(send), Some(Arc::new(Mutex::new(receive))))
        }
        _ => (None, None),
    };
    let mut threads = Vec::with_capacity(clients);
    for i in 0..clients {
        let mut config = config.clone();
        if load.resume {
            config.resumption = rustls::client::Resumption::in_memory_sessions(64);
        } else {
            config.resumption = rustls::client::Resumption::disabled();
        }
        let config = Arc::new(config);
        let (name, stop, errors, first_error, schedule) = (
            name.clone(),
            stop.clone(),
            errors.clone(),
            first_error.clone(),
            schedule.clone(),
        );
        let (address, timeout) = (server.address, load.timeout);
        let thread = std::thread::Builder::new()
            .name(format!("load-{i}"))
            .spawn(move || {
                let mut latencies = Vec::new();
                let mut resumed = 0u64;
                loop {
                    let began = match &schedule {
                        Some(s) => match s.lock().map(|r| r.recv()) {
                            Ok(Ok(at)) => at,
                            _ => break,
                        },
                        None if stop.load(Ordering::Relaxed) => break,
                        None => Instant::now(),
                    };
                    if began.elapsed() > timeout {
                        // Waited longer than a connection may take for a free client: counted
                        // as failed, not started (a stalled server must not make the run
                        // work through its whole backlog afterwards).
                        errors.fetch_add(1, Ordering::Relaxed);
                        if let Ok(mut first) = first_error.lock() {
                            first.get_or_insert_with(|| {
                                "connections waited longer than the timeout to start: the \
                                 schedule outran the clients"
                                    .to_owned()
                            });
                        }
                        continue;
                    }
                    match connection(address, &config, &name, timeout, began) {
                        Ok((answered, was_resumed)) => {
                            let us = answered.as_micros();
                            latencies.push(u32::try_from(us).unwrap_or(u32::MAX));
                            resumed += u64::from(was_resumed);
                        }
                        Err(e) => {
                            errors.fetch_add(1, Ordering::Relaxed);
                            if let Ok(mut first) = first_error.lock() {
                                first.get_or_insert_with(|| e.to_string());
                            }
                        }
                    }
                }
                (latencies, resumed)
            })
            .map_err(|e| format!("client thread: {e}"))?;
        threads.push(thread);
    }
    if let (Some(jobs), Some(rate)) = (jobs, load.rate) {
        let interval = Duration::from_secs_f64(1.0 / rate);
        let mut next = start;
        while next < end {
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            if jobs.send(next).is_err() {
                break;
            }
            next += interval;
        }
        drop(jobs);
    } else {
        std::thread::sleep(load.duration);
        stop.store(true, Ordering::Relaxed);
    }
    let mut latencies = Vec::new();
    let mut resumed = 0;
    for t in threads {
        let (l, r) = t
            .join()
            .map_err(|_| "a client thread panicked".to_owned())?;
        latencies.extend(l);
        resumed += r;
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu_after = server.pid.map(cpu_seconds).transpose()?;
    let load_after = cpu_seconds(std::process::id())?;
    latencies.sort_unstable();
    Ok(Run {
        server: server.name.clone(),
        connections: latencies.len() as u64,
        errors: errors.load(Ordering::Relaxed),
        first_error: first_error.lock().ok().and_then(|f| f.clone()),
        resumed,
        seconds,
        server_cpu_seconds: cpu_before.zip(cpu_after).map(|(b, a)| a - b),
        load_cpu_seconds: load_after - load_before,
        latencies_us: latencies,
    })
}

/// Sets its flag when dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// One connection; returns the time from `began` to the answer, and whether it resumed.
fn connection(
    address: SocketAddr,
    config: &Arc<ClientConfig>,
    name: &ServerName<'static>,
    timeout: Duration,
    began: Instant,
) -> io::Result<(Duration, bool)> {
    let mut socket = TcpStream::connect_timeout(&address, timeout)?;
    socket.set_nodelay(true)?;
    socket.set_read_timeout(Some(timeout))?;
    socket.set_write_timeout(Some(timeout))?;
    let mut conn = ClientConnection::new(config.clone(), name.clone()).map_err(io::Error::other)?;
    let mut tls = rustls::Stream::new(&mut conn, &mut socket);
    tls.write_all(REQUEST)?;
    tls.flush()?;
    let mut answer = [0u8; 256];
    if tls.read(&mut answer)? == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed without answering",
        ));
    }
    let answered = began.elapsed();
    let resumed = conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
    conn.send_close_notify();
    // The close_notify goes out; the server's own close is not waited for.
    let _ = conn.complete_io(&mut socket);
    Ok((answered, resumed))
}

/// utime + stime of process `pid`, in seconds (`/proc/PID/stat` fields 14 and 15, in clock
/// ticks of 1/100 s on Linux).
///
/// # Errors
/// When the file cannot be read or parsed.
pub fn cpu_seconds(pid: u32) -> Result<f64, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("/proc/{pid}/stat: {e}"))?;
    // The command name (field 2) may hold spaces: fields count from its closing parenthesis.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .ok_or_else(|| format!("/proc/{pid}/stat: no command name"))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| -> Result<f64, String> {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .map(|t| t as f64 / 100.0)
            .ok_or_else(|| format!("/proc/{pid}/stat: field {}", i + 3))
    };
    // After ")": field 3 is at index 0, so utime (14) at 11 and stime (15) at 12.
    Ok(tick(11)? + tick(12)?)
}

/// The percentile of sorted `values` given in thousandths (`per_mille` 500 is the median, 999
/// the 99.9th), nearest rank: the smallest value with at least that share of the values at or
/// below it; 0 when empty.
pub fn percentile(sorted: &[u32], per_mille: usize) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    // Integers: (99.9 / 100) × 1000 is not 999 in floating point.
    let rank = (per_mille.min(1000) * sorted.len()).div_ceil(1000);
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u32> = (1..=1000).collect();
        assert_eq!(percentile(&v, 500), 500);
        assert_eq!(percentile(&v, 990), 990);
        assert_eq!(percentile(&v, 999), 999);
        assert_eq!(percentile(&v, 1000), 1000);
        assert_eq!(percentile(&[7], 999), 7);
        let v: Vec<u32> = (1..=10_000).collect();
        assert_eq!(percentile(&v, 999), 9990);
        assert_eq!(percentile(&v, 900), 9000);
        assert_eq!(percentile(&[], 500), 0);
    }

    #[test]
    fn this_process_has_cpu_time() {
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        assert!(x > 0);
        let cpu = cpu_seconds(std::process::id()).expect("own stat");
        assert!(cpu > 0.0, "{cpu}");
    }
}
