//! LVM JSON reports: `lvm fullreport -a --reportformat json --units b --nosuffix` (one call for
//! VGs, PVs, LVs, PV segments and LV segments). Values are strings in lvm2 2.03.16 `json`;
//! numbers, nulls and arrays (2.03.17+ `json_std`) are accepted too.

use super::model::{Lv, LvCache, LvWritecache, Lvm, Pv, PvMove, Vg};
use super::parse_util::{Flex, ParseError};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

pub fn argv() -> Vec<String> {
    [
        "lvm",
        "fullreport",
        "--all",
        "--reportformat",
        "json",
        "--units",
        "b",
        "--nosuffix",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

type Row = HashMap<String, Flex>;

#[derive(Deserialize)]
struct Top {
    report: Vec<Section>,
}

#[derive(Deserialize, Default)]
struct Section {
    #[serde(default)]
    vg: Vec<Row>,
    #[serde(default)]
    pv: Vec<Row>,
    #[serde(default)]
    lv: Vec<Row>,
    #[serde(default)]
    pvseg: Vec<Row>,
    #[serde(default)]
    seg: Vec<Row>,
}

fn f<'a>(r: &'a Row, k: &str) -> Option<&'a str> {
    r.get(k).and_then(|v| v.text())
}
fn n(r: &Row, k: &str) -> Option<u64> {
    r.get(k).and_then(|v| v.u64())
}

/// A column hyraid cannot do without, as text.
fn need_text<'a>(r: &'a Row, what: &str, key: &str) -> Result<&'a str, ParseError> {
    match r.get(key) {
        Some(v) => v.text().ok_or_else(|| missing(what, key, Some(v))),
        None => Err(missing(what, key, None)),
    }
}

/// A column hyraid cannot do without, as a number of bytes (or extents).
fn need_num(r: &Row, what: &str, key: &str) -> Result<u64, ParseError> {
    match r.get(key) {
        Some(v) => v.u64().ok_or_else(|| missing(what, key, Some(v))),
        None => Err(missing(what, key, None)),
    }
}

/// Why a needed column could not be read: absent from the report (lvm.conf's `report/*_cols_full`
/// choose fullreport's columns), empty, or not a plain number (units or a suffix).
fn missing(what: &str, key: &str, value: Option<&Flex>) -> ParseError {
    let section = match what {
        "a VG" => "vgs",
        "a PV" => "pvs",
        _ => "lvs",
    };
    let detail = match value.and_then(|v| v.text()) {
        None if value.is_none() => format!(
            "{what} row has no `{key}` column: the report leaves it out (lvm.conf's report/{section}_cols_full chooses fullreport's columns: see `lvmconfig report/{section}_cols_full`, and remove that setting or add `{key}` to it)"
        ),
        None => format!("{what} row has an empty `{key}`"),
        Some(t) => format!(
            "{what} row's `{key}` is `{t}`, not a whole number (hyraid runs `--units b --nosuffix`; an lvm.conf report/ setting or an older lvm2 may change the units)"
        ),
    };
    ParseError::Value {
        tool: "lvm report",
        detail,
    }
}

/// `[name]` → (name, hidden).
/// The writecache of an LV row (segment type `writecache`).
fn writecache_of(l: &Row, seg: Option<&Row>, segtype: &str) -> Option<LvWritecache> {
    if segtype == "writecache" {
        let pool = f(l, "pool_lv")
            .or(seg.and_then(|s| f(s, "pool_lv")))
            .unwrap_or("");
        let origin = f(l, "origin").unwrap_or("");
        let settings = seg
            .and_then(|s| f(s, "cache_settings"))
            .or(f(l, "cache_settings"))
            .unwrap_or("");
        Some(LvWritecache {
            cachevol: unbracket(pool).0,
            origin: unbracket(origin).0,
            settings: parse_settings(settings),
            block_size: n(l, "writecache_block_size"),
            writeback_blocks: n(l, "writecache_writeback_blocks"),
            total_blocks: n(l, "writecache_total_blocks"),
            free_blocks: n(l, "writecache_free_blocks"),
        })
    } else {
        None
    }
}

/// The dm-cache of an LV row on a cache volume (segment type `cache`, pool `[X_cvol]`); a cache
/// pool is left undescribed.
fn dm_cache_of(l: &Row, seg: Option<&Row>, segtype: &str) -> Option<LvCache> {
    let pool = f(l, "pool_lv").or(seg.and_then(|s| f(s, "pool_lv")));
    match pool.map(unbracket) {
        Some((cv, _)) if segtype == "cache" && cv.ends_with("_cvol") => Some(LvCache {
            cachevol: cv,
            origin: unbracket(f(l, "origin").unwrap_or("")).0,
            mode: seg
                .and_then(|s| f(s, "cache_mode"))
                .or(f(l, "cache_mode"))
                .unwrap_or("")
                .to_string(),
            dirty_blocks: n(l, "cache_dirty_blocks"),
            used_blocks: n(l, "cache_used_blocks"),
            total_blocks: n(l, "cache_total_blocks"),
        }),
        _ => None,
    }
}

fn unbracket(s: &str) -> (String, bool) {
    match s.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        Some(inner) => (inner.to_string(), true),
        None => (s.to_string(), false),
    }
}

/// `high_watermark=50,writeback_jobs=1024` → map.
pub fn parse_settings(s: &str) -> BTreeMap<String, String> {
    s.split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// Parse a fullreport. `kname_of(maj_min, pv_name)` resolves a PV to its kernel name.
pub fn parse_fullreport(
    text: &str,
    kname_of: &dyn Fn(&str, &str) -> String,
) -> Result<Lvm, ParseError> {
    let top: Top = serde_json::from_str(text).map_err(|e| ParseError::Json {
        tool: "lvm fullreport",
        detail: e.to_string(),
    })?;
    let mut out = Lvm::default();
    for sec in &top.report {
        let vg_name = sec
            .vg
            .first()
            .and_then(|v| f(v, "vg_name"))
            .map(str::to_string);
        for v in &sec.vg {
            out.vgs.push(Vg {
                name: need_text(v, "a VG", "vg_name")?.to_string(),
                uuid: f(v, "vg_uuid").unwrap_or("").to_string(),
                size: need_num(v, "a VG", "vg_size")?,
                free: need_num(v, "a VG", "vg_free")?,
                extent_size: need_num(v, "a VG", "vg_extent_size")?,
                partial: f(v, "vg_partial") == Some("partial")
                    || f(v, "vg_attr").is_some_and(|a| a.chars().nth(3) == Some('p')),
            });
        }
        let mut pv_kname: HashMap<String, String> = HashMap::new();
        for p in &sec.pv {
            let name = need_text(p, "a PV", "pv_name")?.to_string();
            let mm = match (f(p, "pv_major"), f(p, "pv_minor")) {
                (Some(a), Some(b)) => format!("{a}:{b}"),
                _ => String::new(),
            };
            let kname = kname_of(&mm, &name);
            let uuid = f(p, "pv_uuid").unwrap_or("").to_string();
            pv_kname.insert(uuid.clone(), kname.clone());
            out.pvs.push(Pv {
                name,
                kname,
                uuid,
                vg: f(p, "vg_name")
                    .map(str::to_string)
                    .or_else(|| vg_name.clone()),
                size: need_num(p, "a PV", "pv_size")?,
                free: need_num(p, "a PV", "pv_free")?,
                dev_size: n(p, "dev_size").unwrap_or(0),
            });
        }
        // Extents per LV per PV.
        let mut extents: HashMap<String, BTreeMap<String, u64>> = HashMap::new();
        for s in &sec.pvseg {
            let (Some(lv), Some(pv)) = (f(s, "lv_uuid"), f(s, "pv_uuid")) else {
                continue;
            };
            let size = n(s, "pvseg_size").unwrap_or(0);
            let k = pv_kname.get(pv).cloned().unwrap_or_else(|| pv.to_string());
            *extents
                .entry(lv.to_string())
                .or_default()
                .entry(k)
                .or_insert(0) += size;
        }
        // The first segment of each LV (segment type, stripes, cache pool).
        let mut first_seg = HashMap::new();
        for s in &sec.seg {
            if let Some(lv) = f(s, "lv_uuid") {
                first_seg.entry(lv).or_insert(s);
            }
        }
        for l in &sec.lv {
            let uuid = f(l, "lv_uuid").unwrap_or("").to_string();
            let (name, hidden) = unbracket(need_text(l, "an LV", "lv_name")?);
            let seg = first_seg.get(uuid.as_str()).copied();
            let segtype = seg
                .and_then(|s| f(s, "segtype"))
                .or(f(l, "segtype"))
                .unwrap_or("")
                .to_string();
            let stripes = seg
                .and_then(|s| n(s, "stripes"))
                .or(n(l, "stripes"))
                .unwrap_or(1) as u32;
            let stripe_size = seg
                .and_then(|s| n(s, "stripe_size"))
                .filter(|s| *s > 0 && stripes > 1);
            let attr = f(l, "lv_attr").unwrap_or("");
            let active = f(l, "lv_active") == Some("active") || attr.chars().nth(4) == Some('a');
            let writecache = writecache_of(l, seg, &segtype);
            let cache = dm_cache_of(l, seg, &segtype);
            // A writecache's or cache's origin is its hidden data LV, not a snapshot's origin.
            let snapshot_of = f(l, "origin")
                .filter(|o| !o.is_empty() && writecache.is_none() && segtype != "cache")
                .map(|o| unbracket(o).0);
            let pvmove = (attr.starts_with('p')).then(|| pvmove_of(l, &pv_kname));
            out.lvs.push(Lv {
                vg: f(l, "vg_name")
                    .map(str::to_string)
                    .or_else(|| vg_name.clone())
                    .unwrap_or_default(),
                name,
                uuid: uuid.clone(),
                hidden,
                size: need_num(l, "an LV", "lv_size")?,
                segtype,
                stripes,
                stripe_size,
                active,
                extents: extents.remove(&uuid).unwrap_or_default(),
                writecache,
                cache,
                tags: f(l, "lv_tags")
                    .map(|t| t.split(',').map(str::to_string).collect())
                    .unwrap_or_default(),
                snapshot_of,
                // The move LV itself is locked too (`C`): `locked` names the LVs it moves.
                locked: pvmove.is_none()
                    && attr.chars().nth(2).is_some_and(|c| c.is_ascii_uppercase()),
                pvmove,
            });
        }
    }
    Ok(out)
}

/// The source and progress of a pvmove LV (`move_pv`, `move_pv_uuid`, `copy_percent`: empty
/// while the mirror is not active).
fn pvmove_of(l: &Row, pv_kname: &HashMap<String, String>) -> PvMove {
    let source = f(l, "move_pv").unwrap_or("").to_string();
    let source_kname = f(l, "move_pv_uuid")
        .and_then(|u| pv_kname.get(u).cloned())
        .unwrap_or_else(|| source.rsplit('/').next().unwrap_or("").to_string());
    let copy_percent = f(l, "copy_percent").and_then(|p| p.trim().parse::<f64>().ok());
    PvMove {
        source,
        source_kname,
        copy_percent,
    }
}

/// One row of `lvs -a` during a pvmove: the move LV's progress.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveRow {
    pub name: String,
    pub source: String,
    pub copy_percent: Option<f64>,
}

/// The argv hyraid polls a VG's pvmove with.
pub fn moves_argv(vg: &str) -> Vec<String> {
    [
        "lvs",
        "-a",
        "--reportformat",
        "json",
        "-o",
        "lv_name,lv_attr,move_pv,copy_percent",
        vg,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The LV rows of an `lvs --reportformat json[_std]` report (`{"report":[{"lv":[…]}]}`).
fn lvs_rows(text: &str) -> Result<Vec<Row>, ParseError> {
    #[derive(Deserialize)]
    struct T {
        report: Vec<S>,
    }
    #[derive(Deserialize)]
    struct S {
        #[serde(default)]
        lv: Vec<Row>,
    }
    let t: T = serde_json::from_str(text).map_err(|e| ParseError::Json {
        tool: "lvs",
        detail: e.to_string(),
    })?;
    Ok(t.report.into_iter().flat_map(|s| s.lv).collect())
}

/// The pvmove LVs (attr `p`) of a [`moves_argv`] report.
pub fn parse_moves(text: &str) -> Result<Vec<MoveRow>, ParseError> {
    Ok(lvs_rows(text)?
        .iter()
        .filter(|l| f(l, "lv_attr").is_some_and(|a| a.starts_with('p')))
        .map(|l| {
            let m = pvmove_of(l, &HashMap::new());
            MoveRow {
                name: unbracket(f(l, "lv_name").unwrap_or("")).0,
                source: m.source,
                copy_percent: m.copy_percent,
            }
        })
        .collect())
}

/// One row of an `lvs -a --reportformat json[_std]` report.
#[derive(Debug, Clone, PartialEq)]
pub struct LvsRow {
    pub vg: String,
    pub name: String,
    pub hidden: bool,
    pub size: Option<u64>,
    pub segtype: String,
    pub devices: String,
    pub cache_settings: String,
}

/// `lvs -a --reportformat json[_std] …`, for tolerance tests and verification.
pub fn parse_lvs(text: &str) -> Result<Vec<LvsRow>, ParseError> {
    Ok(lvs_rows(text)?
        .iter()
        .map(|l| {
            let (name, hidden) = unbracket(f(l, "lv_name").unwrap_or(""));
            LvsRow {
                vg: f(l, "vg_name").unwrap_or("").to_string(),
                name,
                hidden,
                size: n(l, "lv_size"),
                segtype: f(l, "segtype").unwrap_or("").to_string(),
                devices: f(l, "devices").unwrap_or("").to_string(),
                cache_settings: f(l, "cache_settings").unwrap_or("").to_string(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fx(name: &str) -> String {
        crate::observe::parse_util::fixture(name)
    }

    fn by_basename(_mm: &str, name: &str) -> String {
        name.rsplit('/').next().unwrap().to_string()
    }

    #[test]
    fn fullreport_three_arrays() {
        let l =
            parse_fullreport(&fx("layout-three-arrays/lvm-fullreport.json"), &by_basename).unwrap();
        assert_eq!(l.vgs.len(), 1);
        assert_eq!(l.vgs[0].name, "vg0");
        assert_eq!(l.vgs[0].extent_size, 4 << 20);
        assert_eq!(l.vgs[0].free, 2269118464);
        assert_eq!(l.pvs.len(), 3);
        assert!(l.pvs.iter().all(|p| p.vg.as_deref() == Some("vg0")));
        let md125 = l.pvs.iter().find(|p| p.kname == "md125").unwrap();
        assert_eq!(
            (md125.size, md125.free, md125.dev_size),
            (264241152, 130023424, 267386880)
        );
        let nc = &l.lvs[0];
        assert_eq!(
            (nc.name.as_str(), nc.hidden, nc.size),
            ("nextcloud", false, 1 << 30)
        );
        assert!(nc.active);
        let wc = nc.writecache.as_ref().unwrap();
        assert_eq!(wc.cachevol, "nextcloud_wc_cvol");
        assert_eq!(wc.origin, "nextcloud_wcorig");
        assert_eq!(
            wc.settings.get("high_watermark").map(String::as_str),
            Some("50")
        );
        assert_eq!(
            wc.settings.get("writeback_jobs").map(String::as_str),
            Some("1024")
        );
        assert_eq!(wc.block_size, Some(4096));
        assert_eq!(wc.writeback_blocks, Some(0));
    }

    #[test]
    fn resolves_pvs_by_major_minor() {
        let l = parse_fullreport(
            &fx("layout-three-arrays/lvm-fullreport-selected.json"),
            &|mm, _| format!("dev{mm}"),
        )
        .unwrap();
        assert!(l.pvs.iter().any(|p| p.kname == "dev9:127"));
    }

    #[test]
    fn a_snapshot_names_its_origin_a_writecache_does_not() {
        let r = r#"{"report":[{"vg":[{"vg_name":"vg0","vg_size":"1000","vg_free":"500","vg_extent_size":"4194304"}],
            "lv":[{"lv_name":"snap","lv_uuid":"s","lv_size":"16777216","lv_attr":"swi-a-s---","origin":"scratch"},
                  {"lv_name":"scratch","lv_uuid":"o","lv_size":"33554432","lv_attr":"owi-a-s---","origin":""},
                  {"lv_name":"data","lv_uuid":"w","lv_size":"33554432","lv_attr":"Cwi-a-C---","origin":"[data_wcorig]","pool_lv":"[data_wc_cvol]"}],
            "seg":[{"lv_uuid":"s","segtype":"linear","stripes":"1"},{"lv_uuid":"o","segtype":"linear","stripes":"1"},
                   {"lv_uuid":"w","segtype":"writecache","stripes":"1"}]}]}"#;
        let l = parse_fullreport(r, &by_basename).unwrap();
        let of = |n: &str| {
            l.lvs
                .iter()
                .find(|x| x.name == n)
                .unwrap()
                .snapshot_of
                .clone()
        };
        assert_eq!(of("snap").as_deref(), Some("scratch"));
        assert_eq!(of("scratch"), None);
        assert_eq!(of("data"), None);
    }

    #[test]
    fn json_std_and_plain_reports() {
        let std = r#"{"report":[{"vg":[{"vg_name":"vg0","vg_size":1000,"vg_free":500,"vg_extent_size":4194304}],
            "pv":[{"pv_name":"/dev/md127","pv_size":1000,"pv_free":500,"pv_uuid":"x","pv_major":9,"pv_minor":127}],
            "lv":[{"lv_name":"data","lv_uuid":"u","lv_size":4194304,"lv_attr":"-wi-a-----","lv_active":"active","lv_new_field":[1,2]}],
            "pvseg":[{"pvseg_start":0,"pvseg_size":1,"pv_uuid":"x","lv_uuid":"u"}],
            "seg":[{"lv_uuid":"u","segtype":"linear","stripes":1,"devices":["/dev/md127(0)"]}]}]}"#;
        let l = parse_fullreport(std, &by_basename).unwrap();
        assert_eq!(l.lvs[0].extents.get("md127"), Some(&1));
        assert_eq!(l.lvs[0].segtype, "linear");
        let rows = parse_lvs(&fx("layout-three-arrays/lvs-striped-writecache.json")).unwrap();
        let orig = rows.iter().find(|r| r.name == "nextcloud_wcorig").unwrap();
        assert!(orig.hidden);
        assert_eq!(orig.segtype, "striped");
        assert_eq!(orig.devices, "/dev/md127(0),/dev/md126(0)");
        let rows = parse_lvs(&fx("lvs-writecache-settings.json")).unwrap();
        assert!(
            rows.iter()
                .any(|r| r.cache_settings == "high_watermark=50,writeback_jobs=1024")
        );
        let rows = parse_lvs(&fx("lvs-after-splitcache.json")).unwrap();
        assert!(rows.iter().all(|r| r.segtype != "writecache"));
    }

    #[test]
    fn a_pvmove_in_progress() {
        // lvm2 2.03.16 during `pvmove /dev/md127 /dev/md126`: the hidden move LV (attr `p`,
        // contiguous and locked: `C`), its source in move_pv, copy_percent with two decimals;
        // the LV it moves is locked (`I`) and its segment is on the move LV.
        let r = r#"{"report":[{"vg":[{"vg_name":"vg0","vg_size":"1065353216","vg_free":"448790528","vg_extent_size":"4194304"}],
            "pv":[{"pv_name":"/dev/md127","pv_uuid":"A","pv_size":"532676608","pv_free":"197132288","pv_major":"9","pv_minor":"127"},
                  {"pv_name":"/dev/md126","pv_uuid":"B","pv_size":"532676608","pv_free":"197132288","pv_major":"9","pv_minor":"126"}],
            "lv":[{"lv_name":"files","lv_uuid":"f","lv_size":"335544320","lv_attr":"-wI-ao----","move_pv":"","copy_percent":""},
                  {"lv_name":"[pvmove0]","lv_uuid":"m","lv_size":"335544320","lv_attr":"p-C-aom---","move_pv":"/dev/md127","move_pv_uuid":"A","copy_percent":"23.44"}],
            "pvseg":[{"pvseg_start":"0","pvseg_size":"80","pv_uuid":"A","lv_uuid":"m"},{"pvseg_start":"0","pvseg_size":"80","pv_uuid":"B","lv_uuid":"m"}],
            "seg":[{"lv_uuid":"f","segtype":"linear","stripes":"1","devices":"pvmove0(0)"},
                   {"lv_uuid":"m","segtype":"mirror","stripes":"2","devices":"/dev/md127(0),/dev/md126(0)"}]}]}"#;
        let l = parse_fullreport(r, &|mm, _| format!("dev{mm}")).unwrap();
        let files = l.lvs.iter().find(|x| x.name == "files").unwrap();
        assert!(files.locked && files.pvmove.is_none() && files.extents.is_empty());
        let m = l.lvs.iter().find(|x| x.name == "pvmove0").unwrap();
        assert!(m.hidden && !m.locked);
        let pm = m.pvmove.as_ref().unwrap();
        assert_eq!(
            (
                pm.source.as_str(),
                pm.source_kname.as_str(),
                pm.copy_percent
            ),
            ("/dev/md127", "dev9:127", Some(23.44))
        );
        assert_eq!(m.extents.get("dev9:126"), Some(&80));
        let rows = parse_moves(r#"{"report":[{"lv":[{"lv_name":"files","lv_attr":"-wI-ao----","move_pv":"","copy_percent":""},
            {"lv_name":"[pvmove0]","lv_attr":"p-C-aom---","move_pv":"/dev/md127","copy_percent":""}]}]}"#)
        .unwrap();
        assert_eq!(
            rows,
            vec![MoveRow {
                name: "pvmove0".into(),
                source: "/dev/md127".into(),
                copy_percent: None
            }]
        );
    }

    #[test]
    fn a_pvmove_captured_on_lvm2_2_03_16() {
        // tests/vm/scenarios/24-pvmove.sh, after hyraid was killed during
        // `pvmove --background /dev/md/data1 /dev/md/data0`.
        let l = parse_fullreport(&fx("lvm-fullreport-pvmove.json"), &by_basename).unwrap();
        let m = l.lvs.iter().find(|x| x.name == "pvmove0").unwrap();
        let pm = m.pvmove.as_ref().unwrap();
        assert_eq!(
            (
                pm.source.as_str(),
                pm.source_kname.as_str(),
                pm.copy_percent
            ),
            ("/dev/md126", "md126", Some(95.0))
        );
        assert_eq!(m.extents.get("md126"), Some(&80));
        assert_eq!(m.extents.get("md127"), Some(&80));
        let files = l.lvs.iter().find(|x| x.name == "files").unwrap();
        assert!(files.locked && files.extents.is_empty());
        let rows = parse_moves(&fx("lvs-pvmove.json")).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].copy_percent, Some(97.5));
    }

    #[test]
    fn rejects_truncated_and_unitless() {
        assert!(
            parse_fullreport(
                r#"{"report":[{"vg":[{"vg_name":"x","vg_size":"4.00m"}]}]}"#,
                &by_basename
            )
            .is_err()
        );
        assert!(parse_fullreport(r#"{"report": [ {"lv": [ "#, &by_basename).is_err());
        assert!(
            parse_fullreport(r#"{"report":[]}"#, &by_basename)
                .unwrap()
                .vgs
                .is_empty()
        );
    }
}
