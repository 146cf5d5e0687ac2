//! The machine line every table starts with: CPU model, cores, SIMD features, build profile,
//! timer, and the backend of each algorithm family.

use serde::Serialize;

/// Where a measurement was taken.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// CPU model name (`/proc/cpuinfo` "model name"), or the architecture.
    pub cpu: String,
    /// Logical CPUs available to this process.
    pub cores: usize,
    /// SIMD and hash extensions this CPU reports, of those pqkit's backends use.
    pub simd: Vec<&'static str>,
    /// "release" or "debug" (debug builds are not for comparing).
    pub profile: &'static str,
    /// The timer: "TSC at N.NN GHz" when cycle counts are available, else "monotonic clock".
    pub timer: String,
    /// The backend behind each family, e.g. ("ML-KEM", "pqkit-lattice").
    pub backends: Vec<(String, &'static str)>,
    /// Operating system and architecture.
    pub os: String,
}

impl Machine {
    /// Describes this machine and build.
    pub fn detect() -> Self {
        let mut backends: Vec<(String, &'static str)> = Vec::new();
        for kem in pqkit_core::catalogue::kems() {
            push_unique(
                &mut backends,
                kem.family.name().to_owned(),
                kem.backend_name(),
            );
        }
        for alg in pqkit_core::catalogue::signatures() {
            push_unique(
                &mut backends,
                alg.family.name().to_owned(),
                alg.backend_name(),
            );
        }
        Self {
            cpu: cpu_model(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            simd: simd_features(),
            profile: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            },
            timer: crate::timing::tsc_ghz().map_or_else(
                || "monotonic clock".to_owned(),
                |ghz| format!("TSC at {ghz:.2} GHz"),
            ),
            backends,
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        }
    }

    /// One line for the top of a table.
    pub fn line(&self) -> String {
        let backends: Vec<String> = self
            .backends
            .iter()
            .map(|(family, backend)| format!("{family}: {backend}"))
            .collect();
        format!(
            "{} ({} cores; {}) · {} build · timer: {} · {} · backends: {}",
            self.cpu,
            self.cores,
            if self.simd.is_empty() {
                "no SIMD extensions detected".to_owned()
            } else {
                self.simd.join(" ")
            },
            self.profile,
            self.timer,
            self.os,
            backends.join(", ")
        )
    }
}

fn push_unique(list: &mut Vec<(String, &'static str)>, family: String, backend: &'static str) {
    if !list.iter().any(|(f, b)| *f == family && *b == backend) {
        list.push((family, backend));
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned())
}

#[cfg(target_arch = "x86_64")]
fn simd_features() -> Vec<&'static str> {
    let mut out = Vec::new();
    if std::arch::is_x86_feature_detected!("avx2") {
        out.push("avx2");
    }
    if std::arch::is_x86_feature_detected!("avx512f") {
        out.push("avx512f");
    }
    if std::arch::is_x86_feature_detected!("sha") {
        out.push("sha-ni");
    }
    if std::arch::is_x86_feature_detected!("bmi2") {
        out.push("bmi2");
    }
    if std::arch::is_x86_feature_detected!("aes") {
        out.push("aes-ni");
    }
    out
}

#[cfg(target_arch = "aarch64")]
fn simd_features() -> Vec<&'static str> {
    let mut out = vec!["neon"];
    if std::arch::is_aarch64_feature_detected!("sha2") {
        out.push("sha2");
    }
    if std::arch::is_aarch64_feature_detected!("sha3") {
        out.push("sha3");
    }
    out
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn simd_features() -> Vec<&'static str> {
    Vec::new()
}
