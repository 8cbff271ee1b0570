//! Command-line interface: the clap definitions and the dispatch to each subcommand's file, which
//! parses its arguments, calls the library and prints. validate, show, schema and completions
//! are small enough to sit here.

mod alert;
mod apply;
mod bench;
mod check;
mod deferred;
mod input;
mod man;
mod observe;
mod plan;
mod sim;
mod status;
mod tune;
mod validate;

pub use man::man_page;

use self::deferred::Deferred;
use crate::config::{self, Desired};
use crate::error::{Error, msg};
use crate::host::{Host, RealHost};
use crate::machine::{Lock, LockError};
use crate::observe::EarlyReads;
use crate::render::{self, Format};
use crate::sim::SimHost;
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "hyraid",
    version,
    about = "Declarative hybrid SSD+HDD storage: md RAID1 with write-mostly, bitmaps, write-behind, LVM and dm-writecache"
)]
pub struct Cli {
    /// Use a simulated machine loaded from an observed snapshot (`hyraid observe -o FILE`) instead of this machine.
    #[arg(long, global = true, value_name = "SNAPSHOT")]
    sim: Option<PathBuf>,
    /// When to colour the text output: `auto` (a terminal, unless NO_COLOR or CLICOLOR=0 is
    /// set or TERM is dumb; CLICOLOR_FORCE forces it), `always` or `never`.
    #[arg(long, global = true, value_name = "WHEN", default_value_t = clap::ColorChoice::Auto)]
    color: clap::ColorChoice,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Check a configuration file: schema and semantic rules, every error with file:line:col.
    Validate(Deferred<validate::ValidateArgs>),
    /// Observe the machine, compare with the file and print the ordered changes.
    Plan(Deferred<plan::PlanArgs>),
    /// Apply a configuration file (plans first) or a saved plan.
    Apply(Deferred<apply::ApplyArgs>),
    /// Render a saved plan.
    Show {
        /// A plan saved with `plan -o`.
        plan: PathBuf,
        /// How to print it: text, markdown, json, or shell.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Alerts: `--test` sends a test message through every sink of the file's `alerts:`. (md's
    /// monitor runs hyraid as `hyraid EVENT DEVICE [MEMBER]`, its PROGRAM in mdadm.conf.)
    Alert(Deferred<alert::AlertArgs>),
    /// The mirrors' checks: each one's last check and where a paused one resumes; with --now,
    /// a check run now (md reads every member and compares the copies), within its budget and
    /// resumed where the last run stopped. Exit 2 when a completed check found mismatches.
    Check(Deferred<check::CheckArgs>),
    /// Print the observed state as JSON (the snapshot format `--sim` loads).
    Observe(Deferred<observe::ObserveArgs>),
    /// Health (degraded, resyncing, failed members, dirty writecache, drive caches) and lints, with
    /// the reason and the fix. Exit 0 healthy, 1 error, 2 degraded or lint findings.
    Status(Deferred<status::StatusArgs>),
    /// Print the JSON Schema of the configuration file (with --snapshot: of the snapshot format).
    Schema {
        /// The schema of the snapshot format (`observe -o`, `sim new`, what `--sim` loads).
        #[arg(long)]
        snapshot: bool,
    },
    /// Measure I/O with fio: sequential 1M, random 512K, random 4K at QD1 and QD32, read and
    /// write, direct I/O with libaio. Against a directory (a test file is created and removed)
    /// or, with --allow-destroy, a raw block device. `--compare A.json B.json …` puts saved runs
    /// side by side.
    Bench(Deferred<bench::BenchArgs>),
    /// Measure the field report's six fio jobs under each configuration the layout allows
    /// (write-mostly, write-behind, the HDDs' drive caches, a writecache), changed live one at a
    /// time and put back as the file says when it ends; a table, each one's ratio to the file's
    /// with the run-to-run spread, and the change to the file that wins for your workload.
    Tune(Deferred<tune::TuneArgs>),
    /// Print a shell completion script (bash: save as
    /// /usr/share/bash-completion/completions/hyraid).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page hyraid(1) in roff (`hyraid man | man -l -`).
    Man,
    /// Write a configuration describing what is on the machine now (adopt a hand-built box).
    Import(Deferred<observe::ImportArgs>),
    /// Simulated machines: a blank one from a list of disks (`new`), time passing on one
    /// (`settle`), the degraded day (`fail`, `pull`, `insert`).
    #[command(subcommand)]
    Sim(sim::SimCmd),
}

pub fn run() -> ExitCode {
    default_sigpipe();
    // mdadm's monitor runs its PROGRAM as `PROGRAM EVENT DEVICE [MEMBER]`.
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if crate::alert::md_event::is_md_event(&raw) {
        return alert::md_event(&raw);
    }
    crate::timings::begin();
    // Started before the arguments are parsed, for the commands that observe this machine as
    // they begin (and apply's lock before them).
    let early = early_for_args(std::env::args_os().skip(1));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // --help and --version succeed; a usage error is an error (exit 1), never clap's 2,
            // which means "changes present" for `plan --detailed-exitcode` and "findings" for
            // `status`.
            return ExitCode::from(if e.use_stderr() { 1 } else { 0 });
        }
    };
    if let Cmd::Apply(Deferred(a)) = &cli.command
        && let Some(e) = a.usage_error(&cli.sim)
    {
        let _ = e.print();
        return ExitCode::from(1);
    }
    crate::timings::mark("arguments read");
    let done = dispatch(cli, early);
    crate::timings::mark("done");
    match done {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            err_line(&e.report());
            ExitCode::from(e.exit_code())
        }
    }
}

/// A reader that goes away (`hyraid schema | head`, `hyraid plan … 2>&1 | head`) ends hyraid as
/// it ends `cat` or `ls`: killed by SIGPIPE, quietly (the shell sees 141). Rust's runtime
/// ignores the signal instead, and every later print then fails or panics. An apply whose steps
/// have started ignores it again (`machine::install_interrupt_handler`): it finishes its steps.
fn default_sigpipe() {
    use nix::sys::signal::{SigHandler, Signal, signal};
    // SAFETY: restoring a signal's default action installs no handler; no thread runs yet.
    unsafe {
        let _ = signal(Signal::SIGPIPE, SigHandler::SigDfl);
    }
}

/// `text` on standard output, flushed. A full disk or a closed descriptor is an error (exit 1),
/// never a panic; a reader gone away only while SIGPIPE is ignored (an apply's steps running),
/// and then there is no one to tell.
fn out(text: impl AsRef<[u8]>) -> Result<(), Error> {
    let mut o = std::io::stdout().lock();
    match o.write_all(text.as_ref()).and_then(|()| o.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(msg(format!("cannot write to standard output: {e}")))
        }
        _ => Ok(()),
    }
}

/// One line on standard error; a failure to write it has nowhere to be reported.
fn err_line(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

fn dispatch(cli: Cli, early: Early) -> Result<u8, Error> {
    anstream::ColorChoice::write_global(match cli.color {
        clap::ColorChoice::Auto => anstream::ColorChoice::Auto,
        clap::ColorChoice::Always => anstream::ColorChoice::Always,
        clap::ColorChoice::Never => anstream::ColorChoice::Never,
    });
    let sim = &cli.sim;
    match cli.command {
        Cmd::Validate(Deferred(a)) => validate::run(a),
        Cmd::Import(Deferred(a)) => observe::import(sim, a),
        Cmd::Sim(c) => sim::run(c),
        Cmd::Status(Deferred(a)) => status::run(sim, a, early.reads),
        Cmd::Schema { snapshot } => {
            let schema = if snapshot {
                crate::observe::snapshot_schema()
            } else {
                config::json_schema()
            };
            out(&(serde_json::to_string_pretty(&schema).unwrap() + "\n"))?;
            Ok(0)
        }
        Cmd::Observe(Deferred(a)) => observe::run(sim, a),
        Cmd::Plan(Deferred(a)) => plan::run(sim, a, early.reads),
        Cmd::Show { plan: path, format } => {
            let saved = match input::read_input(&path)? {
                input::Input::Plan(p) => p,
                input::Input::Config(..) => {
                    return Err(msg(format!(
                        "{} is a configuration, not a saved plan: `hyraid plan {0}` prints its plan on this machine",
                        path.display()
                    )));
                }
            };
            // What is shown is hyraid's own plan, made again from what the file carries.
            let p = crate::apply::saved::rederive(&saved).map_err(Error::from)?;
            out(render::render(
                &p,
                format,
                format == Format::Text && color(),
            ))?;
            Ok(0)
        }
        Cmd::Apply(Deferred(a)) => apply::run(sim, a, early.reads, early.lock),
        Cmd::Bench(Deferred(a)) => bench::run(sim, a),
        Cmd::Tune(Deferred(a)) => tune::run(sim, a),
        Cmd::Check(Deferred(a)) => check::run(sim, a),
        Cmd::Alert(Deferred(a)) => alert::run(sim, a),
        Cmd::Completions { shell } => {
            use clap::CommandFactory;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "hyraid", &mut script);
            out(&script)?;
            Ok(0)
        }
        Cmd::Man => {
            let mut page = Vec::new();
            man_page(&mut page).map_err(|e| msg(format!("cannot render the manual: {e}")))?;
            out(&page)?;
            Ok(0)
        }
    }
}

/// One apply at a time on this machine: the lock's file.
const LOCK_PATH: &str = "/run/lock/hyraid.lock";

enum Machine {
    Real(RealHost),
    Sim(Box<SimHost>, PathBuf),
}

impl Machine {
    /// One apply at a time per machine (per snapshot file when simulated).
    fn lock_path(&self) -> PathBuf {
        match self {
            Machine::Real(_) => PathBuf::from(LOCK_PATH),
            Machine::Sim(_, p) => crate::machine::lock::for_snapshot(p),
        }
    }

    /// Where apply's journal goes unless `--journal` says: a simulated machine keeps none (an
    /// apply on a snapshot leaves no file beside it).
    fn journal_path(&self) -> Option<PathBuf> {
        match self {
            Machine::Real(_) => Some(PathBuf::from("/var/log/hyraid/journal.jsonl")),
            Machine::Sim(..) => None,
        }
    }

    fn host(&self) -> &dyn Host {
        match self {
            Machine::Real(h) => h,
            Machine::Sim(h, _) => h.as_ref(),
        }
    }
}

fn machine(sim: &Option<PathBuf>) -> Result<Machine, Error> {
    match sim {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|e| msg(format!("{}: {e}", p.display())))?;
            let h = SimHost::from_json(&text).map_err(|e| msg(format!("{}: {e}", p.display())))?;
            Ok(Machine::Sim(Box::new(h), p.clone()))
        }
        None => {
            let h = RealHost;
            if !h.is_root() {
                return Err(msg(
                    "hyraid needs root on a real machine: it reads md sysfs and drive caches and probes devices. Run it with sudo, or pass --sim SNAPSHOT to work on a snapshot",
                ));
            }
            Ok(Machine::Real(h))
        }
    }
}

/// What starts before the arguments are parsed (parsing is most of hyraid's start-up), only for
/// the plain forms (the command first, as the drift unit, the Ansible module and the README
/// write them), never for help, a snapshot (`--sim`), `--version` or a file on standard input
/// (`-`: it may take any time to come, and what was read before it and after it would be two
/// moments of the machine):
/// - `plan` and `status`: lsblk and the LVM report;
/// - `apply` (not `--dry-run`): its lock first, then lsblk and the LVM report once it holds it,
///   so that a second apply is refused before anything else and nothing is read while another
///   apply may still be changing the machine. A lock that cannot be taken is reported after the
///   arguments are parsed (a usage error comes first), and nothing is started.
///
/// Anything else starts them after parsing ([`early_reads`]).
#[derive(Default)]
struct Early {
    reads: EarlyReads,
    lock: Option<Result<Lock, LockError>>,
}

fn early_for_args(args: impl Iterator<Item = std::ffi::OsString>) -> Early {
    match at_once(&args.collect::<Vec<_>>()) {
        Some(AtOnce::Observe) => Early {
            reads: early_reads(&None),
            lock: None,
        },
        Some(AtOnce::Apply) if RealHost.is_root() => match Lock::acquire(Path::new(LOCK_PATH)) {
            Ok(lock) => Early {
                reads: early_reads(&None),
                lock: Some(Ok(lock)),
            },
            Err(e) => Early {
                reads: EarlyReads::default(),
                lock: Some(Err(e)),
            },
        },
        _ => Early::default(),
    }
}

#[derive(Debug, PartialEq)]
enum AtOnce {
    Observe,
    Apply,
}

/// Whether the raw arguments (the program's name left out) are `plan`, `status` or `apply` on
/// this machine, in the plain form [`early_for_args`] takes.
fn at_once(args: &[std::ffi::OsString]) -> Option<AtOnce> {
    let kind = match args.first().and_then(|a| a.to_str()) {
        Some("plan" | "status") => AtOnce::Observe,
        Some("apply") => AtOnce::Apply,
        _ => return None,
    };
    let plain = !args.iter().any(|a| {
        let a = a.to_string_lossy();
        matches!(
            a.as_ref(),
            "-h" | "--help" | "-V" | "--version" | "--sim" | "--sim-write" | "help" | "-"
        ) || a.starts_with("--sim=")
            || (kind == AtOnce::Apply && a == "--dry-run")
    });
    plain.then_some(kind)
}

/// lsblk and the LVM report, started before the file is read when the machine is this one (and
/// hyraid may read it): the file is read while they run. Nothing starts for a snapshot.
fn early_reads(sim: &Option<PathBuf>) -> EarlyReads {
    match sim {
        None if RealHost.is_root() => {
            let early = EarlyReads::start(&RealHost);
            crate::timings::mark("lsblk and the LVM report started");
            early
        }
        _ => EarlyReads::default(),
    }
}

/// The file's configuration; `-` reads it from standard input (named `<stdin>` in errors). A
/// saved plan given instead is refused with what to do with it.
fn load(file: &Path) -> Result<Desired, Error> {
    Ok(input::read_config(file)?.0)
}

/// Whether the text output on stdout is coloured: `--color`, then the conventions anstream
/// (clap's own colour library) reads: NO_COLOR, CLICOLOR_FORCE, CLICOLOR=0, TERM=dumb and
/// whether stdout is a terminal.
fn color() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

fn write_out(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|e| msg(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::{AtOnce, at_once};

    fn kind(line: &str) -> Option<AtOnce> {
        let args: Vec<std::ffi::OsString> = line.split_whitespace().map(Into::into).collect();
        at_once(&args)
    }

    #[test]
    fn only_plain_plan_status_and_apply_start_before_parsing() {
        for observe in [
            "plan /etc/hyraid/hyraid.yaml",
            "plan /etc/hyraid/hyraid.yaml --detailed-exitcode --color never",
            "plan h.yaml --format json",
            "status",
            "status /etc/hyraid/hyraid.yaml --format prometheus -o /var/lib/x.prom",
            "status /etc/hyraid/hyraid.yaml --textfile /var/lib/x.prom",
        ] {
            assert_eq!(kind(observe), Some(AtOnce::Observe), "{observe}");
        }
        for apply in [
            "apply h.yaml --yes",
            "apply /etc/hyraid/hyraid.yaml",
            "apply saved.plan.json --yes --journal /tmp/j.jsonl",
            "apply h.yaml --yes --allow-destroy --no-wait",
        ] {
            assert_eq!(kind(apply), Some(AtOnce::Apply), "{apply}");
        }
        for neither in [
            "",
            "validate plan",
            "observe",
            "import",
            "plan h.yaml --sim snap.json",
            "plan h.yaml --sim=snap.json",
            "plan --help",
            "status -h",
            "plan - --detailed-exitcode",
            "status - --format json",
            "plan help",
            "plan --version",
            "--color never plan h.yaml",
            // apply: a dry run takes no lock; help, a snapshot, a file on standard input.
            "apply h.yaml --dry-run",
            "apply --dry-run h.yaml --yes",
            "apply h.yaml --yes --sim snap.json",
            "apply h.yaml --sim=snap.json",
            "apply - --yes",
            "apply --help",
            "apply -h",
            "apply help",
            "--sim snap.json apply h.yaml",
        ] {
            assert_eq!(kind(neither), None, "{neither}");
        }
    }
}
