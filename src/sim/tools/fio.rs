//! fio on the simulated machine: a model of what the stack delivers, so that tests can see the
//! settings at work (not a measurement). SSDs read 500 MiB/s and write 450; HDDs read 150 and
//! write 50, 120 with their drive cache on; random 4K is the SSD's tens of thousands of IOPS and
//! the HDD's hundreds. A mirror reads from its SSD when every HDD member is write-mostly (else
//! half from each), writes at its slowest member's speed (write-behind lets the write-mostly
//! member lag a little), a writecache takes writes at the cache's speed, stripes add up. Each
//! run varies by up to ±3% (the same for the same run number), as a real disk does from run to
//! run. Also `df` of a mount point and `rm` of a test file on one.

use crate::host::{CmdOutput, HostError};
use crate::observe::{Lv, Observed};
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};

/// (sequential MiB/s, random 4K IOPS at depth 32) of one device, read and write.
#[derive(Clone, Copy)]
struct Speed {
    seq_r: f64,
    seq_w: f64,
    iops_r: f64,
    iops_w: f64,
}

fn disk_speed(w: &Observed, kname: &str) -> Speed {
    let d = w.device(kname);
    let whole = d
        .and_then(|d| d.parent.as_deref())
        .and_then(|p| w.device(p))
        .or(d);
    let rotational = whole.is_some_and(|d| d.rotational);
    let cache_on = whole
        .and_then(|d| d.write_cache)
        .and_then(|c| c.enabled)
        .unwrap_or(false);
    if rotational {
        Speed {
            seq_r: 150.0,
            seq_w: if cache_on { 120.0 } else { 50.0 },
            iops_r: 200.0,
            iops_w: if cache_on { 250.0 } else { 180.0 },
        }
    } else {
        Speed {
            seq_r: 500.0,
            seq_w: 450.0,
            iops_r: 85000.0,
            iops_w: 40000.0,
        }
    }
}

/// What a PV (a mirror or a disk) delivers.
fn pv_speed(w: &Observed, kname: &str) -> Speed {
    let Some(a) = w.array(kname) else {
        return disk_speed(w, kname);
    };
    let members: Vec<(Speed, bool)> = a
        .members
        .iter()
        .filter(|m| !m.faulty() && m.has("in_sync"))
        .map(|m| (disk_speed(w, &m.kname), m.write_mostly()))
        .collect();
    if members.is_empty() {
        return Speed {
            seq_r: 0.0,
            seq_w: 0.0,
            iops_r: 0.0,
            iops_w: 0.0,
        };
    }
    let readers: Vec<&Speed> = members
        .iter()
        .filter(|(_, wm)| !wm)
        .map(|(s, _)| s)
        .collect();
    let readers: Vec<&Speed> = if readers.is_empty() {
        members.iter().map(|(s, _)| s).collect()
    } else {
        readers
    };
    let n = readers.len() as f64;
    let min = |f: fn(&Speed) -> f64| members.iter().map(|(s, _)| f(s)).fold(f64::MAX, f64::min);
    let behind = a.bitmap.as_ref().map(|b| b.backlog).unwrap_or(0) > 0;
    let lag = if behind { 1.03 } else { 1.0 };
    Speed {
        // Reads are spread over the members md reads from; a slow one holds a stream back.
        seq_r: readers
            .iter()
            .map(|s| s.seq_r)
            .fold(f64::MAX, f64::min)
            .max(readers.iter().map(|s| s.seq_r).sum::<f64>() / (2.0 * n)),
        seq_w: min(|s| s.seq_w) * lag,
        iops_r: readers.iter().map(|s| s.iops_r).fold(f64::MAX, f64::min) * n,
        iops_w: min(|s| s.iops_w) * lag,
    }
}

/// What an LV delivers: its PVs' (striped: summed), a writecache's cache for writes.
fn lv_speed(w: &Observed, l: &Lv) -> Speed {
    let data = l
        .writecache
        .as_ref()
        .and_then(|wc| w.lv(&l.vg, &wc.origin))
        .unwrap_or(l);
    let pvs: Vec<Speed> = data
        .extents
        .keys()
        .map(|k| pv_speed(w, k.rsplit(':').next().unwrap_or(k)))
        .collect();
    let sum = |f: fn(&Speed) -> f64| pvs.iter().map(f).sum::<f64>();
    let min = |f: fn(&Speed) -> f64| pvs.iter().map(f).fold(f64::MAX, f64::min);
    let mut s = if data.stripes > 1 {
        Speed {
            seq_r: sum(|s| s.seq_r),
            seq_w: sum(|s| s.seq_w),
            iops_r: sum(|s| s.iops_r),
            iops_w: sum(|s| s.iops_w),
        }
    } else {
        Speed {
            seq_r: min(|s| s.seq_r),
            seq_w: min(|s| s.seq_w),
            iops_r: min(|s| s.iops_r),
            iops_w: min(|s| s.iops_w),
        }
    };
    if let Some(wc) = &l.writecache
        && let Some(cv) = w.lv(&l.vg, &wc.cachevol)
    {
        let c = lv_speed(w, cv);
        s.seq_w = c.seq_w * 0.45;
        s.iops_w = c.iops_w * 0.3;
        s.seq_r *= 0.85;
    }
    s
}

/// The LV a fio target is on: a device, or a file under a mount point.
fn lv_of<'a>(st: &'a SimState, filename: &str) -> Option<&'a Lv> {
    let w = &st.world;
    if let Some(Target::Lv(vg, lv)) = st.resolve(filename) {
        return w.lv(&vg, &lv);
    }
    let f = w
        .filesystems
        .iter()
        .filter(|f| !f.md)
        .filter(|f| {
            f.mountpoint
                .as_deref()
                .is_some_and(|m| filename.starts_with(&format!("{}/", m.trim_end_matches('/'))))
        })
        .max_by_key(|f| f.mountpoint.as_ref().map(|m| m.len()))?;
    w.lv(&f.vg, &f.lv)
}

fn arg<'a>(args: &[&'a str], key: &str) -> Option<&'a str> {
    args.iter().find_map(|a| a.strip_prefix(key))
}

/// `fio --name=… --filename=… --rw=… --bs=… --iodepth=… --output-format=json …`.
pub fn fio(st: &mut SimState, args: &[&str]) -> Result<CmdOutput, HostError> {
    if args == ["--version"] {
        return out("fio-3.33\n");
    }
    let (Some(name), Some(file), Some(rw), Some(bs)) = (
        arg(args, "--name="),
        arg(args, "--filename="),
        arg(args, "--rw="),
        arg(args, "--bs="),
    ) else {
        return fail(1, "fio: the simulated host runs only hyraid's fio jobs\n");
    };
    let depth: f64 = arg(args, "--iodepth=")
        .and_then(|d| d.parse().ok())
        .unwrap_or(1.0);
    let runtime: f64 = arg(args, "--runtime=")
        .and_then(|d| d.parse().ok())
        .unwrap_or(10.0);
    let Some(l) = lv_of(st, file) else {
        return fail(1, format!("fio: {file}: No such file or directory\n"));
    };
    let s = lv_speed(&st.world, l);
    let runtime: f64 = runtime;
    let reads = rw.ends_with("read");
    let block = match bs {
        "1M" | "1m" => 1 << 20,
        "512k" | "512K" => 512 << 10,
        _ => 4096,
    } as f64;
    let mib = (1 << 20) as f64;
    let bw = if block >= 512.0 * 1024.0 {
        let seq = if reads { s.seq_r } else { s.seq_w };
        let random = rw.starts_with("rand");
        // Random large blocks cost an HDD its seeks.
        (if random && seq < 200.0 {
            seq * 0.6
        } else {
            seq
        }) * mib
    } else {
        let iops = if reads { s.iops_r } else { s.iops_w };
        // Depth 1 waits for each I/O: a tenth of depth 32 on flash, the same on a spinning disk.
        let at_depth = if depth >= 32.0 || iops < 1000.0 {
            iops
        } else {
            iops / 8.0
        };
        at_depth * block
    };
    count_io(st, file, reads, (bw * runtime / block) as u64);
    // Up to ±3% from run to run, the same for the same run number.
    st.serial += 1;
    let jitter =
        1.0 + ((st.serial.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % 61) as f64 / 1000.0 - 0.03;
    let bw = bw * jitter;
    let iops = bw / block;
    let lat_us = depth * 1e6 / iops.max(1.0);
    let dir = serde_json::json!({
        "iops": iops,
        "bw_bytes": bw,
        "io_bytes": (bw * runtime) as u64,
        "lat_ns": { "mean": lat_us * 1000.0 },
        "clat_ns": { "percentile": { "99.000000": lat_us * 2500.0 } }
    });
    let idle = serde_json::json!({ "iops": 0.0, "bw_bytes": 0.0, "io_bytes": 0, "lat_ns": { "mean": 0.0 } });
    let (r, w) = if reads { (dir, idle) } else { (idle, dir) };
    let report = serde_json::json!({
        "fio version": "fio-3.33",
        "jobs": [{ "jobname": name, "error": 0, "read": r, "write": w }]
    });
    out(&format!("{report}\n"))
}

/// The mounted filesystem a path is on (the longest mount point that holds it).
fn mounted<'a>(st: &'a SimState, path: &str) -> Option<&'a crate::observe::Filesystem> {
    let path = path.trim_end_matches('/');
    st.world
        .filesystems
        .iter()
        .filter(|f| {
            f.mountpoint.as_deref().is_some_and(|m| {
                let m = m.trim_end_matches('/');
                path == m || path.starts_with(&format!("{m}/"))
            })
        })
        .max_by_key(|f| f.mountpoint.as_ref().map_or(0, |m| m.len()))
}

/// `df --output=avail -B1 -- PATH`: half the filesystem free.
pub fn df(st: &SimState, path: &str) -> Result<CmdOutput, HostError> {
    match mounted(st, path) {
        Some(f) => out(&format!("Avail\n{}\n", f.size.unwrap_or(1 << 30) / 2)),
        None => fail(1, format!("df: {path}: No such file or directory\n")),
    }
}

/// `stat -L --format=%F PATH`: a directory on a mounted filesystem (the model keeps no files:
/// any path under a mount point is one), or a block device.
pub fn stat_kind(st: &SimState, path: &str) -> Result<CmdOutput, HostError> {
    if st.resolve(path).is_some() {
        return out("block special file\n");
    }
    match mounted(st, path) {
        Some(_) => out("directory\n"),
        None => fail(
            1,
            format!("stat: cannot statx '{path}': No such file or directory\n"),
        ),
    }
}

/// The disks under the LV a fio target is on get its I/Os: md reads from the members that are
/// not write-mostly (all of them when every one is), and writes to every member in sync.
fn count_io(st: &mut SimState, file: &str, reads: bool, ios: u64) {
    let Some(l) = lv_of(st, file) else { return };
    let data = l
        .writecache
        .as_ref()
        .and_then(|wc| st.world.lv(&l.vg, &wc.origin))
        .unwrap_or(l);
    let mut hits: Vec<String> = Vec::new();
    for k in data
        .extents
        .keys()
        .map(|k| k.rsplit(':').next().unwrap_or(k).to_string())
    {
        match st.world.array(&k) {
            Some(a) => {
                let live: Vec<_> = a
                    .members
                    .iter()
                    .filter(|m| !m.faulty() && m.has("in_sync"))
                    .collect();
                let readers: Vec<_> = live.iter().filter(|m| !m.write_mostly()).collect();
                let to: Vec<String> = match (reads, readers.is_empty()) {
                    (true, false) => readers.iter().map(|m| m.kname.clone()).collect(),
                    _ => live.iter().map(|m| m.kname.clone()).collect(),
                };
                hits.extend(to);
            }
            None => hits.push(k),
        }
    }
    let n = hits.len().max(1) as u64;
    for k in hits {
        let e = st.io.entry(k).or_default();
        if reads {
            e.0 += ios / n;
        } else {
            e.1 += ios;
        }
    }
}

/// `/sys/class/block/KNAME/stat`: the kernel's eleven (or more) counters, reads and writes
/// completed in the first and fifth.
pub fn stat_line(st: &SimState, kname: &str) -> String {
    let (r, w) = st.io.get(kname).copied().unwrap_or((0, 0));
    format!("{r:>8} 0 {:>8} 0 {w:>8} 0 {:>8} 0 0 0 0\n", r * 8, w * 8)
}
