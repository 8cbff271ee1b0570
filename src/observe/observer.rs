//! Build [`Observed`] from a host: one lsblk, one LVM report, /proc/mdstat and sysfs reads,
//! directory listings for /dev/disk/by-id and /dev/md, a wipefs probe only for devices nothing
//! is stacked on, and hdparm only where asked and sysfs has no answer.

use super::model::*;
use super::{ParseError, lsblk, lvm, mdadm, mdstat, wipefs, write_cache};
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

/// Symlinks of a directory as (name, target basename); a missing directory is empty.
fn links(host: &dyn Host, dir: &str) -> Result<Vec<(String, String)>, ObserveError> {
    let names = match host.list_dir(dir) {
        Ok(n) => n,
        Err(HostError::NotFound { .. }) => return Ok(vec![]),
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    for n in names {
        let target = host.read_link(&format!("{dir}/{n}"))?;
        out.push((n, target.rsplit('/').next().unwrap_or("").to_string()));
    }
    Ok(out)
}

pub fn observe(host: &dyn Host) -> Result<Observed, ObserveError> {
    let nodes = lsblk::parse(&run_ok(host, &lsblk::argv())?)?;
    // by-id names per kernel name.
    let mut by_id: HashMap<String, Vec<String>> = HashMap::new();
    for (id, target) in links(host, "/dev/disk/by-id")? {
        by_id.entry(target).or_default().push(id);
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
        let kind = if n.kind == "disk" {
            DevKind::Disk
        } else {
            DevKind::Part
        };
        let mut ids = by_id.remove(&n.kname).unwrap_or_default();
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
        };
        if kind == DevKind::Disk {
            dev.write_cache = scsi_cache_type(host, &n.kname)?;
        }
        // Probe content only where nothing is stacked: a device in use is refused anyway.
        if dev.holders.is_empty()
            && !has_parts
            && dev.mountpoint.is_none()
            && n.size > 0
            && !lvm_child(n, &kind_of)
        {
            dev.signatures = Some(wipefs::parse(&run_ok(
                host,
                &wipefs::argv(&format!("/dev/{}", n.kname)),
            )?)?);
        }
        block_devices.push(dev);
    }

    let md_names = links(host, "/dev/md")?;
    let mut arrays = Vec::new();
    let mdstat_text = read_opt(host, "/proc/mdstat")?.unwrap_or_default();
    // /dev/md/NAME links by kernel name; the first link wins.
    let mut md_name_of: HashMap<&str, &str> = HashMap::new();
    for (name, target) in &md_names {
        md_name_of.entry(target.as_str()).or_insert(name.as_str());
    }
    let fstype_of: HashMap<&str, &str> = nodes
        .iter()
        .filter_map(|n| n.fstype.as_deref().map(|f| (n.kname.as_str(), f)))
        .collect();
    for a in mdstat::parse(&mdstat_text)? {
        arrays.push(md_array(host, &a, &md_name_of, &fstype_of)?);
    }

    let mm: HashMap<&str, &str> = nodes
        .iter()
        .filter(|n| !n.maj_min.is_empty())
        .map(|n| (n.maj_min.as_str(), n.kname.as_str()))
        .collect();
    let kname_of = |maj_min: &str, name: &str| -> String {
        mm.get(maj_min)
            .map(|s| s.to_string())
            .unwrap_or_else(|| name.rsplit('/').next().unwrap_or(name).to_string())
    };
    let lvm = lvm::parse_fullreport(&run_ok(host, &lvm::argv())?, &kname_of)?;

    let boot = boot(host)?;
    Ok(Observed {
        format: SNAPSHOT_FORMAT,
        hostname: host.hostname(),
        block_devices,
        arrays,
        lvm,
        boot,
    }
    .normalized())
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
    Ok(b)
}

fn lvm_child(n: &lsblk::Node, kind_of: &HashMap<&str, &str>) -> bool {
    n.children
        .iter()
        .any(|c| kind_of.get(c.as_str()).copied() == Some("lvm"))
}

fn scsi_cache_type(host: &dyn Host, kname: &str) -> Result<Option<WriteCacheState>, ObserveError> {
    let dir = format!("/sys/block/{kname}/device/scsi_disk");
    let entries = match host.list_dir(&dir) {
        Ok(e) => e,
        Err(HostError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let Some(first) = entries.first() else {
        return Ok(None);
    };
    Ok(
        read_opt(host, &format!("{dir}/{first}/cache_type"))?.map(|t| WriteCacheState {
            enabled: write_cache::parse_cache_type(&t),
            source: WriteCacheSource::ScsiCacheType,
        }),
    )
}

fn md_array(
    host: &dyn Host,
    a: &mdstat::MdstatArray,
    md_name_of: &HashMap<&str, &str>,
    fstype_of: &HashMap<&str, &str>,
) -> Result<MdArray, ObserveError> {
    let base = format!("/sys/block/{}/md", a.kname);
    // Empty values are absent (an inactive array shows `raid_disks` and `level` empty).
    let attr = |name: &str| {
        read_opt(host, &format!("{base}/{name}"))
            .map(|o| o.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()))
    };
    let num = |name: &'static str, v: Option<String>| -> Result<Option<u64>, ObserveError> {
        v.map(|s| mdadm::parse_number(name, &s))
            .transpose()
            .map_err(Into::into)
    };
    let bitmap = match attr("bitmap/location")? {
        Some(loc) if loc != "none" => Some(MdBitmap {
            chunk: num("bitmap/chunksize", attr("bitmap/chunksize")?)?.unwrap_or(0),
            backlog: num("bitmap/backlog", attr("bitmap/backlog")?)?.unwrap_or(0) as u32,
        }),
        _ => None,
    };
    // An inactive array (assembled by udev but not started, e.g. a member is missing after a
    // reboot) has no /dev/md/NAME link and little in sysfs or `--detail` (no level): the
    // superblock of a member says what it is.
    let export = match a.members.first() {
        Some(m) if !a.active => {
            let o = host.run(&[
                "mdadm".to_string(),
                "--examine".to_string(),
                "--export".to_string(),
                format!("/dev/{}", m.kname),
            ])?;
            (o.status == 0)
                .then(|| mdadm::parse_export(&o.stdout))
                .transpose()?
        }
        _ => None,
    };
    let ex = |k: &str| {
        export
            .as_ref()
            .and_then(|m| m.get(k).cloned())
            .filter(|v| !v.is_empty())
    };
    let mut members = Vec::new();
    for m in &a.members {
        let dev = format!("{base}/dev-{}", m.kname);
        let state = read_opt(host, &format!("{dev}/state"))?
            .map(|s| mdadm::parse_member_state(&s))
            .unwrap_or_default();
        let slot = read_opt(host, &format!("{dev}/slot"))?.and_then(|s| mdadm::parse_slot(&s));
        members.push(MdMember {
            kname: m.kname.clone(),
            slot,
            state,
        });
    }
    Ok(MdArray {
        kname: a.kname.clone(),
        name: md_name_of
            .get(a.kname.as_str())
            .map(|n| n.to_string())
            .or_else(|| ex("MD_DEVNAME"))
            .or_else(|| ex("MD_NAME").map(|n| n.rsplit(':').next().unwrap_or(&n).to_string())),
        // An array that is not running shows an all-zero UUID in sysfs: that is "unknown".
        uuid: attr("uuid")?
            .filter(|u| u.chars().any(|c| c.is_ascii_hexdigit() && c != '0'))
            .or_else(|| ex("MD_UUID")),
        level: attr("level")?
            .or_else(|| ex("MD_LEVEL"))
            .or_else(|| a.level.clone())
            .unwrap_or_default(),
        raid_disks: num(
            "raid_disks",
            attr("raid_disks")?.or_else(|| ex("MD_DEVICES")),
        )?
        .unwrap_or(a.disks.map(|d| d.0 as u64).unwrap_or(0)) as u32,
        size_kib: a.blocks,
        array_state: attr("array_state")?.unwrap_or_else(|| {
            if a.active {
                "active".into()
            } else {
                "inactive".into()
            }
        }),
        sync_action: attr("sync_action")?.unwrap_or_else(|| "idle".into()),
        sync_completed: attr("sync_completed")?
            .map(|s| mdadm::parse_sync_completed(&s))
            .transpose()?
            .flatten(),
        resync_pending: attr("resync_start")?.is_some_and(|r| !r.is_empty() && r != "none")
            && attr("sync_action")?.is_none_or(|a| a == "idle"),
        degraded: num("degraded", attr("degraded")?)?.unwrap_or(0) as u32,
        bitmap,
        members,
        fstype: fstype_of.get(a.kname.as_str()).map(|f| f.to_string()),
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
