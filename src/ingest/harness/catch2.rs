//! Catch2's XML reporter (`-r xml`, Catch2 2.x `<Catch>` and 3.x
//! `<Catch2TestRun>`): each `<BenchmarkResults name samples ...>` keeps the
//! mean and standard deviation of its samples (nanoseconds), not the
//! samples: compared by Welch's t from those and the sample count. The
//! benchmark is named by its test case (`calc/sum 1000`).

use quick_xml::events::Event;

use super::{Read, described};
use crate::ingest::error::IngestError;
use crate::stats::described::{Centre, Described};

/// Catch2 XML with benchmark results.
pub fn detect(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    t.starts_with('<')
        && (t.contains("<Catch ") || t.contains("<Catch2TestRun"))
        && t.contains("<BenchmarkResults")
}

fn attr(e: &quick_xml::events::BytesStart, key: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .and_then(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
}

/// The open benchmark: name, samples, mean and sd (ns).
type Open = Option<(String, Option<u64>, Option<f64>, Option<f64>)>;

fn element(e: &quick_xml::events::BytesStart, case: &mut String, open: &mut Open) {
    let num = |k: &[u8]| attr(e, k).and_then(|v| v.trim().parse::<f64>().ok());
    match e.local_name().as_ref() {
        b"TestCase" => *case = attr(e, b"name").unwrap_or_default(),
        b"BenchmarkResults" => {
            *open = Some((
                attr(e, b"name").unwrap_or_default(),
                num(b"samples").map(|n| n as u64),
                None,
                None,
            ))
        }
        b"mean" => {
            if let Some(o) = open.as_mut() {
                o.2 = num(b"value");
            }
        }
        b"standardDeviation" => {
            if let Some(o) = open.as_mut() {
                o.3 = num(b"value");
            }
        }
        _ => {}
    }
}

pub fn read(text: &str, source: &str) -> Result<Read, IngestError> {
    let mut r = quick_xml::Reader::from_str(text);
    let mut out = Vec::new();
    let mut case = String::new();
    let mut open: Open = None;
    let mut depth = 0usize;
    loop {
        let ev = r.read_event().map_err(|e| {
            IngestError::at(
                source,
                None,
                format!(
                    "is not well-formed Catch2 XML (at byte {}): {e}",
                    r.buffer_position()
                ),
            )
        })?;
        match ev {
            Event::Start(e) => {
                depth += 1;
                if depth > 256 {
                    return Err(IngestError::at(
                        source,
                        None,
                        "nests deeper than 256 elements".into(),
                    ));
                }
                element(&e, &mut case, &mut open);
            }
            Event::Empty(e) => element(&e, &mut case, &mut open),
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                if e.local_name().as_ref() == b"BenchmarkResults"
                    && let Some((name, n, Some(mean), sd)) = open.take()
                {
                    let full = if case.is_empty() {
                        name
                    } else {
                        format!("{case}/{name}")
                    };
                    out.push(described(
                        &full,
                        "sec/op",
                        false,
                        Described {
                            centre: mean * 1e-9,
                            kind: Centre::Mean,
                            sd: sd.map(|s| s * 1e-9),
                            n,
                            kept: "Catch2 keeps each benchmark's mean and sd of its samples, not the samples".into(),
                        },
                    ));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok((out, Vec::new()))
}
