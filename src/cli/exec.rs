//! `tardy exec --timer-slack NS -- COMMAND...`: run a command with a changed timer
//! slack (Linux `prctl(PR_SET_TIMERSLACK)`, inherited by its children). A cheap
//! wrapper for sensitivity bisection and for reproducing NUnit 3.4's Thread.Sleep(1)
//! under Windows' 15.6 ms timer on Linux: `--prefix-b 'tardy exec --timer-slack 15600000 --'`.

use clap::Args;

use super::fail;

#[derive(Args)]
#[command(
    after_help = include_str!("../../docs/help/exec.examples.txt")
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
    return fail(tardy::measure::inherit::exec_with_timer_slack(
        args.timer_slack,
        &args.command,
    ));
    #[cfg(not(target_os = "linux"))]
    {
        let _ = args;
        fail("tardy exec --timer-slack needs Linux")
    }
}
