//! Every hash path this CPU has is one the engine supports, and a forced path is the one used.
//!
//! The required paths come from `PQKIT_HASH_REQUIRE` (comma-separated; CI sets it from
//! `/proc/cpuinfo`) or, when unset, from `/proc/cpuinfo` here — not from the detection under
//! test — so a broken detection fails instead of silently skipping a kernel. The kernel tests
//! (`src/sha256/tests.rs`, `src/keccak/tests.rs`) compare every supported path with the
//! portable twin.

use pqkit_hash::dispatch::{self, Isa};

/// The paths the CPU flags in /proc/cpuinfo call for (x86_64 Linux; only portable elsewhere).
fn from_cpuinfo() -> Vec<Isa> {
    let mut want = vec![Isa::Portable];
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return want;
    };
    let flags: Vec<&str> = info
        .lines()
        .find(|l| l.starts_with("flags"))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    let has = |f: &str| flags.contains(&f);
    if has("sha_ni") && has("sse4_1") {
        want.push(Isa::ShaNi);
    }
    if has("avx2") {
        want.push(Isa::Avx2);
    }
    if has("avx512f") && has("avx512bw") {
        want.push(Isa::Avx512);
    }
    want
}

#[test]
fn every_path_the_cpu_has_is_supported() {
    let required: Vec<Isa> = match std::env::var("PQKIT_HASH_REQUIRE") {
        Ok(list) if !list.trim().is_empty() => list
            .split(',')
            .map(|name| {
                Isa::from_name(name.trim())
                    .unwrap_or_else(|| panic!("PQKIT_HASH_REQUIRE: unknown path {name:?}"))
            })
            .collect(),
        _ => from_cpuinfo(),
    };
    for isa in &required {
        assert!(
            isa.is_supported(),
            "the CPU has the {isa} path but pqkit-hash does not support it: its kernels would go untested"
        );
    }
    println!("required {required:?}; supported {:?}", Isa::supported());
}

#[test]
fn a_forced_path_is_the_one_used() {
    if let Ok(name) = std::env::var("PQKIT_HASH") {
        let want = dispatch::set_process_by_name(&name)
            .unwrap_or_else(|e| panic!("PQKIT_HASH={name}: {e}"));
        assert_eq!(
            dispatch::process(),
            want,
            "set_process({want}) was not honoured"
        );
        assert_eq!(dispatch::current(), want);
    } else {
        assert_eq!(dispatch::process(), dispatch::detected());
    }
    for isa in Isa::supported() {
        let inner = dispatch::with_isa(isa, dispatch::current).expect("supported");
        assert_eq!(inner, isa);
    }
}
