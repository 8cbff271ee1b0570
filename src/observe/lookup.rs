//! Constant-time lookups over an observation.

use super::model::{BlockDevice, Lv, MdArray, Observed, Pv, Vg};
use std::collections::HashMap;

/// Lookups over an [`Observed`] by name in constant time, for code that asks once per object
/// (the planner on a machine with thousands of LVs). Same answers as the methods of `Observed`.
pub struct Lookup<'a> {
    devices: HashMap<&'a str, &'a BlockDevice>,
    by_id: HashMap<&'a str, &'a BlockDevice>,
    arrays_by_name: HashMap<&'a str, &'a MdArray>,
    array_of_member: HashMap<&'a str, &'a MdArray>,
    pvs: HashMap<&'a str, &'a Pv>,
    pvs_of: HashMap<&'a str, Vec<&'a Pv>>,
    vgs: HashMap<&'a str, &'a Vg>,
    lvs: HashMap<(&'a str, &'a str), &'a Lv>,
}

impl<'a> Lookup<'a> {
    pub fn new(o: &'a Observed) -> Lookup<'a> {
        // `or_insert` keeps the first match, as the linear searches of `Observed` do.
        let mut l = Lookup {
            devices: HashMap::new(),
            by_id: HashMap::new(),
            arrays_by_name: HashMap::new(),
            array_of_member: HashMap::new(),
            pvs: HashMap::new(),
            pvs_of: HashMap::new(),
            vgs: HashMap::new(),
            lvs: HashMap::new(),
        };
        for d in &o.block_devices {
            l.devices.entry(&d.kname).or_insert(d);
            for i in &d.by_id {
                l.by_id.entry(i).or_insert(d);
            }
        }
        for a in &o.arrays {
            if let Some(n) = &a.name {
                l.arrays_by_name.entry(n).or_insert(a);
            }
            for m in &a.members {
                l.array_of_member.entry(&m.kname).or_insert(a);
            }
        }
        for p in &o.lvm.pvs {
            l.pvs.entry(&p.kname).or_insert(p);
            if let Some(vg) = &p.vg {
                l.pvs_of.entry(vg).or_default().push(p);
            }
        }
        for v in &o.lvm.vgs {
            l.vgs.entry(&v.name).or_insert(v);
        }
        for lv in &o.lvm.lvs {
            l.lvs.entry((&lv.vg, &lv.name)).or_insert(lv);
        }
        l
    }

    pub fn device(&self, kname: &str) -> Option<&'a BlockDevice> {
        self.devices.get(kname).copied()
    }
    pub fn by_id(&self, id: &str) -> Option<&'a BlockDevice> {
        self.by_id.get(id).copied()
    }
    pub fn array_named(&self, name: &str) -> Option<&'a MdArray> {
        self.arrays_by_name.get(name).copied()
    }
    pub fn array_of_member(&self, kname: &str) -> Option<&'a MdArray> {
        self.array_of_member.get(kname).copied()
    }
    pub fn pv(&self, kname: &str) -> Option<&'a Pv> {
        self.pvs.get(kname).copied()
    }
    pub fn pvs_of(&self, vg: &str) -> impl Iterator<Item = &'a Pv> + use<'_, 'a> {
        self.pvs_of
            .get(vg)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .copied()
    }
    pub fn vg(&self, name: &str) -> Option<&'a Vg> {
        self.vgs.get(name).copied()
    }
    pub fn lv(&self, vg: &str, name: &str) -> Option<&'a Lv> {
        self.lvs.get(&(vg, name)).copied()
    }
}
