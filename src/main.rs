//! The `tardy` command line. All the work is in the library; see `cli`.

mod cli;

fn main() {
    // `tardy doctor`'s spawn probes run this binary as a no-op (see probe::process).
    if std::env::var_os(tardy::probe::process::NOOP_ENV).is_some() {
        return;
    }
    std::process::exit(cli::main());
}
