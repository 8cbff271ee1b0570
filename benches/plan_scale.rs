//! Plan at scale: how fast hyraid answers on 4, 24 and 240 disks.
//!
//! For each size a synthetic machine (hybrid mirrors, one VG per two mirrors, many LVs) is built
//! on the simulated host, then everything the observer read from it (lsblk JSON, the LVM
//! fullreport JSON, /proc/mdstat, md sysfs, hdparm output) is captured and replayed, so the
//! observation phase parses real-format tool output without the simulator's own cost. Phases,
//! each measured alone by criterion:
//!
//! * `config`  — load and validate the YAML (schema + semantic checks);
//! * `observe` — build the observed model from the captured tool output;
//! * `plan`    — diff desired against observed;
//! * `render`  — the plan as text, Markdown, JSON and shell script (all four).
//!
//! Two situations: `drift` (the machine already matches: the cron/CI/Ansible check, 0 steps) and
//! `build` (blank disks: every step planned and rendered). `cargo bench --bench plan_scale` ends
//! with a table of criterion's medians, the end-to-end sums and the 240/24 ratios, checked
//! against the targets (24 disks end to end ≤ 50 ms; 10× the work ≤ 12× the time).

use criterion::{BenchmarkId, Criterion};
use hyraid::apply::{self, Journal};
use hyraid::config::{Desired, load_str};
use hyraid::host::record::{Recorder, Replay};
use hyraid::observe::Observed;
use hyraid::observe::capture::Capture;
use hyraid::plan::{Plan, Policy, plan};
use hyraid::render::{self, Format};
use hyraid::sim::SimHost;
use hyraid::sim::synthetic::{Shape, blank_machine, config_yaml};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

const SHAPES: [Shape; 3] = [
    Shape { pairs: 2, lvs: 4 },
    Shape {
        pairs: 12,
        lvs: 200,
    },
    Shape {
        pairs: 120,
        lvs: 2000,
    },
];
const PHASES: [&str; 4] = ["config", "observe", "plan", "render"];
const SITUATIONS: [&str; 2] = ["drift", "build"];

struct Case {
    yaml: String,
    desired: Desired,
    /// What the observer read, per situation.
    captures: [Capture; 2],
    observed: [Observed; 2],
    plans: [Plan; 2],
}

fn capture(h: &SimHost, d: &Desired) -> (Capture, Observed) {
    let rec = Recorder::new(h);
    let obs = hyraid::machine::observe_for(&rec, Some(d)).expect("observe");
    let cap = Capture {
        hostname: hyraid::host::Host::hostname(h),
        exchanges: rec.take_exchanges(),
        observed: obs.clone(),
    };
    (cap, obs)
}

fn case(shape: Shape) -> Case {
    let yaml = config_yaml(shape);
    let desired = load_str("scale.yaml", &yaml).expect("config");
    let blank = SimHost::new(blank_machine(shape));
    let (cap_blank, obs_blank) = capture(&blank, &desired);
    let build = plan(&desired, &obs_blank, Policy::default()).expect("plan");
    apply::execute(
        &blank,
        &build,
        &obs_blank,
        &Journal { path: None },
        &mut std::io::sink(),
    )
    .expect("apply");
    let (cap_built, obs_built) = capture(&blank, &desired);
    let drift = plan(&desired, &obs_built, Policy::default()).expect("plan");
    assert!(drift.is_empty(), "the built machine converged");
    Case {
        yaml,
        desired,
        captures: [cap_built, cap_blank],
        observed: [obs_built, obs_blank],
        plans: [drift, build],
    }
}

fn render_all(p: &Plan) -> usize {
    [Format::Text, Format::Markdown, Format::Json, Format::Shell]
        .into_iter()
        .map(|f| render::render(p, f, false).len())
        .sum()
}

fn bench(c: &mut Criterion, cases: &[(Shape, Case)]) {
    for (si, situation) in SITUATIONS.iter().enumerate() {
        let mut g = c.benchmark_group(*situation);
        g.sample_size(10).warm_up_time(Duration::from_millis(500));
        for (shape, k) in cases {
            let id = |phase: &str| BenchmarkId::new(phase, shape.disks());
            if si == 0 {
                g.bench_function(id("config"), |b| {
                    b.iter(|| load_str("scale.yaml", black_box(&k.yaml)).unwrap())
                });
            }
            let replay = Replay::from(k.captures[si].clone());
            g.bench_function(id("observe"), |b| {
                b.iter(|| {
                    hyraid::machine::observe_for(black_box(&replay), Some(&k.desired)).unwrap()
                })
            });
            g.bench_function(id("plan"), |b| {
                b.iter(|| plan(&k.desired, black_box(&k.observed[si]), Policy::default()).unwrap())
            });
            g.bench_function(id("render"), |b| {
                b.iter(|| render_all(black_box(&k.plans[si])))
            });
        }
        g.finish();
    }
}

/// Criterion's median estimate (seconds) of one benchmark, from its saved estimates.
fn median(situation: &str, phase: &str, disks: usize) -> Option<f64> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    let situation = if phase == "config" {
        "drift"
    } else {
        situation
    };
    let path = target.join(format!(
        "criterion/{situation}/{phase}/{disks}/new/estimates.json"
    ));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    Some(v["median"]["point_estimate"].as_f64()? / 1e9)
}

fn ms(s: f64) -> String {
    format!("{:.3}", s * 1e3)
}

/// The table of medians and the scaling checks; false when a target is missed.
fn report(cases: &[(Shape, Case)]) -> bool {
    let mut ok = true;
    println!("\nplan at scale — criterion medians in ms (10 samples each)\n");
    for situation in SITUATIONS {
        println!("{situation}:");
        print!("| phase |");
        for (s, k) in cases {
            print!(
                " {} disks / {} mirrors / {} LVs ({} steps) |",
                s.disks(),
                s.pairs,
                s.lvs,
                k.plans[if situation == "drift" { 0 } else { 1 }]
                    .steps
                    .len()
            );
        }
        println!(" 240 / 24 |");
        println!("|---|---:|---:|---:|---:|");
        let mut totals = vec![0.0; cases.len()];
        for phase in PHASES {
            let row: Vec<f64> = cases
                .iter()
                .map(|(s, _)| median(situation, phase, s.disks()).unwrap_or(f64::NAN))
                .collect();
            for (t, v) in totals.iter_mut().zip(&row) {
                *t += v;
            }
            print!("| {phase} |");
            for v in &row {
                print!(" {} |", ms(*v));
            }
            println!(" {:.1}× |", row[2] / row[1]);
        }
        print!("| **end to end** |");
        for v in &totals {
            print!(" **{}** |", ms(*v));
        }
        let ratio = totals[2] / totals[1];
        println!(" **{ratio:.1}×** |");
        let fast = totals[1] <= 0.050;
        let linear = ratio <= 12.0;
        println!(
            "  24 disks end to end {} ms (target ≤ 50): {}; 10× the work took {:.1}× the time (target ≤ 12×): {}\n",
            ms(totals[1]),
            if fast { "ok" } else { "MISSED" },
            ratio,
            if linear { "ok" } else { "MISSED" }
        );
        ok &= fast && linear;
    }
    ok
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let cases: Vec<(Shape, Case)> = SHAPES.iter().map(|s| (*s, case(*s))).collect();
    bench(&mut c, &cases);
    c.final_summary();
    // `cargo bench` passes --bench; `cargo test --benches` runs every benchmark once and saves
    // no estimates, so there is no table to print.
    if std::env::args().any(|a| a == "--bench") && !report(&cases) {
        std::process::exit(1);
    }
}
