//! Calibration before measuring: the shell's own start-up cost (subtracted
//! from commands run through a shell) and the spawn floor (the time of a
//! no-op program: the least any run can take here, reported as tardy's
//! observer cost).

use super::error::MeasureError;
use super::spawn::{ExecOptions, Executor, OutputMode};
use crate::model::{Exec, ShellCorrection};
use crate::stats::summary::quantile_sorted;

/// Runs of `SHELL -c ''` used to estimate the shell's cost.
pub const SHELL_RUNS: u64 = 30;
/// Runs of the no-op program used to estimate the spawn floor (after one
/// warm-up): the floor is a yardstick for warnings, and its runs are part of
/// tardy's own cost, which must stay at hyperfine's.
pub const FLOOR_RUNS: u64 = 3;

fn median(values: &mut [u64]) -> u64 {
    values.sort_unstable();
    let f: Vec<f64> = values.iter().map(|&v| v as f64).collect();
    quantile_sorted(&f, 0.5).round() as u64
}

/// Measure `shell -c ''` (after 3 warm-ups) and return the medians.
pub fn shell_correction(shell: &str, opts: &ExecOptions) -> Result<ShellCorrection, MeasureError> {
    let exec = Exec::Shell {
        shell: shell.to_string(),
        script: String::new(),
    };
    let mut opts = opts.clone();
    opts.input = None;
    opts.timeout = None;
    let mut ex = Executor::new(
        &format!("{shell} -c ''"),
        &exec,
        &OutputMode::Null,
        None,
        &opts,
    )?;
    let (mut wall, mut user, mut sys) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..SHELL_RUNS + 3 {
        let o = ex.run(None, None)?;
        if !o.success() {
            return Err(MeasureError::HookFailed {
                hook: "shell calibration",
                command: format!("{shell} -c ''"),
                how: o.describe(),
                stderr: String::new(),
            });
        }
        if i >= 3 {
            wall.push(o.wall_ns);
            user.push(o.user_ns);
            sys.push(o.sys_ns);
        }
    }
    Ok(ShellCorrection {
        shell: shell.to_string(),
        runs: SHELL_RUNS,
        wall_ns: median(&mut wall),
        user_ns: median(&mut user),
        sys_ns: median(&mut sys),
    })
}

/// The median wall time of a no-op program (`true` from PATH), or `None`
/// when there is none.
pub fn spawn_floor(opts: &ExecOptions) -> Option<(String, u64)> {
    let program = super::command::resolve_program("true", None).ok()?;
    let exec = Exec::Direct {
        argv: vec![program.to_string_lossy().into_owned()],
    };
    let opts = ExecOptions {
        env: opts.env.clone(),
        ..ExecOptions::default()
    };
    let mut ex = Executor::new("true", &exec, &OutputMode::Null, None, &opts).ok()?;
    let mut wall = Vec::new();
    for i in 0..FLOOR_RUNS + 1 {
        let o = ex.run(None, None).ok()?;
        if i >= 1 && o.success() {
            wall.push(o.wall_ns);
        }
    }
    (!wall.is_empty()).then(|| (program.to_string_lossy().into_owned(), median(&mut wall)))
}
