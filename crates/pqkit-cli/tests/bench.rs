//! Smoke runs of every `pqkit bench` subcommand with tiny budgets; the JSON is checked
//! against the pqkit-bench/1 layout (field names and types) — never against timings.

mod support;

use serde_json::Value;
use support::{pqkit, run_ok};

fn json(args: &[&str]) -> Value {
    let out = run_ok(pqkit().args(args));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["schema"], "pqkit-bench/1", "{v}");
    let m = &v["machine"];
    for key in ["cpu", "profile", "timer", "os"] {
        assert!(m[key].is_string(), "machine.{key}: {m}");
    }
    assert!(m["cores"].as_u64().is_some_and(|c| c >= 1));
    assert!(m["simd"].is_array() && m["backends"].is_array());
    v
}

fn numbers(row: &Value, keys: &[&str]) {
    for key in keys {
        assert!(row[key].is_number(), "{key} in {row}");
    }
}

#[test]
fn bench_crypto_json() {
    let v = json(&[
        "bench",
        "crypto",
        "--json",
        "--alg",
        "ML-DSA-44,ML-KEM-512,p256_mlkem512,Ed25519",
        "--min-time",
        "0",
        "--min-iters",
        "2",
    ]);
    assert_eq!(v["kind"], "crypto");
    assert_eq!(v["signing"], "hedged");
    let rows = v["rows"].as_array().expect("rows");
    // keygen/sign/verify × 2 signatures, keygen/encapsulate/decapsulate × KEM and group.
    assert_eq!(rows.len(), 12);
    for r in rows {
        numbers(
            r,
            &[
                "iterations",
                "total_ns",
                "mean_ns",
                "median_ns",
                "ops_per_sec",
            ],
        );
        assert!(r["algorithm"].is_string() && r["operation"].is_string());
        assert!(
            r["implementation"]
                .as_str()
                .expect("impl")
                .starts_with("pqkit")
        );
        assert!(r["tsc_cycles_per_op"].is_number() || r["tsc_cycles_per_op"].is_null());
    }
    let ops: Vec<&str> = rows
        .iter()
        .filter(|r| r["algorithm"] == "ML-KEM-512")
        .map(|r| r["operation"].as_str().expect("op"))
        .collect();
    assert_eq!(ops, ["keygen", "encapsulate", "decapsulate"]);
}

#[test]
fn bench_handshake_json() {
    let v = json(&[
        "bench",
        "handshake",
        "--json",
        "--sig",
        "ML-DSA-44,SLH-DSA-SHA2-256f",
        "--group",
        "X25519MLKEM768",
        "--mutual",
        "both",
        "-n",
        "1",
    ]);
    assert_eq!(v["kind"], "handshake");
    assert_eq!(v["client_message"], "hello pqkit!");
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2, "{v}");
    for r in rows {
        numbers(
            r,
            &[
                "client_handshake_ms",
                "server_handshake_ms",
                "client_to_server_bytes",
                "server_to_client_bytes",
                "total_bytes",
                "client_stack_bytes",
                "server_stack_bytes",
            ],
        );
        for side in ["client_heap", "server_heap"] {
            numbers(&r[side], &["peak_bytes", "total_bytes", "allocations"]);
        }
        let parts = r["breakdown"].as_array().expect("breakdown");
        let sum: u64 = parts.iter().map(|p| p["bytes"].as_u64().expect("n")).sum();
        assert_eq!(sum, r["total_bytes"].as_u64().expect("total"));
    }
    // SLH-DSA-SHA2-256f cannot carry Certificate + CertificateVerify in rustls's buffer.
    let skipped = v["skipped"].as_array().expect("skipped");
    assert_eq!(skipped.len(), 2, "{v}");
    assert!(
        skipped[0]["reason"]
            .as_str()
            .expect("reason")
            .contains("65535")
    );
}

#[test]
fn bench_boundary_json() {
    let v = json(&[
        "bench",
        "boundary",
        "--json",
        "--sizes",
        "1024,65536",
        "--min-time",
        "0",
        "--min-iters",
        "1",
    ]);
    assert_eq!(v["kind"], "boundary");
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 8 * 2);
    for r in rows {
        numbers(
            r,
            &[
                "message_bytes",
                "bytes_into_signer",
                "outside_ns",
                "inside_ns",
                "total_ns",
            ],
        );
        let crossing = r["bytes_into_signer"].as_u64().expect("n");
        match r["boundary_type"].as_str().expect("type") {
            "A" => assert_eq!(r["message_bytes"].as_u64(), Some(crossing)),
            _ => assert!(crossing <= 64, "{r}"),
        }
    }
}
