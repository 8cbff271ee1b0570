//! hyraid's one error, with a variant per layer, and the exit status each gives the command line.

use crate::apply::ApplyError;
use crate::bench::BenchError;
use crate::config::ConfigErrors;
use crate::observe::ObserveError;
use crate::plan::PlanError;
use crate::tune::TuneError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Every error found in a configuration file, each with file:line:col.
    #[error("{0}\n{n} error(s)", n = .0.0.len())]
    Config(#[from] ConfigErrors),
    #[error("cannot observe the machine: {0}")]
    Observe(#[from] ObserveError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Apply(#[from] ApplyError),
    #[error(transparent)]
    Bench(#[from] BenchError),
    #[error(transparent)]
    Tune(#[from] TuneError),
    /// Files that cannot be read or written, and what the command line says itself.
    #[error("{0}")]
    Msg(String),
}

impl Error {
    /// 130 for an apply, bench or tune stopped by SIGINT/SIGTERM (the shell's convention), 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Apply(ApplyError::Interrupted { .. })
            | Error::Bench(BenchError::Interrupted { .. })
            | Error::Tune(TuneError::Interrupted(_)) => 130,
            _ => 1,
        }
    }

    /// How the command line prints it: a configuration's errors as they are, anything else
    /// after `error: `.
    pub fn report(&self) -> String {
        match self {
            Error::Config(_) => self.to_string(),
            e => format!("error: {e}"),
        }
    }
}

/// [`Error::Msg`], for `map_err`.
pub fn msg(s: impl Into<String>) -> Error {
    Error::Msg(s.into())
}
