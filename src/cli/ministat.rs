//! `tardy ministat ARGS` and `tardy compare --ministat ARGS`: ministat's own
//! command line, run by [`tardy::jobs::ministat::run`]; this file only prints.

use tardy::jobs::ministat::{default_width, run};

/// The process entry point for the ministat mode.
pub fn main(args: &[String]) -> i32 {
    let outcome = run(args, &mut std::io::stdin(), default_width());
    print!("{}", outcome.stdout);
    eprint!("{}", outcome.stderr);
    outcome.code
}
