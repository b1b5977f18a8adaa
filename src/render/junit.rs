//! A read report as JUnit XML: what `tardy push` sends for a folder of
//! results (an Allure results folder, a directory of reports), one body the
//! server reads like any JUnit file. Each status maps to the element the
//! JUnit readers know: `<failure/>`, `<error/>`, `<skipped/>`, and a flaky
//! test as a pass with Surefire's `<flakyFailure/>` (which marks reruns).

use std::collections::BTreeMap;

use quick_xml::escape::escape;

use crate::ingest::reports::{Report, Status};

pub fn write(report: &Report) -> String {
    let mut suites: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, c) in report.cases.iter().enumerate() {
        suites.entry(&c.id.suite).or_default().push(i);
    }
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"{}\">\n",
        report.cases.len()
    );
    for (suite, cases) in suites {
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\">\n",
            escape(suite),
            cases.len()
        ));
        for i in cases {
            let c = &report.cases[i];
            let time = c
                .duration_s
                .map_or(String::new(), |d| format!(" time=\"{d}\""));
            let child = match c.status {
                Status::Passed => "",
                Status::Flaky => "<flakyFailure/>",
                Status::Failed => "<failure/>",
                Status::Errored | Status::Aborted => "<error/>",
                Status::Skipped => "<skipped/>",
            };
            out.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"{}\"{time}>{child}</testcase>\n",
                escape(&*c.id.class),
                escape(c.id.name.as_str()),
            ));
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::reports::read_run_bytes;

    #[test]
    fn statuses_names_and_times_read_back() {
        let x = "<testsuites><testsuite name=\"s &amp; t\">\
            <testcase classname=\"C\" name=\"a&lt;b\" time=\"0.5\"/>\
            <testcase classname=\"C\" name=\"f\" time=\"0.1\"><failure/></testcase>\
            <testcase classname=\"C\" name=\"e\"><error/></testcase>\
            <testcase classname=\"C\" name=\"s\"><skipped/></testcase>\
            <testcase classname=\"C\" name=\"k\" time=\"0.2\"><flakyFailure/></testcase>\
            </testsuite></testsuites>";
        let a = read_run_bytes(x.as_bytes(), "a").unwrap();
        let b = read_run_bytes(write(&a).as_bytes(), "b").unwrap();
        let view = |r: &Report| -> Vec<(String, String, Status, Option<f64>)> {
            r.cases
                .iter()
                .map(|c| {
                    (
                        c.id.suite.to_string(),
                        c.id.name.clone(),
                        c.status,
                        c.duration_s,
                    )
                })
                .collect()
        };
        assert_eq!(view(&a), view(&b));
        assert!(a.cases.iter().any(|c| c.status == Status::Flaky));
    }
}
