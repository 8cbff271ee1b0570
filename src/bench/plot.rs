//! Pictures of runs: grouped bars (one group per job, one bar per configuration or run), drawn
//! with plotters' SVG backend; a log scale when the values span more than the eye can compare
//! on a linear one (a 4K write on an HDD next to a sequential read on an SSD).

use plotters::prelude::*;

/// What a picture shows.
#[derive(Debug, Clone)]
pub struct Bars {
    pub title: String,
    /// What the values are (`MiB/s`).
    pub unit: String,
    /// One group per job.
    pub groups: Vec<String>,
    /// One series per configuration or run: its name and a value per group (`None`: not
    /// measured).
    pub series: Vec<(String, Vec<Option<f64>>)>,
}

/// The series' colours, far apart for the eye and in grey print.
pub const COLORS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// The picture's size in pixels.
pub const SIZE: (u32, u32) = (1200, 640);

/// Whether the values need a log scale: the largest over 30 times the smallest.
pub fn needs_log(b: &Bars) -> bool {
    let v: Vec<f64> = b
        .series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().copied())
        .filter(|x| *x > 0.0)
        .collect();
    let (lo, hi) = v
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
    !v.is_empty() && hi / lo > 30.0
}

/// A figure as the tables and bars print it: three significant digits or so.
pub fn figure(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// The picture as SVG text.
pub fn svg(b: &Bars) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        draw(&root, b).map_err(|e| format!("cannot draw the picture: {e}"))?;
        root.present()
            .map_err(|e| format!("cannot draw the picture: {e}"))?;
    }
    Ok(out)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    b: &Bars,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let groups = b.groups.len().max(1);
    let n = b.series.len().max(1);
    let hi = b
        .series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().copied())
        .fold(0.0f64, f64::max)
        .max(1e-3);
    let lo = b
        .series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().copied())
        .filter(|x| *x > 0.0)
        .fold(f64::MAX, f64::min);
    let log = needs_log(b);
    let (area, legend) = root.split_horizontally(SIZE.0 - 300);
    let mut chart = ChartBuilder::on(&area);
    chart
        .caption(&b.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70);
    let width = 0.8 / n as f64;
    let bars = |i: usize, k: usize, v: f64, base: f64| {
        let x0 = i as f64 + 0.1 + k as f64 * width;
        Rectangle::new(
            [(x0, base), (x0 + width * 0.92, v)],
            COLORS[k % COLORS.len()].filled(),
        )
    };
    let group_names = b.groups.clone();
    let x_fmt = move |x: &f64| {
        let i = (x - 0.5).round();
        if (x - 0.5 - i).abs() < 1e-6 && i >= 0.0 {
            group_names.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let values: Vec<(usize, usize, f64)> = b
        .series
        .iter()
        .enumerate()
        .flat_map(|(k, (_, v))| {
            v.iter()
                .enumerate()
                .filter_map(move |(i, x)| x.map(|x| (i, k, x)))
        })
        .collect();
    let small = ("sans-serif", 10).into_font();
    if log {
        let floor = 10f64.powf((lo * 0.5).log10().floor());
        let mut c = chart.build_cartesian_2d(0.0..groups as f64, (floor..hi * 3.0).log_scale())?;
        c.configure_mesh()
            .disable_x_mesh()
            .x_labels(groups * 2 + 1)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&|y: &f64| figure(*y))
            .y_desc(format!("{}, higher is faster (log scale)", b.unit))
            .draw()?;
        c.draw_series(
            values
                .iter()
                .map(|(i, k, v)| bars(*i, *k, v.max(floor), floor)),
        )?;
        c.draw_series(values.iter().map(|(i, k, v)| {
            Text::new(
                figure(*v),
                (*i as f64 + 0.1 + *k as f64 * width, v.max(floor) * 1.08),
                small.clone(),
            )
        }))?;
    } else {
        let mut c = chart.build_cartesian_2d(0.0..groups as f64, 0.0..hi * 1.12)?;
        c.configure_mesh()
            .disable_x_mesh()
            .x_labels(groups * 2 + 1)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&|y: &f64| figure(*y))
            .y_desc(format!("{}, higher is faster", b.unit))
            .draw()?;
        c.draw_series(values.iter().map(|(i, k, v)| bars(*i, *k, *v, 0.0)))?;
        c.draw_series(values.iter().map(|(i, k, v)| {
            Text::new(
                figure(*v),
                (*i as f64 + 0.1 + *k as f64 * width, v + hi * 0.02),
                small.clone(),
            )
        }))?;
    }
    // The legend: a swatch and the name of each series.
    let font = ("sans-serif", 14).into_font();
    for (k, (name, _)) in b.series.iter().enumerate() {
        let y = 60 + 26 * k as i32;
        legend.draw(&Rectangle::new(
            [(10, y), (30, y + 16)],
            COLORS[k % COLORS.len()].filled(),
        ))?;
        legend.draw(&Text::new(name.clone(), (38, y + 2), font.clone()))?;
    }
    Ok(())
}

/// Saved bench reports side by side: one series per report (its label), MiB/s per job.
pub fn bench_bars(reports: &[super::Report]) -> Bars {
    let mut groups: Vec<String> = Vec::new();
    for r in reports {
        for j in &r.jobs {
            if !groups.contains(&j.name) {
                groups.push(j.name.clone());
            }
        }
    }
    let series = reports
        .iter()
        .map(|r| {
            let v = groups
                .iter()
                .map(|g| {
                    r.jobs
                        .iter()
                        .find(|j| &j.name == g)
                        .map(|j| j.measured.bw_bytes / 1048576.0)
                })
                .collect();
            (r.label.clone(), v)
        })
        .collect();
    Bars {
        title: format!("hyraid bench: {} run(s) side by side", reports.len()),
        unit: "MiB/s".into(),
        groups,
        series,
    }
}
