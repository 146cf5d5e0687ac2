//! Short copies without a `memcpy` call.
//!
//! The schemes move n-byte values (n = 16, 24, 32), headers and short messages around by the
//! hundred thousand per signature; a `copy_from_slice` of a length known only at run time is a
//! call into the C library's `memcpy`, which for 16–64 bytes costs more than the copy (SLH-DSA
//! and LMS signing spent a measurable share of their time in `memmove` before this).

/// `dst.copy_from_slice(src)`: up to 64 bytes as two (possibly overlapping) fixed-size moves
/// (the usual small-copy technique), longer copies by `copy_from_slice`.
///
/// # Panics
/// When the lengths differ (as `copy_from_slice`).
#[inline]
pub fn copy(dst: &mut [u8], src: &[u8]) {
    let len = src.len();
    assert_eq!(dst.len(), len, "copy between slices of different lengths");
    macro_rules! two {
        ($k:literal) => {{
            let head: [u8; $k] = src[..$k].try_into().expect("k bytes");
            let tail: [u8; $k] = src[len - $k..].try_into().expect("k bytes");
            dst[..$k].copy_from_slice(&head);
            dst[len - $k..].copy_from_slice(&tail);
        }};
    }
    match len {
        0 => {}
        1..4 => dst.iter_mut().zip(src).for_each(|(d, s)| *d = *s),
        4..8 => two!(4),
        8..16 => two!(8),
        16..32 => two!(16),
        32..=64 => two!(32),
        _ => dst.copy_from_slice(src),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn copies_every_length_up_to_100() {
        let src: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
        for len in 0..=100 {
            for at in [0, 3] {
                let mut dst = vec![0xeeu8; len + 6];
                super::copy(&mut dst[at..at + len], &src[..len]);
                assert_eq!(&dst[at..at + len], &src[..len], "length {len}");
                assert!(dst[..at].iter().all(|&b| b == 0xee), "before, length {len}");
                assert!(
                    dst[at + len..].iter().all(|&b| b == 0xee),
                    "after, length {len}"
                );
            }
        }
    }
}
