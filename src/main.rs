//! The `tardy` command line. All the work is in the library; see `cli`.

mod cli;

/// Before Rust's runtime runs (it ignores SIGPIPE before `main`): the
/// process state the user started tardy with, given back to every command
/// tardy starts (measure::inherit).
#[used]
#[unsafe(link_section = ".init_array")]
static CAPTURE_USER_STATE: extern "C" fn() = {
    extern "C" fn capture() {
        tardy::measure::inherit::capture();
    }
    capture
};

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
    // Started as the server that forks the measured commands (once per
    // session, measure::spawner): serve, then exit.
    tardy::measure::spawner::run_if_asked();
    std::process::exit(cli::main());
}
