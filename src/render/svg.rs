//! Hand-written SVG charts: no scripts, no fonts to fetch, colours from CSS
//! variables so one chart reads in light and dark mode and in print.

use std::fmt::Write;

/// One set of a results file as drawn: its name, how many values it holds, their
/// median, and the values drawn as dots (all of them, or at most [`STRIP_DOTS`]
/// evenly spaced order statistics of a large set).
pub struct ResultSet {
    pub name: String,
    pub n: usize,
    pub median: f64,
    pub dots: Vec<f64>,
    /// The set's quartiles (computed by the caller): the axis reaches 3
    /// interquartile ranges beyond them, and values past that are drawn
    /// at its edge, marked, so a few outliers do not crush the rest.
    pub quartiles: Option<(f64, f64)>,
}

/// The most dots drawn for one set: a strip of 20 million dots would make a
/// report of gigabytes that no browser opens.
pub const STRIP_DOTS: usize = 400;

/// Escape text for XML content and attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// One point of a time chart.
pub struct ChartPoint {
    pub value: f64,
    /// Its place on the x axis in words (short commit and date).
    pub tick: String,
    /// Tooltip text (commit, date, value).
    pub label: String,
    /// A whisker from low to high (the samples' interquartile range).
    pub spread: Option<(f64, f64)>,
}

/// A horizontal segment mean from point `start` to `end` (exclusive).
pub struct ChartSegment {
    pub start: usize,
    pub end: usize,
    pub mean: f64,
    pub label: String,
}

/// A vertical marker before point `index`.
pub struct ChartMark {
    pub index: usize,
    pub label: String,
    /// "change" (a change point), "env" (the machine changed) or "alert".
    pub kind: &'static str,
}

/// A time chart: points in order, segment means, change points and
/// environment boundaries; `fmt` labels the y axis.
pub fn time_chart(
    points: &[ChartPoint],
    segments: &[ChartSegment],
    marks: &[ChartMark],
    fmt: &dyn Fn(f64) -> String,
) -> String {
    let (w, h) = (880.0, 240.0);
    let (left, right, top, bottom) = (70.0, 10.0, 10.0, 24.0);
    let mut out = format!(
        "<svg class=\"chart\" viewBox=\"0 0 {w} {h}\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    let finite: Vec<f64> = points
        .iter()
        .flat_map(|p| {
            let (a, b) = p.spread.unwrap_or((p.value, p.value));
            [p.value, a, b]
        })
        .filter(|v| v.is_finite())
        .collect();
    if finite.is_empty() {
        out.push_str("<text x=\"10\" y=\"20\" class=\"axis\">no points</text></svg>");
        return out;
    }
    let (mut lo, mut hi) = finite
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    if hi <= lo {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.05 };
        lo -= pad;
        hi += pad;
    }
    let pad = (hi - lo) * 0.08;
    lo = (lo - pad).max(if lo >= 0.0 { 0.0 } else { f64::NEG_INFINITY });
    hi += pad;
    let n = points.len();
    let x = |i: f64| left + (w - left - right) * if n > 1 { i / (n - 1) as f64 } else { 0.5 };
    let y = |v: f64| top + (h - top - bottom) * (1.0 - (v - lo) / (hi - lo));
    // Axes and three gridlines.
    for k in 0..=2 {
        let v = lo + (hi - lo) * k as f64 / 2.0;
        let yy = y(v);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{left}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\"/><text class=\"axis\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            w - right,
            left - 6.0,
            yy + 4.0,
            esc(&fmt(v))
        );
    }
    // The x axis: the first, middle and last point by commit and date (their
    // number when they have none).
    let tick = |i: usize| {
        let t = &points[i].tick;
        if t.is_empty() {
            (i + 1).to_string()
        } else {
            t.clone()
        }
    };
    let mut ticks = vec![(0, "start")];
    if n > 2 {
        ticks.push((n / 2, "middle"));
    }
    if n > 1 {
        ticks.push((n - 1, "end"));
    }
    for (i, anchor) in ticks {
        let _ = write!(
            out,
            "<text class=\"axis\" x=\"{:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
            x(i as f64),
            h - 6.0,
            esc(&tick(i))
        );
    }
    for m in marks {
        let xx = x(m.index as f64 - 0.5);
        let _ = write!(
            out,
            "<line class=\"mark {}\" x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{top}\" y2=\"{}\"><title>{}</title></line>",
            m.kind,
            h - bottom,
            esc(&m.label)
        );
    }
    // Points as a polyline plus dots with tooltips.
    let mut line = String::new();
    for (i, p) in points.iter().enumerate() {
        if p.value.is_finite() {
            let _ = write!(line, "{:.1},{:.1} ", x(i as f64), y(p.value));
        }
    }
    let _ = write!(
        out,
        "<polyline class=\"series\" points=\"{}\"/>",
        line.trim_end()
    );
    let r = if n > 400 { 1.2 } else { 2.2 };
    for (i, p) in points.iter().enumerate() {
        if let Some((a, b)) = p
            .spread
            .filter(|(a, b)| a.is_finite() && b.is_finite() && b > a)
        {
            let xx = x(i as f64);
            let _ = write!(
                out,
                "<line class=\"spread\" x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"><title>{} .. {}</title></line>",
                y(a),
                y(b),
                esc(&fmt(a)),
                esc(&fmt(b))
            );
        }
    }
    for (i, p) in points.iter().enumerate() {
        if p.value.is_finite() {
            let _ = write!(
                out,
                "<circle class=\"dot\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"{r}\"><title>{}</title></circle>",
                x(i as f64),
                y(p.value),
                esc(&p.label)
            );
        }
    }
    for s in segments {
        if s.end <= s.start || !s.mean.is_finite() {
            continue;
        }
        let yy = y(s.mean);
        let _ = write!(
            out,
            "<line class=\"segment\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\"><title>{}</title></line>",
            // Within the points it spans, never past the first or the last.
            x((s.start as f64 - 0.3).max(0.0)),
            x((s.end as f64 - 0.7).min(n.saturating_sub(1) as f64)),
            esc(&s.label)
        );
    }
    out.push_str("</svg>");
    out
}

/// Strip charts of several sets on one scale: each value a dot, the median a bar.
pub fn strips(sets: &[ResultSet], fmt: &dyn Fn(f64) -> String) -> String {
    let row = 34.0;
    let (w, left, right) = (880.0, 220.0, 20.0);
    let h = row * sets.len() as f64 + 26.0;
    let mut out = format!(
        "<svg class=\"chart\" viewBox=\"0 0 {w} {h}\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    let all: Vec<f64> = sets
        .iter()
        .flat_map(|s| s.dots.iter().copied())
        .filter(|v| v.is_finite())
        .collect();
    if all.is_empty() {
        out.push_str("</svg>");
        return out;
    }
    let (mut lo, mut hi) = all
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    // The axis: every value, unless outliers lie beyond 3 interquartile
    // ranges of the sets' quartiles (then they sit at the edge, marked).
    let fences = sets
        .iter()
        .filter_map(|s| s.quartiles)
        .map(|(q1, q3)| (q1 - 3.0 * (q3 - q1), q3 + 3.0 * (q3 - q1)))
        .fold(None, |acc: Option<(f64, f64)>, (a, b)| match acc {
            None => Some((a, b)),
            Some((l, h)) => Some((l.min(a), h.max(b))),
        });
    if let Some((flo, fhi)) = fences
        && fhi > flo
    {
        lo = lo.max(flo);
        hi = hi.min(fhi);
    }
    if hi <= lo {
        lo -= lo.abs() * 0.05 + 1e-12;
        hi += hi.abs() * 0.05 + 1e-12;
    }
    let clipped = |v: f64| v < lo || v > hi;
    let x = |v: f64| left + (w - left - right) * (v.clamp(lo, hi) - lo) / (hi - lo);
    for (k, set) in sets.iter().enumerate() {
        let (name, values, median) = (&set.name, &set.dots, &set.median);
        let cy = 16.0 + row * k as f64;
        let _ = write!(
            out,
            "<text class=\"label\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 8.0,
            cy + 4.0,
            esc(name)
        );
        for (i, &v) in values.iter().enumerate() {
            if v.is_finite() {
                // A small deterministic jitter keeps equal values visible.
                let jy = ((i * 7919) % 17) as f64 - 8.0;
                // Off the axis: a ring at its edge, the value in its title.
                let (look, note) = if clipped(v) {
                    (
                        "class=\"dot clipped\" r=\"3\" fill=\"none\" stroke=\"currentColor\"",
                        " (off the axis)",
                    )
                } else {
                    ("class=\"dot\" r=\"2\"", "")
                };
                let _ = write!(
                    out,
                    "<circle {look} cx=\"{:.1}\" cy=\"{:.1}\"><title>{}{note}</title></circle>",
                    x(v),
                    cy + jy * 0.8,
                    esc(&fmt(v))
                );
            }
        }
        if median.is_finite() {
            let mx = x(*median);
            let _ = write!(
                out,
                "<line class=\"segment\" x1=\"{mx:.1}\" x2=\"{mx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"><title>median {}</title></line>",
                cy - 12.0,
                cy + 12.0,
                esc(&fmt(*median))
            );
        }
    }
    let _ = write!(
        out,
        "<text class=\"axis\" x=\"{left}\" y=\"{}\">{}</text><text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text></svg>",
        h - 4.0,
        esc(&fmt(lo)),
        w - right,
        h - 4.0,
        esc(&fmt(hi))
    );
    out
}

/// A small line of the values, for tables (no axes; the last point dotted).
pub fn sparkline(values: &[f64]) -> String {
    let (w, h) = (120.0, 24.0);
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.len() < 2 {
        return String::new();
    }
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let x = |i: usize| 2.0 + (w - 4.0) * i as f64 / (finite.len() - 1) as f64;
    let y = |v: f64| h - 3.0 - (h - 6.0) * (v - lo) / span;
    let path: Vec<String> = finite
        .iter()
        .enumerate()
        .map(|(i, &v)| format!("{:.1},{:.1}", x(i), y(v)))
        .collect();
    let last = finite.len() - 1;
    format!(
        "<svg class=\"spark\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" xmlns=\"http://www.w3.org/2000/svg\" aria-hidden=\"true\">\
<polyline class=\"series\" points=\"{}\"/><circle class=\"dot\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"2\"/></svg>",
        path.join(" "),
        x(last),
        y(finite[last])
    )
}

/// Horizontal bars from a zero line, one row each (a waterfall of changes
/// when values are signed): `rows` are (label, value, tooltip).
pub fn bars(rows: &[(String, f64, String)], fmt: &dyn Fn(f64) -> String) -> String {
    let row = 22.0;
    let (w, left, right) = (880.0, 300.0, 90.0);
    let h = row * rows.len() as f64 + 8.0;
    let mut out = format!(
        "<svg class=\"chart\" viewBox=\"0 0 {w} {h}\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    let finite = rows.iter().map(|r| r.1).filter(|v| v.is_finite());
    let lo = finite.clone().fold(0.0f64, f64::min);
    let hi = finite.fold(0.0f64, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let x = |v: f64| left + (w - left - right) * (v - lo) / span;
    let zero = x(0.0);
    let _ = write!(
        out,
        "<line class=\"grid\" x1=\"{zero:.1}\" x2=\"{zero:.1}\" y1=\"0\" y2=\"{h}\"/>"
    );
    for (i, (label, v, tip)) in rows.iter().enumerate() {
        if !v.is_finite() {
            continue;
        }
        let y = 4.0 + row * i as f64;
        let (x0, x1) = if *v >= 0.0 {
            (zero, x(*v))
        } else {
            (x(*v), zero)
        };
        let class = if *v > 0.0 { "bar up" } else { "bar down" };
        // A long name keeps both ends (suite and test), cut in the middle; the whole
        // name is the tooltip.
        let chars: Vec<char> = label.chars().collect();
        let shown: String = if chars.len() > 44 {
            let head: String = chars[..14].iter().collect();
            let tail: String = chars[chars.len() - 29..].iter().collect();
            format!("{head}…{tail}")
        } else {
            label.clone()
        };
        let _ = write!(
            out,
            "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}<title>{}</title></text>\
<rect class=\"{class}\" x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>{}</title></rect>\
<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            left - 8.0,
            y + 14.0,
            esc(&shown),
            esc(label),
            (x1 - x0).max(1.0),
            row - 6.0,
            esc(tip),
            x1.max(x0) + 4.0,
            y + 14.0,
            esc(&fmt(*v))
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_bar_labels_keep_both_ends() {
        let name = "pytest :: suite.test_work_with_a_long_module :: test_work[2400_1]".to_string();
        let svg = bars(&[(name.clone(), 0.017, "t".into())], &|v| v.to_string());
        assert!(svg.contains(">pytest :: suit…"), "{svg}");
        assert!(svg.contains("test_work[2400_1]<title>"), "{svg}");
        assert!(svg.contains(&format!("<title>{name}</title>")), "{svg}");
    }

    #[test]
    fn escapes_and_draws_every_part() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        let pts: Vec<ChartPoint> = (0..10)
            .map(|i| ChartPoint {
                value: if i < 5 { 1.0 } else { 2.0 },
                tick: format!("c{i}"),
                label: format!("p{i} <x>"),
                spread: (i == 2).then_some((0.9, 1.2)),
            })
            .collect();
        let svg = time_chart(
            &pts,
            &[ChartSegment {
                start: 0,
                end: 5,
                mean: 1.0,
                label: "seg".into(),
            }],
            &[ChartMark {
                index: 5,
                label: "change".into(),
                kind: "change",
            }],
            &|v| format!("{v:.1}"),
        );
        assert_eq!(svg.matches("<circle").count(), 10);
        assert!(svg.contains("class=\"mark change\"") && svg.contains("p3 &lt;x&gt;"));
        assert!(time_chart(&[], &[], &[], &|v| v.to_string()).contains("no points"));
        let s = strips(
            &[ResultSet {
                name: "a".into(),
                n: 2,
                median: 1.5,
                dots: vec![1.0, 2.0],
                quartiles: None,
            }],
            &|v| v.to_string(),
        );
        assert_eq!(s.matches("<circle").count(), 2);
        // One outlier 1,000 times the rest: at the edge, marked; the axis
        // ends near the rest.
        let mut dots: Vec<f64> = (0..20).map(|i| 10.0 + i as f64 * 0.1).collect();
        dots.push(10_000.0);
        let s = strips(
            &[ResultSet {
                name: "a".into(),
                n: 21,
                median: 11.0,
                dots,
                quartiles: Some((10.5, 11.5)),
            }],
            &|v| v.to_string(),
        );
        assert_eq!(s.matches("dot clipped").count(), 1);
        assert!(s.contains(">14.5</text>"), "{s}");
    }
}
