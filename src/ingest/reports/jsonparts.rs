//! What the readers of JSON documents share: the directory all test files
//! share, an array read element by element, a result pushed, a suite named.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::DeserializeSeed;

use super::{Report, Status, TestCase, TestId};

/// The directory every path seen so far shares, one path at a time, so
/// that absolute paths from two checkouts match.
#[derive(Default)]
pub struct CommonDir(Option<String>);

impl CommonDir {
    pub fn add(&mut self, path: &str) {
        let dir = path.rfind('/').map_or("", |i| &path[..=i]);
        match &mut self.0 {
            None => self.0 = Some(dir.to_string()),
            Some(q) => {
                let n = q
                    .char_indices()
                    .zip(dir.chars())
                    .take_while(|((_, a), b)| a == b)
                    .last()
                    .map_or(0, |((i, a), _)| i + a.len_utf8());
                let keep = q[..n].rfind('/').map_or(0, |i| i + 1);
                q.truncate(keep);
            }
        }
    }

    pub fn finish(self) -> String {
        self.0.unwrap_or_default()
    }
}

/// A JSON array read element by element, each handed to a function as it is
/// read (the array is never held); the function's error stops the read.
pub struct Each<'f, T, F>(&'f mut F, std::marker::PhantomData<T>);

impl<'f, T, F> Each<'f, T, F> {
    pub fn new(f: &'f mut F) -> Self {
        Each(f, std::marker::PhantomData)
    }
}

impl<'de, T: Deserialize<'de>, F: FnMut(T) -> Result<(), String>> serde::de::DeserializeSeed<'de>
    for Each<'_, T, F>
{
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, T: Deserialize<'de>, F: FnMut(T) -> Result<(), String>> serde::de::Visitor<'de>
    for Each<'_, T, F>
{
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(t) = seq.next_element::<T>()? {
            (self.0)(t).map_err(serde::de::Error::custom)?;
        }
        Ok(())
    }
}

pub(super) fn push(
    report: &mut Report,
    suite: &Arc<str>,
    name: String,
    ms: Option<f64>,
    status: Status,
) {
    report.push_case(TestCase {
        id: TestId::new(suite.clone(), super::EMPTY.clone(), name),
        duration_s: ms.filter(|m| m.is_finite() && *m >= 0.0).map(|m| m / 1e3),
        status,
        retries: 0,
        has_children: false,
    });
}

pub(super) fn suite_of(
    cache: &mut HashMap<String, Arc<str>>,
    prefix: &str,
    path: &str,
) -> Arc<str> {
    let rel = path.strip_prefix(prefix).unwrap_or(path);
    cache
        .entry(rel.to_string())
        .or_insert_with(|| Arc::from(rel))
        .clone()
}

/// One more result read in a first pass: the cap's error past it.
pub fn counted() -> Result<(), String> {
    match crate::ingest::limits::one_result() {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// An array whose elements a first pass only counts against the cap.
#[derive(Default)]
pub struct Tally;

impl<'de> Deserialize<'de> for Tally {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Each::new(&mut |_: serde::de::IgnoredAny| counted()).deserialize(d)?;
        Ok(Tally)
    }
}
