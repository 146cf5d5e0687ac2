//! The choice of instruction set, for the whole crate: whether the AVX2 and AVX-512 copies may run
//! on an [`Isa`] (a plain value, so each entry point checks the CPU itself), and [`on_path!`],
//! which compiles an algorithm once per instruction set and calls the copy the path allows, and
//! `avx2_kernel!`, the checked entry point of one AVX2 kernel. The kernels the compiler does not
//! find by itself are in each scheme's own `simd` module; these and those are the only modules with
//! `unsafe`.

use pqkit_hash::Isa;

/// Whether the AVX2 kernels may run on `isa`: an AVX2 or AVX-512 path, on a CPU with AVX2.
#[inline(always)]
pub(crate) fn avx2(isa: Isa) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        matches!(isa, Isa::Avx2 | Isa::Avx512) && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = isa;
        false
    }
}

/// Whether the AVX-512 copy may run on `isa`: the AVX-512 path, on a CPU with AVX-512F/BW
/// and AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn avx512(isa: Isa) -> bool {
    isa == Isa::Avx512
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx2")
}

/// Defines `$name(path, args…)`: calls `$generic` compiled for the path's instruction set —
/// AVX-512 (F, BW), AVX2 or portable — so that the `#[inline(always)]` arithmetic inside is
/// vectorized for it. Every copy computes the same function; the tests prove them
/// byte-identical.
macro_rules! on_path {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty = $generic:path) => {
        $(#[$doc])*
        pub(crate) fn $name(isa: Isa, $($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,avx512f,avx512bw")]
                fn with_avx512(isa: Isa, $($arg: $ty),*) -> $ret {
                    $generic(isa, $($arg),*)
                }
                #[target_feature(enable = "avx2")]
                fn with_avx2(isa: Isa, $($arg: $ty),*) -> $ret {
                    $generic(isa, $($arg),*)
                }
                if $crate::simd::avx512(isa) {
                    // SAFETY: the CPU has AVX-512F, AVX-512BW and AVX2 (checked by `avx512`).
                    return unsafe { with_avx512(isa, $($arg),*) };
                }
                if $crate::simd::avx2(isa) {
                    // SAFETY: the CPU has AVX2 (checked by `avx2`).
                    return unsafe { with_avx2(isa, $($arg),*) };
                }
            }
            $generic(isa, $($arg),*)
        }
    };
}

pub(crate) use on_path;

/// Defines `$name(args…, isa) -> Option<$ret>`: the AVX2 kernel `$kernel(args…)` when `isa`
/// allows it (checked here, not trusted), `None` — nothing done — otherwise, so that the
/// caller runs the kernel's portable twin.
macro_rules! avx2_kernel {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty = $kernel:ident) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) fn $name($($arg: $ty,)* isa: Isa) -> Option<$ret> {
            if !$crate::simd::avx2(isa) {
                return None;
            }
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU has AVX2 (checked by `avx2`).
            return Some(unsafe { $kernel($($arg),*) });
            #[cfg(not(target_arch = "x86_64"))]
            {
                let _ = ($($arg,)*);
                None
            }
        }
    };
}
pub(crate) use avx2_kernel;
