//! tardy: tells whether a test suite or benchmark got slower, by how much,
//! with what certainty, and what in the machine makes it slow.
//!
//! Data flows one way: [`measure`] produces raw runs, [`analyze`] turns them
//! into statistics ([`stats`]) and warnings ([`diagnose`]), and [`render`] and
//! [`store`] present and save them. [`model`] holds the serialisable types
//! that pass between the steps, and [`probe`] reads the machine.

pub mod analyze;
pub mod bisect;
pub mod ci;
pub mod diagnose;
pub mod fmt;
pub mod history;
pub mod ingest;
pub mod jobs;
pub mod measure;
pub mod model;
pub mod probe;
pub mod profile;
pub mod record;
pub mod render;
pub mod server;
pub mod stats;
pub mod store;
