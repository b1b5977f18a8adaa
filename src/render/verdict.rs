//! One comparison in one sentence: the verdict, the size with its interval,
//! the test and its p-value, and for "no difference proven", what the data
//! could have detected and what it would take.

use super::style::Style;
use super::units::{p_value, percent};
use crate::stats::{Estimate, Verdict};

/// A relative change as "+4.10%" or, from 2x on, "2.82x".
fn change(ratio: f64) -> String {
    if ratio >= 2.0 || ratio <= 0.5 {
        format!("{ratio:.2}x")
    } else {
        let p = percent(ratio - 1.0);
        if ratio >= 1.0 { format!("+{p}") } else { p }
    }
}

/// The interval as "+2.9% .. +5.3%" (as factors, "0.75x .. 6.20x", when
/// either end is beyond a factor of 2), or "no interval".
pub fn interval(e: &Estimate) -> String {
    let conf = e.confidence * 100.0;
    match (e.ci_low, e.ci_high) {
        (Some(lo), Some(hi)) if lo <= 0.5 || hi >= 2.0 => {
            format!("{conf:.0}% CI {lo:.2}x .. {hi:.2}x")
        }
        (Some(lo), Some(hi)) => format!("{conf:.0}% CI {} .. {}", change(lo), change(hi)),
        _ => "too few values for an interval".to_string(),
    }
}

/// The size of the change in words: "4.10% slower", "2.82x slower", "9.1% faster".
pub fn size(e: &Estimate) -> String {
    if e.ratio >= 2.0 {
        format!("{:.2}x slower", e.ratio)
    } else if e.ratio <= 0.5 {
        format!("{:.2}x faster", 1.0 / e.ratio)
    } else if e.ratio >= 1.0 {
        format!("{} slower", percent(e.ratio - 1.0))
    } else {
        format!("{} faster", percent(1.0 - e.ratio))
    }
}

/// The test and its p-value: "mann-whitney-u (exact) p=0.0004, n=30+30".
pub fn evidence(e: &Estimate) -> String {
    if e.p_value.is_nan() {
        // Not tested (an exact unit): no p-value to show.
        return format!("{}, n={}+{}", e.test, e.n_baseline, e.n_candidate);
    }
    let adjusted = if (e.p_adjusted - e.p_value).abs() > 1e-15 {
        format!(
            " ({} adjusted)",
            p_value(e.p_adjusted).trim_start_matches("p")
        )
    } else {
        String::new()
    };
    format!(
        "{} {}{adjusted}, n={}+{}",
        e.test,
        p_value(e.p_value),
        e.n_baseline,
        e.n_candidate
    )
}

/// The full sentence for a terminal.
pub fn sentence(e: &Estimate, style: Style) -> String {
    let detail = format!("({}, {})", interval(e), evidence(e));
    match e.verdict {
        Verdict::Slower => format!("{}  {detail}", style.red(&size(e))),
        Verdict::Faster => format!("{}  {detail}", style.green(&size(e))),
        Verdict::Same => format!(
            "{}  {detail}",
            style.green(&format!("same within ±{}", percent(e.target_effect)))
        ),
        Verdict::Inconclusive if e.n_baseline.min(e.n_candidate) < 2 => format!(
            "measured {} (n={}+{}), but with one run on a side no test is possible",
            change(e.ratio),
            e.n_baseline,
            e.n_candidate
        ),
        Verdict::Inconclusive => {
            let conf = format!("{:.0}%", e.confidence * 100.0);
            let mut s = format!(
                "no difference proven at {conf} (measured {}, {})",
                change(e.ratio),
                detail.trim_start_matches('(').trim_end_matches(')')
            );
            if let Some(k) = e.runs_for_any_verdict {
                s.push_str(&format!(
                    "; with {}+{} runs the rank test can never reach {conf}, whatever the difference: take at least {k} runs per side",
                    e.n_baseline, e.n_candidate
                ));
            }
            if let Some(mde) = e.min_detectable_effect {
                s.push_str(&format!(
                    "; these runs detect only changes over {}",
                    percent(mde)
                ));
            }
            if let Some(n) = e.runs_needed {
                s.push_str(&format!(
                    "; ~{n} runs per side would detect {}",
                    percent(e.target_effect)
                ));
            }
            s
        }
    }
}

/// A percentage fine enough for counts, which move by thousandths of one.
fn fine_percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p.abs() >= 0.1 {
        percent(fraction)
    } else {
        format!("{p:.4}%")
    }
}

/// A count's change in words: "0.50% more instructions", "2.10x fewer cycles".
pub fn count_size(ratio: f64, metric: &str) -> String {
    if ratio == 1.0 {
        format!("the same {metric}")
    } else if ratio >= 2.0 {
        format!("{ratio:.2}x more {metric}")
    } else if ratio <= 0.5 {
        format!("{:.2}x fewer {metric}", 1.0 / ratio)
    } else if ratio > 1.0 {
        format!("{} more {metric}", fine_percent(ratio - 1.0))
    } else {
        format!("{} fewer {metric}", fine_percent(1.0 - ratio))
    }
}

/// One comparison of counts: exact when every run agreed ("0.50% more
/// instructions, every run identical"), else the usual verdict in counts' words.
pub fn count_sentence(e: &Estimate, metric: &str, exact: bool, style: Style) -> String {
    let words = count_size(e.ratio, metric);
    let colour = |s: &str| match e.verdict {
        Verdict::Slower => style.red(s),
        Verdict::Faster => style.green(s),
        _ => s.to_string(),
    };
    if exact {
        return format!(
            "{}, every run identical (n={}+{})",
            colour(&words),
            e.n_baseline,
            e.n_candidate
        );
    }
    let detail = format!("({}, {})", interval(e), evidence(e));
    match e.verdict {
        Verdict::Slower | Verdict::Faster => format!("{}  {detail}", colour(&words)),
        Verdict::Same => format!(
            "{}  {detail}",
            style.green(&format!(
                "same {metric} within ±{}",
                percent(e.target_effect)
            ))
        ),
        Verdict::Inconclusive => format!(
            "no difference in {metric} proven at {:.0}% (measured {}, {})",
            e.confidence * 100.0,
            change(e.ratio),
            detail.trim_start_matches('(').trim_end_matches(')')
        ),
    }
}
