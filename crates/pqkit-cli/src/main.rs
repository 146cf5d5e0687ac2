//! `pqkit`: the command line on the system allocator (see the `pqkit_cli` library).

fn main() -> std::process::ExitCode {
    pqkit_cli::run()
}
