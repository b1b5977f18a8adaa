//! The terminal report of a `tardy run` session.

pub use super::style::Style;
use super::table::Layout;
use super::units::{TimeUnit, kib, p_value, percent, time};
use super::verdict;
use crate::model::{Benchmark, CountSummary, Results, SessionStatus, StopReason, Warning};

/// The whole report.
pub fn report(r: &Results, style: Style) -> String {
    report_with(r, style, &Layout::default())
}

/// The whole report, times in `layout`'s unit and comparisons in its order.
pub fn report_with(r: &Results, style: Style, layout: &Layout) -> String {
    let mut out = String::new();
    for (i, b) in r.benchmarks.iter().enumerate() {
        out.push_str(&benchmark(i, b, r, style, layout));
        out.push('\n');
    }
    if !r.comparisons.is_empty() {
        out.push_str(&comparisons(r, style, layout));
        out.push('\n');
    }
    out.push_str(&footer(r, style));
    out
}

fn benchmark(i: usize, b: &Benchmark, r: &Results, style: Style, layout: &Layout) -> String {
    let mut out = format!(
        "{} {}\n",
        style.bold(&format!("Benchmark {}:", i + 1)),
        b.name
    );
    if b.name != b.command {
        out.push_str(&format!(
            "  {}\n",
            style.dim(&format!("command: {}", b.command))
        ));
    }
    let warmups = b.runs.iter().filter(|r| r.warmup).count();
    let Some(s) = &b.summary else {
        out.push_str(&format!(
            "  {}\n",
            style.red(&format!(
                "no counted runs ({} executed, {warmups} warm-up)",
                b.runs.len()
            ))
        ));
        out.push_str(&warnings(b, style));
        return out;
    };
    let unit = layout.unit.unwrap_or(TimeUnit::for_value(s.mean));
    let res = b.resources.as_ref();
    let t = |v: f64| match layout.unit {
        Some(u) => u.format(v),
        None => time(v),
    };
    let cpu = res.map_or(String::new(), |r| {
        format!(
            "    [User: {}, System: {}]",
            t(r.user_mean_s),
            t(r.sys_mean_s)
        )
    });
    out.push_str(&format!(
        "  Time (mean ± σ):     {} ± {}{cpu}\n",
        style.green(&unit.format(s.mean)),
        unit.format(s.stddev)
    ));
    let ci = s
        .median_ci
        .map_or("(too few runs for an interval)".to_string(), |[lo, hi]| {
            format!("[{} … {}]", unit.format(lo), unit.format(hi))
        });
    out.push_str(&format!(
        "  Median ({:.0}% CI):     {}  {ci}\n",
        s.confidence * 100.0,
        style.green(&unit.format(s.median))
    ));
    let rss = res.map_or(String::new(), |r| {
        format!("    Max RSS: {}", kib(r.max_rss_median_kib))
    });
    out.push_str(&format!(
        "  Range (min … max):   {} … {}{rss}\n",
        unit.format(s.min),
        unit.format(s.max)
    ));
    let warm = if warmups > 0 {
        format!(" (+{warmups} warm-up)")
    } else {
        String::new()
    };
    out.push_str(&format!(
        "  Runs:                {}{warm}, CV {}\n",
        s.n,
        percent(s.cv)
    ));
    for c in &b.counts {
        out.push_str(&count_line(c, style));
    }
    if b.shell_correction_ns > 0 {
        out.push_str(&format!(
            "  {}\n",
            style.dim(&format!(
                "shell start-up of {} subtracted from every run",
                time(crate::model::ns_to_s(b.shell_correction_ns))
            ))
        ));
    }
    let _ = r;
    out.push_str(&warnings(b, style));
    out
}

/// "  Instructions:        1,234,567  every run identical (5 runs)".
fn count_line(c: &CountSummary, style: Style) -> String {
    let label = format!("{}:", capitalised(&c.metric));
    let c = &c.stats;
    let spread = if c.identical {
        format!("every run identical ({} runs)", c.n)
    } else {
        format!(
            "median; {} … {} ({} range, {} runs)",
            count(c.min),
            count(c.max),
            fine(c.relative_range),
            c.n
        )
    };
    format!(
        "  {label:<21}{}  {}\n",
        style.green(&count(c.median)),
        style.dim(&spread)
    )
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// A count with thousands separators ("1,234,567"); halves of a median as ".5".
pub fn count(v: f64) -> String {
    let whole = v.trunc() as u64;
    let digits = whole.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if v.fract() != 0.0 {
        out.push_str(format!("{:.1}", v.fract()).trim_start_matches('0'));
    }
    out
}

/// A small relative spread: "0.0123%".
fn fine(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p >= 0.1 {
        percent(fraction)
    } else {
        format!("{p:.4}%")
    }
}

fn warnings(b: &Benchmark, style: Style) -> String {
    let mut out = String::new();
    for w in &b.warnings {
        let text = match w {
            Warning::SlowFirstRun {
                first_s, median_s, ..
            } => format!(
                "the first run took {} against a median of {}: caches were cold; use --warmup or --prepare",
                time(*first_s),
                time(*median_s)
            ),
            Warning::Outliers {
                count,
                extreme,
                runs,
            } => format!(
                "{count} of {runs} runs are outliers ({extreme} extreme, over 10σ): another program may have interfered; consider a quieter machine"
            ),
            Warning::HighSpread { cv } => format!(
                "high spread: CV {} (over 5%); the interval is wide, more runs or a quieter machine help",
                percent(*cv)
            ),
            Warning::ShortRuns {
                median_s,
                spawn_floor_s,
            } => format!(
                "runs are very short ({}); starting a process alone takes {} here, so that cost dominates",
                time(*median_s),
                time(*spawn_floor_s)
            ),
            Warning::Trend { trend } => format!(
                "times drift {} over the session ({} from the first third to the last, Mann-Kendall {}): thermal throttling or background load?",
                if trend.drift > 0.0 { "up" } else { "down" },
                percent(trend.drift),
                p_value(trend.p_value)
            ),
            Warning::FailedRuns {
                failed,
                timed_out,
                runs,
            } => {
                let mut parts = Vec::new();
                if *failed > 0 {
                    parts.push(format!("{failed} failed"));
                }
                if *timed_out > 0 {
                    parts.push(format!("{timed_out} timed out"));
                }
                format!(
                    "excluded from the statistics: {} of {runs} runs",
                    parts.join(" and ")
                )
            }
            Warning::FailuresCounted { failed, runs } if failed == runs => {
                "every run failed (non-zero exit), and --ignore-failure counts them: these are the times of a failing command".to_string()
            }
            Warning::FailuresCounted { failed, runs } => format!(
                "{failed} of {runs} runs failed (non-zero exit) and are counted, as --ignore-failure asks: their times may be an error path's"
            ),
            Warning::PrecisionNotReached {
                achieved,
                target,
                runs_needed,
                seconds_needed,
            } => {
                let mut s = format!(
                    "the mean is known within ±{}, not the ±{} asked for: the time or run limit came first",
                    percent(*achieved),
                    percent(*target)
                );
                if *runs_needed > 0 {
                    s.push_str(&format!(
                        "; at this spread about {runs_needed} runs ({} of run time) would reach it (--max-time, --max-runs), or accept ±{} with --precision",
                        time(*seconds_needed),
                        percent(*achieved)
                    ));
                }
                s
            }
            Warning::Stragglers {
                runs,
                processes,
                example,
                killed,
            } => format!(
                "{runs} run(s) left {processes} process(es) behind after the command exited (first: {example}); {}; a run ends when the command exits, so they were not timed",
                if *killed {
                    "tardy killed them (--keep-stragglers leaves them alive)"
                } else {
                    "left alive (--keep-stragglers)"
                }
            ),
        };
        out.push_str(&format!("  {} {text}\n", style.yellow("Warning:")));
    }
    out
}

fn comparisons(r: &Results, style: Style, layout: &Layout) -> String {
    let reference = &r.benchmarks[0].name;
    let mut out = format!("{} (reference: {reference})\n", style.bold("Comparison"));
    let width = r
        .benchmarks
        .iter()
        .skip(1)
        .map(|b| super::units::display_width(&b.name))
        .max()
        .unwrap_or(0)
        .min(40);
    let order = layout.order(r);
    // Wall time first, then each count, in the order --metric gave them.
    let mut metrics: Vec<Option<&str>> = Vec::new();
    for c in &r.comparisons {
        if !metrics.contains(&c.metric.as_deref()) {
            metrics.push(c.metric.as_deref());
        }
    }
    for metric in &metrics {
        let cpu_time = |m: &str| match m {
            "cpu" => Some("CPU time (user + system)"),
            "user" => Some("user CPU time"),
            "sys" => Some("system CPU time"),
            _ => None,
        };
        if let Some(m) = metric {
            let words = cpu_time(m).unwrap_or(m);
            out.push_str(&format!("  {}\n", style.bold(&format!("by {words}:"))));
        } else if metrics.len() > 1 {
            out.push_str(&format!("  {}\n", style.bold("by wall time:")));
        }
        let mut listed: Vec<_> = r
            .comparisons
            .iter()
            .filter(|c| c.metric.as_deref() == *metric)
            .collect();
        listed.sort_by_key(|c| order.iter().position(|&i| i == c.candidate));
        for c in listed {
            let name = &r.benchmarks[c.candidate].name;
            let line = match (&c.estimate, &c.error, metric) {
                (Some(e), _, None) => verdict::sentence(e, style),
                (Some(e), _, Some(m)) if cpu_time(m).is_some() => verdict::sentence(e, style),
                (Some(e), _, Some(m)) => verdict::count_sentence(e, m, c.exact, style),
                (None, Some(err), _) => format!("not compared: {err}"),
                (None, None, _) => "not compared".to_string(),
            };
            out.push_str(&format!(
                "  {}  {line}\n",
                super::units::pad_to(name, width)
            ));
        }
    }
    out
}

fn footer(r: &Results, style: Style) -> String {
    let order = if r.options.interleaved && r.benchmarks.len() > 1 {
        format!("interleaved, seed {}", r.options.seed)
    } else {
        "sequential".to_string()
    };
    let stop = match &r.stop_reason {
        Some(StopReason::ExactRuns { runs }) => format!("{runs} runs as asked"),
        Some(StopReason::Precision { precision }) => format!(
            "{} known within ±{} at {:.0}% confidence",
            match r.options.metrics.first() {
                Some(m) if m != "wall" => m.as_str(),
                _ => "mean",
            },
            percent(*precision),
            r.options.confidence * 100.0
        ),
        Some(StopReason::MaxRuns { runs }) => {
            format!("--max-runs {runs} reached before the precision target")
        }
        Some(StopReason::MaxTime { seconds }) => {
            format!("time limit of {seconds:.0} s reached before the precision target")
        }
        Some(StopReason::NoCountedRuns { runs }) => {
            format!("no run could be counted after {runs} runs (all failed or timed out)")
        }
        Some(StopReason::Interrupted) => "interrupted; every completed run is kept".to_string(),
        Some(StopReason::Failed { .. }) => "stopped by a failing command".to_string(),
        None => "not finished".to_string(),
    };
    let o = &r.overhead;
    let overhead = format!(
        "tardy's overhead: {} between runs, {} CPU per run{}",
        time(crate::model::ns_to_s(o.between_runs_ns)),
        time(crate::model::ns_to_s(o.self_cpu_per_run_ns)),
        o.spawn_floor_ns.map_or(String::new(), |f| format!(
            "; spawn floor {}",
            time(crate::model::ns_to_s(f))
        ))
    );
    let counter = r.options.counter.as_ref().map_or(String::new(), |c| {
        let how = match c.backend.as_str() {
            "pmu" => "the CPU's counters (perf_event_open) in the timed runs".to_string(),
            _ => format!(
                "valgrind's cachegrind in runs of their own{}",
                c.cache
                    .as_ref()
                    .map_or(String::new(), |k| format!(" (simulated cache {k})"))
            ),
        };
        format!(
            " Counts ({}): {how}, whole process tree; they do not see sleeps, I/O or waits.",
            c.events.join(" ")
        )
    });
    let status = match r.status {
        SessionStatus::Interrupted => style.yellow("Interrupted. "),
        SessionStatus::Failed => style.red("Failed. "),
        _ => String::new(),
    };
    style.dim(&format!(
        "{status}Stopped: {stop}. Order: {order}. {overhead}.{counter}\n"
    ))
}

/// The line that says what counting costs, once the first counted run is in.
pub fn counting_cost(c: &crate::analyze::run::CountingCost) -> String {
    format!(
        "counting under valgrind's cachegrind: a counted run takes {}, {:.0}x the timed run ({}), so this session takes about {:.0}x as long as timing alone",
        time(c.counted_s),
        c.factor,
        time(c.timed_s),
        c.factor + 1.0
    )
}
