//! Which kernels run: the CPU is checked once and the widest supported path is chosen, unless
//! the program chose another first ([`set_process`]).
//!
//! | [`Isa`] | SHA-256 lanes | sequential SHA-256 | Keccak-f\[1600\] lanes |
//! |---|---|---|---|
//! | `avx512` | 16 (AVX-512F/BW, and AVX2) | SHA-NI if present | 8 (AVX-512F) |
//! | `avx2` | 8 (AVX2) | SHA-NI if present | 4 (AVX2) |
//! | `shani` | 1 at a time (SHA-NI) | SHA-NI | portable |
//! | `portable` | portable | portable | portable |
//!
//! [`set_process`] forces a path for the whole process (the `pqkit` command maps
//! `PQKIT_HASH=portable|shani|avx2|avx512` onto it); [`with_isa`] forces one for the current
//! thread (tests, benchmarks). The library reads no environment variable and prints nothing.

use std::cell::Cell;
use std::sync::OnceLock;

/// One way of computing the engine's hashes (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Isa {
    /// Plain Rust, the twin every other path is tested against.
    Portable,
    /// The SHA extensions (`sha`, `sse4.1`), one compression at a time.
    ShaNi,
    /// 256-bit vectors: 8 SHA-256 or 4 Keccak lanes.
    Avx2,
    /// 512-bit vectors: 16 SHA-256 or 8 Keccak lanes.
    Avx512,
}

impl Isa {
    /// Every path, narrowest first.
    pub const ALL: [Isa; 4] = [Isa::Portable, Isa::ShaNi, Isa::Avx2, Isa::Avx512];

    /// The name `PQKIT_HASH`, `--hash-path` and the benchmark tables use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Portable => "portable",
            Self::ShaNi => "shani",
            Self::Avx2 => "avx2",
            Self::Avx512 => "avx512",
        }
    }

    /// The path of a name, if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether this CPU can run the path.
    pub fn is_supported(self) -> bool {
        match self {
            Self::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Self::ShaNi => has_shani(),
            #[cfg(target_arch = "x86_64")]
            Self::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            // The AVX-512 path also runs the AVX2 kernels (a partial group of lanes).
            Self::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx2")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Every path this CPU supports, narrowest first.
    pub fn supported() -> Vec<Isa> {
        Self::ALL.into_iter().filter(|p| p.is_supported()).collect()
    }

    /// Whether the sequential (one message, many blocks) SHA-256 of this path uses SHA-NI.
    pub(crate) fn sequential_shani(self) -> bool {
        self != Self::Portable && has_shani()
    }
}

impl core::fmt::Display for Isa {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(target_arch = "x86_64")]
fn has_shani() -> bool {
    std::arch::is_x86_feature_detected!("sha") && std::arch::is_x86_feature_detected!("sse4.1")
}

#[cfg(not(target_arch = "x86_64"))]
fn has_shani() -> bool {
    false
}

/// The widest path this CPU supports.
pub fn detected() -> Isa {
    Isa::supported().into_iter().max().unwrap_or(Isa::Portable)
}

static PROCESS: OnceLock<Isa> = OnceLock::new();

/// The process-wide path: the one [`set_process`] chose, else [`detected`]. Fixed at the first
/// call of this function or of [`set_process`], whichever comes first.
pub fn process() -> Isa {
    *PROCESS.get_or_init(detected)
}

/// Chooses the process-wide path, before the first hash. A program maps its own setting onto
/// this (the `pqkit` command reads `PQKIT_HASH`; the library reads no environment).
///
/// # Errors
/// [`ChooseError::Unsupported`] when the CPU cannot run `isa`; [`ChooseError::Fixed`] when
/// another path is already fixed (a hash ran, or another call chose it). Choosing the path
/// already fixed is not an error.
pub fn set_process(isa: Isa) -> Result<(), ChooseError> {
    if !isa.is_supported() {
        return Err(ChooseError::Unsupported(Unsupported(isa)));
    }
    match *PROCESS.get_or_init(|| isa) {
        fixed if fixed == isa => Ok(()),
        fixed => Err(ChooseError::Fixed(fixed)),
    }
}

/// [`set_process`] by a path's name (`portable`, `shani`, `avx2` or `avx512`; surrounding
/// blanks ignored); returns the path.
///
/// # Errors
/// [`ChooseError::Unknown`] for another name, else those of [`set_process`].
pub fn set_process_by_name(name: &str) -> Result<Isa, ChooseError> {
    let isa = Isa::from_name(name.trim()).ok_or(ChooseError::Unknown)?;
    set_process(isa).map(|()| isa)
}

/// Why [`set_process`] refused a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChooseError {
    /// Not the name of a path.
    Unknown,
    /// The CPU cannot run it.
    Unsupported(Unsupported),
    /// The process already runs this other path.
    Fixed(Isa),
}

impl core::fmt::Display for ChooseError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Unknown => f.write_str("not a hash path (portable, shani, avx2 or avx512)"),
            Self::Unsupported(u) => u.fmt(f),
            Self::Fixed(p) => write!(f, "the process already hashes on the {p} path"),
        }
    }
}

impl std::error::Error for ChooseError {}

thread_local! {
    static FORCED: Cell<Option<Isa>> = const { Cell::new(None) };
}

/// The path hashes take on this thread: the one [`with_isa`] forced, else [`process`].
pub fn current() -> Isa {
    FORCED.with(Cell::get).unwrap_or_else(process)
}

/// Runs `f` with `isa` forced on this thread (threads `f` spawns must force it themselves:
/// pass them [`current`]).
///
/// # Errors
/// [`Unsupported`] when the CPU cannot run `isa`.
pub fn with_isa<T>(isa: Isa, f: impl FnOnce() -> T) -> Result<T, Unsupported> {
    if !isa.is_supported() {
        return Err(Unsupported(isa));
    }
    let before = FORCED.with(|c| c.replace(Some(isa)));
    struct Restore(Option<Isa>);
    impl Drop for Restore {
        fn drop(&mut self) {
            FORCED.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(before);
    Ok(f())
}

/// A path this CPU cannot run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unsupported(pub Isa);

impl core::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "this CPU does not support the {} hash path", self.0)
    }
}

impl std::error::Error for Unsupported {}
