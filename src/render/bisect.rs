//! `tardy bisect`'s text: each step's line, the final report, and the
//! one-line notes on parallel runs and the sample cache.

use crate::bisect::decide::Call;
use crate::bisect::engine::{Culprit, Outcome, Report};
use crate::bisect::state::{self, Step};

pub fn ratio(r: f64, lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        // An exact ratio (counts that every run agreed on): no interval.
        (Some(l), Some(h)) if l == r && h == r && r != 1.0 => {
            format!("{r:.5}x ({:+.3}%, exact)", (r - 1.0) * 100.0)
        }
        (Some(l), Some(h)) if l == r && h == r => "1.00000x (exact)".to_string(),
        (Some(l), Some(h)) => format!("{r:.3}x [{l:.3}, {h:.3}]"),
        _ => format!("{r:.3}x"),
    }
}

pub fn step_line(i: usize, s: &Step) -> String {
    let call = match s.call {
        Call::Good => "good",
        Call::Bad => "bad",
        Call::Skip => "skip",
        Call::Unknown => "unknown",
    };
    let numbers = match &s.decision {
        Some(d) if s.refine => format!(
            "over good {}  (refined: {})",
            ratio(d.vs_good, d.vs_good_ci[0], d.vs_good_ci[1]),
            s.note.as_deref().unwrap_or("")
        ),
        Some(d) => format!(
            "over good {}{}",
            ratio(d.vs_good, d.vs_good_ci[0], d.vs_good_ci[1]),
            if d.by_estimate {
                "  (decided by estimate at the run cap)"
            } else {
                ""
            }
        ),
        None => s.note.clone().unwrap_or_default(),
    };
    let label: String = s.label.chars().take(48).collect();
    format!(
        "  {:>2}  {:<48} {:>3} runs  {:<5} {}",
        i + 1,
        label,
        s.runs,
        call,
        numbers
    )
}

pub fn text(r: &Report, st: &state::State, steps_shown: bool) -> String {
    let mut out = String::new();
    let count = st.config.metric.count();
    let exact = count.is_some() && r.endpoints.as_ref().is_some_and(|e| e.p_value.is_nan());
    let what = match count {
        _ if r.sensitivity => "B/A ratio",
        Some(m) => m.name(),
        None => "metric",
    };
    if let Some(e) = &r.endpoints {
        out += &format!(
            "Endpoints: bad/good {} = {}, {}, {}+{} runs{}\n",
            what,
            ratio(e.ratio, e.ci_low, e.ci_high),
            if exact {
                "every run of each end gave the same count".to_string()
            } else {
                crate::render::units::p_value(e.p_value)
            },
            e.runs[0],
            e.runs[1],
            if r.invert {
                " (inverted: smaller is worse)"
            } else {
                ""
            }
        );
    }
    if !r.reproduced && exact {
        out += &format!(
            "The regression does not reproduce: bad's {what} are not above good's{}.\n",
            st.config.threshold.map_or(String::new(), |t| format!(
                " by --threshold {:.2}%",
                t * 100.0
            ))
        );
        return out;
    }
    if !r.reproduced {
        let t = st
            .config
            .threshold
            .unwrap_or(crate::bisect::decide::MIN_REGRESSION);
        let below = r
            .endpoints
            .as_ref()
            .is_some_and(|e| crate::bisect::decide::below_threshold(e, st.config.threshold));
        out += &if below {
            format!(
                "The regression does not reproduce: bad is less than {:.1}% slower than good (its interval lies below; --threshold sets the smallest regression worth bisecting).\n",
                t * 100.0
            )
        } else {
            underpowered(r, st, t)
        };
        return out;
    }
    if let Some(m) = r.boundary {
        out += &format!(
            "Boundary: a candidate is bad when over good by more than {m:.3}x{}\n",
            if st.config.threshold.is_some() {
                ""
            } else {
                " (half the regression)"
            }
        );
    }
    if steps_shown {
        out += &format!(
            "Steps: {} (shown above as they ran; `tardy bisect log` lists them again)\n",
            r.steps.len()
        );
    } else {
        out += "Steps:\n";
        for (i, s) in r.steps.iter().enumerate() {
            out += &step_line(i, s);
            out.push('\n');
        }
    }
    match (&r.culprit, &r.culprit_range) {
        (Some(c), _) => {
            let head = if r.verdict == Outcome::Unconfirmed {
                "Suspect (not confirmed):"
            } else {
                "Culprit:"
            };
            out += &match c {
                Culprit::Commit(ci) => format!(
                    "{head} {} {}\n  author {}, {}\n",
                    ci.commit, ci.subject, ci.author, ci.date
                ),
                Culprit::Version { version } => format!("{head} version {version}\n"),
            };
            if let (Some(e), Some(p)) = (&r.effect, &r.parent) {
                out += &format!(
                    "  effect (culprit / parent {p}): {}, {}\n",
                    ratio(e.ratio, e.ci_low, e.ci_high),
                    if e.confirmed && exact {
                        "confirmed: a second run of each gave the same count"
                    } else if e.confirmed {
                        "confirmed by the sandwich re-run"
                    } else if exact {
                        "not confirmed: a second run of each did not agree with the first"
                    } else {
                        "not significantly slower when re-run beside its parent"
                    }
                );
            }
        }
        (None, Some(range)) => {
            out += &format!(
                "The culprit is one of these {} candidates (together {:.0}% likely; no single one reached {:.0}% within --max-runs{}):\n",
                range.len(),
                r.confidence * 100.0,
                st.config.policy.confidence * 100.0,
                if st.steps.iter().any(|s| s.call == Call::Skip) {
                    ", and skipped candidates hide which"
                } else {
                    ""
                }
            );
            for l in range {
                let p = r
                    .probabilities
                    .iter()
                    .find(|p| &p.label == l)
                    .map_or(0.0, |p| p.probability);
                out += &format!("  {:>5.1}%  {l}\n", p * 100.0);
            }
        }
        (None, None) => {}
    }
    if r.verdict == Outcome::Unconfirmed {
        out += &format!(
            "Verdict: not confirmed. The search's runs pointed here, but measured again beside its parent this candidate is not significantly slower, so no confidence is claimed: the slowdown may be spread over several candidates, or be too small for these runs. Bisect again with more --max-runs, or treat {}..{} as the range. {} runs of the command in all.\n",
            r.last_good.as_deref().map_or("?", short),
            r.first_bad.as_deref().map_or("?", short),
            r.total_runs
        );
    } else if r.culprit.is_some() && exact {
        out += &format!(
            "Exact: every run of each commit gave the same {what}, so one run per commit placed the step; no probability is needed. {} runs of the command in all.\n",
            r.total_runs
        );
    } else if r.culprit.is_some() {
        let p = probability(r.confidence);
        out += &format!(
            "Confidence in the culprit: {p} (its probability from this session's runs; docs/bisect.md). {} runs of the command in all.\n",
            r.total_runs
        );
    } else {
        out += &format!("{} runs of the command in all.\n", r.total_runs);
    }
    if let Some(d) = &r.disturbance {
        out += &disturbance_line(d);
        out += "\n";
    }
    if r.stragglers > 0 {
        out += &format!(
            "The command left {} process{} running after it exited, over all runs; each was killed after its run (the warnings above name them).\n",
            r.stragglers,
            if r.stragglers == 1 { "" } else { "es" }
        );
    }
    out
}

/// Not reproduced, and not ruled out: the interval holds both nothing and
/// the threshold. What would decide: more runs (how many), or a steadier
/// metric than wall time.
fn underpowered(r: &Report, st: &state::State, t: f64) -> String {
    let runs = r.endpoints.as_ref().map_or(0, |e| e.runs[0].min(e.runs[1]));
    let interval = r.endpoints.as_ref().map_or(String::new(), |e| {
        format!(" ({})", ratio(e.ratio, e.ci_low, e.ci_high))
    });
    let needed = r
        .endpoints
        .as_ref()
        .and_then(|e| e.runs_needed)
        .map_or(String::new(), |n| {
            format!(
                " {n} runs of each end would tell a {:.1}% regression apart;",
                t * 100.0
            )
        });
    let metric = match st.config.metric {
        crate::bisect::Metric::Wall => {
            " --metric cpu (CPU time: waiting for a CPU on a busy machine does not count) or --metric instructions (exact counts, with valgrind or a PMU) often decide where wall time cannot."
        }
        crate::bisect::Metric::Cpu | crate::bisect::Metric::User | crate::bisect::Metric::Sys => {
            " --metric instructions (exact counts, with valgrind or a PMU) often decides where time cannot."
        }
        _ => "",
    };
    format!(
        "Too noisy to tell, not \"no regression\": after {runs} runs of each, bad is not proven slower than good{interval}, yet its interval still holds a {:.1}% regression (--threshold).{needed}{metric}\n",
        t * 100.0
    )
}

/// How N runs at once compared with runs alone, and whether that is a worry.
pub fn disturbance_line(d: &state::Disturbance) -> String {
    // Eight runs alone give a rough spread: only a large change is a worry.
    let worry = d.slowdown > 1.05 || d.spread_ratio > 3.0;
    format!(
        "{}{} runs at once: {:+.1}% slower than one alone (medians of {} and {} runs of the good end), spread {:.2}x.{}",
        if worry { "warning: " } else { "parallel: " },
        d.jobs,
        (d.slowdown - 1.0) * 100.0,
        d.together.len(),
        d.alone.len(),
        d.spread_ratio,
        if worry {
            " Runs disturb each other: a candidate is only compared with references taken at the same moment, so the load cancels, but the noise is larger and small regressions need more runs; --jobs 1 if in doubt."
        } else {
            " Within what this check can tell apart."
        }
    )
}

/// What the sample cache gave, in one line (None when there was none).
/// Where the candidates' worktrees stay and how to remove them (none: nothing).
pub fn worktrees_line(n: usize, dir: &std::path::Path) -> Option<String> {
    (n > 0).then(|| {
        format!(
            "{n} worktree{} kept in {} for `tardy bisect log` and a later bisection's cache; `tardy bisect reset` removes them",
            if n == 1 { "" } else { "s" },
            dir.display()
        )
    })
}

pub fn cache_line(c: &state::CacheUse) -> Option<String> {
    let age = |s: i64| match s {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s if s < 172_800 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86_400),
    };
    match c {
        state::CacheUse::None => None,
        state::CacheUse::Reused {
            candidates,
            samples,
            age_s,
        } => Some(format!(
            "cache: reusing {samples} samples of {candidates} candidates an earlier bisection of this command took on this machine, last {} ago (--no-cache measures afresh)",
            age(*age_s)
        )),
        state::CacheUse::OtherMachine {
            samples,
            differences,
        } => Some(format!(
            "cache: not reusing {samples} samples taken on a different machine ({})",
            differences.join("; ")
        )),
        state::CacheUse::Unknown { samples } => Some(format!(
            "cache: not reusing {samples} samples of an older tardy (their machine and age are unknown)"
        )),
    }
}

/// A probability as printed: "> 99.9%" above 99.95%.
fn probability(p: f64) -> String {
    if p >= 0.9995 {
        "> 99.9%".to_string()
    } else {
        format!("{:.1}%", p * 100.0)
    }
}

/// A commit hash cut to 10 characters (a version is kept whole).
fn short(key: &str) -> &str {
    if key.len() == 40 && key.bytes().all(|b| b.is_ascii_hexdigit()) {
        &key[..10]
    } else {
        key
    }
}

/// The report with its explanation, as `tardy bisect --explain --format
/// json` writes it: the report's keys, and `explain` (the comparison, the
/// pair, the traces saved) or `explain_error`.
pub fn explained_json(
    report: &Report,
    explained: &Result<crate::bisect::explain::Explained, crate::bisect::explain::ExplainFailure>,
) -> serde_json::Value {
    let mut v = serde_json::to_value(report).unwrap_or(serde_json::Value::Null);
    if let Some(obj) = v.as_object_mut() {
        match explained {
            Ok(e) => {
                let mut ex = super::explain::comparison_json(&e.a, &e.b, &e.comparison);
                if let Some(m) = ex.as_object_mut() {
                    m.insert("last_good".into(), e.good.clone().into());
                    m.insert("first_bad".into(), e.bad.clone().into());
                    m.insert("saved".into(), serde_json::json!(e.saved));
                    m.insert("interrupted".into(), e.interrupted.into());
                }
                obj.insert("explain".into(), ex);
            }
            Err(f) => {
                obj.insert("explain".into(), serde_json::Value::Null);
                obj.insert("explain_error".into(), f.message().into());
            }
        }
    }
    v
}

/// The explanation's text, after the culprit already printed.
pub fn explained_text(
    report: &Report,
    st: &state::State,
    e: &crate::bisect::explain::Explained,
    style: super::style::Style,
) -> String {
    let mut out = format!(
        "\nWhere the time went (tardy explain, {} traced runs each, interleaved):\n  A = last good {}\n  B = {} {}\n",
        e.a.runs.len().min(e.b.runs.len()),
        e.good,
        if report.culprit.is_some() {
            "culprit"
        } else {
            "first bad"
        },
        e.bad
    );
    if report.sensitivity {
        out.push_str("  (both under condition B, where the difference shows)\n");
    }
    if !matches!(st.config.metric, crate::bisect::Metric::Wall) {
        out.push_str("  (this explains wall time; the bisected metric was another)\n");
    }
    out.push_str(&super::explain::comparison(
        &e.a,
        &e.b,
        &e.comparison,
        style,
        5,
    ));
    if !e.saved.is_empty() {
        out.push_str(&format!(
            "Saved: {}\n  (`tardy explain {}` shows it again; `tardy report` draws it)\n",
            e.saved.join(", "),
            e.saved.join(" ")
        ));
    }
    out
}

/// `tardy bisect log`: the saved bisection, step by step.
pub fn log_text(dir: &std::path::Path, st: &state::State) -> String {
    let mut out = format!(
        "Bisection in {} ({} candidates, {} runs so far{})\n",
        dir.display(),
        st.candidates.len(),
        st.total_runs,
        if st.finished {
            ", finished"
        } else {
            ", unfinished"
        }
    );
    if let Some(e) = &st.endpoints {
        out.push_str(&format!(
            "Endpoints: bad/good = {}, {}\n",
            ratio(e.ratio, e.ci_low, e.ci_high),
            super::units::p_value(e.p_value)
        ));
    }
    for (i, s) in st.steps.iter().enumerate() {
        out.push_str(&step_line(i, s));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bisect::decide::Policy;
    use crate::bisect::engine::Effect;
    use crate::bisect::{Config, Metric, Mode};

    fn state() -> state::State {
        let cfg = Config {
            repo: ".".into(),
            good: "1.0".into(),
            bad: "2.0".into(),
            mode: Mode::Versions {
                list: vec!["1.0".into(), "1.1".into(), "2.0".into()],
            },
            build: None,
            prepare: None,
            command: "true".into(),
            metric: Metric::Wall,
            conditions: None,
            threshold: None,
            invert: false,
            policy: Policy::default(),
            seed: 1,
            timeout_s: None,
            jobs: 1,
        };
        state::State::new(cfg, Vec::new())
    }

    fn report(confirmed: bool) -> Report {
        Report {
            reproduced: true,
            endpoints: None,
            culprit: Some(Culprit::Version {
                version: "1.1".into(),
            }),
            parent: Some("1.0".into()),
            last_good: Some("1.0".into()),
            first_bad: Some("1.1".into()),
            culprit_range: None,
            probabilities: Vec::new(),
            effect: Some(Effect {
                ratio: if confirmed { 1.2 } else { 1.004 },
                ci_low: Some(if confirmed { 1.15 } else { 0.99 }),
                ci_high: Some(if confirmed { 1.25 } else { 1.02 }),
                p_value: if confirmed { 1e-6 } else { 0.4 },
                confirmed,
            }),
            confirmed,
            verdict: if confirmed {
                Outcome::Confirmed
            } else {
                Outcome::Unconfirmed
            },
            confidence: 0.9999,
            steps: Vec::new(),
            total_runs: 60,
            stragglers: 0,
            disturbance: None,
            boundary: Some(1.1),
            sensitivity: false,
            invert: false,
        }
    }

    #[test]
    fn an_unconfirmed_suspect_gets_one_verdict_and_no_confidence() {
        let t = text(&report(false), &state(), false);
        assert!(t.contains("Suspect (not confirmed): version 1.1"), "{t}");
        assert!(t.contains("Verdict: not confirmed"), "{t}");
        assert!(t.contains("1.0..1.1 as the range"), "{t}");
        assert!(!t.contains("99.9") && !t.contains("Culprit:"), "{t}");
        let t = text(&report(true), &state(), false);
        assert!(t.contains("Culprit: version 1.1"), "{t}");
        assert!(t.contains("Confidence in the culprit: > 99.9%"), "{t}");
        assert!(t.contains("confirmed by the sandwich re-run"), "{t}");
        assert!(!t.contains("not confirmed"), "{t}");
    }
}
