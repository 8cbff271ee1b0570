//! One object of the machine (as a plan addresses it: `disk hdd0`, `mirror data0`,
//! `pv /dev/md/data0`, `vg vg0`, `lv vg0/nextcloud`) described in a few stable lines, for the
//! preview's before and after: the same text for the same state, so two descriptions differ
//! exactly where the state does.

use crate::config::Desired;
use crate::config::size::human;
use crate::observe::names::norm_uuid;
use crate::observe::{MdArray, Observed};
use crate::plan::Address;

/// The array a mirror of the file is: /dev/md/NAME, or the array it adopts by UUID.
fn mirror_array<'a>(obs: &'a Observed, d: &Desired, name: &str) -> Option<&'a MdArray> {
    match d.mirrors.get(name).and_then(|m| m.adopted.as_ref()) {
        Some(ad) => {
            let want = norm_uuid(&ad.uuid);
            obs.arrays
                .iter()
                .find(|a| a.uuid.as_deref().map(norm_uuid).as_deref() == Some(&want))
        }
        None => obs.array_named(name),
    }
}

/// The disk name the file gives a kernel device (`hdd0`, `ssd0:raid`), else the kernel name.
fn file_name(obs: &Observed, d: &Desired, kname: &str) -> String {
    let adopted = d
        .mirrors
        .keys()
        .find(|n| mirror_array(obs, d, n).is_some_and(|a| a.kname == kname));
    if let Some(n) = adopted.or(obs.array(kname).and_then(|a| a.name.as_ref())) {
        return format!("mirror {n} ({kname})");
    }
    for spec in d.disks.values() {
        let Some(dev) = crate::plan::disk_for(obs, spec) else {
            continue;
        };
        if dev.kname == kname {
            return format!("{} ({kname})", spec.name);
        }
        for p in &spec.partitions {
            let child = obs.block_devices.iter().find(|b| {
                b.parent.as_deref() == Some(dev.kname.as_str())
                    && b.partlabel.as_deref() == Some(p.name.as_str())
            });
            if child.is_some_and(|c| c.kname == kname) {
                return format!("{}:{} ({kname})", spec.name, p.name);
            }
        }
    }
    kname.to_string()
}

/// The kernel name behind a path a plan uses (`/dev/md/NAME`, `/dev/disk/by-id/ID[-partN]`).
fn kname_of(obs: &Observed, path: &str) -> Option<String> {
    if let Some(name) = path.strip_prefix("/dev/md/") {
        return obs.array_named(name).map(|a| a.kname.clone());
    }
    if crate::observe::names::md_kernel_device(path) {
        return obs.array(&path[5..]).map(|a| a.kname.clone());
    }
    let id = path.strip_prefix("/dev/disk/by-id/")?;
    obs.by_id(id).map(|d| d.kname.clone())
}

/// Describe `object` as it is in `obs`; `None` for objects without state (udev, initramfs) and
/// for files (their content is their description). An object that does not exist is `absent`.
pub fn describe(obs: &Observed, d: &Desired, object: &Address) -> Option<String> {
    match object {
        Address::Disk(disk) => disk_text(obs, d, object, disk),
        Address::Mirror(name) => Some(mirror_text(obs, d, object, name)),
        Address::PhysicalVolume(path) => Some(pv_text(obs, object, path)),
        Address::VolumeGroup(vg) => Some(vg_text(obs, object, vg)),
        Address::LogicalVolume { vg, lv } => Some(lv_text(obs, d, object, vg, lv)),
        Address::File(_) | Address::Initramfs | Address::Udev | Address::Units(_) => None,
    }
}

/// A disk of the file: its device, write cache, partitions, holders and content. `None` for a
/// disk the file does not name.
fn disk_text(obs: &Observed, d: &Desired, object: &Address, disk: &str) -> Option<String> {
    let spec = d.disks.get(disk)?;
    let Some(dev) = crate::plan::disk_for(obs, spec) else {
        return Some(format!("{object}: not present\n"));
    };
    let mut t = format!(
        "{object}: /dev/{}, {}, {}\n",
        dev.kname,
        human(dev.size),
        if dev.rotational {
            "rotational"
        } else {
            "non-rotational"
        }
    );
    let wc = match dev.write_cache.and_then(|w| w.enabled) {
        Some(true) => "on",
        Some(false) => "off",
        None => "unknown",
    };
    t.push_str(&format!("  drive write cache: {wc}\n"));
    t.push_str(&format!(
        "  partition table: {}\n",
        dev.pttype.as_deref().unwrap_or("none")
    ));
    for c in obs
        .block_devices
        .iter()
        .filter(|b| b.parent.as_deref() == Some(dev.kname.as_str()))
    {
        t.push_str(&format!(
            "  partition {}: {}, {}\n",
            c.partlabel.as_deref().unwrap_or("(no name)"),
            c.kname,
            human(c.size)
        ));
    }
    if !dev.holders.is_empty() {
        let h: Vec<String> = dev.holders.iter().map(|k| file_name(obs, d, k)).collect();
        t.push_str(&format!("  used by: {}\n", h.join(", ")));
    }
    match dev.signatures.as_deref() {
        Some([]) => t.push_str("  content: none\n"),
        Some(s) => {
            let kinds: Vec<&str> = s.iter().map(|x| x.kind.as_str()).collect();
            t.push_str(&format!("  content: {}\n", kinds.join(", ")));
        }
        None => {}
    }
    Some(t)
}

/// A mirror: its array, members (with their flags) and bitmap.
fn mirror_text(obs: &Observed, d: &Desired, object: &Address, name: &str) -> String {
    let Some(a) = mirror_array(obs, d, name) else {
        return format!("{object}: absent\n");
    };
    let path = d
        .mirrors
        .get(name)
        .map(|m| m.md_path())
        .unwrap_or_else(|| format!("/dev/md/{name}"));
    let mut t = format!(
        "{object}: {path} ({}), {}, {} device(s), {}{}\n",
        a.kname,
        a.level,
        a.raid_disks,
        a.array_state,
        if a.degraded > 0 {
            format!(", degraded by {}", a.degraded)
        } else {
            String::new()
        }
    );
    for m in &a.members {
        let mut flags: Vec<&str> = Vec::new();
        if m.has("write_mostly") {
            flags.push("write-mostly");
        }
        if m.faulty() {
            flags.push("faulty");
        }
        t.push_str(&format!(
            "  member {}{}{}\n",
            file_name(obs, d, &m.kname),
            m.slot.map(|s| format!(" slot {s}")).unwrap_or_default(),
            if flags.is_empty() {
                String::new()
            } else {
                format!(", {}", flags.join(", "))
            }
        ));
    }
    match &a.bitmap {
        Some(b) => t.push_str(&format!(
            "  bitmap: {}, chunk {}\n  write-behind: {}\n",
            b.describe(),
            human(b.chunk),
            b.backlog
        )),
        None => t.push_str("  bitmap: none\n"),
    }
    t
}

/// A PV by the path it is created on: its size and VG.
fn pv_text(obs: &Observed, object: &Address, path: &str) -> String {
    let Some(k) = kname_of(obs, path) else {
        return format!("{object}: absent\n");
    };
    match obs.pv(&k) {
        None => format!("{object}: not a PV\n"),
        Some(p) => format!(
            "{object}: PV on {}, {}, in {}\n",
            k,
            human(p.size),
            p.vg.as_deref()
                .map(|v| format!("vg {v}"))
                .unwrap_or("no VG".into())
        ),
    }
}

/// A VG: its size, free space and PVs.
fn vg_text(obs: &Observed, object: &Address, name: &str) -> String {
    let Some(v) = obs.vg(name) else {
        return format!("{object}: absent\n");
    };
    let pvs: Vec<String> = obs.pvs_of(name).map(|p| p.name.clone()).collect();
    format!(
        "{object}: {} ({} free), PVs {}\n",
        human(v.size),
        human(v.free),
        pvs.join(", ")
    )
}

/// An LV: its size, type, state, writecache and the devices it sits on.
fn lv_text(obs: &Observed, d: &Desired, object: &Address, vg: &str, lv: &str) -> String {
    let Some(l) = obs.lv(vg, lv) else {
        // A cache volume, once attached, lives on as the hidden `<name>_cvol`.
        if let Some(owner) = obs.lvm.lvs.iter().find(|o| {
            o.vg == vg
                && o.writecache
                    .as_ref()
                    .is_some_and(|w| w.cachevol == format!("{lv}_cvol"))
        }) {
            return format!(
                "{object}: attached as the writecache of {vg}/{} (hidden {lv}_cvol)\n",
                owner.name
            );
        }
        return format!("{object}: absent\n");
    };
    let mut t = format!(
        "{object}: {}, {}{}, {}\n",
        human(l.size),
        l.segtype,
        if l.stripes > 1 {
            format!(" ({} stripes)", l.stripes)
        } else {
            String::new()
        },
        if l.active { "active" } else { "inactive" }
    );
    let mut on: Vec<&String> = l.extents.keys().collect();
    if let Some(w) = &l.writecache {
        // The data sits on the hidden origin; its PVs are the LV's.
        if let Some(o) = obs.lv(vg, &w.origin) {
            on = o.extents.keys().collect();
        }
        let settings: Vec<String> = w.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        t.push_str(&format!(
            "  writecache: {}{}\n",
            w.cachevol,
            if settings.is_empty() {
                String::new()
            } else {
                format!(" ({})", settings.join(" "))
            }
        ));
    }
    if !on.is_empty() {
        let names: Vec<String> = on.iter().map(|k| file_name(obs, d, k)).collect();
        t.push_str(&format!("  on {}\n", names.join(", ")));
    }
    t
}
