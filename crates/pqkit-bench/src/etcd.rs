//! A throwaway etcd cluster on 127.0.0.1, for `bench ledger` and the fleet tests: N members of
//! the `etcd` binary (Debian's `etcd-server`; `$PQKIT_ETCD` names another), each with its own
//! data directory in a temporary directory, with real fsyncs. Members can be stopped (SIGKILL)
//! and started again on their data; every process is killed and the directory removed when
//! the cluster is dropped.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a member may take to report healthy.
const START_PATIENCE: Duration = Duration::from_secs(30);

struct Member {
    name: String,
    client: u16,
    peer: u16,
    child: Option<Child>,
}

/// A running etcd cluster (see the module docs).
pub struct Cluster {
    dir: PathBuf,
    binary: PathBuf,
    members: Vec<Member>,
    initial: String,
}

/// The etcd binary: `$PQKIT_ETCD`, else `etcd` on the `PATH`; `None` when there is none.
pub fn binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PQKIT_ETCD") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("etcd"))
        .find(|p| p.is_file())
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port on 127.0.0.1: {e}"))
}

/// Whether the member answering on `port` reports itself healthy (GET /health).
fn healthy(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_millis(300),
    ) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut answer = Vec::new();
    let _ = s.take(4096).read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).contains("\"health\":\"true\"")
}

impl Cluster {
    /// Starts `n` members and waits until each reports healthy.
    ///
    /// # Errors
    /// No etcd binary, no free port, or a member that does not come up (its log is quoted).
    pub fn start(n: usize) -> Result<Self, String> {
        let binary = binary().ok_or(
            "no etcd binary (install Debian's etcd-server, or set PQKIT_ETCD to one)".to_owned(),
        )?;
        static CLUSTERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "pqkit-etcd-{}-{}",
            std::process::id(),
            CLUSTERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut members = Vec::with_capacity(n);
        for i in 0..n {
            members.push(Member {
                name: format!("m{i}"),
                client: free_port()?,
                peer: free_port()?,
                child: None,
            });
        }
        let initial = members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer))
            .collect::<Vec<_>>()
            .join(",");
        let mut me = Self {
            dir,
            binary,
            members,
            initial,
        };
        for i in 0..n {
            me.spawn(i, "new")?;
        }
        for i in 0..n {
            me.wait(i)?;
        }
        Ok(me)
    }

    fn spawn(&mut self, i: usize, state: &str) -> Result<(), String> {
        let m = &self.members[i];
        let data = self.dir.join(&m.name);
        let log = std::fs::File::create(self.dir.join(format!("{}.log", m.name)))
            .map_err(|e| e.to_string())?;
        let client = format!("http://127.0.0.1:{}", m.client);
        let peer = format!("http://127.0.0.1:{}", m.peer);
        let child = Command::new(&self.binary)
            .arg("--name")
            .arg(&m.name)
            .arg("--data-dir")
            .arg(&data)
            .args(["--listen-client-urls", &client])
            .args(["--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer])
            .args(["--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &self.initial])
            .args(["--initial-cluster-state", state])
            .args(["--initial-cluster-token", "pqkit-bench"])
            .args(["--logger", "zap", "--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("{}: {e}", self.binary.display()))?;
        self.members[i].child = Some(child);
        Ok(())
    }

    fn wait(&mut self, i: usize) -> Result<(), String> {
        let start = Instant::now();
        while start.elapsed() < START_PATIENCE {
            if healthy(self.members[i].client) {
                return Ok(());
            }
            if let Some(c) = self.members[i].child.as_mut()
                && let Ok(Some(status)) = c.try_wait()
            {
                return Err(format!(
                    "etcd member {} exited ({status}): {}",
                    self.members[i].name,
                    self.log_tail(i)
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!(
            "etcd member {} not healthy after {} s: {}",
            self.members[i].name,
            START_PATIENCE.as_secs(),
            self.log_tail(i)
        ))
    }

    fn log_tail(&self, i: usize) -> String {
        let log = std::fs::read_to_string(self.dir.join(format!("{}.log", self.members[i].name)))
            .unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(5)..].join(" | ")
    }

    /// `host:port` of each member's client URL.
    pub fn endpoints(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|m| format!("127.0.0.1:{}", m.client))
            .collect()
    }

    /// The ledger spec of the whole cluster: `etcd://127.0.0.1:p0,127.0.0.1:p1,…`.
    pub fn spec(&self) -> String {
        format!("etcd://{}", self.endpoints().join(","))
    }

    /// The members' data and logs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Kills member `i` (SIGKILL: no clean shutdown).
    pub fn stop(&mut self, i: usize) {
        if let Some(mut c) = self.members[i].child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts member `i` again on its data and waits until it is healthy.
    ///
    /// # Errors
    /// As [`Cluster::start`].
    pub fn restart(&mut self, i: usize) -> Result<(), String> {
        self.stop(i);
        self.spawn(i, "existing")?;
        self.wait(i)
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the cluster has no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.stop(i);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
