//! What a tune run measures and whether it may start, checked before anything changes: the
//! target resolved to an LV of the file (a directory on its filesystem, or a scratch LV with
//! room in the VG), the mirrors under it healthy and idle, the members whose I/O is counted,
//! and a fast PV with room for a temporary writecache.

use super::{Target, TuneError};
use crate::config::desired::DeviceRef;
use crate::config::size::{LvSize, human};
use crate::config::{Desired, LvSpec, TUNE_LV, TUNE_TAG};
use crate::observe::Observed;

/// Where the jobs run, resolved.
pub(super) struct Resolved {
    pub(super) vg: String,
    pub(super) lv: String,
    /// The file's state, plus the scratch LV when there is one.
    pub(super) base: Desired,
    /// What fio is pointed at (a directory, or the scratch LV's device).
    pub(super) bench_target: String,
    pub(super) scratch: bool,
}

/// The members of the mirrors an LV lies on (kernel names): each job records the reads and
/// writes each of them served.
pub(super) fn members(d: &Desired, o: &Observed, vg: &str, lv: &LvSpec) -> Vec<String> {
    super::mirrors_of(d, vg, lv)
        .iter()
        .filter_map(|m| crate::plan::array_for(o, d.mirrors.get(m)?))
        .flat_map(|a| a.members.iter().map(|m| m.kname.clone()))
        .collect()
}

pub(super) fn refuse(s: impl Into<String>) -> TuneError {
    TuneError::Refused(s.into())
}

/// The LV a directory is on: the longest mount point that holds it.
fn lv_of_dir(o: &Observed, d: &Desired, dir: &str) -> Result<(String, String), TuneError> {
    let dir = match dir.trim_end_matches('/') {
        "" => "/",
        d => d,
    };
    let f = o
        .filesystems
        .iter()
        .filter(|f| {
            f.mountpoint.as_deref().is_some_and(|m| {
                let m = m.trim_end_matches('/');
                dir == m || dir.starts_with(&format!("{m}/")) || m.is_empty()
            })
        })
        .max_by_key(|f| f.mountpoint.as_ref().map_or(0, |m| m.len()))
        .ok_or_else(|| {
            refuse(format!(
                "{dir} is not on a mounted filesystem hyraid sees; give a directory on a mounted LV of the file, or --scratch SIZE"
            ))
        })?;
    let mp = f.mountpoint.clone().unwrap_or_default();
    if f.md || f.lv.is_empty() {
        return Err(refuse(format!(
            "{dir} is on {mp} ({}), not on an LV of the file; tune measures an LV of the file (or --scratch SIZE)",
            f.kname
        )));
    }
    if !d
        .volume_groups
        .get(&f.vg)
        .is_some_and(|v| v.lvs.contains_key(&f.lv))
    {
        return Err(refuse(format!(
            "{dir} is on lv {}/{} (mounted at {mp}), which the file does not declare; tune changes only what the file manages",
            f.vg, f.lv
        )));
    }
    Ok((f.vg.clone(), f.lv.clone()))
}

/// The PV a file reference is, by kernel name.
fn pv_kname(d: &Desired, o: &Observed, r: &DeviceRef) -> Option<String> {
    match r {
        DeviceRef::Mirror(m) => {
            crate::plan::array_for(o, d.mirrors.get(m)?).map(|a| a.kname.clone())
        }
        DeviceRef::Disk(n) => crate::plan::disk_for(o, d.disks.get(n)?).map(|b| b.kname.clone()),
    }
}

fn pv_free(d: &Desired, o: &Observed, r: &DeviceRef) -> u64 {
    pv_kname(d, o, r)
        .and_then(|k| o.lvm.pvs.iter().find(|p| p.kname == k).map(|p| p.free))
        .unwrap_or(0)
}

pub(super) fn resolve(d: &Desired, o: &Observed, t: &Target) -> Result<Resolved, TuneError> {
    match t {
        Target::Directory(dir) => {
            let (vg, lv) = lv_of_dir(o, d, dir)?;
            Ok(Resolved {
                vg,
                lv,
                base: d.clone(),
                bench_target: dir.clone(),
                scratch: false,
            })
        }
        Target::Scratch { size, vg } => {
            let vg = match vg {
                Some(v) if d.volume_groups.contains_key(v) => v.clone(),
                Some(v) => return Err(refuse(format!("the file has no volume group `{v}`"))),
                None => {
                    let with: Vec<&String> = d
                        .volume_groups
                        .iter()
                        .filter(|(_, v)| {
                            !v.absent && v.pvs.iter().any(|p| matches!(p, DeviceRef::Mirror(_)))
                        })
                        .map(|(n, _)| n)
                        .collect();
                    match with.as_slice() {
                        [one] => (*one).clone(),
                        [] => {
                            return Err(refuse(
                                "the file has no volume group on a mirror to make a scratch LV in",
                            ));
                        }
                        many => {
                            return Err(refuse(format!(
                                "the file has {} volume groups on mirrors ({}); name one with --vg",
                                many.len(),
                                many.iter()
                                    .map(|s| s.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )));
                        }
                    }
                }
            };
            if let Some(l) = o.lv(&vg, TUNE_LV)
                && !l.tags.iter().any(|t| t == TUNE_TAG)
            {
                return Err(refuse(format!(
                    "vg {vg} has an LV named {TUNE_LV} that hyraid did not make (no tag {TUNE_TAG}); rename it to let tune make its scratch LV"
                )));
            }
            let spec = &d.volume_groups[&vg];
            let mirrors: Vec<(&DeviceRef, u64)> = spec
                .pvs
                .iter()
                .filter(|p| matches!(p, DeviceRef::Mirror(_)))
                .map(|p| (p, pv_free(d, o, p)))
                .collect();
            let Some((pv, _)) = mirrors
                .iter()
                .filter(|(_, f)| *f >= *size)
                .max_by_key(|(_, f)| *f)
            else {
                let have: Vec<String> = mirrors
                    .iter()
                    .map(|(p, f)| format!("{}: {}", p.name(), human(*f)))
                    .collect();
                return Err(refuse(format!(
                    "vg {vg} has no room for a scratch LV of {}: free on its mirrors {}; give a smaller --scratch, or a directory on a mounted LV of the file",
                    human(*size),
                    have.join(", ")
                )));
            };
            let mut base = d.clone();
            base.volume_groups
                .get_mut(&vg)
                .expect("checked")
                .lvs
                .insert(
                    TUNE_LV.into(),
                    LvSpec {
                        name: TUNE_LV.into(),
                        size: LvSize::Bytes(*size),
                        pvs: Some(vec![(*pv).clone()]),
                        stripes: None,
                        stripe_size: None,
                        writecache: None,
                        cache: None,
                        filesystem: None,
                        encryption: None,
                        absent: false,
                        tags: vec![TUNE_TAG.into()],
                    },
                );
            Ok(Resolved {
                bench_target: format!("/dev/{vg}/{TUNE_LV}"),
                vg,
                lv: TUNE_LV.into(),
                base,
                scratch: true,
            })
        }
    }
}

/// Refused unless every mirror the LV lies on is complete and idle.
pub(super) fn mirrors_idle(
    d: &Desired,
    o: &Observed,
    vg: &str,
    lv: &LvSpec,
) -> Result<(), TuneError> {
    for m in super::mirrors_of(d, vg, lv) {
        let Some(spec) = d.mirrors.get(&m) else {
            continue;
        };
        let a = crate::plan::array_for(o, spec)
            .ok_or_else(|| refuse(format!("mirror {m} is not on this machine")))?;
        if a.degraded > 0 || a.members.iter().any(|x| x.faulty()) {
            return Err(refuse(format!(
                "mirror {m} ({}) is degraded: tune measures a healthy mirror, and changing its settings now would only add risk; `hyraid status` says what to do",
                a.kname
            )));
        }
        if a.sync_action != "idle" {
            let what = match a.sync_action.as_str() {
                "check" => "checking",
                "repair" => "repairing",
                "resync" => "resyncing",
                "recover" => "rebuilding",
                other => other,
            };
            let done = a
                .sync_completed
                .map(|(x, t)| format!(" ({:.0}% done)", 100.0 * x as f64 / t.max(1) as f64))
                .unwrap_or_default();
            return Err(refuse(format!(
                "mirror {m} ({}) is {what}{done}: its I/O would be in every figure; run tune once it is idle (`cat /proc/mdstat`; a check stops with `echo idle > /sys/block/{}/md/sync_action` and `hyraid check` resumes it later)",
                a.kname, a.kname
            )));
        }
    }
    Ok(())
}

/// A fast PV of the VG (every disk under it an SSD) with room for a temporary writecache for an
/// LV that has no cache: `size`, or what the PV has free (in whole 4 MiB extents, one left) when
/// that is less, as long as it holds twice the test file (`least`).
pub(super) fn cache_pv(
    d: &Desired,
    o: &Observed,
    vg: &str,
    size: u64,
    least: u64,
) -> Option<(DeviceRef, u64)> {
    let fast = |n: &str| {
        d.disks
            .get(n.split(':').next().unwrap_or(n))
            .and_then(|s| crate::plan::disk_for(o, s))
            .is_some_and(|b| !b.rotational)
    };
    d.volume_groups[vg]
        .pvs
        .iter()
        .filter(|r| match r {
            DeviceRef::Disk(n) => fast(n),
            DeviceRef::Mirror(m) => d
                .mirrors
                .get(m)
                .is_some_and(|x| x.members.iter().all(|n| fast(n))),
        })
        .map(|r| {
            let extent = 4u64 << 20;
            let room = (pv_free(d, o, r) / extent).saturating_sub(1) * extent;
            (r.clone(), size.min(room))
        })
        .find(|(_, s)| *s >= least)
}
