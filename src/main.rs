//! The `tardy` command line. All the work is in the library; see `cli`.

mod cli;

fn main() {
    // `tardy doctor`'s spawn probes run this binary as a no-op (see probe::process).
    if std::env::var_os(tardy::probe::process::NOOP_ENV).is_some() {
        return;
    }
    // Started between tardy and a command it times, before any work of its
    // own (so the command's max RSS is its own; measure::trampoline).
    if let Some(code) = tardy::measure::trampoline::run_if_asked() {
        std::process::exit(code);
    }
    std::process::exit(cli::main());
}
