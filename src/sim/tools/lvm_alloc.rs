//! How many extents lvm2 2.03.16 gives a new LV (tools/lvcreate.c), where it puts them
//! (`_allocate` in lib/metadata/lv_manip.c, policy normal), and how it refuses when they do not
//! fit.
//!
//! For each stretch it still needs, LVM offers every allowed PV's free space, in the order the
//! PVs are listed (the command line, else the VG), capped at what is still needed, and sorts the
//! offers largest first (glibc's stable sort): a PV that can take all of the rest takes it (the
//! first such), otherwise the largest takes what it has and the search repeats. A striped LV needs
//! that many offers from different PVs at once and takes the smallest of them from each.

use std::collections::BTreeMap;

/// An `-L`/`-l` argument as hyraid passes it: `<bytes>b`, `N%FREE`, `N%VG`.
pub enum Amount {
    Bytes(u64),
    PctFree(u64),
    PctVg(u64),
}

pub fn parse_amount(flag: &str, v: &str) -> Result<Amount, String> {
    let bad = || format!("  Invalid argument for {flag}: {v}\n");
    match flag {
        "-L" => v
            .strip_suffix('b')
            .and_then(|n| n.parse().ok())
            .map(Amount::Bytes)
            .ok_or_else(bad),
        "-l" => {
            if let Some(p) = v.strip_suffix("%FREE") {
                p.parse().map(Amount::PctFree).map_err(|_| bad())
            } else if let Some(p) = v.strip_suffix("%VG") {
                p.parse().map(Amount::PctVg).map_err(|_| bad())
            } else {
                Err(bad())
            }
        }
        _ => Err(bad()),
    }
}

/// How many extents lvcreate asks the allocator for, and whether that is only an upper bound
/// (sizes given as percentages are).
pub fn create_extents(
    amount: Amount,
    vg_free: u64,
    vg_count: u64,
    stripes: u32,
) -> Result<(u64, bool), String> {
    // lvcreate.c `_update_extents_params`: percentages are of the VG, rounded down, and only an
    // upper bound for the allocator; a %VG larger than what is free is cut to it.
    let stripes_n = stripes.max(1) as u64;
    let (mut extents, approx) = match amount {
        Amount::Bytes(b) => (b.div_ceil(super::lvm::EXTENT), false),
        Amount::PctFree(p) => (vg_free * p / 100, true),
        Amount::PctVg(p) => ((vg_count * p / 100).min(vg_free), true),
    };
    if approx {
        if extents == 0 {
            return Err(
                "  Calculated size of logical volume is 0 extents. Needs to be larger.\n".into(),
            );
        }
        let rest = extents % stripes_n;
        if rest != 0 && vg_free < extents - rest + stripes_n {
            extents -= rest;
        }
        if extents == 0 {
            return Err(
                "  Adjusted size of logical volume is 0 extents. Needs to be larger.\n".into(),
            );
        }
    }
    Ok((extents.div_ceil(stripes_n) * stripes_n, approx))
}

/// Why an allocation failed, in lvm's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Short {
    /// `_sufficient_pes_free`: fewer free extents on the allowed PVs than needed.
    Free { needed: u64, available: u64 },
    /// Enough in total, but not on enough different PVs for the stripes.
    Parallel { missing: u64 },
}

impl Short {
    pub fn message(&self, lv: &str) -> String {
        match self {
            Short::Free { needed, available } => format!(
                "  Insufficient free space: {needed} extents needed, but only {available} available\n"
            ),
            Short::Parallel { missing } => format!(
                "  Insufficient suitable allocatable extents for logical volume {lv}: {missing} more required\n"
            ),
        }
    }
}

/// Allocate `extents` (a multiple of `stripes`) over PVs with the given free extents, in order.
/// With `approx` (sizes given as percentages) as many as fit, up to `extents`, are taken.
/// Returns the extents taken from each PV that gives any.
pub fn allocate(
    free: &[(String, u64)],
    extents: u64,
    stripes: u32,
    approx: bool,
) -> Result<BTreeMap<String, u64>, Short> {
    let available: u64 = free.iter().map(|(_, f)| f).sum();
    if !approx && available < extents {
        return Err(Short::Free {
            needed: extents,
            available,
        });
    }
    let k = stripes.max(1) as usize;
    let mut left: Vec<u64> = free.iter().map(|(_, f)| *f).collect();
    let mut taken = vec![0u64; free.len()];
    let mut per = extents / k as u64;
    while per > 0 {
        let mut offers: Vec<(usize, u64)> = left
            .iter()
            .enumerate()
            .filter(|(_, f)| **f > 0)
            .map(|(i, f)| (i, (*f).min(per)))
            .collect();
        offers.sort_by_key(|o| std::cmp::Reverse(o.1));
        if offers.len() < k {
            break;
        }
        let chosen = &offers[..k];
        let step = chosen.iter().map(|(_, o)| *o).min().unwrap_or(0);
        for (i, _) in chosen {
            left[*i] -= step;
            taken[*i] += step;
        }
        per -= step;
    }
    if per > 0 && !approx {
        return Err(Short::Parallel {
            missing: per * k as u64,
        });
    }
    Ok(free
        .iter()
        .zip(taken)
        .filter(|(_, t)| *t > 0)
        .map(|((k, _), t)| (k.clone(), t))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pvs(v: &[u64]) -> Vec<(String, u64)> {
        v.iter()
            .enumerate()
            .map(|(i, f)| (format!("pv{i}"), *f))
            .collect()
    }

    #[test]
    fn linear_takes_the_first_pv_that_holds_it_else_the_largest() {
        let a = allocate(&pvs(&[10, 50, 50]), 40, 1, false).unwrap();
        assert_eq!(a, BTreeMap::from([("pv1".into(), 40)]));
        let a = allocate(&pvs(&[10, 50, 30]), 70, 1, false).unwrap();
        assert_eq!(a, BTreeMap::from([("pv1".into(), 50), ("pv2".into(), 20)]));
        assert_eq!(
            allocate(&pvs(&[10, 50]), 61, 1, false),
            Err(Short::Free {
                needed: 61,
                available: 60
            })
        );
        let a = allocate(&pvs(&[10, 50]), 61, 1, true).unwrap();
        assert_eq!(a.values().sum::<u64>(), 60);
    }

    #[test]
    fn stripes_need_different_pvs() {
        let a = allocate(&pvs(&[128, 128, 63]), 256, 2, false).unwrap();
        assert_eq!(
            a,
            BTreeMap::from([("pv0".into(), 128), ("pv1".into(), 128)])
        );
        // 200 free in total, but the second stripe finds only 63 extents beside pv0.
        assert_eq!(
            allocate(&pvs(&[137, 63]), 200, 2, false),
            Err(Short::Parallel { missing: 74 })
        );
        // Three PVs: the second segment pairs the two that still have space.
        let a = allocate(&pvs(&[100, 60, 60]), 200, 2, false).unwrap();
        assert_eq!(a.values().sum::<u64>(), 200);
    }
}
