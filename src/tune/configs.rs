//! The configurations a tune run measures: the file's own, and each setting the layout allows
//! changed one at a time (write-mostly, write-behind, the HDDs' drive caches, a writecache),
//! each as a variant of the file's desired state, so that hyraid's own planner changes the
//! machine in a safe order and the file puts it back.

use crate::config::desired::DeviceRef;
use crate::config::{Desired, LvSpec, WriteMostly, WritecacheSpec};
use crate::observe::Observed;
use serde::{Deserialize, Serialize};

/// One setting changed from the file's, as the file would say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The YAML keys down to the setting: `["mirrors", "data0", "write_behind"]`.
    pub path: Vec<String>,
    /// The value in the file (`None`: not written), and the value measured.
    pub from: Option<String>,
    pub to: Option<String>,
}

/// A configuration: its name and what it changes from the file.
#[derive(Debug, Clone)]
pub struct Config {
    pub name: String,
    pub changes: Vec<Change>,
    pub desired: Desired,
    /// Why it carries a risk the file's does not (a drive cache, a writecache on one SSD).
    pub risk: Option<String>,
}

fn change(path: &[&str], from: Option<String>, to: Option<String>) -> Change {
    Change {
        path: path.iter().map(|s| s.to_string()).collect(),
        from,
        to,
    }
}

/// The mirrors an LV's data lies on (by the file's names).
pub fn mirrors_of(d: &Desired, vg: &str, lv: &LvSpec) -> Vec<String> {
    let pvs = lv
        .pvs
        .clone()
        .or_else(|| d.volume_groups.get(vg).map(|v| v.pvs.clone()))
        .unwrap_or_default();
    pvs.iter()
        .filter_map(|p| match p {
            DeviceRef::Mirror(m) => Some(m.clone()),
            DeviceRef::Disk(_) => None,
        })
        .collect()
}

/// The file's configuration and the variants the layout allows, `full` with more write-behind
/// values. `cache_pv`: a fast PV of the VG with room for a temporary writecache, when the LV has
/// none.
pub fn configs(
    d: &Desired,
    o: &Observed,
    vg: &str,
    lv: &str,
    full: bool,
    cache_pv: Option<(DeviceRef, u64)>,
) -> Vec<Config> {
    let mut out = vec![Config {
        name: "as the file says".into(),
        changes: vec![],
        desired: d.clone(),
        risk: None,
    }];
    let Some(spec) = d.volume_groups.get(vg).and_then(|v| v.lvs.get(lv)) else {
        return out;
    };
    let mirrors = mirrors_of(d, vg, spec);
    let hdds: Vec<String> = mirrors
        .iter()
        .filter_map(|m| d.mirrors.get(m))
        .flat_map(|m| m.members.iter())
        .filter(|n| {
            d.disks
                .get(n.split(':').next().unwrap_or(n))
                .and_then(|s| crate::plan::disk_for(o, s))
                .is_some_and(|b| b.rotational)
        })
        .cloned()
        .collect();
    let with =
        |name: String, changes: Vec<Change>, risk: Option<String>, f: &dyn Fn(&mut Desired)| {
            let mut x = d.clone();
            f(&mut x);
            Config {
                name,
                changes,
                desired: x,
                risk,
            }
        };
    // Write-mostly: the file's HDD members, or none.
    if !mirrors.is_empty() && !hdds.is_empty() {
        let on = mirrors
            .iter()
            .any(|m| match d.mirrors.get(m).map(|x| &x.write_mostly) {
                Some(WriteMostly::Auto) => true,
                Some(WriteMostly::List(l)) => !l.is_empty(),
                None => false,
            });
        let changes = mirrors
            .iter()
            .map(|m| {
                change(
                    &["mirrors", m, "write_mostly"],
                    Some(if on { "auto".into() } else { "[]".into() }),
                    Some(if on { "[]".into() } else { "auto".into() }),
                )
            })
            .collect();
        out.push(with(
            format!("write-mostly {}", if on { "off" } else { "on" }),
            changes,
            None,
            &|x: &mut Desired| {
                for m in &mirrors {
                    let ms = x.mirrors.get_mut(m).unwrap();
                    ms.write_mostly = if on {
                        WriteMostly::List(vec![])
                    } else {
                        WriteMostly::Auto
                    };
                    if on {
                        ms.write_behind = 0;
                    }
                }
            },
        ));
    }
    // Write-behind: only with a bitmap and a write-mostly member (md needs both).
    let wb_ok = !mirrors.is_empty()
        && mirrors.iter().all(|m| {
            d.mirrors.get(m).is_some_and(|x| {
                x.bitmap_chunk.is_some()
                    && !matches!(&x.write_mostly, WriteMostly::List(l) if l.is_empty())
            })
        })
        && !hdds.is_empty();
    if wb_ok {
        let cur = d.mirrors[&mirrors[0]].write_behind;
        let values: Vec<u32> = if full {
            vec![0, 512, 2048, 8192]
        } else if cur == 0 {
            vec![2048]
        } else {
            vec![0]
        };
        for v in values.into_iter().filter(|v| *v != cur) {
            let changes = mirrors
                .iter()
                .map(|m| {
                    change(
                        &["mirrors", m, "write_behind"],
                        Some(d.mirrors[m].write_behind.to_string()),
                        Some(v.to_string()),
                    )
                })
                .collect();
            out.push(with(
                format!("write-behind {v}"),
                changes,
                None,
                &|x: &mut Desired| {
                    for m in &mirrors {
                        x.mirrors.get_mut(m).unwrap().write_behind = v;
                    }
                },
            ));
        }
    }
    // The HDDs' drive caches, where the drives say what theirs is.
    let disks: Vec<String> = hdds
        .iter()
        .map(|n| n.split(':').next().unwrap_or(n).to_string())
        .filter(|n| {
            d.disks
                .get(n)
                .and_then(|s| crate::plan::disk_for(o, s))
                .and_then(|b| b.write_cache)
                .is_some_and(|c| c.enabled.is_some())
        })
        .collect();
    if !disks.is_empty() {
        let now = |n: &str| {
            d.disks[n].write_cache.unwrap_or_else(|| {
                crate::plan::disk_for(o, &d.disks[n])
                    .and_then(|b| b.write_cache?.enabled)
                    .unwrap_or(false)
            })
        };
        let on = disks.iter().all(|n| now(n));
        let word = |b: bool| if b { "on" } else { "off" }.to_string();
        let changes = disks
            .iter()
            .map(|n| {
                change(
                    &["disks", n, "write_cache"],
                    d.disks[n].write_cache.map(word),
                    Some(word(!on)),
                )
            })
            .collect();
        let risk = (!on).then(|| "a drive's volatile cache loses what it holds at a power cut unless the kernel's flushes reach it (they do on a working SATA drive; a UPS or a drive with power-loss protection makes it safe)".to_string());
        out.push(with(
            format!("drive cache {}", word(!on)),
            changes,
            risk,
            &|x: &mut Desired| {
                for n in &disks {
                    x.disks.get_mut(n).unwrap().write_cache = Some(!on);
                }
            },
        ));
    }
    // A writecache: detached when the LV has one; attached on a fast PV with room when not
    // (never on an LV with encryption of its own: the file cannot cache one).
    let cache_pv = cache_pv.filter(|_| spec.encryption.is_none());
    match (&spec.writecache, cache_pv) {
        (Some(_), _) => out.push(with(
            "no writecache".into(),
            vec![change(
                &["volume_groups", vg, "lvs", lv, "writecache"],
                Some("…".into()),
                None,
            )],
            None,
            &|x: &mut Desired| {
                x.volume_groups
                    .get_mut(vg)
                    .unwrap()
                    .lvs
                    .get_mut(lv)
                    .unwrap()
                    .writecache = None;
            },
        )),
        (None, Some((pv_ref, size))) => {
            let pv = pv_ref.name().to_string();
            let yaml = format!(
                "{{ size: {}, pvs: [{pv}] }}",
                crate::config::size::writable(size)
            );
            out.push(with(
                format!("writecache on {pv}"),
                vec![change(&["volume_groups", vg, "lvs", lv, "writecache"], None, Some(yaml))],
                Some(format!("writes wait on {pv} alone until they are written back: losing it before then loses them")),
                &|x: &mut Desired| {
                    x.volume_groups.get_mut(vg).unwrap().lvs.get_mut(lv).unwrap().writecache = Some(WritecacheSpec {
                        size,
                        pvs: vec![pv_ref.clone()],
                        settings: Default::default(),
                    });
                },
            ));
        }
        (None, None) => {}
    }
    out
}
