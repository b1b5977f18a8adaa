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
    Ok(SeriesView {
        info,
        test,
        points,
        segments,
        environment,
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
