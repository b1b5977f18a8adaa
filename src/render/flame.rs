//! A flame graph as a self-contained SVG: one box per function on a path of
//! calls, as wide as B's time there, callers below their callees. With A
//! beside it, the colour says how that box changed: red grew, blue shrank,
//! the deeper the more (a differential flame graph); alone, warm shades.

use crate::diagnose::explain::functions::FlameNode;
use crate::fmt::dur;

use super::svg::esc;

const ROW: f64 = 17.0;
/// Boxes narrower than this are not drawn (their time stays in the caller's width).
const MIN_WIDTH: f64 = 0.3;

fn depth(n: &FlameNode) -> usize {
    1 + n.children.iter().map(depth).max().unwrap_or(0)
}

/// The fill of a box: change relative to the larger side, red for growth.
fn color(n: &FlameNode, differential: bool) -> String {
    if !differential {
        // A stable warm shade per name, as flame graphs draw.
        let h = n
            .name
            .bytes()
            .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
        return format!("rgb(230,{},{})", 100 + h % 110, 40 + (h / 7) % 50);
    }
    let m = n.a_s.max(n.b_s);
    let r = if m > 0.0 { (n.b_s - n.a_s) / m } else { 0.0 };
    let k = (255.0 * (1.0 - r.abs().min(1.0))) as u8;
    if r >= 0.0 {
        format!("rgb(255,{k},{k})")
    } else {
        format!("rgb({k},{k},255)")
    }
}

fn boxes(
    out: &mut String,
    n: &FlameNode,
    x: f64,
    y: f64,
    scale: f64,
    differential: bool,
    count: &mut usize,
) {
    let w = n.b_s * scale;
    if w < MIN_WIDTH || *count > 20_000 {
        return;
    }
    *count += 1;
    let tip = if differential {
        format!(
            "{}: A {}, B {} ({}{})",
            n.name,
            dur(n.a_s),
            dur(n.b_s),
            if n.b_s >= n.a_s { "+" } else { "-" },
            dur((n.b_s - n.a_s).abs())
        )
    } else {
        format!("{}: {}", n.name, dur(n.b_s))
    };
    out.push_str(&format!(
        "<g><title>{}</title><rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{:.1}\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"0.3\"/>",
        esc(&tip),
        ROW - 1.0,
        color(n, differential)
    ));
    // A label where it fits (about 7 px a character).
    let fits = ((w - 6.0) / 7.0).floor().max(0.0) as usize;
    if fits >= 3 {
        let mut label: String = n.name.chars().take(fits).collect();
        if label.chars().count() < n.name.chars().count() && fits > 2 {
            label = label.chars().take(fits - 2).collect::<String>() + "..";
        }
        out.push_str(&format!(
            "<text x=\"{:.2}\" y=\"{:.1}\" font-size=\"11\" fill=\"#000000\">{}</text>",
            x + 3.0,
            y + ROW - 5.0,
            esc(&label)
        ));
    }
    out.push_str("</g>\n");
    let mut cx = x;
    for c in &n.children {
        boxes(out, c, cx, y - ROW, scale, differential, count);
        cx += c.b_s * scale;
    }
}

/// The SVG of `root`, `width` pixels wide; `differential`: coloured by the
/// change from A.
pub fn svg(root: &FlameNode, width: f64, differential: bool) -> String {
    let d = depth(root).min(66);
    let h = d as f64 * ROW + 30.0;
    let scale = if root.b_s > 0.0 {
        width / root.b_s
    } else {
        0.0
    };
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flame\" viewBox=\"0 0 {width} {h}\" width=\"{width}\" height=\"{h}\" role=\"img\" aria-label=\"{}\" font-family=\"monospace\">\n",
        if differential {
            "differential flame graph: width is B's CPU time, red grew and blue shrank against A"
        } else {
            "flame graph of the sampled CPU time"
        }
    );
    let mut count = 0;
    boxes(
        &mut out,
        root,
        0.0,
        h - ROW - 4.0,
        scale,
        differential,
        &mut count,
    );
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, a: f64, b: f64, children: Vec<FlameNode>) -> FlameNode {
        FlameNode {
            name: name.into(),
            a_s: a,
            b_s: b,
            children,
        }
    }

    #[test]
    fn widths_follow_b_and_colours_the_change() {
        let t = node(
            "all",
            0.3,
            1.2,
            vec![node(
                "main",
                0.3,
                1.2,
                vec![
                    node("parse", 0.2, 0.2, vec![]),
                    node("sum<T>", 0.1, 1.0, vec![]),
                ],
            )],
        );
        let s = svg(&t, 1200.0, true);
        assert!(s.starts_with("<svg xmlns"));
        assert!(s.contains("width=\"1000.00\""), "{s}");
        // Grown: red; unchanged: white; names escaped.
        assert!(s.contains("sum&lt;T&gt;: A 100 ms, B 1.00 s"), "{s}");
        assert!(s.contains("fill=\"rgb(255,25,25)\""), "{s}");
        assert!(s.contains("fill=\"rgb(255,255,255)\""), "{s}");
        assert_eq!(depth(&t), 3);
    }
}
