//! `lvs -a --reportformat json -o lv_name,lv_attr,move_pv,copy_percent VG`, as hyraid polls a
//! pvmove: every LV of the VG (hidden ones in brackets), the move LV with attr `p-C-aom---`,
//! its source PV and `copy_percent` with two decimals (lvm2's `display_percent`; empty while the
//! move LV is inactive).

use crate::observe::Observed;
use serde_json::{Value, json};

pub fn moves(w: &Observed, vg: &str) -> String {
    let rows: Vec<Value> = w
        .lvm
        .lvs
        .iter()
        .filter(|l| l.vg == vg)
        .map(|l| {
            let name = if l.hidden {
                format!("[{}]", l.name)
            } else {
                l.name.clone()
            };
            match &l.pvmove {
                // Inactive (a boot that did not activate the VG): no mirror status to report.
                Some(m) if !l.active => json!({"lv_name": name, "lv_attr": "p-C---m---", "move_pv": m.source,
                    "copy_percent": ""}),
                Some(m) => json!({"lv_name": name, "lv_attr": "p-C-aom---", "move_pv": m.source,
                    "copy_percent": m.copy_percent.map(|p| format!("{p:.2}")).unwrap_or_default()}),
                None => json!({"lv_name": name, "lv_attr": if l.locked {"-wI-ao----"} else {"-wi-ao----"},
                    "move_pv": "", "copy_percent": ""}),
            }
        })
        .collect();
    format!(
        "  {}\n",
        serde_json::to_string_pretty(&json!({"report": [{"lv": rows}]})).unwrap()
    )
}
