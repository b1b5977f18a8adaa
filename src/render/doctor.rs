//! `tardy doctor` as text: the fingerprint in brief, one row per probe (value,
//! healthy range, verdict, meaning), and `--compare`'s settings, probe ratios and
//! diagnosis. Everything shown was computed by `probe` and `diagnose::machine`.

use std::fmt::Write;

use super::style::Style;
use super::units;
use crate::diagnose::machine::MachineComparison;
use crate::probe::result::{DoctorReport, Health};
use crate::probe::sample::Measure;

/// A measured value in its unit.
pub fn value(v: f64, unit: &str) -> String {
    match unit {
        "ns" => units::time(v / 1e9),
        "GHz" => format!("{v:.2} GHz"),
        "share" => units::percent(v),
        "cycles" => format!("{v:.0} cycles"),
        _ => format!("{v:.3} {unit}"),
    }
}

fn health(h: Health, style: Style) -> String {
    match h {
        Health::Ok => style.green("ok"),
        Health::Info => style.dim("info"),
        Health::Warn => style.yellow("warn"),
        Health::Bad => style.red("bad"),
        Health::Unavailable => style.dim("n/a"),
    }
}

fn measure_line(m: &Measure) -> String {
    format!(
        "      {:<46} min {:>10}  median {:>10}  p90 {:>10}  ({} samples{})",
        m.label,
        value(m.min, &m.unit),
        value(m.median, &m.unit),
        value(m.p90, &m.unit),
        m.samples.len(),
        if m.batch > 1 {
            format!(" of {} ops", m.batch)
        } else {
            String::new()
        }
    )
}

/// The report; `verbose` adds every measure of every probe.
pub fn text(r: &DoctorReport, style: Style, verbose: bool) -> String {
    let mut out = String::new();
    let m = &r.machine;
    let s = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    let _ = writeln!(
        out,
        "{}",
        style.bold(&format!(
            "Machine: {} ({} logical CPUs, {} cores), {} {}",
            s(&m.cpu_model),
            m.logical_cpus.map_or("?".into(), |n| n.to_string()),
            m.physical_cores.map_or("?".into(), |n| n.to_string()),
            s(&m.os),
            s(&m.kernel)
        ))
    );
    let _ = writeln!(
        out,
        "  clocksource {}, timer slack {}, jiffy {}, governor {}, turbo {}, {}virtual machine{}, cwd on {}",
        s(&m.clocksource),
        m.timer_slack_ns
            .map_or("?".into(), |n| units::time(n as f64 / 1e9)),
        m.clock_res_coarse_ns
            .map_or("?".into(), |n| units::time(n as f64 / 1e9)),
        s(&m.governor),
        m.turbo.map_or("?", |t| if t { "on" } else { "off" }),
        if m.hypervisor == Some(true) {
            ""
        } else {
            "not a "
        },
        m.dmi_system
            .as_ref()
            .map_or(String::new(), |d| format!(" ({d})")),
        s(&m.cwd_filesystem),
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{}",
        style.bold(&format!(
            "  {:<11} {:>12}  {:<6} {}",
            "probe", "value", "", "meaning (healthy range)"
        ))
    );
    for p in &r.probes {
        let Some(a) = &p.assessment else { continue };
        let v = p
            .measure(&a.headline)
            .map(|m| {
                let x = if m.unit == "cycles" { m.min } else { m.median };
                value(x, &m.unit)
            })
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "  {:<11} {:>12}  {:<6} {}{}",
            p.id,
            v,
            health(a.health, style),
            a.meaning,
            if a.healthy.is_empty() {
                String::new()
            } else {
                style.dim(&format!(" ({})", a.healthy))
            }
        );
        if verbose {
            for m in &p.measures {
                let _ = writeln!(out, "{}", style.dim(&measure_line(m)));
            }
        }
    }
    let _ = writeln!(
        out,
        "\n{}",
        style.dim(&format!(
            "{} probe{} in {:.1} s{}; the probes ran alone, one at a time.",
            r.probes.len(),
            if r.probes.len() == 1 { "" } else { "s" },
            r.elapsed_s,
            if r.quick { " (--quick)" } else { "" }
        ))
    );
    out
}

/// `--compare` as text.
/// B/A as the medians beside it show it; the test's own estimate (the
/// Hodges-Lehmann ratio over all pairs) beside it when the two disagree by
/// more than a quarter, so `26.71 ns -> 205.0 ns` never reads `1.09x`.
fn ratio_cell(a: f64, b: f64, hl: f64) -> String {
    if a <= 0.0 || !a.is_finite() || !b.is_finite() {
        return format!("{hl:.2}x");
    }
    let medians = b / a;
    if (medians / hl - 1.0).abs() > 0.25 {
        format!("{medians:.2}x (HL {hl:.2}x)")
    } else {
        format!("{medians:.2}x")
    }
}

pub fn compare_text(c: &MachineComparison, style: Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        style.bold(&format!("A: {}\nB: {}", c.a_source, c.b_source))
    );
    if c.settings.is_empty() {
        let _ = writeln!(
            out,
            "\nSettings: no difference in the settings that shape run times"
        );
    } else {
        let _ = writeln!(out, "\n{}", style.bold("Settings that differ"));
        for s in &c.settings {
            let _ = writeln!(out, "  {:<36} A {}  |  B {}", s.setting, s.a, s.b);
        }
    }
    let _ = writeln!(
        out,
        "\n{}",
        style.bold(&format!(
            "  {:<11} {:<46} {:>10} {:>10} {:>7}  {:<12} {}",
            "probe", "measure (median)", "A", "B", "B/A", "B is", "p"
        ))
    );
    for d in &c.probes {
        let verdict = match d.verdict.as_str() {
            "slower" => style.red("worse"),
            "faster" => style.green("better"),
            other => other.to_string(),
        };
        let _ = writeln!(
            out,
            "  {:<11} {:<46} {:>10} {:>10} {:>7}  {:<12} {}",
            d.probe,
            d.label,
            value(d.a_median, &d.unit),
            value(d.b_median, &d.unit),
            ratio_cell(d.a_median, d.b_median, d.ratio),
            verdict,
            d.p_value.map_or("-".into(), units::p_value)
        );
    }
    let _ = writeln!(
        out,
        "{}",
        style.dim("  B/A: the medians' ratio (HL: the Hodges-Lehmann ratio the test estimates, when far from it). p: Mann-Whitney U on the raw samples, Holm-adjusted. Samples of one run share its conditions: differences under 2x in spawn, file and wake-up probes can be run-to-run variation, and are not diagnosed.")
    );
    let _ = writeln!(out, "\n{}", style.bold("Diagnosis"));
    for (i, line) in c.diagnosis.iter().enumerate() {
        let _ = writeln!(out, "  {}. {line}", i + 1);
    }
    out
}

/// `--fail-on LEVEL`: the probes at or past it.
pub fn failing_line(failing: &[(&str, crate::probe::result::Health)], level: &str) -> String {
    let list: Vec<String> = failing
        .iter()
        .map(|(id, h)| {
            let word = if *h == crate::probe::result::Health::Bad {
                "bad"
            } else {
                "warn"
            };
            format!("{id} ({word})")
        })
        .collect();
    format!(
        "tardy: doctor: {} probe{} at or past --fail-on {level}: {}",
        failing.len(),
        if failing.len() == 1 { "" } else { "s" },
        list.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::ratio_cell;

    #[test]
    fn the_ratio_agrees_with_the_medians_beside_it() {
        // doctor --compare once printed 26.71 ns -> 205.0 ns as 1.09x.
        assert_eq!(ratio_cell(26.71, 205.0, 1.09), "7.68x (HL 1.09x)");
        assert_eq!(ratio_cell(100.0, 110.0, 1.09), "1.10x");
        assert_eq!(ratio_cell(0.0, 1.0, 1.5), "1.50x");
    }
}
