//! `pqkit-heap`: the `pqkit` command line on pqkit-bench's counting allocator, so that
//! `pqkit demo` and `pqkit bench handshake` can report heap use per side. `pqkit` starts it
//! for those commands; every other command runs on the system allocator.

#[global_allocator]
static GLOBAL: pqkit_bench::heap::TrackingAllocator =
    pqkit_bench::heap::TrackingAllocator::system();

fn main() -> std::process::ExitCode {
    pqkit_cli::run()
}
