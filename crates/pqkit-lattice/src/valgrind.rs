//! Valgrind memcheck's client requests, for the constant-time test
//! (`tests/constant_time.rs`, the approach of Adam Langley's ctgrind): secrets are marked
//! undefined, so that memcheck reports every branch and every address that depends on them,
//! and values that FIPS 204 lets depend on secrets in the open — a signing attempt's
//! rejection, its challenge c̃, the signature itself — are marked defined where the algorithms
//! compute them ([`declassify`]).
//!
//! The algorithms' declassifications ([`declassify`]) are requests only with the `ct-test`
//! feature (CI's Valgrind runs enable it); without it they are empty functions the compiler
//! removes. Natively every request is a no-op. This module and the `simd` modules are
//! pqkit-lattice's only `unsafe` code.
#![allow(unsafe_code)]

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

/// The bytes of `value`.
fn span<T: ?Sized>(value: &T) -> (u64, u64) {
    (
        (value as *const T).cast::<u8>() as u64,
        size_of_val(value) as u64,
    )
}

/// Marks `value` undefined: a secret, from here on.
pub fn secret<T: ?Sized>(value: &T) {
    let (addr, len) = span(value);
    client_request(MAKE_MEM_UNDEFINED, addr, len);
}

/// Marks `value` defined: no longer a secret (an output the test compares).
pub fn public<T: ?Sized>(value: &T) {
    let (addr, len) = span(value);
    client_request(MAKE_MEM_DEFINED, addr, len);
}

/// Marks `value` defined where FIPS 204 lets it depend on secrets in the open (with the
/// `ct-test` feature; nothing without it).
#[inline(always)]
pub(crate) fn declassify<T: ?Sized>(value: &T) {
    #[cfg(feature = "ct-test")]
    public(value);
    #[cfg(not(feature = "ct-test"))]
    let _ = value;
}

/// `value`, passed through memory marked defined ([`declassify`]): for a flag or count the
/// caller then branches on.
#[inline(always)]
pub(crate) fn declassified<T: Copy>(value: T) -> T {
    let mut held = value;
    declassify(&held);
    core::hint::black_box(&mut held);
    held
}

/// Whether this process runs under Valgrind.
pub fn running() -> bool {
    client_request(RUNNING_ON_VALGRIND, 0, 0) > 0
}
