//! Build [`Observed`] from a host: one lsblk, one LVM report, /proc/mdstat and sysfs reads,
//! directory listings for /dev/disk/by-id and /dev/md, a wipefs probe only for devices nothing
//! is stacked on, and hdparm only where asked and sysfs has no answer.
//!
//! Only the tools' own failures (lsblk, the LVM report, /proc/mdstat, mdadm.conf) stop an
//! observation. Anything foreign — other md levels, file bitmaps, containers, stray /dev/md
//! entries, device-mapper targets, signatures nobody names, attributes that are missing or odd —
//! is recorded as far as it is understood, and as unknown where it is not.

use super::model::*;
use super::{ParseError, lsblk, lvm, md, mdstat, wipefs, write_cache};
use crate::host::{Host, HostError};
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
    let out = host.run(argv)?;
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

/// Observe the machine, probing the content only of the unused disks `scope` names.
pub fn observe_scoped(host: &dyn Host, scope: ProbeScope) -> Result<Observed, ObserveError> {
    // The LVM report is the slowest read and needs nothing from the others: on a real machine
    // it runs while lsblk, /proc/mdstat and sysfs are read (its text is parsed afterwards, with
    // lsblk's device numbers).
    let (lvm_text, rest) = if host.concurrent() {
        std::thread::scope(|s| {
            let lvm = s.spawn(|| run_ok(host, &lvm::argv()));
            let rest = observe_devices(host, scope);
            (lvm.join().expect("the LVM report's thread"), rest)
        })
    } else {
        let rest = observe_devices(host, scope);
        match rest {
            Ok(_) => (run_ok(host, &lvm::argv()), rest),
            Err(_) => (Ok(String::new()), rest),
        }
    };
    let (nodes, mdstat_arrays, block_devices, arrays, dev_md_strays) = rest?;
    let other_devices = other_devices(&nodes, &mdstat_arrays);
    let lvm = lvm_report(&lvm_text?, &nodes)?;
    let boot = boot(host)?;
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

/// The disks and partitions lsblk lists, with their by-id names, holders, drive cache (sysfs)
/// and, where nothing is stacked on them and `scope` names the disk, the signatures on them.
fn block_devices(host: &dyn Host, nodes: &[lsblk::Node], scope: ProbeScope) -> Vec<BlockDevice> {
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
        block_devices.push(block_device(host, n, ids, &kind_of));
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
    let mut found = probe_all(host, &probed);
    let mut out = Vec::with_capacity(block_devices.len());
    for ((mut dev, _), want) in block_devices.into_iter().zip(wanted) {
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

/// The signatures on each of `knames`: one wipefs for all of them; when that run fails (a device
/// it cannot open ends it), one per device, so that each device gets its own answer or error.
fn probe_all(
    host: &dyn Host,
    knames: &[String],
) -> HashMap<String, Result<Vec<Signature>, String>> {
    let mut found = HashMap::new();
    if knames.len() > 1 {
        let devs: Vec<String> = knames.iter().map(|k| format!("/dev/{k}")).collect();
        let batch = host
            .run(&wipefs::argv_many(&devs))
            .ok()
            .filter(|o| o.status == 0)
            .and_then(|o| wipefs::parse_by_device(&o.stdout).ok())
            .filter(|sigs| sigs.iter().all(|(d, _)| knames.contains(d)));
        if let Some(sigs) = batch {
            for k in knames {
                found.insert(k.clone(), Ok(vec![]));
            }
            for (d, sig) in sigs {
                if let Some(Ok(v)) = found.get_mut(&d) {
                    v.push(sig);
                }
            }
            return found;
        }
    }
    for k in knames {
        found.insert(k.clone(), probe(host, k));
    }
    found
}

/// One disk or partition.
fn block_device(
    host: &dyn Host,
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
    let mut dev = BlockDevice {
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
    if kind == DevKind::Disk {
        dev.write_cache = scsi_cache_type(host, &n.kname);
    }
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

fn observe_devices(host: &dyn Host, scope: ProbeScope) -> Result<Devices, ObserveError> {
    let nodes = lsblk::parse(&run_ok(host, &lsblk::argv())?)?;
    let mdstat_arrays = mdstat::parse(&read_opt(host, "/proc/mdstat")?.unwrap_or_default())?;
    let block_devices = block_devices(host, &nodes, scope);
    let (arrays, dev_md_strays) = md_arrays(host, &nodes, &mdstat_arrays);
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

/// Signatures on a device (`wipefs -n`), or why the probe gave no answer.
fn probe(host: &dyn Host, kname: &str) -> Result<Vec<Signature>, String> {
    let out = host
        .run(&wipefs::argv(&format!("/dev/{kname}")))
        .map_err(|e| e.to_string())?;
    if out.status != 0 {
        let err = out.stderr.trim();
        return Err(if err.is_empty() {
            format!("wipefs exited {}", out.status)
        } else {
            err.to_string()
        });
    }
    wipefs::parse(&out.stdout).map_err(|e| e.to_string())
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
