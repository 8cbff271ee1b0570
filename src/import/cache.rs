//! A dm-cache on a cache volume, written as the LV's `cache:`.

use crate::config::raw::{CacheMode, RawCache};
use crate::observe::{Lv, Observed};
use std::collections::BTreeMap;

use super::disks::size;

/// The `cache:` of an LV (None without a dm-cache); Err says why the LV is left out.
pub(super) fn dm_cache(
    o: &Observed,
    l: &Lv,
    pv_name: &BTreeMap<String, String>,
) -> Result<Option<RawCache>, String> {
    let Some(c) = &l.cache else { return Ok(None) };
    let cv = o
        .lv(&l.vg, &c.cachevol)
        .ok_or("its cache volume was not found")?;
    let mode = match c.mode.as_str() {
        "writethrough" => None,
        "writeback" => Some(CacheMode::Writeback),
        other => {
            return Err(format!(
                "its dm-cache is in mode `{other}`, which hyraid does not manage"
            ));
        }
    };
    Ok(Some(RawCache {
        mode,
        size: size(cv.size),
        pvs: cv
            .extents
            .keys()
            .filter_map(|k| pv_name.get(k).cloned())
            .collect(),
    }))
}
