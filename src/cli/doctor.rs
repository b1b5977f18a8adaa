//! `tardy doctor`: the machine fingerprint and pathology probes, and
//! `tardy doctor --compare A.json [B.json]`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;

use tardy::diagnose::machine;
use tardy::probe::doctor::{self, Options};
use tardy::probe::result::DoctorReport;
use tardy::render::{self};
use tardy::store::atomic;

use super::{emit, json, style};

#[derive(Args)]
#[command(
    long_about = include_str!("../../docs/help/doctor.about.txt"),
    after_help = include_str!("../../docs/help/doctor.examples.txt")
)]
pub struct DoctorArgs {
    /// Short probes (about 2 s in all) instead of the full run (about 10 s).
    #[arg(long)]
    quick: bool,
    /// Run only these probes (comma-separated ids; see below).
    #[arg(long, value_name = "PROBES")]
    only: Option<String>,
    /// Directory for the fsync, metadata and first-exec probes (default: the working
    /// directory, not /tmp, which is often tmpfs).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Print JSON (without raw samples) instead of text.
    #[arg(long)]
    json: bool,
    /// Save the whole report, raw samples included, to FILE (for --compare later).
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,
    /// Compare two saved reports, or one saved report (A) with this machine now (B).
    #[arg(long, num_args = 1..=2, value_name = "REPORT")]
    compare: Option<Vec<PathBuf>>,
    /// Show every measure of every probe (min, median, p90, samples).
    #[arg(long, short)]
    verbose: bool,
    /// Exit 1 when a probe of this machine (B, with --compare) is `bad`, or with `warn`
    /// when one is `warn` or `bad`: for CI jobs that should stop on a sick runner.
    #[arg(long, value_name = "LEVEL", value_parser = ["bad", "warn"])]
    fail_on: Option<String>,
}

fn measure(opts: &Options) -> DoctorReport {
    // A live line on a terminal only (indicatif hides itself elsewhere).
    let bar = indicatif::ProgressBar::new(0);
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    if let Ok(style) = indicatif::ProgressStyle::with_template("probing {msg} ({pos}/{len})...") {
        bar.set_style(style);
    }
    let mut report = doctor::run(opts, |id, i, n| {
        bar.set_length(n as u64);
        bar.set_position(i as u64 + 1);
        bar.set_message(id.to_string());
    });
    bar.finish_and_clear();
    machine::assess_all(&mut report);
    report
}

/// The subcommand, run; its exit code.
pub fn run(args: DoctorArgs) -> Result<i32, String> {
    let only = args.only.as_deref().map(doctor::parse_only).transpose()?;
    let dir = match args.dir {
        Some(d) => {
            if !d.is_dir() {
                return Err(format!("--dir {}: is not a directory", d.display()));
            }
            d
        }
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the working directory: {e}"))?,
    };
    if let Some(files) = &args.compare {
        let c = tardy::jobs::doctor::compare(files, args.quick, only, &dir, &mut measure)?;
        if let Some(path) = &args.save {
            save(path, &c.b)?;
        }
        if args.json {
            emit(&super::json(&c.comparison));
        } else {
            emit(&render::doctor::compare_text(&c.comparison, style()));
        }
        return Ok(verdict(&c.b, args.fail_on.as_deref()));
    }
    let opts = Options {
        quick: args.quick,
        only,
        dir,
    };
    let report = measure(&opts);
    if let Some(path) = &args.save {
        save(path, &report)?;
    }
    if args.json {
        emit(&json(&report.without_samples()));
    } else {
        emit(&render::doctor::text(&report, style(), args.verbose));
        if let Some(path) = &args.save {
            eprintln!("saved {} (raw samples included)", path.display());
        }
    }
    Ok(verdict(&report, args.fail_on.as_deref()))
}

/// The exit code `--fail-on` asks for: 1, with a line naming the probes, when a probe
/// of `report` is as bad as `level` or worse; else 0.
fn verdict(report: &DoctorReport, level: Option<&str>) -> i32 {
    let Some(level) = level else { return 0 };
    let failing = report.failing(level);
    if failing.is_empty() {
        return 0;
    }
    eprintln!("{}", render::doctor::failing_line(&failing, level));
    1
}

fn save(path: &Path, report: &DoctorReport) -> Result<(), String> {
    atomic::write_atomic(path, json(report).as_bytes())
        .map_err(|e| format!("{}: cannot save: {e}", path.display()))
}
