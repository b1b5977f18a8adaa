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
