//! Heap metering per side: a counting global allocator (`tracking-allocator`) whose
//! allocations are attributed to the allocation group the allocating thread has entered —
//! one group for the client, one for the server. A block freed by another group is charged
//! back to the group that allocated it.
//!
//! The library declares no global allocator: a program that wants heap figures installs
//! [`TrackingAllocator`] itself (`#[global_allocator] static A: TrackingAllocator =
//! TrackingAllocator::system();`). Without it [`available`] is `false`, [`Meter::new`] returns
//! `None` and the heap columns stay empty. The `pqkit` binary installs it only in the processes
//! that measure (`pqkit demo`, `pqkit bench handshake`), never in `pqkit server` or `pqkit sign`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use tracking_allocator::{
    AllocationGroupId, AllocationGroupToken, AllocationRegistry, AllocationTracker, Allocator,
};

/// The counting allocator to install as a program's `#[global_allocator]` for [`Meter`] to
/// count anything. Each block carries its allocation group's id (one `usize` more per block).
pub type TrackingAllocator = Allocator<std::alloc::System>;

/// Heap use of one side over one measured run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HeapUse {
    /// The most bytes live at once, counted from the start of the run, in bytes.
    pub peak_bytes: u64,
    /// All bytes allocated (reallocations count their new size), in bytes.
    pub total_bytes: u64,
    /// Number of allocations (reallocations included).
    pub allocations: u64,
}

/// Counters of one allocation group.
#[derive(Default)]
struct Counters {
    live: AtomicU64,
    peak: AtomicU64,
    total: AtomicU64,
    count: AtomicU64,
}

impl Counters {
    fn reset(&self) {
        for c in [&self.live, &self.peak, &self.total, &self.count] {
            c.store(0, Ordering::Relaxed);
        }
    }

    fn snapshot(&self) -> HeapUse {
        HeapUse {
            peak_bytes: self.peak.load(Ordering::Relaxed),
            total_bytes: self.total.load(Ordering::Relaxed),
            allocations: self.count.load(Ordering::Relaxed),
        }
    }
}

/// Slots for group ids; ids beyond it are not counted (pqkit registers two).
const SLOTS: usize = 16;

struct Tracker {
    groups: Arc<[Counters; SLOTS]>,
}

fn slot(id: &AllocationGroupId) -> Option<usize> {
    let i = id.as_usize().get();
    (i < SLOTS).then_some(i)
}

impl AllocationTracker for Tracker {
    fn allocated(
        &self,
        _addr: usize,
        object_size: usize,
        _wrapped: usize,
        group: AllocationGroupId,
    ) {
        if let Some(i) = slot(&group) {
            let c = &self.groups[i];
            let size = object_size as u64;
            c.count.fetch_add(1, Ordering::Relaxed);
            c.total.fetch_add(size, Ordering::Relaxed);
            let live = c.live.fetch_add(size, Ordering::Relaxed) + size;
            c.peak.fetch_max(live, Ordering::Relaxed);
        }
    }

    fn deallocated(
        &self,
        _addr: usize,
        object_size: usize,
        _wrapped: usize,
        source: AllocationGroupId,
        _current: AllocationGroupId,
    ) {
        if let Some(i) = slot(&source) {
            // Blocks allocated before a reset may be freed after it: never below zero.
            let live = &self.groups[i].live;
            let size = object_size as u64;
            let _ = live.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(size))
            });
        }
    }
}

struct Shared {
    groups: Arc<[Counters; SLOTS]>,
    /// Free tokens, reused so that ids stay below [`SLOTS`].
    tokens: Mutex<Vec<AllocationGroupToken>>,
}

fn shared() -> Option<&'static Shared> {
    static SHARED: OnceLock<Option<Shared>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let groups: Arc<[Counters; SLOTS]> = Arc::new(Default::default());
            AllocationRegistry::set_global_tracker(Tracker {
                groups: groups.clone(),
            })
            .ok()?;
            AllocationRegistry::enable_tracking();
            let shared = Shared {
                groups,
                tokens: Mutex::new(Vec::new()),
            };
            // The tracker sees allocations only when the program's global allocator is
            // [`TrackingAllocator`]: one known allocation in a group of its own tells.
            let mut token = AllocationGroupToken::register()?;
            let index = slot(&token.id())?;
            let guard = token.enter();
            std::hint::black_box(Vec::<u8>::with_capacity(64));
            drop(guard);
            let counted = shared.groups[index].snapshot().allocations > 0;
            shared.groups[index].reset();
            shared.tokens.lock().ok()?.push(token);
            counted.then_some(shared)
        })
        .as_ref()
}

/// Whether heap metering works in this program: [`TrackingAllocator`] is its global
/// allocator and the tracker could be installed.
pub fn available() -> bool {
    shared().is_some()
}

/// One metered group: enter it on a thread with [`Meter::run`]; read it with [`Meter::usage`].
pub struct Meter {
    token: Option<AllocationGroupToken>,
    index: usize,
}

impl Meter {
    /// A fresh group with zeroed counters; `None` when heap metering is unavailable.
    pub fn new() -> Option<Self> {
        let shared = shared()?;
        let token = match shared.tokens.lock().ok()?.pop() {
            Some(t) => t,
            None => AllocationGroupToken::register()?,
        };
        let index = slot(&token.id())?;
        shared.groups[index].reset();
        Some(Self {
            token: Some(token),
            index,
        })
    }

    /// Runs `f` on this thread with its allocations charged to this group.
    pub fn run<R>(&mut self, f: impl FnOnce() -> R) -> R {
        match self.token.as_mut() {
            Some(token) => {
                let guard = token.enter();
                let out = f();
                drop(guard);
                out
            }
            None => f(),
        }
    }

    /// The group's use so far.
    pub fn usage(&self) -> HeapUse {
        shared().map_or_else(HeapUse::default, |s| s.groups[self.index].snapshot())
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        if let (Some(token), Some(shared)) = (self.token.take(), shared())
            && let Ok(mut free) = shared.tokens.lock()
        {
            free.push(token);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[global_allocator]
    static GLOBAL: TrackingAllocator = TrackingAllocator::system();

    #[test]
    fn a_known_allocation_is_counted_exactly() {
        let mut meter = Meter::new().expect("heap metering available");
        let v = meter.run(|| {
            let v: Vec<u8> = Vec::with_capacity(12_345);
            std::hint::black_box(v)
        });
        let used = meter.usage();
        assert_eq!(used.total_bytes, 12_345);
        assert_eq!(used.allocations, 1);
        assert_eq!(used.peak_bytes, 12_345);
        drop(v);
        // Freed outside the group: charged back to it, the peak stays.
        meter.run(|| {
            let a: Vec<u64> = vec![7; 1000];
            let b: Vec<u8> = vec![1; 100];
            std::hint::black_box((a, b));
        });
        let used = meter.usage();
        assert_eq!(used.total_bytes, 12_345 + 8000 + 100);
        assert_eq!(used.allocations, 3);
        assert_eq!(used.peak_bytes, 12_345);
    }

    #[test]
    fn two_groups_on_two_threads_are_kept_apart() {
        let mut a = Meter::new().expect("meter");
        let mut b = Meter::new().expect("meter");
        std::thread::scope(|s| {
            s.spawn(|| a.run(|| std::hint::black_box(vec![0u8; 1000])));
            s.spawn(|| b.run(|| std::hint::black_box(vec![0u8; 3000])));
        });
        assert_eq!(a.usage().total_bytes, 1000);
        assert_eq!(b.usage().total_bytes, 3000);
    }
}
