//! The bench against a machine with one md array, a directory and fio answering from fixtures.

use super::*;
use crate::host::CmdOutput;
use crate::observe::parse_util::fixture;
use std::sync::Mutex;

/// A machine with one md array (sda + sdb), a directory, and fio answering from fixtures;
/// every job moves the md members' counters as write-mostly does (sdb serves no reads).
struct Box1 {
    log: Mutex<Vec<String>>,
    counters: Mutex<BTreeMap<String, MemberIo>>,
    mounted: bool,
    avail: u64,
}

impl Box1 {
    fn new() -> Box1 {
        Box1 {
            log: Mutex::new(vec![]),
            counters: Mutex::new(BTreeMap::new()),
            mounted: false,
            avail: 50 << 30,
        }
    }
}

impl Host for Box1 {
    fn run(&self, argv: &[String]) -> Result<CmdOutput, HostError> {
        self.log.lock().unwrap().push(argv.join(" "));
        let ok = |s: String| {
            Ok(CmdOutput {
                status: 0,
                stdout: s,
                stderr: String::new(),
            })
        };
        let last = argv.last().unwrap().as_str();
        match argv[0].as_str() {
            "stat" => match last {
                "/srv" | "/srv/" => ok("directory\n".into()),
                "/dev/md127" | "/dev/sdc" => ok("block special file\n".into()),
                "/srv/f" => ok("regular file\n".into()),
                _ => Ok(CmdOutput {
                    status: 1,
                    stdout: String::new(),
                    stderr: format!("stat: cannot statx '{last}': No such file or directory"),
                }),
            },
            "df" => ok(format!("    Avail\n{}\n", self.avail)),
            "lsblk" if last == "/dev/md127" => ok(format!(
                r#"{{"blockdevices":[{{"kname":"md127","name":"md127","type":"raid1","size":2145386496,"rota":false,"maj:min":"9:127","fstype":null,"mountpoint":{}}}]}}"#,
                if self.mounted { "\"/srv\"" } else { "null" }
            )),
            "lsblk" => ok(r#"{"blockdevices":[{"kname":"sdc","name":"sdc","type":"disk","size":2147483648,"rota":true,"maj:min":"8:32","fstype":"ext4","children":[{"kname":"sdc1","name":"sdc1","type":"part","size":1048576,"rota":true,"maj:min":"8:33"}]}]}"#.into()),
            "fio" => {
                let reads = argv.iter().any(|a| a.ends_with("read"));
                let mut c = self.counters.lock().unwrap();
                let sda = c.entry("sda".into()).or_default();
                if reads { sda.reads += 100 } else { sda.writes += 100 }
                if !reads {
                    c.entry("sdb".into()).or_default().writes += 100;
                }
                ok(fixture(if reads { "fio/rand-read-4k-qd32.json" } else { "fio/seq-write-1m-qd1.json" }))
            }
            "rm" => ok(String::new()),
            _ => Err(HostError::Spawn { program: argv[0].clone(), detail: "not modelled".into() }),
        }
    }
    fn read_file(&self, path: &str) -> Result<String, HostError> {
        let k = path.split('/').nth(4).unwrap_or("");
        let c = self
            .counters
            .lock()
            .unwrap()
            .get(k)
            .copied()
            .unwrap_or_default();
        Ok(format!(
            "{} 0 0 0 {} 0 0 0 0 0 0 0 0 0 0 0 0\n",
            c.reads + 7,
            c.writes + 3
        ))
    }
    fn write_file(&self, _: &str, _: &str) -> Result<(), HostError> {
        unreachable!()
    }
    fn list_dir(&self, path: &str) -> Result<Vec<String>, HostError> {
        match path {
            "/sys/block/md127/slaves" => Ok(vec!["sda".into(), "sdb".into()]),
            _ => Ok(vec![]), // a disk's slaves directory is empty
        }
    }
    fn read_link(&self, path: &str) -> Result<String, HostError> {
        Err(HostError::NotFound { path: path.into() })
    }
    fn hostname(&self) -> String {
        "box1".into()
    }
    fn is_root(&self) -> bool {
        true
    }
    fn is_simulated(&self) -> bool {
        true
    }
    fn sleep(&self, _: std::time::Duration) {}
    fn exists(&self, _: &str) -> bool {
        false
    }
    fn replace_file(&self, _: &str, _: &str) -> Result<(), HostError> {
        unreachable!()
    }
}

fn opts(target: &str, allow_destroy: bool) -> Options {
    Options {
        target: target.into(),
        size: 1 << 30,
        runtime_s: 5,
        ramp_s: 1,
        loops: None,
        jobs: fio::MATRIX.to_vec(),
        allow_destroy,
        label: None,
    }
}

#[test]
fn a_raw_device_needs_allow_destroy_and_must_be_unused() {
    let h = Box1::new();
    let e = prepare(&h, &opts("/dev/md127", false))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("destroy the data on /dev/md127") && e.contains("--allow-destroy"),
        "{e}"
    );
    let e = prepare(&h, &opts("/dev/sdc", true))
        .unwrap_err()
        .to_string();
    assert!(e.contains("/dev/sdc is in use: sdc1 is on it"), "{e}");
    let mut h = Box1::new();
    h.mounted = true;
    let e = prepare(&h, &opts("/dev/md127", true))
        .unwrap_err()
        .to_string();
    assert!(e.contains("is mounted (at /srv)"), "{e}");
    let e = prepare(&h, &opts("/srv/f", true)).unwrap_err().to_string();
    assert!(e.contains("is a regular file"), "{e}");
    assert!(
        prepare(&h, &opts("/nope", true))
            .unwrap_err()
            .to_string()
            .contains("No such file")
    );
    // Nothing was written: only probes ran (fio only asked its version).
    assert!(
        h.log
            .lock()
            .unwrap()
            .iter()
            .all(|c| !c.starts_with("fio") || c == "fio --version")
    );
}

#[test]
fn a_directory_needs_room_for_the_file() {
    let mut h = Box1::new();
    h.avail = 1 << 30;
    let e = prepare(&h, &opts("/srv", false)).unwrap_err().to_string();
    assert!(
        e.contains("/srv has 1.00 GiB free; the test file needs 1.00 GiB"),
        "{e}"
    );
    h.avail = 2 << 30;
    let p = prepare(&h, &opts("/srv/", false)).unwrap();
    assert_eq!(p.kind, TargetKind::File);
    assert!(p.filename.starts_with("/srv/hyraid-bench.") && p.filename.ends_with(".fio"));
}

#[test]
fn runs_the_matrix_and_records_member_io_on_md() {
    let h = Box1::new();
    let o = opts("/dev/md127", true);
    let p = prepare(&h, &o).unwrap();
    assert_eq!(p.members, ["sda", "sdb"]);
    assert_eq!(p.size, 1 << 30);
    let mut seen = vec![];
    let r = run(&h, &o, &p, &mut |i, j| seen.push((i, j.name)), &|| false).unwrap();
    assert_eq!(seen.len(), 8);
    assert_eq!(r.jobs.len(), 8);
    assert_eq!(r.fio_version, "fio-3.33");
    let rr = &r.jobs[6];
    assert_eq!(rr.name, "rand-read-4k-qd32");
    assert!((rr.measured.iops - 93001.49925).abs() < 1e-6);
    assert_eq!(
        rr.members["sda"],
        MemberIo {
            reads: 100,
            writes: 0
        }
    );
    assert_eq!(
        rr.members["sdb"],
        MemberIo {
            reads: 0,
            writes: 0
        }
    );
    assert_eq!(
        r.jobs[1].members["sdb"],
        MemberIo {
            reads: 0,
            writes: 100
        }
    );
    // A device run leaves no file to remove.
    assert!(h.log.lock().unwrap().iter().all(|c| !c.starts_with("rm")));
    let t = table(&r);
    assert!(
        t.contains("| rand-read-4k-qd32  |      93001 |     363.3 |"),
        "{t}"
    );
    assert!(t.contains("sda 100/0, sdb 0/0"), "{t}");
    // The JSON report reads back.
    let back: Report = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back, r);
}

#[test]
fn a_file_run_removes_its_file_even_when_fio_fails() {
    let h = Box1::new();
    let mut o = opts("/srv", false);
    o.jobs = vec![fio::job("rand-read-4k-qd32").unwrap()];
    let p = prepare(&h, &o).unwrap();
    run(&h, &o, &p, &mut |_, _| {}, &|| false).unwrap();
    assert_eq!(
        h.log.lock().unwrap().last().unwrap(),
        &format!("rm -f -- {}", p.filename)
    );
}

#[test]
fn an_interrupt_starts_no_further_job_and_removes_the_file() {
    let h = Box1::new();
    let o = opts("/srv", false);
    let p = prepare(&h, &o).unwrap();
    let started = std::cell::Cell::new(0);
    let e = run(
        &h,
        &o,
        &p,
        &mut |_, _| started.set(started.get() + 1),
        &|| started.get() >= 2,
    )
    .unwrap_err();
    assert!(
        matches!(e, BenchError::Interrupted { done: 2, total: 8 }),
        "{e}"
    );
    let log = h.log.lock().unwrap();
    assert_eq!(
        log.iter()
            .filter(|c| c.starts_with("fio") && *c != "fio --version")
            .count(),
        2
    );
    assert_eq!(log.last().unwrap(), &format!("rm -f -- {}", p.filename));
}

#[test]
fn compare_puts_runs_side_by_side_with_ratios() {
    let h = Box1::new();
    let mut o = opts("/dev/md127", true);
    o.jobs = vec![
        fio::job("rand-read-4k-qd32").unwrap(),
        fio::job("seq-write-1m").unwrap(),
    ];
    let p = prepare(&h, &o).unwrap();
    let mut a = run(&h, &o, &p, &mut |_, _| {}, &|| false).unwrap();
    a.label = "plain".into();
    let mut b = a.clone();
    b.label = "hyraid".into();
    b.jobs[0].measured.iops *= 5.0;
    b.jobs[0].measured.bw_bytes *= 5.0;
    b.jobs.pop();
    let t = compare(&[a, b]);
    let row = t.lines().find(|l| l.contains("rand-read-4k-qd32")).unwrap();
    assert!(
        row.contains("| 93001 | 363.3 | 465007 | 1816.4 | 5.00× |"),
        "{row}"
    );
    let row = t.lines().find(|l| l.contains("seq-write-1m")).unwrap();
    assert!(row.ends_with("| - | - | - |"), "{row}");
    assert!(
        t.starts_with(
            "| job                | plain IOPS | MiB/s | hyraid IOPS | MiB/s | × plain |"
        ),
        "{t}"
    );
}
