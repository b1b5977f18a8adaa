//! A distribution plot in ministat's spirit, but readable: each set on its
//! own two rows (a histogram of its values, then min, quartile box, median
//! `M` and mean `A`), on one shared scale, with the scale's ends below.
//! Unicode block characters when the terminal can show them, ASCII otherwise.

/// One set to draw: its label (including its marker) and values.
pub struct PlotSet<'a> {
    pub label: String,
    pub values: &'a [f64],
}

/// Draw the sets `width` columns wide (plot area, labels excluded).
/// `format` renders an axis value.
pub fn distributions(
    sets: &[PlotSet],
    width: usize,
    unicode: bool,
    format: &dyn Fn(f64) -> String,
) -> String {
    let width = width.max(10);
    let (lo, hi) = sets
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        });
    if !lo.is_finite() || !hi.is_finite() {
        return String::new();
    }
    let label_w = sets
        .iter()
        .map(|s| super::units::display_width(&s.label))
        .max()
        .unwrap_or(0);
    let span = hi - lo;
    let col = |v: f64| -> usize {
        if span == 0.0 {
            width / 2
        } else {
            (((v - lo) / span) * (width - 1) as f64).round() as usize
        }
    };
    let levels: Vec<char> = if unicode {
        " ▁▂▃▄▅▆▇█".chars().collect()
    } else {
        " .:-=+*#%@".chars().collect()
    };
    let (whisker, boxc, edge_l, edge_r, end) = if unicode {
        ('─', '═', '[', ']', '│')
    } else {
        ('-', '=', '[', ']', '|')
    };
    let mut out = String::new();
    for s in sets {
        let mut counts = vec![0usize; width];
        for &v in s.values {
            counts[col(v).min(width - 1)] += 1;
        }
        let max = counts.iter().copied().max().unwrap_or(1).max(1);
        let hist: String = counts
            .iter()
            .map(|&c| {
                if c == 0 {
                    ' '
                } else {
                    levels[((c * (levels.len() - 1)).div_ceil(max)).clamp(1, levels.len() - 1)]
                }
            })
            .collect();
        let mut sorted = s.values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let q = |p: f64| crate::stats::summary::quantile_sorted(&sorted, p);
        let mean = sorted.iter().sum::<f64>() / sorted.len().max(1) as f64;
        let mut bar = vec![' '; width];
        let (c_min, c_max) = (col(q(0.0)), col(q(1.0)));
        let (c_q1, c_q3) = (col(q(0.25)), col(q(0.75)));
        for c in bar.iter_mut().take(c_max + 1).skip(c_min) {
            *c = whisker;
        }
        for c in bar.iter_mut().take(c_q3 + 1).skip(c_q1) {
            *c = boxc;
        }
        bar[c_min] = end;
        bar[c_max] = end;
        bar[c_q1] = edge_l;
        bar[c_q3] = edge_r;
        bar[col(mean).min(width - 1)] = 'A';
        bar[col(q(0.5)).min(width - 1)] = 'M';
        let bar: String = bar.into_iter().collect();
        out.push_str(&format!(
            "{} {}\n",
            super::units::pad_to(&s.label, label_w),
            hist.trim_end()
        ));
        out.push_str(&format!("{:<label_w$} {}\n", "", bar.trim_end()));
    }
    let (left, right) = (format(lo), format(hi));
    let gap = width
        .saturating_sub(left.chars().count() + right.chars().count())
        .max(1);
    out.push_str(&format!(
        "{:<label_w$} {left}{}{right}\n",
        "",
        " ".repeat(gap)
    ));
    out
}

/// Whether the terminal is likely to show Unicode block characters.
pub fn unicode_supported() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| {
            v.to_ascii_uppercase().contains("UTF-8") || v.to_ascii_uppercase().contains("UTF8")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_median_and_mean_on_one_scale() {
        let a = [1.0, 2.0, 2.0, 3.0, 10.0];
        let b = [5.0, 6.0, 6.0, 7.0];
        let sets = [
            PlotSet {
                label: "x a".into(),
                values: &a,
            },
            PlotSet {
                label: "+ b".into(),
                values: &b,
            },
        ];
        let text = distributions(&sets, 40, false, &|v| format!("{v}"));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(lines[1].contains('M') && lines[1].contains('A'));
        assert!(lines[4].trim_start().starts_with('1') && lines[4].ends_with("10"));
        // b's box starts right of a's median.
        let m_a = lines[1].find('M').unwrap();
        let box_b = lines[3].find('[').unwrap();
        assert!(box_b > m_a);
    }
}
