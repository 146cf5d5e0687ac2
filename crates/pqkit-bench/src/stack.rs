//! Stack high-water mark of a dedicated thread with a painted stack.
//!
//! The thread first paints [`PAINTED`] bytes below its entry frame with a pattern (a large
//! local array, written and kept alive, then returned from), runs the work, and then reads the
//! painted region back through `/proc/self/mem` — plain file I/O, no `unsafe` — to find the
//! lowest byte the work overwrote. The high-water mark is the distance from the entry frame to
//! that byte: the stack the work used, in bytes, with the granularity of the pattern (a word
//! the work wrote with the pattern's own value is missed; the pattern is a rare word).
//!
//! Linux only; elsewhere the mark is `None`.

use std::hint::black_box;
use std::io::{Read, Seek, SeekFrom};

/// Bytes painted below the entry frame (the most a run can report).
pub const PAINTED: usize = 4 << 20;
/// Stack size of the measuring thread (room for the paint, guard and entry frames).
const THREAD_STACK: usize = 2 * PAINTED + (4 << 20);
/// The paint: an improbable 64-bit word.
const PATTERN: u64 = 0x5a17_c0de_a5a5_3c69;

/// Runs `f` on a new thread with a painted stack; returns its result and the stack bytes it
/// used (`None` when the stack cannot be read back, e.g. not on Linux).
///
/// # Errors
/// The thread could not be spawned, or `f` panicked (the panic message is returned).
pub fn measure<R: Send>(f: impl FnOnce() -> R + Send) -> Result<(R, Option<usize>), String> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("pqkit-stack-meter".to_owned())
            .stack_size(THREAD_STACK)
            .spawn_scoped(s, || {
                let base = frame_address();
                let painted_low = paint();
                let out = f();
                let used = high_water(base, painted_low);
                (out, used)
            })
            .map_err(|e| format!("cannot start the measuring thread: {e}"))?
            .join()
            .map_err(|p| {
                p.downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "the measured work panicked".to_owned())
            })
    })
}

/// The address of a local of the calling frame (an integer; nothing is dereferenced).
#[inline(never)]
fn frame_address() -> usize {
    let marker = 0u8;
    black_box(&marker) as *const u8 as usize
}

/// Writes the pattern over [`PAINTED`] bytes of fresh stack; returns the lowest painted
/// address.
#[inline(never)]
fn paint() -> usize {
    let mut area = [0u64; PAINTED / 8];
    area.fill(PATTERN);
    let area = black_box(&mut area);
    area.as_ptr() as usize
}

/// Reads the painted region back and returns `base` minus the lowest overwritten address.
fn high_water(base: usize, painted_low: usize) -> Option<usize> {
    let len = base.checked_sub(painted_low)?.min(PAINTED);
    let mut region = vec![0u8; len];
    let mut mem = std::fs::File::open("/proc/self/mem").ok()?;
    mem.seek(SeekFrom::Start(painted_low as u64)).ok()?;
    mem.read_exact(&mut region).ok()?;
    let pattern = PATTERN.to_ne_bytes();
    // The first word (from the bottom) that is not the pattern is the deepest write.
    let deepest = region
        .chunks_exact(8)
        .position(|w| w != pattern)
        .map_or(region.len(), |i| i * 8);
    Some(base - (painted_low + deepest))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recurses `depth` times with a 4 KiB frame each.
    #[inline(never)]
    fn recurse(depth: usize) -> u64 {
        let mut frame = [0u8; 4096];
        frame[depth % 4096] = 1;
        let frame = black_box(&mut frame);
        if depth == 0 {
            return u64::from(frame[0]);
        }
        recurse(depth - 1) + u64::from(frame[depth % 4096])
    }

    #[test]
    fn a_known_recursion_depth_is_seen() {
        let (_, shallow) = measure(|| recurse(10)).expect("run");
        let (_, deep) = measure(|| recurse(200)).expect("run");
        let (shallow, deep) = (shallow.expect("linux"), deep.expect("linux"));
        // 190 more frames of at least 4 KiB each, and not wildly more.
        let extra = deep - shallow;
        assert!(
            (190 * 4096..190 * 4096 * 2).contains(&extra),
            "shallow {shallow}, deep {deep}"
        );
        assert!(shallow >= 10 * 4096, "{shallow}");
    }

    #[test]
    fn nothing_much_is_used_by_an_empty_closure() {
        let (_, used) = measure(|| 1 + 1).expect("run");
        assert!(used.expect("linux") < 16 * 1024, "{used:?}");
    }
}
