//! The pictures of `tune --plot` and `bench --compare --plot`: real runs drawn to SVG, converted
//! to PNG by the distribution's rsvg-convert (librsvg2-bin; `.ci/run` installs it), and the PNG
//! checked: its size, a bar of every series' colour in every group, the labels in the SVG.

use crate::common;
use common::tune::tune_box;
use hyraid::bench::plot::{self, Bars, COLORS, SIZE};
use hyraid::tune::{self, Options, Profile, Target, TuneReport, Workload};
use std::path::Path;
use std::process::Command;

fn tune_run() -> TuneReport {
    let (d, h) = tune_box();
    let o = Options {
        file: "hyraid.yaml".into(),
        text: common::tune::TUNE_YAML.into(),
        target: Target::Directory("/srv/data".into()),
        profile: Profile::quick(),
        workload: Workload::Mixed,
        jobs: tune::JOBS.to_vec(),
        journal: None,
    };
    tune::run(&h, &d, &o, &mut |_| {}, &hyraid::machine::Stop::new()).unwrap()
}

/// The SVG as rsvg-convert renders it: width, height and RGB pixels.
fn render(svg: &str, dir: &Path) -> (u32, u32, Vec<u8>) {
    let svg_path = dir.join("p.svg");
    let png_path = dir.join("p.png");
    std::fs::write(&svg_path, svg).unwrap();
    let out = Command::new("rsvg-convert")
        .args(["-f", "png", "-b", "white", "-o"])
        .arg(&png_path)
        .arg(&svg_path)
        .output()
        .expect("rsvg-convert is not installed: `apt-get install librsvg2-bin` (the picture test converts the SVG to PNG with it)");
    assert!(
        out.status.success(),
        "rsvg-convert: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let rgb: Vec<u8> = buf[..info.buffer_size()]
        .chunks(channels)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, rgb)
}

/// How many pixels of each series' colour each group's slot of the plot holds.
fn bars_per_group(b: &Bars, w: u32, rgb: &[u8]) -> Vec<Vec<usize>> {
    let plot_left = 82.0;
    let plot_right = (SIZE.0 - 300) as f64 - 12.0;
    let slot = (plot_right - plot_left) / b.groups.len() as f64;
    let mut counts = vec![vec![0usize; b.series.len()]; b.groups.len()];
    for (i, px) in rgb.chunks(3).enumerate() {
        let x = (i as u32 % w) as f64;
        if x < plot_left || x >= plot_right {
            continue;
        }
        let g = (((x - plot_left) / slot) as usize).min(b.groups.len() - 1);
        for (k, c) in COLORS.iter().enumerate().take(b.series.len()) {
            if (px[0], px[1], px[2]) == (c.0, c.1, c.2) {
                counts[g][k] += 1;
            }
        }
    }
    counts
}

fn check_picture(b: &Bars, svg: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (w, h, rgb) = render(svg, dir.path());
    assert_eq!((w, h), SIZE);
    let counts = bars_per_group(b, w, &rgb);
    for (g, row) in counts.iter().enumerate() {
        for (k, n) in row.iter().enumerate() {
            if b.series[k].1[g].is_some() {
                assert!(
                    *n > 40,
                    "no bar of `{}` in group `{}` ({n} pixels)",
                    b.series[k].0,
                    b.groups[g]
                );
            }
        }
    }
    // The labels: the title, every group, every series, the unit.
    for label in std::iter::once(&b.title)
        .chain(&b.groups)
        .chain(b.series.iter().map(|(n, _)| n))
    {
        let escaped = label
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        assert!(
            svg.contains(&format!(">{escaped}<")) || svg.contains(&escaped),
            "label `{label}` missing"
        );
    }
    assert!(svg.contains(&b.unit));
}

#[test]
fn a_tune_run_is_drawn_with_a_bar_per_configuration_and_job() {
    let r = tune_run();
    let b = tune::bars(&r);
    assert_eq!(b.series.len(), 5);
    assert_eq!(b.groups.len(), 6);
    // 0.7 MiB/s of 4K writes beside 500 MiB/s of reads: only a log scale shows both.
    assert!(plot::needs_log(&b));
    let svg = plot::svg(&b).unwrap();
    assert!(svg.contains("log scale"));
    check_picture(&b, &svg);
}

#[test]
fn bench_runs_side_by_side_on_a_linear_scale() {
    let r = tune_run();
    // Two of the run's reports (the file's, then the drive cache on) as `bench -o` saves them.
    let reports = [r.configs[0].runs[0].clone(), r.configs[3].runs[0].clone()];
    let mut b = plot::bench_bars(&reports);
    // Only the sequential jobs: values within one order of magnitude.
    b.groups.truncate(2);
    for s in &mut b.series {
        s.1.truncate(2);
    }
    assert!(!plot::needs_log(&b));
    let svg = plot::svg(&b).unwrap();
    assert!(!svg.contains("log scale"));
    check_picture(&b, &svg);
}

/// The picture of the real kernel's run (VM 39-tune): drawn from its JSON, checked as a PNG,
/// and the one docs/ shows is exactly that drawing.
#[test]
fn the_real_kernel_run_is_drawn_and_is_the_picture_the_docs_show() {
    let text = std::fs::read_to_string("tests/fixtures/tune/vm-bookworm.json").unwrap();
    let r: TuneReport = serde_json::from_str(&text).unwrap();
    let b = tune::bars(&r);
    assert_eq!(b.series.len(), 5);
    assert_eq!(b.groups.len(), 6);
    let svg = plot::svg(&b).unwrap();
    check_picture(&b, &svg);
    let shown = std::fs::read_to_string("docs/tune-vm.svg").unwrap();
    assert!(
        shown == svg,
        "docs/tune-vm.svg is not the drawing of tests/fixtures/tune/vm-bookworm.json: `hyraid tune` wrote both in VM 39-tune; copy them together"
    );
}
