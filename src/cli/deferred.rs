//! A subcommand's arguments defined only when they are needed. clap builds the whole command
//! line before it parses one: every subcommand's every option, code that runs at each start
//! (for `plan` from a timer too) for options it never reads. Wrapped in [`Deferred`], a
//! subcommand's options are made with clap's `Command::defer` when that subcommand is the one
//! given, or when help, the manual or the completions walk the whole tree (clap builds what
//! they show first).

use clap::{ArgMatches, Args, Command, FromArgMatches};

/// The options of one subcommand (`Plan(Deferred<PlanArgs>)`), made when it runs.
#[derive(Debug)]
pub(super) struct Deferred<T>(pub T);

impl<T: FromArgMatches> FromArgMatches for Deferred<T> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(m).map(Deferred)
    }
    fn from_arg_matches_mut(m: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(m).map(Deferred)
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(m)
    }
    fn update_from_arg_matches_mut(&mut self, m: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(m)
    }
}

impl<T: Args> Args for Deferred<T> {
    fn augment_args(cmd: Command) -> Command {
        cmd.defer(T::augment_args)
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        cmd.defer(T::augment_args_for_update)
    }
    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}
