//! The machine read for a file: what observation finds, and what the file's objects need asked
//! beyond it (the write caches it manages, the check schedules, the encryptions' keys and
//! headers, the sizes and labels of its filesystems, the partition tables of its disks).

use crate::config::Desired;
use crate::host::Host;
use crate::observe::{EarlyReads, ObserveError, Observed, probe_write_cache};

/// The observed filesystems (an LV's as (`vg`, `lv`), an array's as (`""`, kernel name)) of the
/// LVs and mirrors whose `filesystem` in the file `pick` selects.
fn fs_keys(
    d: &Desired,
    obs: &Observed,
    pick: impl Fn(&crate::config::filesystem::FilesystemSpec) -> bool,
) -> Vec<(String, String)> {
    // An encrypted LV's filesystem by its mapping's kernel name.
    let lvs = d.volume_groups.values().flat_map(|vg| {
        vg.lvs
            .values()
            .filter(|l| l.filesystem.as_ref().is_some_and(&pick))
            .filter_map(|l| match &l.encryption {
                // A closed mapping shows no filesystem: nothing to read.
                Some(e) => obs
                    .filesystems
                    .iter()
                    .find(|f| f.mapper.as_ref() == Some(&e.name))
                    .map(|f| (String::new(), f.kname.clone())),
                None => Some((vg.name.clone(), l.name.clone())),
            })
    });
    let mirrors = d
        .mirrors
        .values()
        .filter(|m| m.filesystem.as_ref().is_some_and(&pick))
        .filter_map(|m| {
            let kname = m
                .md_device()
                .map(|p| p.trim_start_matches("/dev/").to_string());
            obs.arrays
                .iter()
                .find(|a| match &kname {
                    Some(k) => a.kname == *k,
                    None => a.name.as_deref() == Some(m.name.as_str()),
                })
                .map(|a| (String::new(), a.kname.clone()))
        });
    lvs.chain(mirrors).collect()
}

/// Observe the machine, asking hdparm only for disks whose cache the file manages and sysfs could not answer.
pub fn observe_for(host: &dyn Host, desired: Option<&Desired>) -> Result<Observed, ObserveError> {
    observe_started_for(host, desired, EarlyReads::start(host))
}

/// [`observe_for`] with lsblk and the LVM report started before the file was read.
pub fn observe_started_for(
    host: &dyn Host,
    desired: Option<&Desired>,
    early: EarlyReads,
) -> Result<Observed, ObserveError> {
    let ids: Vec<String> = desired
        .map(|d| d.disks.values().filter_map(|s| s.id.clone()).collect())
        .unwrap_or_default();
    let serials: Vec<String> = desired
        .map(|d| d.disks.values().filter_map(|s| s.serial.clone()).collect())
        .unwrap_or_default();
    let scope = match desired {
        Some(_) => crate::observe::ProbeScope::Named {
            ids: &ids,
            serials: &serials,
        },
        None => crate::observe::ProbeScope::All,
    };
    let mut obs = crate::observe::observe_started(host, scope, early)?;
    if let Some(d) = desired {
        if d.boot.is_some() {
            obs.boot.loaders =
                crate::observe::loader::read(host, &obs.block_devices, obs.boot.uefi);
        }
        let knames: Vec<String> = d
            .disks
            .values()
            .filter(|s| s.write_cache.is_some())
            .filter_map(|s| crate::plan::disk_for(&obs, s))
            .map(|b| b.kname.clone())
            .collect();
        if !knames.is_empty() {
            probe_write_cache(host, &mut obs, &knames)?;
        }
        let mut schedules: Vec<String> = d
            .mirrors
            .values()
            .filter_map(|m| Some(m.check.as_ref()?.schedule.clone()))
            .collect();
        schedules.sort();
        schedules.dedup();
        crate::observe::monitoring::probe_calendars(host, &mut obs.boot.monitoring, &schedules);
        if !schedules.is_empty() {
            crate::observe::monitoring::probe_systemctl(host, &mut obs.boot.monitoring);
        }
        if let Some(a) = &d.alerts {
            crate::observe::monitoring::probe_mdmonitor(host, &mut obs.boot.monitoring);
            let files: Vec<(&str, bool)> = (a.files().into_iter())
                .map(|(k, p)| (p, k == "program"))
                .collect();
            crate::observe::monitoring::probe_alert_files(host, &mut obs.boot.monitoring, &files);
        }
        super::probe_luks::probe_for(host, d, &mut obs);
        let caches = d.volume_groups.values().flat_map(|v| v.lvs.values());
        if caches.filter(|l| l.cache.is_some()).count() > 0 {
            let found = crate::observe::CACHE_CHECK_PATHS
                .iter()
                .any(|p| host.exists(p));
            obs.boot.cache_check = Some(found);
        }
        // The sizes of the filesystems the file names: a grow interrupted after its lvextend
        // shows as a filesystem smaller than its LV (or its array).
        let mut with_fs = fs_keys(d, &obs, |_| true);
        // And those on the LVs the file gives a writecache, named or not: a writecache block
        // larger than the filesystem's is refused by lvconvert, so the plan refuses it first.
        for vg in d.volume_groups.values() {
            for l in vg
                .lvs
                .values()
                .filter(|l| l.writecache.is_some() && l.encryption.is_none())
            {
                let k = (vg.name.clone(), l.name.clone());
                if !with_fs.contains(&k) {
                    with_fs.push(k);
                }
            }
        }
        if !with_fs.is_empty() {
            crate::observe::probe_fs_sizes(host, &mut obs.filesystems, &with_fs);
        }
        // The labels of the xfs filesystems the file labels (an ext4's came with its size).
        let labelled = fs_keys(d, &obs, |f| f.label.is_some());
        crate::observe::fs_label::probe_xfs_labels(host, &mut obs.filesystems, &labelled);
        // The smallest size of an ext4 on an LV the file makes smaller: a shrink below it is
        // refused at plan time, before the filesystem is unmounted.
        let shrinking: Vec<(String, String)> = d
            .volume_groups
            .values()
            .flat_map(|vg| vg.lvs.values().map(move |l| (vg, l)))
            .filter(|(vg, l)| match l.size {
                crate::config::size::LvSize::Bytes(b) => {
                    obs.lv(&vg.name, &l.name).is_some_and(|o| b < o.size)
                }
                _ => false,
            })
            .map(|(vg, l)| (vg.name.clone(), l.name.clone()))
            .collect();
        if !shrinking.is_empty() {
            crate::observe::filesystems::probe_min_sizes(host, &mut obs.filesystems, &shrinking);
        }
        // The on-disk tables of GPT disks the file partitions that have partitions: the kernel
        // may lag them (a partition added while the disk was in use).
        let tables: Vec<String> = d
            .disks
            .values()
            .filter(|s| !s.partitions.is_empty())
            .filter_map(|s| crate::plan::disk_for(&obs, s))
            .filter(|b| b.pttype.as_deref() == Some("gpt"))
            .filter(|b| {
                obs.block_devices
                    .iter()
                    .any(|c| c.parent.as_deref() == Some(b.kname.as_str()))
            })
            .map(|b| b.kname.clone())
            .collect();
        crate::observe::partx::probe_partition_tables(host, &mut obs, &tables);
        if d.disks.values().any(|s| !s.partitions.is_empty()) {
            crate::observe::partx::probe_partition_tools(host, &mut obs);
        }
    }
    Ok(obs)
}
