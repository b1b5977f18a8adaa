//! Statistics over samples: pure functions, no printing and no I/O.
//!
//! This module owns every number tardy derives from raw measurements:
//! summaries and their confidence intervals ([`summary`]), two-sample tests
//! ([`ttest`], [`utest`], [`shift`], [`bootstrap`], [`ratio`]) and the engine that
//! turns them into a verdict ([`compare`]) with power ([`power`]) and
//! multiple-comparison control ([`multiple`]), trend detection over the run sequence
//! ([`trend`]), change points over a history ([`changepoint`], Otava's exactly, and
//! [`rank_cusum`], calibrated, with [`sequential`] at a series' end and
//! [`ranked_window`] to rule most tests out cheaply), outlier scores ([`outliers`]), running accumulators used by the
//! measurement loop's stopping rule ([`running`]), the distributions they rest
//! on ([`dist`]) and the seeded random generator ([`rng`]).

pub mod dist;
pub mod outliers;
pub mod ratio;
pub mod rng;
pub mod running;
pub mod summary;
pub mod trend;

pub use compare::{Estimate, Verdict};
pub use ratio::{RatioEstimate, ratio_of_geomeans};
pub use summary::{Summary, summarize};
pub mod bootstrap;
pub mod boundary;
pub mod changepoint;
pub mod compare;
pub mod counts;
pub mod described;
pub mod jump;
pub mod jump_null;
pub mod ministat;
pub mod multiple;
pub mod power;
pub mod rank_cusum;
pub mod rank_cusum_null;
pub mod ranked_window;
pub mod sequential;
pub mod shift;
pub mod ttest;
pub mod utest;

/// Deserialise a number that may have been written as `null`: serde_json
/// writes a NaN (a p-value no test gave, as for an exact difference of
/// counts) as `null`, and reading the file back must give the NaN again.
pub fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    use serde::Deserialize;
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}
