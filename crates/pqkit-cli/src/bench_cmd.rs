//! `pqkit bench crypto|handshake|boundary`: run a pqkit-bench measurement, print it as an
//! aligned table (machine line on top), Markdown or JSON (schema `pqkit-bench/1`).

use std::time::Duration;

use pqkit_bench::render::Table;
use pqkit_bench::timing::Budget;
use pqkit_bench::{Report, boundary, crypto, handshake, machine::Machine, render};
use serde::Serialize;

use crate::commands::Result;

/// How to print.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Output {
    pub(crate) json: bool,
    pub(crate) markdown: bool,
}

fn print<T: Serialize>(kind: &'static str, body: T, tables: &[Table], out: Output) -> Result<()> {
    if out.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&Report::new(kind, body))?
        );
        return Ok(());
    }
    let machine = Machine::detect().line();
    if out.markdown {
        println!("Machine: {machine}\n");
        for t in tables {
            println!("{}", t.to_markdown());
        }
    } else {
        println!("{machine}\n");
        for t in tables {
            println!("{}", t.to_text());
        }
    }
    Ok(())
}

pub(crate) fn budget(min_time: f64, min_iterations: usize) -> Result<Budget> {
    if !(min_time.is_finite() && min_time >= 0.0) {
        return Err("--min-time must be a number of seconds, 0 or more".into());
    }
    Ok(Budget {
        min_time: Duration::from_secs_f64(min_time),
        min_iterations,
    })
}

/// `pqkit bench crypto`.
pub(crate) fn crypto(options: &crypto::Options, out: Output) -> Result<()> {
    #[derive(Serialize)]
    struct Body {
        message_bytes: usize,
        signing: &'static str,
        rows: Vec<crypto::Row>,
    }
    let rows = crypto::run(options)?;
    let table = render::crypto(&rows);
    let body = Body {
        message_bytes: crypto::MESSAGE_SIZE,
        signing: if options.deterministic {
            "deterministic"
        } else {
            "hedged"
        },
        rows,
    };
    print("crypto", body, &[table], out)
}

/// `pqkit bench handshake`.
pub(crate) fn handshake(options: &handshake::Options, out: Output) -> Result<()> {
    #[derive(Serialize)]
    struct Body {
        client_message: &'static str,
        server_reply: &'static str,
        rows: Vec<handshake::Row>,
        skipped: Vec<handshake::Skipped>,
    }
    let (rows, skipped) = handshake::run(options)?;
    let tables = [render::handshake(&rows, &skipped), render::breakdown(&rows)];
    let body = Body {
        client_message: handshake::CLIENT_MESSAGE,
        server_reply: handshake::SERVER_REPLY,
        rows,
        skipped,
    };
    print("handshake", body, &tables, out)
}

/// `pqkit bench boundary`.
pub(crate) fn boundary(sizes: &[usize], budget: Budget, out: Output) -> Result<()> {
    #[derive(Serialize)]
    struct Body {
        rows: Vec<boundary::Row>,
    }
    let sizes = if sizes.is_empty() {
        boundary::DEFAULT_SIZES.to_vec()
    } else {
        sizes.to_vec()
    };
    let rows = boundary::run(&boundary::default_cases(), &sizes, budget)?;
    let table = render::boundary(&rows);
    print("boundary", Body { rows }, &[table], out)
}
