//! CSV: one row per command (hyperfine's columns first, then tardy's), in
//! seconds, and one column per parameter.

use crate::model::Results;

/// CSV text built row by row with the csv crate (quoting as RFC 4180 asks: commas,
/// quotes and line breaks inside a field), for every CSV tardy writes.
pub struct Table {
    w: csv::Writer<Vec<u8>>,
}

impl Table {
    pub fn new<S: AsRef<str>>(header: &[S]) -> Table {
        let mut t = Table {
            w: csv::WriterBuilder::new()
                .flexible(true)
                .from_writer(Vec::new()),
        };
        t.row(header.iter().map(|h| h.as_ref()));
        t
    }

    pub fn row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) {
        // Into memory, with rows of any length allowed: nothing can fail.
        let _ = self
            .w
            .write_record(cells.into_iter().map(|c| c.as_ref().as_bytes().to_vec()));
    }

    pub fn finish(self) -> String {
        match self.w.into_inner() {
            Ok(bytes) => String::from_utf8(bytes).unwrap_or_default(),
            Err(_) => String::new(),
        }
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
    let mut header: Vec<String> = "command,mean,stddev,median,user,system,min,max,name,runs,median_ci_low,median_ci_high,max_rss_kib,ratio,ratio_ci_low,ratio_ci_high,verdict"
        .split(',')
        .map(String::from)
        .collect();
    header.extend(params.iter().map(|p| format!("parameter_{p}")));
    let mut out = Table::new(&header);
    for (i, b) in r.benchmarks.iter().enumerate() {
        let s = b.summary.as_ref();
        let res = b.resources.as_ref();
        let cmp = r
            .comparisons
            .iter()
            .find(|c| c.candidate == i)
            .and_then(|c| c.estimate.as_ref());
        let mut cells = vec![
            b.command.clone(),
            num(s.map(|s| s.mean)),
            num(s.map(|s| s.stddev)),
            num(s.map(|s| s.median)),
            num(res.map(|r| r.user_mean_s)),
            num(res.map(|r| r.sys_mean_s)),
            num(s.map(|s| s.min)),
            num(s.map(|s| s.max)),
            b.name.clone(),
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
        cells.extend(
            params
                .iter()
                .map(|p| b.parameters.get(p).cloned().unwrap_or_default()),
        );
        out.row(cells);
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_as_rfc_4180_asks() {
        let mut t = Table::new(&["a", "b"]);
        t.row(["x, y", "say \"hi\"\nthere"]);
        t.row(["plain", ""]);
        assert_eq!(
            t.finish(),
            "a,b\n\"x, y\",\"say \"\"hi\"\"\nthere\"\nplain,\n"
        );
    }
}
