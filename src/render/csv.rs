//! CSV: one row per command (hyperfine's columns first, then tardy's), in
//! seconds, and one column per parameter.

use crate::model::Results;

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v}"))
}

/// Summary rows of every benchmark.
pub fn summary(r: &Results) -> String {
    let params: Vec<String> = {
        let mut p: Vec<String> = r
            .benchmarks
            .iter()
            .flat_map(|b| b.parameters.keys().cloned())
            .collect();
        p.sort();
        p.dedup();
        p
    };
    let mut out = String::from(
        "command,mean,stddev,median,user,system,min,max,name,runs,median_ci_low,median_ci_high,max_rss_kib,ratio,ratio_ci_low,ratio_ci_high,verdict",
    );
    for p in &params {
        out.push_str(&format!(",parameter_{}", field(p)));
    }
    out.push('\n');
    for (i, b) in r.benchmarks.iter().enumerate() {
        let s = b.summary.as_ref();
        let res = b.resources.as_ref();
        let cmp = r
            .comparisons
            .iter()
            .find(|c| c.candidate == i)
            .and_then(|c| c.estimate.as_ref());
        let cells = [
            field(&b.command),
            num(s.map(|s| s.mean)),
            num(s.map(|s| s.stddev)),
            num(s.map(|s| s.median)),
            num(res.map(|r| r.user_mean_s)),
            num(res.map(|r| r.sys_mean_s)),
            num(s.map(|s| s.min)),
            num(s.map(|s| s.max)),
            field(&b.name),
            s.map_or("0".into(), |s| s.n.to_string()),
            num(s.and_then(|s| s.median_ci).map(|c| c[0])),
            num(s.and_then(|s| s.median_ci).map(|c| c[1])),
            res.map_or(String::new(), |r| r.max_rss_median_kib.to_string()),
            if i == 0 {
                "1".into()
            } else {
                num(cmp.map(|c| c.ratio))
            },
            num(cmp.and_then(|c| c.ci_low)),
            num(cmp.and_then(|c| c.ci_high)),
            if i == 0 {
                "reference".into()
            } else {
                cmp.map_or(String::new(), |c| format!("{:?}", c.verdict).to_lowercase())
            },
        ];
        out.push_str(&cells.join(","));
        for p in &params {
            out.push(',');
            out.push_str(&field(b.parameters.get(p).map_or("", String::as_str)));
        }
        out.push('\n');
    }
    out
}
