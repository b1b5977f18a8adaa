//! `tardy exec --timer-slack NS -- COMMAND...`: run a command with a changed timer
//! slack (Linux `prctl(PR_SET_TIMERSLACK)`, inherited by its children). A cheap
//! wrapper for sensitivity bisection and for reproducing seed 000 (a 15.6 ms timer
//! quantum) on Linux: `--prefix-b 'tardy exec --timer-slack 15600000 --'`.

use std::os::unix::process::CommandExt;

use clap::Args;

use super::fail;

#[derive(Args)]
#[command(
    about = "Run a command with a different timer slack (Linux), e.g. to reproduce a coarse timer",
    after_help = "Examples:\n  tardy exec --timer-slack 15600000 -- pytest -q     # every short sleep may end up to 15.6 ms late\n  \
tardy run 'pytest -q' 'tardy exec --timer-slack 15600000 -- pytest -q'     # the two side by side"
)]
pub struct ExecArgs {
    /// Timer slack in nanoseconds (Linux default: 50000).
    #[arg(long, value_name = "NS")]
    timer_slack: u64,
    /// The command and its arguments.
    #[arg(required = true, trailing_var_arg = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn main(args: ExecArgs) -> i32 {
    #[cfg(target_os = "linux")]
    {
        if args.timer_slack == 0 {
            return fail("--timer-slack must be at least 1 ns (0 would reset it to the default)");
        }
        // SAFETY: prctl with integer arguments changes only this thread's timer slack.
        let rc = unsafe {
            libc::prctl(
                libc::PR_SET_TIMERSLACK,
                args.timer_slack as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            )
        };
        if rc != 0 {
            return fail(format!(
                "prctl(PR_SET_TIMERSLACK) failed: {}",
                std::io::Error::last_os_error()
            ));
        }
        // The command gets the state the user started tardy with (SIGPIPE
        // not ignored, as Rust's runtime left it).
        let err = tardy::measure::inherit::command(
            std::process::Command::new(&args.command[0]).args(&args.command[1..]),
        )
        .exec();
        fail(format!("cannot run {}: {err}", args.command[0]))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = args;
        fail("tardy exec --timer-slack needs Linux")
    }
}
