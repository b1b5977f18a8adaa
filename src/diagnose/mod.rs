//! Explaining what the numbers say: warnings about a command's runs (cold
//! first run, outliers, spread, runs too short to time, drift over the
//! session). Later issues add the shape of a suite's slowdown and machine
//! diagnoses here. Diagnoses take statistics as input and never print.

pub mod explain;
pub mod machine;
pub mod runs;
pub mod shape;
