//! The AFL++ harness: `pqkit-fuzz <target>` runs one target of `targets/` under afl-fuzz, e.g.
//! `cargo afl fuzz -i corpus/pem_der -o out/pem_der target/release/pqkit-fuzz pem_der`.
//! `pqkit-fuzz --list` prints the targets.

#[path = "../targets/mod.rs"]
mod targets;

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    if name == "--list" {
        for (n, _) in targets::TARGETS {
            println!("{n}");
        }
        return;
    }
    let Some(target) = targets::target(&name) else {
        eprintln!("usage: pqkit-fuzz <target> | --list");
        std::process::exit(2);
    };
    // Without afl's abort-on-panic hook: a panic pqkit catches itself (the bounded randomness
    // of Falcon signing, which unwinds out of fn-dsa into an error) is not a finding; one that
    // escapes the target still aborts the run (afl catches it).
    afl::fuzz_nohook!(|data: &[u8]| {
        target(data);
    });
}
