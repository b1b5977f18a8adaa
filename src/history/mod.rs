//! Performance history: what is stored over time and what is found in it.
//! [`import`] turns results, CSV files and test reports into points (with
//! their git metadata); [`detect`] finds change points in every stored
//! series and turns them into alerts; [`upload`] reads what is sent to
//! `tardy serve`; [`view`] gathers a series with its segments for drawing.
//! Storage itself is [`crate::store`].

pub mod bisect;
pub mod detect;
pub mod import;
pub mod names;
pub mod ops;
pub mod simulate;
pub mod upload;
pub mod view;
pub mod window;
