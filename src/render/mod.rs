//! Turning results into text: the terminal report ([`terminal`]), tables in
//! Markdown, AsciiDoc and org-mode ([`table`]), CSV ([`csv`]) and JSON ([`json`]), with the number
//! formatting they share ([`units`]). Rendering never computes statistics: it
//! formats what `analyze` put into the results.

pub mod bisect;
pub mod cfmt;
pub mod ci;
pub use crate::fmt::clip;
pub mod compare;
pub mod csv;
pub mod doctor;
pub mod explain;
pub mod flame;
pub mod folded;
pub mod history;
pub mod json;
pub mod junit;
pub mod man;
pub mod ministat;
pub mod perfetto;
pub mod plot;
pub mod pprof;
pub mod push;
pub mod report;
pub mod style;
pub mod suite;
pub mod svg;
pub mod table;
pub mod terminal;
pub mod units;
pub mod usage;
pub mod verdict;
pub mod web;
