//! `tardy ministat ARGS` and `tardy compare --ministat ARGS`: ministat's own
//! command line, run by [`tardy::jobs::ministat::run`]; this file only finds
//! the width and prints.

use std::io::IsTerminal;

use tardy::jobs::ministat::{atoi, run};

/// The width ministat uses: 74, or the terminal's when stdout is one.
pub fn default_width() -> i64 {
    if !std::io::stdout().is_terminal() {
        return 74;
    }
    if let Some(c) = std::env::var("COLUMNS").ok().filter(|c| !c.is_empty()) {
        return atoi(&c);
    }
    // As ministat: the tty's columns less two (COLUMNS, read above as atoi does, wins).
    match terminal_size::terminal_size_of(std::io::stdout()) {
        Some((w, _)) if w.0 > 0 => w.0 as i64 - 2,
        _ => 74,
    }
}

/// The process entry point for the ministat mode.
pub fn main(args: &[String]) -> i32 {
    let outcome = run(args, &mut std::io::stdin(), default_width());
    print!("{}", outcome.stdout);
    eprint!("{}", outcome.stderr);
    outcome.code
}
