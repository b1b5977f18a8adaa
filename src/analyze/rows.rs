//! A `tests diff`'s rows, one per test on either side, held compactly: a
//! row is an identity in [`Names`] and its numbers (about 64 bytes), and a
//! [`TestRow`] with its four strings is made only when one is read
//! ([`RowView::to_row`]) or written (the JSON is the same as a list of
//! `TestRow`s). A diff read back from JSON keeps its `TestRow`s as they are.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::names::Names;
use crate::ingest::reports::Status;
use crate::stats::compare::Verdict;

/// One test across both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestRow {
    pub name: String,
    pub suite: String,
    pub class: String,
    pub test: String,
    /// Median over the side's runs, seconds.
    pub before_s: Option<f64>,
    pub after_s: Option<f64>,
    pub delta_s: Option<f64>,
    pub ratio: Option<f64>,
    pub status_before: Option<Status>,
    pub status_after: Option<Status>,
    pub runs: [usize; 2],
    /// With 2+ runs per side: Welch's t, Benjamini-Hochberg adjusted across tests.
    pub p_adjusted: Option<f64>,
    pub verdict: Option<Verdict>,
    /// A test with subtests (Go's `TestX` beside `TestX/case`): its time
    /// holds theirs, so it is listed with them, never counted beside them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parent: bool,
}

/// One row: an identity and its numbers (NaN: none).
#[derive(Debug, Clone, Copy)]
pub struct Compact {
    pub id: u32,
    pub before: f64,
    pub after: f64,
    pub p_adjusted: f64,
    pub runs: [u32; 2],
    pub status: [Option<Status>; 2],
    pub verdict: Option<Verdict>,
    pub parent: bool,
}

/// The rows of a diff, largest absolute change first.
#[derive(Debug, Clone)]
pub enum Rows {
    Compact {
        names: Names,
        rows: Vec<Compact>,
    },
    /// Rows read back from JSON.
    Plain(Vec<TestRow>),
}

impl Default for Rows {
    fn default() -> Self {
        Rows::Plain(Vec::new())
    }
}

/// One row, read where it lies.
#[derive(Clone, Copy)]
pub enum RowView<'a> {
    Compact(&'a Names, &'a Compact),
    Plain(&'a TestRow),
}

fn some(x: f64) -> Option<f64> {
    (!x.is_nan()).then_some(x)
}

impl RowView<'_> {
    /// "suite :: class :: name" (with " #N" for a repeated identity).
    pub fn name(&self) -> String {
        match self {
            RowView::Compact(n, c) => n.display(c.id),
            RowView::Plain(r) => r.name.clone(),
        }
    }
    pub fn suite(&self) -> &str {
        match self {
            RowView::Compact(n, c) => n.suite(c.id),
            RowView::Plain(r) => &r.suite,
        }
    }
    pub fn class(&self) -> &str {
        match self {
            RowView::Compact(n, c) => n.class(c.id),
            RowView::Plain(r) => &r.class,
        }
    }
    pub fn test(&self) -> &str {
        match self {
            RowView::Compact(n, c) => n.test(c.id),
            RowView::Plain(r) => &r.test,
        }
    }
    /// Median over the side's runs, seconds.
    pub fn before_s(&self) -> Option<f64> {
        match self {
            RowView::Compact(_, c) => some(c.before),
            RowView::Plain(r) => r.before_s,
        }
    }
    pub fn after_s(&self) -> Option<f64> {
        match self {
            RowView::Compact(_, c) => some(c.after),
            RowView::Plain(r) => r.after_s,
        }
    }
    pub fn delta_s(&self) -> Option<f64> {
        match self {
            RowView::Compact(..) => self.before_s().zip(self.after_s()).map(|(x, y)| y - x),
            RowView::Plain(r) => r.delta_s,
        }
    }
    pub fn ratio(&self) -> Option<f64> {
        match self {
            RowView::Compact(..) => {
                (self.before_s().zip(self.after_s())).and_then(|(x, y)| (x > 0.0).then_some(y / x))
            }
            RowView::Plain(r) => r.ratio,
        }
    }
    pub fn status_before(&self) -> Option<Status> {
        match self {
            RowView::Compact(_, c) => c.status[0],
            RowView::Plain(r) => r.status_before,
        }
    }
    pub fn status_after(&self) -> Option<Status> {
        match self {
            RowView::Compact(_, c) => c.status[1],
            RowView::Plain(r) => r.status_after,
        }
    }
    pub fn runs(&self) -> [usize; 2] {
        match self {
            RowView::Compact(_, c) => c.runs.map(|n| n as usize),
            RowView::Plain(r) => r.runs,
        }
    }
    pub fn p_adjusted(&self) -> Option<f64> {
        match self {
            RowView::Compact(_, c) => some(c.p_adjusted),
            RowView::Plain(r) => r.p_adjusted,
        }
    }
    pub fn verdict(&self) -> Option<Verdict> {
        match self {
            RowView::Compact(_, c) => c.verdict,
            RowView::Plain(r) => r.verdict,
        }
    }
    /// A test whose time holds its subtests'.
    pub fn parent(&self) -> bool {
        match self {
            RowView::Compact(_, c) => c.parent,
            RowView::Plain(r) => r.parent,
        }
    }

    /// The row with its strings.
    pub fn to_row(&self) -> TestRow {
        TestRow {
            name: self.name(),
            suite: self.suite().to_string(),
            class: self.class().to_string(),
            test: self.test().to_string(),
            before_s: self.before_s(),
            after_s: self.after_s(),
            delta_s: self.delta_s(),
            ratio: self.ratio(),
            status_before: self.status_before(),
            status_after: self.status_after(),
            runs: self.runs(),
            p_adjusted: self.p_adjusted(),
            verdict: self.verdict(),
            parent: self.parent(),
        }
    }
}

impl Rows {
    pub fn len(&self) -> usize {
        match self {
            Rows::Compact { rows, .. } => rows.len(),
            Rows::Plain(r) => r.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows in order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = RowView<'_>> + '_> {
        match self {
            Rows::Compact { names, rows } => {
                Box::new(rows.iter().map(move |c| RowView::Compact(names, c)))
            }
            Rows::Plain(r) => Box::new(r.iter().map(RowView::Plain)),
        }
    }

    pub fn get(&self, i: usize) -> Option<RowView<'_>> {
        match self {
            Rows::Compact { names, rows } => rows.get(i).map(|c| RowView::Compact(names, c)),
            Rows::Plain(r) => r.get(i).map(RowView::Plain),
        }
    }
}

impl PartialEq for Rows {
    fn eq(&self, other: &Rows) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|(a, b)| a.to_row() == b.to_row())
    }
}

impl Serialize for Rows {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|r| r.to_row()))
    }
}

impl<'de> Deserialize<'de> for Rows {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Rows, D::Error> {
        Vec::<TestRow>::deserialize(d).map(Rows::Plain)
    }
}
