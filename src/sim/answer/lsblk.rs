//! `lsblk --json` as the observer runs it: disks, their partitions, the arrays and LVs stacked on
//! them, and the devices hyraid does not model.

use crate::observe::{DevKind, Lv, Observed};
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
        "partlabel": null, "parttype": null, "pkname": null, "mountpoint": null, "pttype": null, "ptuuid": null, "log-sec": 512,
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
    // A hidden writecache or dm-cache origin or cachevol carries its LV above it.
    let above: Vec<Value> = w
        .lvm
        .lvs
        .iter()
        .enumerate()
        .filter(|(_, top)| {
            let below = [
                top.writecache.as_ref().map(|w| (&w.origin, &w.cachevol)),
                top.cache.as_ref().map(|c| (&c.origin, &c.cachevol)),
            ];
            // An LV whose extents a pvmove holds (`pvmove0:PV`) stands above the move's node.
            let moved = top
                .extents
                .keys()
                .any(|k| k.strip_prefix(&l.name).is_some_and(|r| r.starts_with(':')));
            top.vg == l.vg
                && (moved
                    || below
                        .iter()
                        .flatten()
                        .any(|(o, cv)| **o == l.name || **cv == l.name))
        })
        .map(|(j, top)| {
            let mut n = node(
                &lv_dm_name(top),
                "lvm",
                top.size,
                true,
                &format!("254:{j}"),
                Value::Null,
                vec![],
            );
            // Its kernel name, as the LV's own node has (the real capture: `dm-0`).
            n["kname"] = json!(format!("dm-{j}"));
            with_fs(w, top, &mut n);
            n
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
    with_fs(w, l, &mut n);
    n
}

/// The FSTYPE, UUID and MOUNTPOINT of an LV's node, from the filesystem on it or its LUKS
/// header, and the mapping open on that (the model names the LV `vg/lv` as its parent).
fn with_fs(w: &Observed, l: &Lv, n: &mut Value) {
    if let Some(f) = w
        .filesystems
        .iter()
        .find(|f| !f.md && f.mapper.is_none() && f.vg == l.vg && f.lv == l.name && !l.hidden)
    {
        n["fstype"] = json!(f.fstype);
        n["uuid"] = s(&f.uuid);
        n["mountpoint"] = s(&f.mountpoint);
    }
    let key = format!("{}/{}", l.vg, l.name);
    if let Some(h) = w.luks.iter().find(|h| h.device == key) {
        n["fstype"] = json!(crate::observe::luks::LUKS_FSTYPE);
        n["uuid"] = s(&h.uuid);
        let mut children = n["children"].as_array().cloned().unwrap_or_default();
        children.extend(other_children(w, Some(&key)));
        n["children"] = json!(children);
    }
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
                lv_children(w, &o.kname)
                    .into_iter()
                    .chain(other_children(w, Some(&o.kname)))
                    .collect(),
            );
            n["mountpoint"] = s(&o.mountpoint);
            if let Some(name) = &o.name {
                n["name"] = json!(name);
                n["path"] = json!(format!("/dev/mapper/{name}"));
                // A filesystem made inside the mapping.
                if let Some(f) = w
                    .filesystems
                    .iter()
                    .find(|f| f.mapper.as_ref() == Some(name))
                {
                    n["fstype"] = json!(f.fstype);
                    n["uuid"] = s(&f.uuid);
                    n["mountpoint"] = s(&f.mountpoint);
                }
            }
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
                // Assembled and not running: the kernel gives it no size and no level, so lsblk
                // shows `md` of 0 bytes with no signature and nothing on it (a real capture:
                // tests/fixtures/vm-trixie/disk-swap-inactive.json).
                if a.array_state == "inactive" && !a.is_container() {
                    return node(
                        &a.kname,
                        "md",
                        0,
                        true,
                        &format!("9:{n}"),
                        Value::Null,
                        Vec::new(),
                    );
                }
                let mut children = lv_children(w, &a.kname);
                children.extend(other_children(w, Some(&a.kname)));
                let mut n = node(
                    &a.kname,
                    // lsblk's TYPE of an external-metadata container is `md`.
                    if a.is_container() { "md" } else { &a.level },
                    a.size_kib * 1024,
                    true,
                    &format!("9:{n}"),
                    s(&a.fstype),
                    children,
                );
                if let Some(l) = w.luks.iter().find(|l| l.device == a.kname) {
                    n["uuid"] = s(&l.uuid);
                }
                // A filesystem on the array itself (a mirror used without LVM).
                if let Some(f) = w.filesystems.iter().find(|f| f.md && f.kname == a.kname) {
                    n["fstype"] = json!(f.fstype);
                    n["uuid"] = s(&f.uuid);
                    n["mountpoint"] = s(&f.mountpoint);
                }
                n
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
        n["parttype"] = s(&d.parttype);
        n["pkname"] = s(&d.parent);
        n["mountpoint"] = s(&d.mountpoint);
        if let Some(l) = w.luks.iter().find(|l| l.device == d.kname) {
            n["uuid"] = s(&l.uuid);
        }
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

/// `lsblk --json … DEVICE`: the device's own node and what is stacked on it (`name`: its kernel
/// name, or an LV's device-mapper name).
pub fn lsblk_of(w: &Observed, name: &str) -> Option<String> {
    fn find<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
        if v["name"] == name || v["kname"] == name {
            return Some(v);
        }
        v["children"]
            .as_array()
            .into_iter()
            .flatten()
            .find_map(|c| find(c, name))
    }
    let all: Value = serde_json::from_str(&lsblk(w)).ok()?;
    let n = all["blockdevices"]
        .as_array()?
        .iter()
        .find_map(|d| find(d, name))?;
    Some(json!({ "blockdevices": [n] }).to_string())
}

/// The device-mapper name of LV `vg/lv` (`vg0-hyraid--tune`).
pub fn dm_name(vg: &str, lv: &str) -> String {
    format!("{}-{}", vg.replace('-', "--"), lv.replace('-', "--"))
}
