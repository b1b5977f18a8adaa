//! A stored series gathered for drawing: its points, the segments between
//! its change points, and where the machine changed. `tardy report` and
//! the pages of `tardy serve` draw these.

use super::detect::{self, Segment};
use crate::store::history::{Point, PointFilter, SeriesInfo};
use crate::store::{DbError, History};

/// A history series (or one test of a suite), ready to draw.
pub struct SeriesView {
    pub info: SeriesInfo,
    /// The test of a suite this view is about, when it is one.
    pub test: Option<String>,
    pub points: Vec<Point>,
    pub segments: Vec<Segment>,
    /// (point index, what changed in the machine there).
    pub environment: Vec<(usize, Vec<String>)>,
    /// Each point's spread when samples were uploaded with it: the
    /// interquartile range of 4 or more samples, the range of 2 or 3.
    pub spread: Vec<Option<(f64, f64)>>,
    /// (point index of the first point after the change, alert id, what it says)
    /// for every alert on this series (or this test), whatever its state.
    pub alerts: Vec<(usize, i64, String)>,
}

fn build(
    store: &dyn History,
    info: SeriesInfo,
    test: Option<String>,
    points: Vec<Point>,
) -> Result<SeriesView, DbError> {
    let values: Vec<f64> = points.iter().map(|p| p.value).collect();
    let cps = detect::Method::default().detect(&values);
    let segments = detect::segments(store, &points, &cps)?;
    let environment = detect::environment_boundaries(store, &points)?;
    // Samples belong to the series' own points: a suite's per-test view has none.
    let spread = if test.is_none() {
        let samples = store.series_samples(info.id)?;
        points
            .iter()
            .map(|p| samples.get(&p.id).and_then(|s| spread_of(s)))
            .collect()
    } else {
        vec![None; points.len()]
    };
    let mut alerts = Vec::new();
    for a in store.alert_marks(info.id)? {
        for m in &a.members {
            if m.test != test {
                continue;
            }
            if let Some(i) = points.iter().position(|p| p.id == m.point_id) {
                alerts.push((
                    i,
                    a.id,
                    format!(
                        "alert #{} ({}, {}): {:+.1}%",
                        a.id,
                        a.kind,
                        a.state.as_str(),
                        m.change * 100.0
                    ),
                ));
            }
        }
    }
    Ok(SeriesView {
        info,
        test,
        points,
        segments,
        environment,
        spread,
        alerts,
    })
}

/// The whisker of one point's samples: quartiles of 4 or more, else the range.
fn spread_of(samples: &[f64]) -> Option<(f64, f64)> {
    let mut s: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
    if s.len() < 2 {
        return None;
    }
    s.sort_by(f64::total_cmp);
    Some(if s.len() >= 4 {
        (
            crate::stats::summary::quantile_sorted(&s, 0.25),
            crate::stats::summary::quantile_sorted(&s, 0.75),
        )
    } else {
        (s[0], s[s.len() - 1])
    })
}

/// A series with its change points (the default, calibrated detector).
pub fn series_view(
    store: &dyn History,
    info: SeriesInfo,
    filter: &PointFilter,
) -> Result<SeriesView, DbError> {
    let points = store.points(info.id, filter)?;
    build(store, info, None, points)
}

/// One test of a suite series as a series of its own; None when the suite
/// has no such test.
pub fn test_view(
    store: &dyn History,
    info: SeriesInfo,
    test: &str,
    filter: &PointFilter,
) -> Result<Option<SeriesView>, DbError> {
    let mut found = None;
    store.for_each_test(info.id, filter, &mut |t, points| {
        if t.name == test {
            found = Some(points.to_vec());
        }
        Ok(())
    })?;
    match found {
        None => Ok(None),
        Some(points) => Ok(Some(build(store, info, Some(test.to_string()), points)?)),
    }
}
