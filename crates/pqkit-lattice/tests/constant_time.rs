//! Secret-independent control flow and memory access of ML-KEM decapsulation and
//! encapsulation, checked by Valgrind's memcheck (the approach of Adam Langley's ctgrind):
//! the secret inputs — the decapsulation key's ŝ and z, the encapsulation randomness m — are
//! marked undefined, so that memcheck reports every branch and every address that depends on
//! them ("Conditional jump or move depends on uninitialised value(s)", "Use of uninitialised
//! value of size 8"). The outputs are marked defined again before the test compares them.
//!
//! Run natively, the client requests are no-ops and the test only checks the results; CI runs
//! this binary under `valgrind --error-exitcode=…` on the AVX2 and portable paths (Valgrind
//! does not decode AVX-512), with `PQKIT_EXPECT_VALGRIND=1` so that it fails if it was not
//! really under Valgrind.
//!
//! Key generation is not covered: ρ = G(d ‖ k) is derived from the secret seed and then
//! rejection-sampled (SampleNTT branches on it by design — FIPS 203 makes Â public); its
//! secret-dependent parts (SamplePolyCBD, NTT, encoding) are the functions checked here.
#![allow(unsafe_code)]

use pqkit_lattice::ml_kem::{
    ML_KEM_512, ML_KEM_768, ML_KEM_1024, decapsulate,
    hazmat::{encaps_internal, key_gen_internal},
};

/// memcheck's client requests (valgrind/memcheck.h: VG_USERREQ_TOOL_BASE('M', 'C') + 1, + 2)
/// and the core's RUNNING_ON_VALGRIND (valgrind/valgrind.h: 0x1001).
const MAKE_MEM_UNDEFINED: u64 = 0x4D43_0001;
const MAKE_MEM_DEFINED: u64 = 0x4D43_0002;
const RUNNING_ON_VALGRIND: u64 = 0x1001;

/// A Valgrind client request (valgrind.h's VALGRIND_DO_CLIENT_REQUEST_EXPR for amd64): the
/// magic preamble — four rotations of rdi by 3, 13, 61 and 51 bits (128 in all: rdi is
/// unchanged) and `xchg rbx, rbx` — which Valgrind's JIT recognises; natively it does nothing
/// and rdx keeps the default, 0.
#[cfg(target_arch = "x86_64")]
fn client_request(request: u64, addr: u64, len: u64) -> u64 {
    let args: [u64; 6] = [request, addr, len, 0, 0, 0];
    let mut result: u64 = 0;
    // SAFETY: the sequence leaves every register as it found it but rdx (the declared
    // output); rax points at the six-word argument block Valgrind reads, alive for the call.
    unsafe {
        core::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            inout("rdx") result,
            inout("rdi") 0u64 => _,
            options(nostack),
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
fn client_request(_: u64, _: u64, _: u64) -> u64 {
    0
}

fn secret(bytes: &[u8]) {
    client_request(
        MAKE_MEM_UNDEFINED,
        bytes.as_ptr() as u64,
        bytes.len() as u64,
    );
}

fn public(bytes: &[u8]) {
    client_request(MAKE_MEM_DEFINED, bytes.as_ptr() as u64, bytes.len() as u64);
}

#[test]
fn secrets_do_not_steer_branches_or_addresses() {
    let under_valgrind = client_request(RUNNING_ON_VALGRIND, 0, 0) > 0;
    if std::env::var_os("PQKIT_EXPECT_VALGRIND").is_some() {
        assert!(
            under_valgrind,
            "PQKIT_EXPECT_VALGRIND is set, but this is not Valgrind"
        );
    }
    let path = pqkit_hash::dispatch::current();
    for p in [&ML_KEM_512, &ML_KEM_768, &ML_KEM_1024] {
        let k = p.k;
        let mut ek = vec![0u8; p.encapsulation_key_size()];
        let mut dk = vec![0u8; p.decapsulation_key_size()];
        key_gen_internal(p, &[0x11; 32], &[0x22; 32], &mut ek, &mut dk).expect("lengths");

        // Encapsulation with a secret m.
        let m = [0x33u8; 32];
        secret(&m);
        let mut c = vec![0u8; p.ciphertext_size()];
        let key = encaps_internal(p, &ek, &m, &mut c).expect("lengths");
        public(&c);
        public(&key[..]);

        // Decapsulation with a secret ŝ and z, of the valid ciphertext and of one with a
        // flipped bit (the implicit rejection).
        let mut bad = c.clone();
        bad[7] ^= 0x10;
        for (ct, valid) in [(&c, true), (&bad, false)] {
            secret(&dk[..384 * k]);
            secret(&dk[768 * k + 64..]);
            let got = decapsulate(p, &dk, ct).expect("lengths");
            public(&got[..]);
            public(&dk);
            assert_eq!(got[..] == key[..], valid, "{} on {path}", p.name);
        }
    }
    eprintln!(
        "constant-time check on {path}: {}",
        if under_valgrind {
            "under Valgrind memcheck"
        } else {
            "natively (results only)"
        }
    );
}
