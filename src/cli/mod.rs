//! Command-line interface: clap definitions and wiring only.

use crate::apply::{self, ApplyError, Journal, lock::Lock};
use crate::config::{self, ConfigErrors, Desired};
use crate::host::{Host, RealHost, sim::SimHost};
use crate::plan::{Plan, Policy, plan};
use crate::render::{self, Format};
use clap::{Parser, Subcommand};
use std::io::{IsTerminal, Write};
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
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Check a configuration file: schema and semantic rules, every error with file:line:col.
    Validate { file: PathBuf },
    /// Observe the machine, compare with the file and print the ordered changes.
    Plan {
        file: PathBuf,
        /// Also save the plan as JSON (for `hyraid apply PLAN.json` or `hyraid show`).
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Exit 0 when there are no changes, 2 when there are, 1 on error or when anything is refused.
        #[arg(long)]
        detailed_exitcode: bool,
        /// Include steps that destroy data at rest (otherwise they are listed as refused). Never
        /// allows touching anything in use.
        #[arg(long)]
        allow_destroy: bool,
    },
    /// Apply a configuration file (plans first) or a saved plan.
    Apply(ApplyArgs),
    /// Render a saved plan.
    Show {
        plan: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Print the observed state as JSON (the snapshot format `--sim` loads).
    Observe {
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
        /// Also record every command, file and link hyraid read, with the answers, into FILE
        /// (for parser fixtures and simulator parity tests).
        #[arg(long, value_name = "FILE")]
        capture: Option<PathBuf>,
    },
    /// Health (degraded, resyncing, failed members, dirty writecache, drive caches) and lints, with
    /// the reason and the fix. Exit 0 healthy, 1 error, 2 degraded or lint findings.
    Status {
        /// The machine's file (adds checks of the disks and drive caches it names).
        file: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "text")]
        format: StatusFormat,
    },
    /// Print the JSON Schema of the configuration file.
    Schema,
    /// Measure I/O with fio: sequential 1M, random 512K, random 4K at QD1 and QD32, read and
    /// write, direct I/O with libaio. Against a directory (a test file is created and removed)
    /// or, with --allow-destroy, a raw block device. `--compare A.json B.json …` puts saved runs
    /// side by side.
    Bench(BenchArgs),
    /// Print a shell completion script (bash: save as
    /// /usr/share/bash-completion/completions/hyraid).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page hyraid(1) in roff (`hyraid man | man -l -`).
    Man,
    /// Write a configuration describing what is on the machine now (adopt a hand-built box).
    Import {
        /// Write to FILE instead of standard output (an existing file is never overwritten).
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
    },
}

#[derive(clap::Args, Debug)]
struct ApplyArgs {
    /// hyraid.yaml, or a plan saved with `plan -o`.
    file: PathBuf,
    /// Show what would run; change nothing.
    #[arg(long)]
    dry_run: bool,
    #[arg(long)]
    allow_destroy: bool,
    /// Do not ask for confirmation.
    #[arg(long)]
    yes: bool,
    /// Where to append the journal of what ran (default /var/log/hyraid/journal.jsonl; with --sim, next to the snapshot).
    #[arg(long)]
    journal: Option<PathBuf>,
    /// With --sim: write the simulated machine's new state back to the snapshot file.
    #[arg(long)]
    sim_write: bool,
    /// Stop at a step that needs an idle array instead of waiting for the resync to finish.
    #[arg(long)]
    no_wait: bool,
}

#[derive(clap::Args, Debug)]
struct BenchArgs {
    /// A directory on a mounted filesystem, or a block device (with --allow-destroy).
    #[arg(required_unless_present = "compare", conflicts_with = "compare")]
    target: Option<String>,
    /// Size of the test file, or of the region of the device, e.g. 1GiB or 256MiB.
    #[arg(long, default_value = "1GiB", value_parser = parse_size)]
    size: u64,
    /// Seconds each job measures (after the ramp).
    #[arg(long, default_value_t = 10)]
    runtime: u32,
    /// Seconds each job runs before measuring.
    #[arg(long, default_value_t = 2)]
    ramp: u32,
    /// Run only these jobs (repeat the option); default the whole matrix.
    #[arg(long = "job", value_name = "NAME", value_parser = parse_job)]
    jobs: Vec<crate::bench::fio::Job>,
    /// Allow a raw block device as target: the write jobs destroy its data.
    #[arg(long)]
    allow_destroy: bool,
    /// Save the report as JSON (for --compare).
    #[arg(short = 'o', long = "out")]
    out: Option<PathBuf>,
    /// Name of this run in comparisons (default: the target).
    #[arg(long)]
    label: Option<String>,
    /// Print saved reports side by side, with each run's IOPS as a ratio of the first's.
    #[arg(long, num_args = 2.., value_name = "REPORT")]
    compare: Vec<PathBuf>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    crate::config::size::parse_bytes(s).map_err(|e| e.to_string())
}

fn parse_job(s: &str) -> Result<crate::bench::fio::Job, String> {
    crate::bench::fio::job(s).ok_or_else(|| {
        let names: Vec<&str> = crate::bench::fio::MATRIX.iter().map(|j| j.name).collect();
        format!("no job `{s}`; the jobs are {}", names.join(", "))
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum StatusFormat {
    Text,
    Json,
}

#[derive(Debug)]
enum CliError {
    Config(ConfigErrors),
    Msg(String),
    Exit(u8, String),
}

impl From<ApplyError> for CliError {
    fn from(e: ApplyError) -> Self {
        match e {
            // The shell's convention for "stopped by SIGINT".
            ApplyError::Interrupted { .. } => CliError::Exit(130, e.to_string()),
            e => CliError::Msg(e.to_string()),
        }
    }
}

fn msg(s: impl Into<String>) -> CliError {
    CliError::Msg(s.into())
}

pub fn run() -> ExitCode {
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
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(CliError::Config(e)) => {
            eprintln!("{e}");
            eprintln!("{} error(s)", e.0.len());
            ExitCode::from(1)
        }
        Err(CliError::Msg(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
        Err(CliError::Exit(code, m)) => {
            eprintln!("error: {m}");
            ExitCode::from(code)
        }
    }
}

enum Machine {
    Real(RealHost),
    Sim(Box<SimHost>, PathBuf),
}

impl Machine {
    /// One apply at a time per machine (per snapshot file when simulated).
    fn lock_path(&self) -> PathBuf {
        match self {
            Machine::Real(_) => PathBuf::from("/run/lock/hyraid.lock"),
            Machine::Sim(_, p) => p.with_extension("lock"),
        }
    }

    fn journal_path(&self) -> PathBuf {
        match self {
            Machine::Real(_) => PathBuf::from("/var/log/hyraid/journal.jsonl"),
            Machine::Sim(_, p) => p.with_extension("journal.jsonl"),
        }
    }

    fn host(&self) -> &dyn Host {
        match self {
            Machine::Real(h) => h,
            Machine::Sim(h, _) => h.as_ref(),
        }
    }
}

fn machine(sim: &Option<PathBuf>) -> Result<Machine, CliError> {
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

fn load(file: &Path) -> Result<Desired, CliError> {
    config::load_file(file).map_err(CliError::Config)
}

fn color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn write_out(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text).map_err(|e| msg(format!("cannot write {}: {e}", path.display())))
}

fn dispatch(cli: Cli) -> Result<u8, CliError> {
    match cli.command {
        Cmd::Validate { file } => {
            let d = load(&file)?;
            let n = |count: usize, one: &str| match count {
                1 => format!("1 {one}"),
                _ => format!("{count} {one}s"),
            };
            println!(
                "{}: valid ({}, {}, {}, {})",
                file.display(),
                n(d.disks.len(), "disk"),
                n(d.mirrors.len(), "mirror"),
                n(d.volume_groups.len(), "volume group"),
                n(
                    d.volume_groups.values().map(|v| v.lvs.len()).sum(),
                    "logical volume"
                )
            );
            Ok(0)
        }
        Cmd::Import { out } => {
            let m = machine(&cli.sim)?;
            let obs = apply::observe_for(m.host(), None)
                .map_err(|e| msg(format!("cannot observe the machine: {e}")))?;
            let imp = config::import::import(&obs);
            let text = config::import::to_yaml(&imp);
            for s in &imp.skipped {
                eprintln!("not imported: {s}");
            }
            for n in &imp.notes {
                eprintln!("note: {n}");
            }
            match out {
                Some(p) if p.exists() => {
                    return Err(msg(format!(
                        "{} exists; hyraid import does not overwrite files",
                        p.display()
                    )));
                }
                Some(p) => write_out(&p, &text)?,
                None => print!("{text}"),
            }
            Ok(0)
        }
        Cmd::Status { file, format } => {
            let d = file.as_deref().map(load).transpose()?;
            let m = machine(&cli.sim)?;
            let obs = apply::observe_for(m.host(), d.as_ref())
                .map_err(|e| msg(format!("cannot observe the machine: {e}")))?;
            // mdadm reads /etc/mdadm.conf when it exists, else /etc/mdadm/mdadm.conf.
            let conf = ["/etc/mdadm.conf", "/etc/mdadm/mdadm.conf"]
                .iter()
                .find_map(|p| m.host().read_file(p).ok());
            let mut findings = crate::plan::lint::status(&obs, d.as_ref(), conf.as_deref());
            if let Some(d) = &d {
                // What the file asks and hyraid refuses is part of the machine's health.
                match plan(d, &obs, Policy::default()) {
                    Ok(p) => findings.extend(crate::plan::lint::refusals(&p)),
                    Err(e) => findings.push(crate::plan::lint::Finding {
                        severity: crate::plan::lint::Severity::Error,
                        object: "file".into(),
                        message: e.to_string(),
                        reason: "hyraid cannot plan this file on this machine".into(),
                        fix: "see the message; `hyraid plan` shows the same".into(),
                    }),
                }
                findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.object.cmp(&b.object)));
            }
            let code = crate::plan::lint::exit_code(&findings);
            match format {
                StatusFormat::Text => print!("{}", crate::plan::lint::render_text(&findings)),
                StatusFormat::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(
                        &serde_json::json!({ "exit": code, "findings": findings })
                    )
                    .unwrap()
                ),
            }
            Ok(code)
        }
        Cmd::Schema => {
            println!(
                "{}",
                serde_json::to_string_pretty(&config::json_schema()).unwrap()
            );
            Ok(0)
        }
        Cmd::Observe { out, capture } => {
            let m = machine(&cli.sim)?;
            let recorder = crate::host::record::Recorder::new(m.host());
            let obs = apply::observe_for(&recorder, None)
                .map_err(|e| msg(format!("cannot observe the machine: {e}")))?;
            if let Some(path) = capture {
                let cap = crate::host::record::Capture {
                    hostname: m.host().hostname(),
                    exchanges: recorder.exchanges.take(),
                    observed: obs.clone(),
                };
                write_out(&path, &(serde_json::to_string_pretty(&cap).unwrap() + "\n"))?;
            }
            let text = serde_json::to_string_pretty(&obs).unwrap() + "\n";
            match out {
                Some(p) => write_out(&p, &text)?,
                None => print!("{text}"),
            }
            Ok(0)
        }
        Cmd::Plan {
            file,
            out,
            format,
            detailed_exitcode,
            allow_destroy,
        } => {
            let d = load(&file)?;
            let m = machine(&cli.sim)?;
            if let Some(pid) = Lock::holder(&m.lock_path()) {
                eprintln!(
                    "warning: an apply (pid {pid}) is running on this machine; this plan shows the machine in the middle of it — plan again when it has finished"
                );
            }
            let obs = apply::observe_for(m.host(), Some(&d))
                .map_err(|e| msg(format!("cannot observe the machine: {e}")))?;
            let mut p = plan(&d, &obs, Policy { allow_destroy }).map_err(|e| msg(e.to_string()))?;
            // The field's lints (bitmap, write-behind, write-mostly, writecache redundancy) on
            // the machine as this plan leaves it, as `status` would report them afterwards.
            if p.refused.is_empty()
                && let Some(after) = apply::preview::after_state(&p, &obs)
            {
                let conf = after.boot.mdadm_conf.clone();
                for f in crate::plan::lint::status(&after, Some(&d), conf.as_deref())
                    .into_iter()
                    .filter(|f| f.severity == crate::plan::lint::Severity::Lint)
                {
                    p.notes.push(format!(
                        "lint, after this plan: {}: {} — {} (fix: {})",
                        f.object, f.message, f.reason, f.fix
                    ));
                }
            }
            if out.is_some() || format == Format::Json {
                // A stale saved plan can then say what changed on the machine since.
                p.observed = Some(crate::plan::fingerprint::normalized(&obs));
            }
            if let Some(o) = out {
                write_out(&o, &apply::saved::json(&p))?;
            }
            if format == Format::Json {
                // For tools (Ansible's diff mode): each touched object before and after, from a
                // simulated run of the plan on a copy of what was observed.
                let mut v = apply::saved::json_value(&p);
                if let Some(objects) = apply::preview::object_states(&p, &obs) {
                    v["objects"] = serde_json::to_value(objects).expect("serializes");
                }
                println!("{}", serde_json::to_string_pretty(&v).expect("serializes"));
            } else {
                print!(
                    "{}",
                    render::render(&p, format, format == Format::Text && color())
                );
            }
            Ok(plan_exit_code(&p, detailed_exitcode))
        }
        Cmd::Show { plan: path, format } => {
            let p = read_plan(&path)?;
            print!(
                "{}",
                render::render(&p, format, format == Format::Text && color())
            );
            Ok(0)
        }
        Cmd::Apply(args) => apply_cmd(&cli.sim, &args),
        Cmd::Bench(args) => bench_cmd(&cli.sim, args),
        Cmd::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(shell, &mut Cli::command(), "hyraid", &mut std::io::stdout());
            Ok(0)
        }
        Cmd::Man => {
            let mut out = Vec::new();
            man_page(&mut out).map_err(|e| msg(format!("cannot render the manual: {e}")))?;
            std::io::stdout()
                .write_all(&out)
                .map_err(|e| msg(format!("cannot write the manual: {e}")))?;
            Ok(0)
        }
    }
}

/// `plan`'s exit status: 1 when anything is refused (with or without --detailed-exitcode: a
/// refusal is never "no changes"); with --detailed-exitcode, 2 when there are steps.
fn plan_exit_code(p: &Plan, detailed_exitcode: bool) -> u8 {
    if !p.refused.is_empty() {
        1
    } else if detailed_exitcode && !p.is_empty() {
        2
    } else {
        0
    }
}

fn read_plan(path: &Path) -> Result<Plan, CliError> {
    apply::saved::read(path).map_err(msg)
}

fn apply_cmd(sim: &Option<PathBuf>, a: &ApplyArgs) -> Result<u8, CliError> {
    let (file, dry_run, allow_destroy, yes, sim_write) = (
        a.file.as_path(),
        a.dry_run,
        a.allow_destroy,
        a.yes,
        a.sim_write,
    );
    let journal = a.journal.clone();
    let m = machine(sim)?;
    let host = m.host();
    let (lock_path, default_journal) = (m.lock_path(), m.journal_path());
    let _lock = if dry_run {
        None
    } else {
        Some(Lock::acquire(&lock_path).map_err(ApplyError::from)?)
    };
    let saved = apply::saved::is_saved_plan(file);
    let (p, obs) = if saved {
        let saved = read_plan(file)?;
        let obs = apply::observe_for(host, Some(&saved.desired)).map_err(ApplyError::from)?;
        // What runs is hyraid's own plan, re-derived and proven equal to the file's.
        let p = apply::check_saved(&saved, host, &obs, allow_destroy)?;
        (p, obs)
    } else {
        let d = load(file)?;
        let obs = apply::observe_for(host, Some(&d)).map_err(ApplyError::from)?;
        let p = plan(&d, &obs, Policy { allow_destroy }).map_err(|e| msg(e.to_string()))?;
        (p, obs)
    };
    let stdout = &mut std::io::stdout();
    print!("{}", render::text(&p, color()));
    // A refused difference stops the whole apply before anything runs (dry run or not).
    if !p.refused.is_empty() {
        apply::check_runnable(&p, allow_destroy)?;
    }
    if dry_run {
        println!("Dry run: nothing was changed.");
        return Ok(0);
    }
    if p.steps.is_empty() {
        return Ok(0);
    }
    apply::check_runnable(&p, allow_destroy)?;
    if !yes {
        if !std::io::stdin().is_terminal() {
            return Err(msg(
                "stdin is not a terminal, so hyraid cannot ask for confirmation; review the plan and pass --yes",
            ));
        }
        print!(
            "\nApply these {} step(s) to {}? Type `yes` to continue: ",
            p.steps.len(),
            p.host
        );
        let _ = stdout.flush();
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        if answer.trim() != "yes" {
            return Err(msg("not applied"));
        }
    }
    println!();
    let journal = Journal {
        path: Some(journal.unwrap_or(default_journal)),
    };
    apply::install_interrupt_handler();
    let opts = apply::ExecOptions {
        no_wait: a.no_wait,
        progress_bar: std::io::stdout().is_terminal(),
    };
    let result = apply::execute_report(host, &p, &obs, &journal, stdout, &opts).and_then(|n| {
        apply::verify(host, &p.desired, Policy { allow_destroy })?;
        Ok(n)
    });
    if let (Machine::Sim(h, path), true) = (&m, sim_write) {
        write_out(
            path,
            &(serde_json::to_string_pretty(&h.world()).unwrap() + "\n"),
        )?;
    }
    let applied = result?;
    println!(
        "\nApplied {} step(s); the machine now matches the file.{}",
        applied.steps,
        match applied.warnings.len() {
            0 => String::new(),
            n => format!(
                " The tools printed {n} warning(s), shown under their steps above (steps {}) and kept in the journal.",
                applied
                    .warnings
                    .iter()
                    .map(|(i, _)| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    );
    Ok(0)
}

fn bench_cmd(sim: &Option<PathBuf>, a: BenchArgs) -> Result<u8, CliError> {
    use crate::bench::{self, Report};
    if !a.compare.is_empty() {
        let reports = a
            .compare
            .iter()
            .map(|p| {
                let text =
                    std::fs::read_to_string(p).map_err(|e| msg(format!("{}: {e}", p.display())))?;
                serde_json::from_str::<Report>(&text).map_err(|e| {
                    msg(format!(
                        "{}: not a report of `hyraid bench -o`: {e}",
                        p.display()
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        print!("{}", bench::compare(&reports));
        return Ok(0);
    }
    if sim.is_some() {
        return Err(msg(
            "hyraid bench measures a real machine's I/O; it does not run with --sim",
        ));
    }
    let target = a.target.expect("clap requires a target without --compare");
    let o = bench::Options {
        target,
        size: a.size,
        runtime_s: a.runtime,
        ramp_s: a.ramp,
        jobs: if a.jobs.is_empty() {
            bench::fio::MATRIX.to_vec()
        } else {
            a.jobs
        },
        allow_destroy: a.allow_destroy,
        label: a.label,
    };
    let host = RealHost;
    let p = bench::prepare(&host, &o).map_err(|e| msg(e.to_string()))?;
    let per_job = (o.runtime_s + o.ramp_s) as u64;
    let total = o.jobs.len();
    let bar = if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(total as u64);
        b.set_style(bench_progress_style());
        b.enable_steady_tick(std::time::Duration::from_millis(200));
        Some(b)
    } else {
        None
    };
    apply::install_interrupt_handler();
    let r = bench::run(
        &host,
        &o,
        &p,
        &mut |i, job| {
            let line = format!(
                "{} (bs {}, queue depth {}), ~{per_job} s",
                job.name, job.bs, job.iodepth
            );
            match &bar {
                Some(b) => {
                    b.set_position(i as u64);
                    b.set_message(line);
                }
                None => eprintln!("[{}/{total}] {line}", i + 1),
            }
        },
        &apply::stop_requested,
    );
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let r = r.map_err(|e| match e {
        // The shell's convention for "stopped by SIGINT".
        bench::BenchError::Interrupted { .. } => CliError::Exit(130, e.to_string()),
        e => msg(e.to_string()),
    })?;
    print!("{}", bench::table(&r));
    if let Some(path) = a.out {
        write_out(&path, &(serde_json::to_string_pretty(&r).unwrap() + "\n"))?;
    }
    Ok(0)
}

/// hyraid(1): the clap definitions (synopsis, options, every subcommand with its options), then
/// the safety model, files and exit codes, which clap does not know.
pub fn man_page(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    use clap::CommandFactory;
    use clap_mangen::roff::{Roff, roman};
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let mut r = Roff::new();
        r.control(
            "SH",
            [format!("HYRAID {}", sub.get_name().to_uppercase()).as_str()],
        );
        let about = sub
            .get_long_about()
            .or(sub.get_about())
            .map(|a| a.to_string())
            .unwrap_or_default();
        r.text([roman(about)]);
        out.write_all(r.to_roff().as_bytes())?;
        let m = clap_mangen::Man::new(sub.clone().bin_name(format!("hyraid {}", sub.get_name())));
        m.render_synopsis_section(out)?;
        m.render_options_section(out)?;
    }
    let mut r = Roff::new();
    r.control("SH", ["SAFETY"]);
    r.text([roman(
        "Steps that destroy data or reduce redundancy are marked in the plan and refused by apply unless --allow-destroy is given. Objects the file does not name are reported and never touched. A disk is addressed only by its /dev/disk/by-id name, and a disk whose identity does not match the file is never touched.",
    )]);
    r.control("SH", ["FILES"]);
    r.text([roman(
        "/etc/mdadm/mdadm.conf (hyraid's ARRAY lines), /etc/udev/rules.d/61-hyraid-write-cache.rules (drive write caches at boot and hotplug), /var/log/hyraid/journal.jsonl (what apply ran), /run/lock/hyraid.lock (one apply at a time).",
    )]);
    r.control("SH", ["EXIT STATUS"]);
    r.text([roman(
        "0 success (plan --detailed-exitcode: no changes); 1 error, usage error, or a refused change (plan and apply alike; apply then runs nothing); 2 plan --detailed-exitcode: changes pending, status: degraded or findings; 130 apply interrupted.",
    )]);
    out.write_all(r.to_roff().as_bytes())?;
    man.render_version_section(out)?;
    Ok(())
}

fn bench_progress_style() -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} ({elapsed})")
        .expect("a valid progress template")
}

#[cfg(test)]
mod tests {
    #[test]
    fn bench_progress_template_is_valid() {
        // A bad template would only show on a terminal, as a panic.
        let b = indicatif::ProgressBar::hidden();
        b.set_style(super::bench_progress_style());
        b.set_message("rand-read-4k-qd32 (bs 4k, queue depth 32), ~12 s");
        b.set_position(3);
    }
}
