//! Buffers that are cleared when dropped, fast: a plain (vectorized) fill with zeroes that the
//! compiler must assume is read afterwards (`black_box` and a fence), instead of the `zeroize`
//! crate's one volatile write per element — the engine wipes megabytes per SLH-DSA signature
//! (chain values, messages with SK.seed), and byte-wise volatile writes cost more than the
//! hashing of some of them.

use core::ops::{Deref, DerefMut};
use core::sync::atomic::{Ordering, compiler_fence};

/// Types with an all-zero value.
pub trait Zero: Copy {
    /// The value whose bytes are all zero.
    const ZERO: Self;
}

impl Zero for u8 {
    const ZERO: Self = 0;
}

impl Zero for i8 {
    const ZERO: Self = 0;
}

impl Zero for u16 {
    const ZERO: Self = 0;
}

impl Zero for i16 {
    const ZERO: Self = 0;
}

impl Zero for i32 {
    const ZERO: Self = 0;
}

impl Zero for u32 {
    const ZERO: Self = 0;
}

impl Zero for u64 {
    const ZERO: Self = 0;
}

impl<T: Zero, const N: usize> Zero for [T; N] {
    const ZERO: Self = [T::ZERO; N];
}

/// A `Vec` whose elements are set to zero on drop. `Debug` prints its length only: the
/// elements are usually secret.
#[derive(Clone)]
pub struct Wiped<T: Copy + Zero>(Vec<T>);

impl<T: Copy + Zero> core::fmt::Debug for Wiped<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Wiped({} elements)", self.0.len())
    }
}

impl<T: Copy + Zero> Wiped<T> {
    /// `len` copies of `value`.
    pub fn filled(value: T, len: usize) -> Self {
        Self(vec![value; len])
    }

    /// An empty buffer with room for `capacity` elements (push within it never reallocates,
    /// so no unwiped copy is left behind).
    pub fn with_capacity(capacity: usize) -> Self {
        Self(Vec::with_capacity(capacity))
    }

    /// Takes `v` (its elements are wiped when this is dropped).
    pub fn from_vec(v: Vec<T>) -> Self {
        Self(v)
    }
}

impl<T: Copy + Zero> Deref for Wiped<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T: Copy + Zero> DerefMut for Wiped<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T: Copy + Zero> Drop for Wiped<T> {
    fn drop(&mut self) {
        wipe(&mut self.0);
    }
}

/// A value (on the stack) set to zero when dropped, by [`wipe`]: the stack twin of [`Wiped`],
/// for secrets of fixed size (polynomials, seeds, PRF outputs).
pub struct Cleared<T: Copy + Zero>(pub T);

impl<T: Copy + Zero> Cleared<T> {
    /// The zero value.
    pub const ZERO: Self = Self(T::ZERO);
}

impl<T: Copy + Zero> Deref for Cleared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Copy + Zero> DerefMut for Cleared<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: Copy + Zero> Drop for Cleared<T> {
    fn drop(&mut self) {
        wipe(core::slice::from_mut(&mut self.0));
    }
}

/// Sets every element to zero, in a way the optimizer cannot drop.
pub fn wipe<T: Copy + Zero>(buf: &mut [T]) {
    buf.fill(T::ZERO);
    core::hint::black_box(&mut *buf);
    compiler_fence(Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Debug` of a wiped buffer and of a chain shows no element or value.
    #[test]
    fn debug_prints_no_secret() {
        let w = Wiped::filled(0xABu8, 3);
        assert_eq!(format!("{w:?}"), "Wiped(3 elements)");
        let c = crate::Chain::new(7, 0, 15, &[0xCD; 16]);
        let shown = format!("{c:?}");
        assert!(shown.contains("id: 7") && !shown.contains("205"), "{shown}");
    }
}
