//! A profile as collapsed stacks ("folded"): one line per stack, its frames
//! outermost first joined by `;`, a space and a count. The input of
//! flamegraph.pl, inferno-flamegraph, speedscope and difffolded.pl. The
//! count is microseconds of CPU summed over the runs (a flame graph draws
//! proportions, so time serves as well as samples).

use crate::profile::Profile;

/// The folded lines of `p`, heaviest stack first.
pub fn folded(p: &Profile) -> String {
    let name = |i: u32| -> String {
        p.functions
            .get(i as usize)
            .map(|f| f.function.replace(';', ":").replace('\n', " "))
            .unwrap_or_else(|| "?".into())
    };
    let mut lines: Vec<(u64, String)> = p
        .stacks
        .iter()
        .filter_map(|st| {
            let us = (st.s.iter().sum::<f64>() * 1e6).round() as u64;
            (us > 0 && !st.frames.is_empty()).then(|| {
                let frames: Vec<String> = st.frames.iter().map(|&f| name(f)).collect();
                (us, frames.join(";"))
            })
        })
        .collect();
    lines.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut out = String::new();
    for (us, stack) in lines {
        out.push_str(&stack);
        out.push(' ');
        out.push_str(&us.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{FunctionInfo, StackRow};

    #[test]
    fn stacks_become_lines_with_microseconds() {
        let f = |n: &str| FunctionInfo {
            function: n.into(),
            module: "m".into(),
            ..FunctionInfo::default()
        };
        let p = Profile {
            rate_hz: 999,
            runs: 2,
            samples: 3,
            functions: vec![f("main"), f("a;b"), f("operator<(int, int)")],
            stacks: vec![
                StackRow {
                    frames: vec![0, 1],
                    s: vec![0.001, 0.002],
                },
                StackRow {
                    frames: vec![0, 2],
                    s: vec![0.010, 0.0],
                },
                StackRow {
                    frames: vec![0],
                    s: vec![0.0, 0.0],
                },
            ],
            waits: vec![],
            wakes: vec![],
            notes: vec![],
            spin_s: vec![],
        };
        assert_eq!(
            folded(&p),
            "main;operator<(int, int) 10000\nmain;a:b 3000\n"
        );
    }
}
