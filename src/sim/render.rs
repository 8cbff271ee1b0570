//! The simulated host's answers, in the real tools' output formats.

use super::{SimState, Target, fail, out};
use crate::host::{CmdOutput, HostError};
use crate::observe::{BitmapKind, DevKind, Lv, Observed, WriteCacheSource};
use serde_json::{Value, json};

fn s(v: &Option<String>) -> Value {
    v.as_ref()
        .map(|x| Value::String(x.clone()))
        .unwrap_or(Value::Null)
}

fn lv_dm_name(l: &Lv) -> String {
    format!("{}-{}", l.vg.replace('-', "--"), l.name.replace('-', "--"))
}

fn node(
    name: &str,
    kind: &str,
    size: u64,
    rota: bool,
    maj_min: &str,
    fstype: Value,
    children: Vec<Value>,
) -> Value {
    let mut n = json!({
        "name": name, "kname": name, "path": format!("/dev/{name}"), "type": kind, "size": size, "rota": rota,
        "serial": null, "wwn": null, "model": null, "tran": null, "fstype": fstype, "uuid": null, "partuuid": null,
        "partlabel": null, "pkname": null, "mountpoint": null, "pttype": null, "ptuuid": null, "log-sec": 512,
        "phy-sec": 512, "maj:min": maj_min
    });
    if !children.is_empty() {
        n["children"] = Value::Array(children);
    }
    n
}

/// LVs (dm devices) stacked directly on a PV, with the LVs above them.
fn lv_children(w: &Observed, pv_kname: &str) -> Vec<Value> {
    w.lvm
        .lvs
        .iter()
        .enumerate()
        .filter(|(_, l)| l.extents.contains_key(pv_kname) && l.active)
        .map(|(i, l)| lv_node(w, i, l))
        .collect()
}

fn lv_node(w: &Observed, i: usize, l: &Lv) -> Value {
    // A hidden writecache origin or cachevol carries the writecache LV above it.
    let above: Vec<Value> = w
        .lvm
        .lvs
        .iter()
        .enumerate()
        .filter(|(_, top)| {
            top.vg == l.vg
                && top
                    .writecache
                    .as_ref()
                    .is_some_and(|wc| wc.origin == l.name || wc.cachevol == l.name)
        })
        .map(|(j, top)| {
            node(
                &lv_dm_name(top),
                "lvm",
                top.size,
                true,
                &format!("254:{j}"),
                Value::Null,
                vec![],
            )
        })
        .collect();
    let mut n = node(
        &lv_dm_name(l),
        "lvm",
        l.size,
        true,
        &format!("254:{i}"),
        Value::Null,
        above,
    );
    n["kname"] = json!(format!("dm-{i}"));
    n
}

/// Holders a snapshot lists that the simulated world does not model as arrays or LVs (an open
/// dm-crypt volume, an md array of another level): shown by lsblk as children of their type.
fn with_foreign_holders(d: &crate::observe::BlockDevice, mut children: Vec<Value>) -> Vec<Value> {
    for h in &d.holders {
        if children.iter().any(|c| c["kname"] == json!(h)) {
            continue;
        }
        let kind = if h.starts_with("md") {
            "raid5"
        } else {
            "crypt"
        };
        let n: u32 = h
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .unwrap_or(0);
        let major = if h.starts_with("md") { 9 } else { 254 };
        children.push(node(
            h,
            kind,
            d.size,
            d.rotational,
            &format!("{major}:{}", 100 + n),
            Value::Null,
            vec![],
        ));
    }
    children
}

/// Devices hyraid does not model (dm-crypt, multipath, loop, …) stacked on `parent`, or the
/// top-level ones for None.
fn other_children(w: &Observed, parent: Option<&str>) -> Vec<Value> {
    w.other_devices
        .iter()
        .filter(|o| match parent {
            Some(p) => o.parents.iter().any(|x| x == p),
            None => o.parents.is_empty(),
        })
        .map(|o| {
            let mut n = node(
                &o.kname,
                &o.kind,
                o.size,
                false,
                &o.maj_min,
                s(&o.fstype),
                other_children(w, Some(&o.kname)),
            );
            n["mountpoint"] = s(&o.mountpoint);
            n
        })
        .collect()
}

pub fn lsblk(w: &Observed) -> String {
    let holders_of = |kname: &str| -> Vec<Value> {
        let mut v: Vec<Value> = w
            .arrays
            .iter()
            .filter(|a| a.member(kname).is_some())
            .map(|a| {
                let n: u32 = a.kname.trim_start_matches("md").parse().unwrap_or(0);
                let mut children = lv_children(w, &a.kname);
                children.extend(other_children(w, Some(&a.kname)));
                node(
                    &a.kname,
                    // lsblk's TYPE of an external-metadata container is `md`.
                    if a.is_container() { "md" } else { &a.level },
                    a.size_kib * 1024,
                    true,
                    &format!("9:{n}"),
                    s(&a.fstype),
                    children,
                )
            })
            .collect();
        v.extend(lv_children(w, kname));
        v.extend(other_children(w, Some(kname)));
        v
    };
    let dev_node = |d: &crate::observe::BlockDevice, children: Vec<Value>| {
        let mut n = node(
            &d.kname,
            if d.kind == DevKind::Disk {
                "disk"
            } else {
                "part"
            },
            d.size,
            d.rotational,
            &d.maj_min,
            s(&d.fstype),
            children,
        );
        n["serial"] = s(&d.serial);
        n["wwn"] = s(&d.wwn);
        n["model"] = s(&d.model);
        n["tran"] = s(&d.tran);
        n["pttype"] = s(&d.pttype);
        n["partlabel"] = s(&d.partlabel);
        n["pkname"] = s(&d.parent);
        n["mountpoint"] = s(&d.mountpoint);
        n
    };
    let mut disks: Vec<Value> = w
        .block_devices
        .iter()
        .filter(|d| d.kind == DevKind::Disk)
        .map(|d| {
            let mut children: Vec<Value> = w
                .block_devices
                .iter()
                .filter(|p| p.parent.as_deref() == Some(d.kname.as_str()))
                .map(|p| dev_node(p, with_foreign_holders(p, holders_of(&p.kname))))
                .collect();
            children.extend(holders_of(&d.kname));
            let children = with_foreign_holders(d, children);
            dev_node(d, children)
        })
        .collect();
    disks.extend(other_children(w, None));
    serde_json::to_string_pretty(&json!({ "blockdevices": disks })).unwrap()
}

fn md_minor(kname: &str) -> String {
    kname.trim_start_matches("md").to_string()
}

pub fn fullreport(w: &Observed) -> String {
    let maj_min = |k: &str| -> (String, String) {
        if w.array(k).is_some() {
            ("9".into(), md_minor(k))
        } else {
            let mm = w.device(k).map(|d| d.maj_min.clone()).unwrap_or_default();
            let (a, b) = mm.split_once(':').unwrap_or(("", ""));
            (a.into(), b.into())
        }
    };
    // A PV on an array that is not running cannot be read: LVM reports it [unknown].
    let hidden_pv = |p: &crate::observe::Pv| {
        w.array(&p.kname)
            .is_some_and(|a| a.array_state == "inactive")
    };
    let pv_row = |p: &crate::observe::Pv| {
        if hidden_pv(p) {
            return json!({"pv_fmt":"lvm2","pv_uuid":p.uuid,"dev_size":"0","pv_name":"[unknown]","pv_major":"","pv_minor":"",
                          "pv_size":p.size.to_string(),"pv_free":p.free.to_string(),"pv_attr":"a-m","pv_missing":"missing"});
        }
        let (ma, mi) = maj_min(&p.kname);
        json!({"pv_fmt":"lvm2","pv_uuid":p.uuid,"dev_size":p.dev_size.to_string(),"pv_name":p.name,"pv_major":ma,"pv_minor":mi,
               "pe_start":"1048576","pv_size":p.size.to_string(),"pv_free":p.free.to_string(),"pv_used":(p.size-p.free).to_string(),
               "pv_attr":if p.vg.is_some() {"a--"} else {"---"},"pv_in_use":if p.vg.is_some() {"used"} else {""}})
    };
    let mut sections = Vec::new();
    for vg in &w.lvm.vgs {
        let pvs: Vec<&crate::observe::Pv> = w.pvs_of(&vg.name).collect();
        let lvs: Vec<&Lv> = w.lvm.lvs.iter().filter(|l| l.vg == vg.name).collect();
        let visible = lvs.iter().filter(|l| !l.hidden).count();
        let mut pvseg = Vec::new();
        for p in &pvs {
            let mut start = 0u64;
            for l in &lvs {
                if let Some(n) = l.extents.get(&p.kname) {
                    pvseg.push(json!({"pvseg_start":start.to_string(),"pvseg_size":n.to_string(),"pv_uuid":p.uuid,"lv_uuid":l.uuid}));
                    start += n;
                }
            }
            let total = p.size / vg.extent_size.max(1);
            if start < total {
                pvseg.push(json!({"pvseg_start":start.to_string(),"pvseg_size":(total-start).to_string(),"pv_uuid":p.uuid,"lv_uuid":""}));
            }
        }
        let name_of = |l: &Lv| {
            if l.hidden {
                format!("[{}]", l.name)
            } else {
                l.name.clone()
            }
        };
        let lv_rows: Vec<Value> = lvs
            .iter()
            .map(|l| {
                let wc = l.writecache.as_ref();
                // lv_attr's volume type: what the world's segment type (or snapshot) makes it.
                let kind = match l.segtype.as_str() {
                    _ if l.snapshot_of.is_some() && l.segtype != "thin" => 's',
                    s if s.starts_with("raid") => 'r',
                    "mirror" => 'm',
                    "thin-pool" => 't',
                    "thin" => 'V',
                    "vdo-pool" => 'd',
                    "cache" => 'C',
                    _ => '-',
                };
                let attr = format!(
                    "{}wi-{}-{}---",
                    if wc.is_some() { 'C' } else if l.hidden && l.name.ends_with("_wcorig") { 'o' } else if l.hidden { 'C' } else { kind },
                    if l.active { 'a' } else { '-' },
                    if wc.is_some() || l.hidden { 'C' } else { '-' }
                );
                json!({"lv_uuid":l.uuid,"lv_name":name_of(l),"lv_full_name":format!("{}/{}",l.vg,l.name),
                       "lv_path": if l.hidden {String::new()} else {format!("/dev/{}/{}",l.vg,l.name)},
                       "lv_layout": if wc.is_some() {"writecache"} else if l.stripes>1 {"striped"} else {"linear"},
                       "lv_role": if l.hidden {"private"} else {"public"},
                       "lv_active": if l.active {"active"} else {""},
                       "lv_size": l.size.to_string(), "lv_attr": attr,
                       "origin": wc.map(|c| format!("[{}]", c.origin)).or(l.snapshot_of.clone()).unwrap_or_default(),
                       "pool_lv": wc.map(|c| format!("[{}]", c.cachevol)).unwrap_or_default(),
                       "writecache_block_size": wc.and_then(|c| c.block_size).map(|b| b.to_string()).unwrap_or_else(|| "-1".into()),
                       "writecache_writeback_blocks": wc.and_then(|c| c.writeback_blocks).map(|b| b.to_string()).unwrap_or_default(),
                       "lv_tags": l.tags.join(",")})
            })
            .collect();
        let seg_rows: Vec<Value> = lvs
            .iter()
            .map(|l| {
                let devices = match &l.writecache {
                    Some(wc) => format!("{}(0)", wc.origin),
                    None => l.extents.keys().map(|k| format!("/dev/{k}(0)")).collect::<Vec<_>>().join(","),
                };
                let settings = l.writecache.as_ref().map(|wc| wc.settings.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")).unwrap_or_default();
                json!({"segtype":l.segtype,"stripes":l.stripes.to_string(),"seg_start":"0","seg_size":l.size.to_string(),
                       "devices":devices,"cache_settings":settings,"lv_uuid":l.uuid})
            })
            .collect();
        sections.push(json!({
            "vg":[{"vg_fmt":"lvm2","vg_uuid":vg.uuid,"vg_name":vg.name,"vg_attr":if vg.partial || pvs.iter().any(|p| hidden_pv(p)) {"wz-pn-"} else {"wz--n-"},
                   "vg_partial":if vg.partial || pvs.iter().any(|p| hidden_pv(p)) {"partial"} else {""},"vg_size":vg.size.to_string(),
                   "vg_free":vg.free.to_string(),"vg_extent_size":vg.extent_size.to_string(),
                   "vg_extent_count":vg.extent_count().to_string(),"vg_free_count":vg.free_count().to_string(),
                   "pv_count":pvs.len().to_string(),"lv_count":visible.to_string()}],
            "pv": pvs.iter().map(|p| pv_row(p)).collect::<Vec<_>>(),
            "lv": lv_rows, "pvseg": pvseg, "seg": seg_rows
        }));
    }
    let orphans: Vec<Value> = w
        .lvm
        .pvs
        .iter()
        .filter(|p| p.vg.is_none())
        .map(pv_row)
        .collect();
    if !orphans.is_empty() {
        sections.push(json!({"vg": [], "pv": orphans, "lv": [], "pvseg": [], "seg": []}));
    }
    // lvm2 prints its report with two-space indentation and string values.
    format!(
        "  {}\n",
        serde_json::to_string_pretty(&json!({ "report": sections })).unwrap()
    )
}

/// The personality's part of the blocks line (raid0_status, raid5_status, …), before `[n/m] [U_]`.
fn level_status(a: &crate::observe::MdArray) -> (&'static str, bool) {
    match a.level.as_str() {
        "raid0" => (" 512k chunks", false),
        "linear" => (" 0k rounding", false),
        "raid10" => (" 512K chunks 2 near-copies", true),
        "raid4" => (" level 4, 512k chunk, algorithm 0", true),
        "raid5" => (" level 5, 512k chunk, algorithm 2", true),
        "raid6" => (" level 6, 512k chunk, algorithm 2", true),
        _ => ("", true),
    }
}

pub fn mdstat(w: &Observed) -> String {
    let mut o = String::from(
        "Personalities : [linear] [multipath] [raid0] [raid1] [raid6] [raid5] [raid4] [raid10] \n",
    );
    for a in w.arrays.iter().rev() {
        let mut members: Vec<String> = Vec::new();
        for (i, m) in a.members.iter().enumerate().rev() {
            let mut t = format!("{}[{}]", m.kname, m.slot.unwrap_or(a.raid_disks + i as u32));
            if m.write_mostly() {
                t.push_str("(W)");
            }
            if m.faulty() {
                t.push_str("(F)");
            } else if m.has("spare") && a.sync_action != "recover" {
                t.push_str("(S)");
            }
            members.push(t);
        }
        let metadata = a.metadata.as_deref().unwrap_or("1.2");
        if a.array_state == "inactive" {
            // md_seq_show: no level, members with (S), blocks without [n/m] for an array that does not run.
            o.push_str(&format!(
                "{} : inactive {}\n      {} blocks super {metadata}\n       \n",
                a.kname,
                members.join(" "),
                a.size_kib
            ));
            continue;
        }
        o.push_str(&format!(
            "{} : active {} {}\n",
            a.kname,
            a.level,
            members.join(" ")
        ));
        let working = a.members.iter().filter(|m| m.has("in_sync")).count() as u32;
        let slots: String = (0..a.raid_disks)
            .map(|s| {
                if a.members
                    .iter()
                    .any(|m| m.slot == Some(s) && m.has("in_sync"))
                {
                    'U'
                } else {
                    '_'
                }
            })
            .collect();
        let (status, redundant) = level_status(a);
        o.push_str(&format!(
            "      {} blocks super {metadata}{status}",
            a.size_kib
        ));
        if redundant {
            o.push_str(&format!(" [{}/{}] [{}]", a.raid_disks, working, slots));
        }
        o.push('\n');
        if let Some((done, total)) = a.sync_completed {
            let op = match a.sync_action.as_str() {
                "recover" => "recovery",
                "check" => "check",
                "reshape" => "reshape",
                _ => "resync",
            };
            let permille = (done * 1000).checked_div(total).unwrap_or(0);
            let bar = (permille / 50) as usize;
            o.push_str(&format!(
                "      [{}>{}]  {op} = {:>3}.{}% ({}/{}) finish=1.0min speed=100000K/sec\n",
                "=".repeat(bar),
                ".".repeat(19usize.saturating_sub(bar)),
                permille / 10,
                permille % 10,
                done / 2,
                total / 2
            ));
        }
        match &a.bitmap {
            Some(b) => {
                o.push_str(&format!(
                    "      bitmap: 0/1 pages [0KB], {}KB chunk",
                    b.chunk / 1024
                ));
                if let Some(f) = b.file.as_ref().filter(|_| b.kind == BitmapKind::File) {
                    o.push_str(&format!(", file: {}", f.replace(' ', "\\040")));
                }
                o.push_str("\n\n");
            }
            None => o.push_str("      \n"),
        }
    }
    o.push_str("unused devices: <none>\n");
    o
}

pub fn sysfs_read(w: &Observed, path: &str) -> Option<String> {
    let rest = path.strip_prefix("/sys/block/")?;
    let (dev, attr) = rest.split_once('/')?;
    if let Some(a) = attr.strip_prefix("md/").and(w.array(dev)) {
        let attr = attr.strip_prefix("md/").unwrap();
        if let Some(m) = attr.strip_prefix("dev-") {
            let (k, file) = m.split_once('/')?;
            let mem = a.member(k)?;
            return match file {
                "state" => Some(format!("{}\n", mem.state.join(","))),
                "slot" => Some(format!(
                    "{}\n",
                    mem.slot
                        .map(|s| s.to_string())
                        .unwrap_or_else(|| "none".into())
                )),
                _ => None,
            };
        }
        let inactive = a.array_state == "inactive";
        // What kernel 6.1 shows for an array that is not running (captured in the VM).
        if inactive && attr == "uuid" {
            return Some("00000000-0000-0000-0000-000000000000\n".into());
        }
        if inactive
            && matches!(
                attr,
                "level" | "raid_disks" | "degraded" | "sync_action" | "sync_completed"
            )
        {
            return Some("\n".into());
        }
        if inactive && attr.starts_with("bitmap/") {
            return None;
        }
        // Only personalities with redundancy have these (md_redundancy_group).
        if !a.bitmap_applies()
            && matches!(
                attr,
                "degraded" | "sync_action" | "sync_completed" | "sync_speed"
            )
        {
            return None;
        }
        let v = match attr {
            "level" => a.level.clone(),
            "raid_disks" => a.raid_disks.to_string(),
            "array_state" => a.array_state.clone(),
            "sync_action" => a.sync_action.clone(),
            "sync_completed" => a
                .sync_completed
                .map(|(d, t)| format!("{d} / {t}"))
                .unwrap_or_else(|| "none".into()),
            "degraded" => a.degraded.to_string(),
            "resync_start" => {
                if a.resync_pending {
                    "0".into()
                } else {
                    "none".into()
                }
            }
            "sync_speed" => {
                if a.sync_completed.is_some() {
                    "100000".into()
                } else {
                    "none".into()
                }
            }
            "uuid" => a.uuid.clone()?,
            "bitmap/location" => match a.bitmap.as_ref().map(|b| b.kind) {
                Some(BitmapKind::Internal) => "+8".into(),
                Some(BitmapKind::File) => "file".into(),
                // A location no kernel hyraid knows prints.
                Some(BitmapKind::Unknown) => "unknown".into(),
                None => "none".into(),
            },
            "metadata_version" => a.metadata.clone().unwrap_or_else(|| "1.2".into()),
            "bitmap/chunksize" => a.bitmap.as_ref().map(|b| b.chunk).unwrap_or(0).to_string(),
            "bitmap/backlog" => a
                .bitmap
                .as_ref()
                .map(|b| b.backlog)
                .unwrap_or(0)
                .to_string(),
            _ => return None,
        };
        return Some(format!("{v}\n"));
    }
    let d = w.device(dev)?;
    let wc = d
        .write_cache
        .filter(|c| c.source == WriteCacheSource::ScsiCacheType)?;
    if attr.starts_with("device/scsi_disk/") && attr.ends_with("/cache_type") {
        return Some(match wc.enabled {
            Some(true) => "write back\n".into(),
            Some(false) => "write through\n".into(),
            None => "none\n".into(),
        });
    }
    None
}

pub fn wipefs(st: &SimState, dev: &str) -> Result<CmdOutput, HostError> {
    let Some(Target::Block(k)) = st.resolve(dev) else {
        return fail(
            1,
            format!(
                "wipefs: error: {dev}: probing initialization failed: No such file or directory\n"
            ),
        );
    };
    let d = st.world.device(&k).unwrap();
    if let Some(e) = &d.probe_error {
        return fail(1, format!("{e}\n"));
    }
    let sigs: Vec<Value> = d
        .signatures
        .clone()
        .unwrap_or_default()
        .iter()
        .map(|s| json!({"device": k, "offset": s.offset, "type": s.kind, "uuid": s.uuid, "label": null}))
        .collect();
    out(&serde_json::to_string_pretty(&json!({ "signatures": sigs })).unwrap())
}
