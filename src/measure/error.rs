//! Errors of the measurement layer: each names the command and what went wrong.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("empty command: give a program to run")]
    EmptyCommand,
    #[error("program not found: '{program}' (not in PATH and not a file){hint}")]
    ProgramNotFound { program: String, hint: String },
    #[error("'{program}' is not executable")]
    NotExecutable { program: String },
    #[error("could not start '{command}': {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("waiting for '{command}' failed: {source}")]
    Wait {
        command: String,
        source: std::io::Error,
    },
    #[error(
        "command '{command}' {how} (run {run}){stderr}; use --ignore-failure to keep measuring failing runs"
    )]
    CommandFailed {
        command: String,
        how: String,
        run: u64,
        stderr: String,
    },
    #[error("--{hook} command '{command}' {how}{stderr}")]
    HookFailed {
        hook: &'static str,
        command: String,
        how: String,
        stderr: String,
    },
    #[error("cannot open {what} '{path}': {source}")]
    Open {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid parameter scan: {0}")]
    Parameter(String),
    #[error("invalid option: {0}")]
    Option(String),
    #[error("saving results failed: {0}")]
    Save(String),
}
