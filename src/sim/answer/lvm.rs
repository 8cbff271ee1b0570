//! `lvm fullreport` in its JSON report format, as the observer runs it.

use crate::observe::{Lv, Observed};
use serde_json::{Value, json};

fn md_minor(kname: &str) -> String {
    kname.trim_start_matches("md").to_string()
}

pub fn fullreport(w: &Observed) -> String {
    let maj_min = |k: &str| -> (String, String) {
        if w.array(k).is_some() {
            ("9".into(), md_minor(k))
        } else if let Some(o) = w.other_devices.iter().find(|o| o.kname == k) {
            let (a, b) = o.maj_min.split_once(':').unwrap_or(("", ""));
            (a.into(), b.into())
        } else {
            let mm = w.device(k).map(|d| d.maj_min.clone()).unwrap_or_default();
            let (a, b) = mm.split_once(':').unwrap_or(("", ""));
            (a.into(), b.into())
        }
    };
    let sees = |p: &crate::observe::Pv| crate::sim::tools::lvm_devices::sees(w, p);
    // A PV on an array that is not running cannot be read, and one the devices file does not
    // list is not looked at: LVM reports it [unknown].
    let hidden_pv = |p: &crate::observe::Pv| {
        w.array(&p.kname)
            .is_some_and(|a| a.array_state == "inactive")
            || !sees(p)
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
        // A VG none of whose PVs the devices file lists does not exist for LVM.
        // Nor does one none of whose PVs can be read (its only array assembled and not running):
        // its metadata is on them. (With one PV read and another not, the VG is partial.)
        if !pvs.is_empty() && !pvs.iter().any(|p| !hidden_pv(p)) {
            continue;
        }
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
                let dc = l.cache.as_ref();
                let cvol = lvs.iter().any(|t| t.cache.as_ref().is_some_and(|c| c.cachevol == l.name));
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
                let attr = match &l.pvmove {
                    // lib/metadata/lv.c: `p`, no permission letter, contiguous and locked (`C`).
                    Some(_) if l.active => "p-C-aom---".to_string(),
                    Some(_) => "p-C---m---".to_string(),
                    None => format!(
                        "{}w{}-{}-{}---",
                        if wc.is_some() || dc.is_some() { 'C' } else if l.hidden && (l.name.ends_with("_wcorig") || l.name.ends_with("_corig")) { 'o' } else if l.hidden { 'C' } else { kind },
                        if l.locked { 'I' } else { 'i' },
                        if l.active { 'a' } else { '-' },
                        if wc.is_some() || l.hidden { 'C' } else { '-' }
                    ),
                };
                let mv = l.pvmove.as_ref();
                let move_uuid = mv.and_then(|m| w.lvm.pvs.iter().find(|p| p.kname == m.source_kname)).map(|p| p.uuid.clone()).unwrap_or_default();
                json!({"lv_uuid":l.uuid,"lv_name":name_of(l),"lv_full_name":format!("{}/{}",l.vg,l.name),
                       "lv_path": if l.hidden {String::new()} else {format!("/dev/{}/{}",l.vg,l.name)},
                       "lv_layout": if wc.is_some() {"writecache"} else if dc.is_some() {"cache"} else if cvol {"cache,cachevol"} else if l.stripes>1 {"striped"} else {"linear"},
                       "lv_role": if l.hidden {"private"} else {"public"},
                       "lv_active": if l.active {"active"} else {""},
                       "lv_size": l.size.to_string(), "lv_attr": attr,
                       "origin": wc.map(|c| format!("[{}]", c.origin)).or(dc.map(|c| format!("[{}]", c.origin))).or(l.snapshot_of.clone()).unwrap_or_default(),
                       "pool_lv": wc.map(|c| format!("[{}]", c.cachevol)).or(dc.map(|c| format!("[{}]", c.cachevol))).unwrap_or_default(),
                       "cache_total_blocks": dc.and_then(|c| c.total_blocks).map(|b| b.to_string()).unwrap_or_default(),
                       "cache_used_blocks": dc.and_then(|c| c.used_blocks).map(|b| b.to_string()).unwrap_or_default(),
                       "cache_dirty_blocks": dc.and_then(|c| c.dirty_blocks).map(|b| b.to_string()).unwrap_or_default(),
                       "writecache_block_size": wc.and_then(|c| c.block_size).map(|b| b.to_string()).unwrap_or_else(|| "-1".into()),
                       "writecache_writeback_blocks": wc.and_then(|c| c.writeback_blocks).map(|b| b.to_string()).unwrap_or_default(),
                       "writecache_total_blocks": wc.and_then(|c| c.total_blocks).map(|b| b.to_string()).unwrap_or_default(),
                       "writecache_free_blocks": wc.and_then(|c| c.free_blocks).map(|b| b.to_string()).unwrap_or_default(),
                       "lv_tags": l.tags.join(","),
                       "move_pv": mv.map(|m| m.source.clone()).unwrap_or_default(), "move_pv_uuid": move_uuid,
                       "copy_percent": mv.filter(|_| l.active).and_then(|m| m.copy_percent).map(|p| format!("{p:.2}")).unwrap_or_default()})
            })
            .collect();
        let seg_rows: Vec<Value> = lvs
            .iter()
            .map(|l| {
                let origin = l.writecache.as_ref().map(|w| &w.origin).or(l.cache.as_ref().map(|c| &c.origin));
                let devices = match origin {
                    Some(o) => format!("{o}(0)"),
                    // Extents a pvmove is moving are on its LV (`pvmove0(0)`), not on a PV.
                    None => l.extents.keys().map(|k| match k.split_once(':') { Some((mv, _)) => format!("{mv}(0)"), None => format!("/dev/{k}(0)") })
                        .collect::<std::collections::BTreeSet<_>>().into_iter().collect::<Vec<_>>().join(","),
                };
                let settings = l.writecache.as_ref().map(|wc| wc.settings.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")).unwrap_or_default();
                let mode = l.cache.as_ref().map(|c| c.mode.clone()).unwrap_or_default();
                json!({"segtype":l.segtype,"cache_mode":mode,"stripes":l.stripes.to_string(),"stripe_size":l.stripe_size.unwrap_or(0).to_string(),"seg_start":"0","seg_size":l.size.to_string(),
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
        .filter(|p| p.vg.is_none() && !hidden_pv(p))
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
