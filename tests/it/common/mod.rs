#![allow(dead_code)]
//! Helpers shared by the integration tests: examples on the simulated host, and a full apply.

pub mod boot;
pub mod foreign;
pub mod fs;
pub mod http;
pub mod luks;
pub mod saved;
pub mod tune;

use hyraid::apply::{self, ApplyError};
use hyraid::config::{Desired, load_file};
use hyraid::host::Host;
use hyraid::observe::Observed;
use hyraid::plan::{Plan, Policy, plan};
use hyraid::sim::SimHost;
use std::path::Path;

pub const EXAMPLES: &[&str] = &[
    "boot-mirror",
    "microserver-gen8",
    "microserver-gen8-encrypted",
    "microserver-partitioned",
    "nvme-plus-two-hdd",
    "single-pair",
];

pub fn example(name: &str) -> (Desired, SimHost) {
    let d = load_file(Path::new(&format!("examples/{name}.yaml"))).unwrap();
    let snap = std::fs::read_to_string(format!("examples/snapshots/{name}.json")).unwrap();
    (d, SimHost::from_json(&snap).unwrap())
}

pub fn observe(h: &SimHost, d: &Desired) -> Observed {
    hyraid::machine::observe_for(h, Some(d)).unwrap()
}

/// The policy of `--re-add NAME`: disk NAME goes back into its mirror.
pub fn re_add(name: &str) -> Policy {
    Policy {
        re_add: vec![name.to_string()],
        ..Policy::default()
    }
}

pub fn plan_for(h: &SimHost, d: &Desired, policy: Policy) -> Plan {
    plan(d, &observe(h, d), policy).unwrap()
}

/// Plan, run and verify, as `hyraid apply --yes` does: the apply verb, answering yes, without a
/// journal or output.
/// The passphrase [`apply`] gives every device whose key is one (`passphrase: true`).
pub const TEST_PASSPHRASE: &str = "hyraid test passphrase";

pub fn apply(h: &SimHost, d: &Desired, policy: Policy) -> Result<Plan, ApplyError> {
    let opts = apply::Options {
        allow_destroy: policy.allow_destroy,
        re_add: policy.re_add.clone(),
        exec: apply::ExecOptions {
            passphrases: apply::Passphrases::new(apply::PassphraseSource::Given(
                TEST_PASSPHRASE.to_string().into(),
            )),
            ..Default::default()
        },
        ..Default::default()
    };
    let source = apply::Source::Desired(Box::new(d.clone()));
    apply::apply(source, h, &opts, &mut |_| Ok(()), &mut std::io::sink()).map(|o| o.plan)
}

/// [`apply`] with `passphrase` given for every device whose key is one (`""`: none given, as
/// under `--yes` without `--passphrase-file`).
pub fn apply_with_passphrase(
    h: &SimHost,
    d: &Desired,
    passphrase: &str,
) -> Result<Plan, ApplyError> {
    let source = match passphrase {
        "" => apply::PassphraseSource::None,
        p => apply::PassphraseSource::Given(p.to_string().into()),
    };
    let opts = apply::Options {
        exec: apply::ExecOptions {
            passphrases: apply::Passphrases::new(source),
            ..Default::default()
        },
        ..Default::default()
    };
    let source = apply::Source::Desired(Box::new(d.clone()));
    apply::apply(source, h, &opts, &mut |_| Ok(()), &mut std::io::sink()).map(|o| o.plan)
}

/// A saved plan as `hyraid plan FILE -o` writes it: reviewed, carrying FILE's text (`file`
/// names it in errors).
pub fn saved_plan(file: &str, text: &str, obs: &Observed, policy: Policy) -> Plan {
    let d = hyraid::config::load_str(file, text).unwrap();
    let mut p = apply::preview::review(&d, obs, policy).unwrap();
    p.config = Some(hyraid::plan::planfile::PlanConfig {
        file: file.into(),
        text: text.into(),
    });
    p
}

/// [`saved_plan`] of `examples/NAME.yaml`.
pub fn saved_example_plan(name: &str, obs: &Observed, policy: Policy) -> Plan {
    let file = format!("examples/{name}.yaml");
    saved_plan(&file, &std::fs::read_to_string(&file).unwrap(), obs, policy)
}

/// A saved plan (`plan -o`) applied as `hyraid apply PLAN.json --yes` does: the verb re-derives it
/// and runs it only when equal.
pub fn apply_saved(h: &SimHost, saved: Plan, policy: Policy) -> Result<apply::Outcome, ApplyError> {
    let opts = apply::Options {
        allow_destroy: policy.allow_destroy,
        re_add: policy.re_add.clone(),
        ..Default::default()
    };
    let source = apply::Source::Saved(Box::new(saved));
    apply::apply(source, h, &opts, &mut |_| Ok(()), &mut std::io::sink())
}

/// Commands that change something (everything but the observer's reads).
pub fn changes(h: &SimHost) -> Vec<String> {
    changes_since(h, 0)
}

/// [`changes`] among the commands after the first `n` the host has run.
pub fn changes_since(h: &SimHost, n: usize) -> Vec<String> {
    h.commands()
        .into_iter()
        .skip(n)
        .filter(|c| !matches!(c[0].as_str(), "lsblk" | "lvm" | "hdparm" if c.get(1).map(|s| s.as_str()) != Some("-W0") && c.get(1).map(|s| s.as_str()) != Some("-W1")))
        .filter(|c| !(c[0] == "wipefs" && c[1] == "--no-act"))
        .filter(|c| !(c[0] == "hdparm" && c[1] == "-W"))
        .filter(|c| !(c[0] == "partx" && c[1] == "--pairs"))
        .filter(|c| !(c[0] == "resize2fs" && c[1] == "-P"))
        .filter(|c| c[0] != "stat")
        // What the loaders are: grub's version, an ESP's stamp and PARTUUID, the firmware's entries.
        .filter(|c| {
            !(c[..] == ["grub-install", "--version"]
                || c[0] == "mtype"
                || c[0] == "blkid" && c.get(1).map(String::as_str) == Some("-o")
                || c[..] == ["efibootmgr", "-v"]
                || c[0] == "dpkg-query"
                || c[0] == "debconf-show")
        })
        .filter(|c| {
            !(c[0] == "cryptsetup"
                && (matches!(c[1].as_str(), "luksUUID" | "luksDump")
                    || c.get(2).map(String::as_str) == Some("--test-passphrase")))
        })
        .map(|c| c.join(" "))
        .collect()
}

/// The operations of a plan's steps, in order (`create_array`, `wait_idle`, …).
pub fn ops(p: &Plan) -> Vec<String> {
    p.steps
        .iter()
        .map(|s| {
            serde_json::to_value(&s.step).unwrap()["op"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// The hyraid binary as users and CI run it, with stdin from /dev/null.
pub fn hyraid(args: &[&str]) -> std::process::Output {
    // The colour variables of whoever runs the tests must not colour the output the tests read.
    std::process::Command::new(env!("CARGO_BIN_EXE_hyraid"))
        .args(args)
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR")
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// (stdout, stderr) of a run, as text.
pub fn text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

pub fn run(h: &SimHost, argv: &[&str]) -> hyraid::host::CmdOutput {
    h.run(&argv.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .unwrap()
}

/// The example microserver's `vg0/nextcloud`, to edit in tests.
pub fn nextcloud(d: &mut Desired) -> &mut hyraid::config::LvSpec {
    d.volume_groups
        .get_mut("vg0")
        .unwrap()
        .lvs
        .get_mut("nextcloud")
        .unwrap()
}

/// Plug a blank disk into a snapshot: a copy of `like` (same model and size) with a new kernel
/// name, serial and by-id name.
pub fn plug_blank_disk(
    w: &mut hyraid::observe::Observed,
    like: &str,
    kname: &str,
    minor: u32,
    serial: &str,
    id: &str,
) {
    let mut new = w.device(like).unwrap().clone();
    new.kname = kname.into();
    new.maj_min = format!("8:{minor}");
    new.serial = Some(serial.into());
    new.by_id = vec![id.into()];
    new.holders = vec![];
    new.fstype = None;
    new.signatures = Some(vec![]);
    w.block_devices.push(new);
}

/// A seed-004 box on the single-pair example: md-home made by hand as a RAID1 of the SSD and
/// the write-mostly HDD with its write-intent bitmap in a file on another filesystem
/// (`--bitmap=/mnt/ssd/md-home.bitmap`, chunk `chunk`), resynced, with a PV and LV on it.
pub fn seed_004_box(chunk: &str) -> (Desired, SimHost) {
    let (d, h) = example("single-pair");
    let create = format!(
        "mdadm --create /dev/md/md-home --level=1 --raid-devices=2 --bitmap=/mnt/ssd/md-home.bitmap --bitmap-chunk={chunk} /dev/disk/by-id/ata-CT500MX500SSD1_2204E6000001 --write-mostly /dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001 --run"
    );
    for argv in [
        create.as_str(),
        "mdadm --wait /dev/md/md-home",
        "pvcreate /dev/md/md-home",
        "vgcreate home /dev/md/md-home",
        "lvcreate --yes -n home -l 90%VG home",
    ] {
        let o = run(&h, &argv.split(' ').collect::<Vec<_>>());
        assert_eq!(o.status, 0, "{argv}: {}", o.stderr);
    }
    (d, h)
}

/// microserver-partitioned built without the cache partitions and the cache mirror (every SSD's
/// `raid` partition an md member, so open); and the example's own file, which then asks for the
/// cache partitions beside them. Returns (the file it was built with, the full file, the host).
pub fn partitioned_without_cache() -> (Desired, Desired, SimHost) {
    let (full, h) = example("microserver-partitioned");
    let mut d = full.clone();
    for s in ["ssd0", "ssd1"] {
        d.disks.get_mut(s).unwrap().partitions.truncate(1);
    }
    d.mirrors.remove("cache");
    let vg = d.volume_groups.get_mut("vg0").unwrap();
    vg.pvs.retain(|p| p.name() != "cache");
    vg.lvs.get_mut("nextcloud").unwrap().writecache = None;
    apply(&h, &d, Policy::default()).unwrap();
    h.finish_syncs();
    (d, full, h)
}

/// microserver-partitioned where hdd0 also carries a `pv` partition of `pv_size` after its
/// `raid` one, the only PV of vg1 (which holds an 8GiB LV).
pub fn pv_partition_file(pv_size: &str) -> Desired {
    let text = std::fs::read_to_string("examples/microserver-partitioned.yaml")
        .unwrap()
        .replace(
            "    partitions: [{ name: raid, size: 900GiB }]\n  hdd1:",
            &format!(
                "    partitions: [{{ name: raid, size: 900GiB }}, {{ name: pv, size: {pv_size} }}]\n  hdd1:"
            ),
        )
        .replace(
            "volume_groups:\n",
            "volume_groups:\n  vg1:\n    pvs: [\"hdd0:pv\"]\n    lvs:\n      scratch: { size: 8GiB }\n",
        );
    hyraid::config::load_str("pv-partition.yaml", &text).unwrap()
}

/// The machine as the observer sees it without a file (what `hyraid import` reads).
pub fn observe_bare(h: &SimHost) -> Observed {
    hyraid::machine::observe_for(h, None).unwrap()
}

/// The UUID of array `kname` as mdadm writes it (`xxxxxxxx:xxxxxxxx:xxxxxxxx:xxxxxxxx`).
pub fn uuid_of(obs: &Observed, kname: &str) -> String {
    hyraid::observe::names::mdadm_uuid(obs.array(kname).unwrap().uuid.as_deref().unwrap())
}

/// The microserver's two HDDs with one `raid` partition each, mirrored as `data`, with a VG and
/// an LV on the mirror (the mirror grow tests and their crash case).
pub fn mirrored_partitions_file(size0: &str, size1: &str) -> Desired {
    let text = format!(
        "version: 1\nhost: microserver8\ndisks:\n  hdd0:\n    id: ata-ST1000LM048-2E7172_WDE00001\n    partitions: [{{ name: raid, size: {size0} }}]\n  hdd1:\n    id: ata-ST1000LM048-2E7172_WDE00002\n    partitions: [{{ name: raid, size: {size1} }}]\nmirrors:\n  data: {{ members: [\"hdd0:raid\", \"hdd1:raid\"], bitmap: {{ chunk: 64MiB }} }}\nvolume_groups:\n  vg0:\n    pvs: [data]\n    lvs:\n      files: {{ size: 100GiB }}\n"
    );
    hyraid::config::load_str("mirror-grow.yaml", &text).unwrap()
}

/// The microserver's two SSD+HDD pairs as mirrors, vg0 on `pvs`, with LVs `lvs` (YAML flow).
pub fn two_pair_file(pvs: &str, lvs: &str) -> Desired {
    let text = format!(
        "version: 1
host: microserver8
disks:
  ssd0: {{ id: ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100001A }}
  ssd1: {{ id: ata-Samsung_SSD_870_EVO_1TB_S6PTNM0T100002B }}
  hdd0: {{ id: ata-ST1000LM048-2E7172_WDE00001 }}
  hdd1: {{ id: ata-ST1000LM048-2E7172_WDE00002 }}
  cache0: {{ id: ata-KINGSTON_SA400S37240G_50026B7782000001 }}
mirrors:
  data0: {{ members: [ssd0, hdd0] }}
  data1: {{ members: [ssd1, hdd1] }}
volume_groups:
  vg0:
    pvs: [{pvs}]
    lvs: {lvs}
"
    );
    hyraid::config::load_str("pvmove.yaml", &text).unwrap()
}

/// The machine built from `two_pair_file(pvs, lvs)`, every resync done.
pub fn two_pair_built(pvs: &str, lvs: &str) -> SimHost {
    let (_, h) = example("microserver-gen8");
    apply(&h, &two_pair_file(pvs, lvs), Policy::default()).unwrap();
    h.finish_syncs();
    h
}

/// single-pair, blank but for a `kind` signature at `offset` on its HDD (sdb).
pub fn with_content(kind: &str, offset: &str) -> (hyraid::config::Desired, SimHost) {
    let (d, h) = example("single-pair");
    let mut w = h.world();
    let hdd = w
        .block_devices
        .iter_mut()
        .find(|b| b.kname == "sdb")
        .unwrap();
    hdd.signatures = Some(vec![hyraid::observe::Signature {
        offset: offset.into(),
        kind: kind.into(),
        uuid: None,
    }]);
    hdd.fstype = Some(kind.into());
    (d, SimHost::new(w))
}

/// microserver-partitioned without its cache partitions, then applied with the full file and
/// killed right after the table write, before `partx --add`: the table has partitions the
/// kernel lacks. Returns the full file and the host.
pub fn killed_before_partx() -> (Desired, SimHost) {
    let (_, full, h) = partitioned_without_cache();
    h.inject_fault(hyraid::sim::Fault {
        needle: "partx --add".into(),
        status: 137,
        stderr: "Killed".into(),
    });
    assert!(apply(&h, &full, Policy::default()).is_err());
    h.clear_faults();
    (full, h)
}
