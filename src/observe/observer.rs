//! Build [`Observed`] from a host: one lsblk, one LVM report, /proc/mdstat and sysfs reads,
//! directory listings for /dev/disk/by-id and /dev/md, a wipefs probe only for devices nothing
//! is stacked on, and hdparm only where asked and sysfs has no answer.
//!
//! Only the tools' own failures (lsblk, the LVM report, /proc/mdstat, mdadm.conf) stop an
//! observation. Anything foreign — other md levels, file bitmaps, containers, stray /dev/md
//! entries, device-mapper targets, signatures nobody names, attributes that are missing or odd —
//! is recorded as far as it is understood, and as unknown where it is not.

use super::model::*;
use super::{ParseError, lsblk, lvm, md, mdstat, probe, write_cache};
use crate::host::{Host, HostError, Started};
use std::collections::HashMap;

#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    #[error(transparent)]
    Host(#[from] HostError),
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error("`{command}` failed (exit {status}): {stderr}")]
    Command {
        command: String,
        status: i32,
        stderr: String,
    },
}

fn run_ok(host: &dyn Host, argv: &[String]) -> Result<String, ObserveError> {
    output_ok(argv, host.run(argv))
}

/// The standard output of a program that ran and succeeded.
fn output_ok(
    argv: &[String],
    out: Result<crate::host::CmdOutput, HostError>,
) -> Result<String, ObserveError> {
    let out = out?;
    if out.status != 0 {
        return Err(ObserveError::Command {
            command: argv.join(" "),
            status: out.status,
            stderr: out.stderr.trim().to_string(),
        });
    }
    Ok(out.stdout)
}

/// Read an optional file: missing → None.
fn read_opt(host: &dyn Host, path: &str) -> Result<Option<String>, ObserveError> {
    match host.read_file(path) {
        Ok(s) => Ok(Some(s)),
        Err(HostError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Entries of a directory; a missing or unreadable directory has none.
fn entries(host: &dyn Host, dir: &str) -> Vec<String> {
    host.list_dir(dir).unwrap_or_default()
}

/// (entry name, link target or why it is not a link)
type Entries = Vec<(String, String)>;

/// What a directory of symlinks holds: (name, target) of each link, and (name, error) of what
/// is not a link. An entry that vanished between listing and reading is skipped.
fn links(host: &dyn Host, dir: &str) -> (Entries, Entries) {
    let (mut links, mut other) = (Vec::new(), Vec::new());
    for n in entries(host, dir) {
        match host.read_link(&format!("{dir}/{n}")) {
            Ok(t) => links.push((n, t)),
            Err(HostError::NotFound { .. }) => {}
            Err(HostError::Io { detail, .. }) => other.push((n, detail)),
            Err(e) => other.push((n, e.to_string())),
        }
    }
    (links, other)
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or("")
}

/// Observe the machine, probing the content of every unused disk and partition.
pub fn observe(host: &dyn Host) -> Result<Observed, ObserveError> {
    observe_scoped(host, ProbeScope::All)
}

/// The two reads that need nothing from the file: lsblk and the LVM report, the slowest. On a
/// real machine both start at once, before the file is read (see [`observe_started`]); a host
/// that answers in one order is asked where observation needs them.
#[derive(Default)]
pub struct EarlyReads {
    lsblk: Option<Started>,
    lvm: Option<Started>,
}

impl EarlyReads {
    /// These reads if any were started, else `start()`'s.
    pub fn or_else(self, start: impl FnOnce() -> EarlyReads) -> EarlyReads {
        if self.lsblk.is_some() || self.lvm.is_some() {
            self
        } else {
            start()
        }
    }

    pub fn start(host: &dyn Host) -> EarlyReads {
        if !host.concurrent() {
            return EarlyReads::default();
        }
        EarlyReads {
            lvm: Some(host.start(&lvm::argv())),
            lsblk: Some(host.start(&lsblk::argv())),
        }
    }
}

/// Observe the machine, probing the content only of the unused disks `scope` names.
pub fn observe_scoped(host: &dyn Host, scope: ProbeScope) -> Result<Observed, ObserveError> {
    observe_started(host, scope, EarlyReads::start(host))
}

/// [`observe_scoped`] with lsblk and the LVM report already started: on a real machine the LVM
/// report runs while lsblk, /proc/mdstat, sysfs and the content probe are read (its text is
/// parsed afterwards, with lsblk's device numbers).
pub fn observe_started(
    host: &dyn Host,
    scope: ProbeScope,
    early: EarlyReads,
) -> Result<Observed, ObserveError> {
    let EarlyReads { lsblk, lvm } = early;
    let all = matches!(scope, ProbeScope::All);
    let rest = observe_devices(host, scope, lsblk);
    // The boot files are read while the LVM report (the longest read) still runs; an error
    // reading them is reported after the devices' and the report's, as before.
    let boot = rest.is_ok().then(|| boot(host));
    let lvm_text = match lvm {
        Some(started) => output_ok(&lvm::argv(), started.wait()),
        None if rest.is_ok() => run_ok(host, &lvm::argv()),
        None => Ok(String::new()),
    };
    crate::timings::mark("LVM report answered");
    let (nodes, mdstat_arrays, block_devices, arrays, dev_md_strays) = rest?;
    let other_devices = other_devices(&nodes, &mdstat_arrays);
    let mut lvm = lvm_report(&lvm_text?, &nodes)?;
    lvm.nodes = super::filesystems::lv_nodes(&nodes, &lvm);
    let mut boot = boot.expect("read when the devices were")?;
    // The boot loaders matter only to a file with `boot:` (read then by `machine::read`); the
    // whole machine's observation reads them too.
    if all {
        boot.loaders = super::loader::read(host, &block_devices, boot.uefi);
    }
    let mut filesystems = super::filesystems::on_lvs(&nodes, &lvm);
    filesystems.extend(super::filesystems::on_arrays(&nodes));
    Ok(Observed {
        format: SNAPSHOT_FORMAT,
        hostname: host.hostname(),
        block_devices,
        arrays,
        lvm,
        boot,
        other_devices,
        dev_md_strays,
        filesystems,
        partition_tables: Default::default(),
        missing_tools: vec![],
        smart: Default::default(),
        luks: super::luks::from_lsblk(&nodes),
        files: Default::default(),
        key_slots: Default::default(),
    }
    .normalized())
}

/// The disks whose content observation probes (`wipefs -n`, where nothing is stacked on them).
#[derive(Debug, Clone, Copy)]
pub enum ProbeScope<'a> {
    /// Every disk and partition: `hyraid observe`, `import`, `status` without a file.
    All,
    /// The disks the file names, by `/dev/disk/by-id` name or serial, and their partitions;
    /// of the others, only those lsblk already sees a signature on (wipefs then says whose: a
    /// former member's md superblock is noted in the plan). A blank disk the file does not
    /// name is never probed.
    Named {
        ids: &'a [String],
        serials: &'a [String],
    },
}

impl ProbeScope<'_> {
    fn names(&self, disk: &BlockDevice) -> bool {
        match self {
            ProbeScope::All => true,
            ProbeScope::Named { ids, serials } => {
                disk.by_id.iter().any(|i| ids.contains(i))
                    || disk.serial.as_ref().is_some_and(|s| serials.contains(s))
            }
        }
    }
}

/// The disks and partitions lsblk lists, with their by-id names and holders, and the content
/// probe started on those nothing is stacked on that `scope` names (their drive cache is read
/// from sysfs, and their signatures filled in from the probe, afterwards).
fn block_devices(
    host: &dyn Host,
    nodes: &[lsblk::Node],
    scope: ProbeScope,
) -> (Vec<BlockDevice>, Vec<bool>, probe::Probe) {
    // by-id names per kernel name (udev makes only links there).
    let mut by_id: HashMap<String, Vec<String>> = HashMap::new();
    for (id, target) in links(host, "/dev/disk/by-id").0 {
        by_id
            .entry(basename(&target).to_string())
            .or_default()
            .push(id);
    }
    let kind_of: HashMap<&str, &str> = nodes
        .iter()
        .map(|n| (n.kname.as_str(), n.kind.as_str()))
        .collect();

    let mut block_devices = Vec::new();
    for n in nodes
        .iter()
        .filter(|n| n.kind == "disk" || n.kind == "part")
    {
        let ids = by_id.remove(&n.kname).unwrap_or_default();
        block_devices.push(block_device(n, ids, &kind_of));
    }
    let wanted: Vec<bool> = block_devices
        .iter()
        .map(|(d, probe)| {
            let disk = match &d.parent {
                Some(p) => block_devices.iter().map(|(b, _)| b).find(|b| b.kname == *p),
                None => Some(d),
            };
            *probe && (d.fstype.is_some() || disk.is_some_and(|disk| scope.names(disk)))
        })
        .collect();
    let probed: Vec<String> = block_devices
        .iter()
        .zip(&wanted)
        .filter(|(_, w)| **w)
        .map(|((d, _), _)| d.kname.clone())
        .collect();
    let probe = probe::start(host, probed);
    let devices = block_devices.into_iter().map(|(d, _)| d).collect();
    (devices, wanted, probe)
}

/// Each probed device's signatures, or why it has none.
fn with_signatures(
    devices: Vec<BlockDevice>,
    wanted: Vec<bool>,
    mut found: probe::Found,
) -> Vec<BlockDevice> {
    let mut out = Vec::with_capacity(devices.len());
    for (mut dev, want) in devices.into_iter().zip(wanted) {
        if want {
            match found.remove(&dev.kname) {
                Some(Ok(s)) => dev.signatures = Some(s),
                Some(Err(e)) => dev.probe_error = Some(e),
                None => dev.probe_error = Some("not probed".into()),
            }
        }
        out.push(dev);
    }
    out
}

/// One disk or partition.
fn block_device(
    n: &lsblk::Node,
    mut ids: Vec<String>,
    kind_of: &HashMap<&str, &str>,
) -> (BlockDevice, bool) {
    let kind = if n.kind == "disk" {
        DevKind::Disk
    } else {
        DevKind::Part
    };
    ids.sort();
    // LVs on a PV are known from the LVM report; holders are md arrays and other stacked devices.
    let holders: Vec<String> = n
        .children
        .iter()
        .filter(|c| !matches!(kind_of.get(c.as_str()).copied(), Some("part") | Some("lvm")))
        .cloned()
        .collect();
    let has_parts = n
        .children
        .iter()
        .any(|c| kind_of.get(c.as_str()).copied() == Some("part"));
    let dev = BlockDevice {
        kname: n.kname.clone(),
        kind,
        maj_min: n.maj_min.clone(),
        size: n.size,
        rotational: n.rotational,
        serial: n.serial.clone(),
        wwn: n.wwn.clone(),
        model: n.model.clone(),
        tran: n.tran.clone(),
        by_id: ids,
        parent: if kind == DevKind::Part {
            n.parents.first().cloned()
        } else {
            None
        },
        partlabel: n.partlabel.clone(),
        parttype: n.parttype.clone(),
        pttype: if kind == DevKind::Disk {
            n.pttype.clone()
        } else {
            None
        },
        fstype: n.fstype.clone(),
        holders,
        mountpoint: n.mountpoint.clone(),
        signatures: None,
        write_cache: None,
        probe_error: None,
    };
    // Content is probed only where nothing is stacked: a device in use is refused anyway.
    let probe = dev.holders.is_empty()
        && !has_parts
        && dev.mountpoint.is_none()
        && n.size > 0
        && !lvm_child(n, kind_of);
    (dev, probe)
}

/// The md arrays /proc/mdstat lists, named by their /dev/md links, and the /dev/md entries
/// that are not links to a running array.
fn md_arrays(
    host: &dyn Host,
    nodes: &[lsblk::Node],
    mdstat_arrays: &[mdstat::MdstatArray],
) -> (Vec<MdArray>, Vec<DevMdStray>) {
    let (md_links, md_other) = links(host, "/dev/md");
    // /dev/md/NAME links by kernel name; the first link wins.
    let mut md_name_of: HashMap<&str, &str> = HashMap::new();
    for (name, target) in &md_links {
        md_name_of.entry(basename(target)).or_insert(name.as_str());
    }
    let fstype_of: HashMap<&str, &str> = nodes
        .iter()
        .filter_map(|n| n.fstype.as_deref().map(|f| (n.kname.as_str(), f)))
        .collect();
    let arrays: Vec<MdArray> = mdstat_arrays
        .iter()
        .map(|a| md::md_array(host, a, &md_name_of, &fstype_of))
        .collect();
    let mut dev_md_strays: Vec<DevMdStray> = md_other
        .into_iter()
        .map(|(name, error)| DevMdStray {
            name,
            target: None,
            error: Some(error),
        })
        .collect();
    for (name, target) in &md_links {
        if !arrays.iter().any(|a| a.kname == basename(target)) {
            dev_md_strays.push(DevMdStray {
                name: name.clone(),
                target: Some(target.clone()),
                error: None,
            });
        }
    }
    (arrays, dev_md_strays)
}

/// Block devices that are neither disks, partitions, LVs nor md arrays (device-mapper, loop…).
fn other_devices(nodes: &[lsblk::Node], mdstat_arrays: &[mdstat::MdstatArray]) -> Vec<OtherDevice> {
    nodes
        .iter()
        .filter(|n| !matches!(n.kind.as_str(), "disk" | "part" | "lvm"))
        .filter(|n| !mdstat_arrays.iter().any(|a| a.kname == n.kname))
        .map(|n| OtherDevice {
            kname: n.kname.clone(),
            kind: n.kind.clone(),
            maj_min: n.maj_min.clone(),
            size: n.size,
            fstype: n.fstype.clone(),
            mountpoint: n.mountpoint.clone(),
            name: (n.name != n.kname).then(|| n.name.clone()),
            parents: n.parents.clone(),
        })
        .collect()
}

/// The LVM report, its devices named by kernel name (through lsblk's major:minor).
/// lsblk, /proc/mdstat, the disks (by-id, sysfs, signatures) and the arrays (sysfs).
type Devices = (
    Vec<lsblk::Node>,
    Vec<mdstat::MdstatArray>,
    Vec<BlockDevice>,
    Vec<MdArray>,
    Vec<DevMdStray>,
);

fn observe_devices(
    host: &dyn Host,
    scope: ProbeScope,
    lsblk: Option<Started>,
) -> Result<Devices, ObserveError> {
    let text = match lsblk {
        Some(started) => output_ok(&lsblk::argv(), started.wait())?,
        None => run_ok(host, &lsblk::argv())?,
    };
    crate::timings::mark("lsblk answered");
    let nodes = lsblk::parse(&text)?;
    let mdstat_arrays = mdstat::parse(&read_opt(host, "/proc/mdstat")?.unwrap_or_default())?;
    let (mut devices, wanted, probe) = block_devices(host, &nodes, scope);
    for d in devices.iter_mut().filter(|d| d.kind == DevKind::Disk) {
        d.write_cache = scsi_cache_type(host, &d.kname);
    }
    let (arrays, dev_md_strays) = md_arrays(host, &nodes, &mdstat_arrays);
    crate::timings::mark("sysfs and /dev read");
    let block_devices = with_signatures(devices, wanted, probe.finish(host));
    crate::timings::mark("content probed");
    Ok((nodes, mdstat_arrays, block_devices, arrays, dev_md_strays))
}

/// The LVM report's text, its devices named by lsblk's kernel names.
fn lvm_report(text: &str, nodes: &[lsblk::Node]) -> Result<Lvm, ObserveError> {
    let mm: HashMap<&str, &str> = nodes
        .iter()
        .filter(|n| !n.maj_min.is_empty())
        .map(|n| (n.maj_min.as_str(), n.kname.as_str()))
        .collect();
    let kname_of = |maj_min: &str, name: &str| -> String {
        mm.get(maj_min)
            .map(|s| s.to_string())
            .unwrap_or_else(|| basename(name).to_string())
    };
    Ok(lvm::parse_fullreport(text, &kname_of)?)
}

fn boot(host: &dyn Host) -> Result<Boot, ObserveError> {
    let mut b = Boot::default();
    for p in MDADM_CONF_PATHS {
        if let Some(text) = read_opt(host, p)? {
            b.mdadm_conf_path = Some(p.to_string());
            b.mdadm_conf = Some(text);
            break;
        }
    }
    for (tool, path) in INITRAMFS_TOOLS {
        if host.exists(path) {
            b.initramfs_tool = Some(tool.to_string());
            break;
        }
    }
    b.write_cache_rule = read_opt(host, WRITE_CACHE_RULE_PATH)?;
    b.fstab = read_opt(host, super::FSTAB_PATH)?;
    b.systemd = host.exists(super::SYSTEMD_PATH);
    b.uefi = host.exists(super::filesystems::EFI_FIRMWARE_PATH);
    b.crypttab = read_opt(host, super::luks::CRYPTTAB_PATH)?;
    b.monitoring = super::monitoring::read(host);
    // Unreadable counts as absent: it must not stop the observation of the rest.
    b.lvm_devices = host
        .read_file(super::lvm_devices::LVM_DEVICES_PATH)
        .ok()
        .map(|t| super::lvm_devices::parse(&t));
    Ok(b)
}

fn lvm_child(n: &lsblk::Node, kind_of: &HashMap<&str, &str>) -> bool {
    n.children
        .iter()
        .any(|c| kind_of.get(c.as_str()).copied() == Some("lvm"))
}

/// The scsi_disk `cache_type`; None where the kernel shows none or it cannot be read.
fn scsi_cache_type(host: &dyn Host, kname: &str) -> Option<WriteCacheState> {
    let dir = format!("/sys/block/{kname}/device/scsi_disk");
    let first = entries(host, &dir).into_iter().next()?;
    let t = host.read_file(&format!("{dir}/{first}/cache_type")).ok()?;
    Some(WriteCacheState {
        enabled: write_cache::parse_cache_type(&t),
        source: WriteCacheSource::ScsiCacheType,
    })
}

/// Ask `hdparm -W` for disks whose write cache is managed and whose sysfs gave no answer.
pub fn probe_write_cache(
    host: &dyn Host,
    obs: &mut Observed,
    knames: &[String],
) -> Result<(), ObserveError> {
    for d in obs
        .block_devices
        .iter_mut()
        .filter(|d| knames.contains(&d.kname))
    {
        if d.write_cache.is_some_and(|w| w.enabled.is_some()) {
            continue;
        }
        let out = host.run(&[
            "hdparm".to_string(),
            "-W".to_string(),
            format!("/dev/{}", d.kname),
        ])?;
        if let Some(state) = write_cache::parse_hdparm_w(&out.stdout) {
            d.write_cache = Some(WriteCacheState {
                enabled: state,
                source: WriteCacheSource::Hdparm,
            });
        }
    }
    Ok(())
}
