//! Encrypted LVs (LV → LUKS2 → filesystem): the LV as an encrypted device, its LUKS layer
//! after the VG's LV steps, its mapping grown with the LV, and an LV never removed while its
//! mapping is open. An encrypted mirror's mapping and PV grown with its array. The plaintext
//! lint of caches in front of encrypted mirrors.

use super::encryption::Sealed;
use super::*;
use crate::config::encryption::EncryptionSpec;
use crate::plan::step::{CryptOn, ResizeLuks, ResizePv, WaitIdle};

impl<'a> Planner<'a> {
    /// LV `vg/lv` as an encrypted device (its kernel name from what lsblk saw on it).
    pub(in crate::plan) fn lv_sealed(&self, vg: &str, lv: &str) -> Sealed {
        let own = self
            .o
            .filesystems
            .iter()
            .find(|f| !f.md && f.mapper.is_none() && f.vg == vg && f.lv == lv);
        Sealed {
            on: CryptOn::Lv {
                vg: vg.into(),
                lv: lv.into(),
            },
            object: format!("lv {vg}/{lv}"),
            device: format!("/dev/{vg}/{lv}"),
            key: format!("{vg}/{lv}"),
            kname: own.map(|f| f.kname.clone()),
            created: self
                .steps
                .iter()
                .any(|s| matches!(&s.step, Step::CreateLv(c) if c.vg == vg && c.lv == lv)),
        }
    }

    /// Bytes the open mapping of LV `vg/lv` spans once grown to it: the LV less its header.
    pub(in crate::plan) fn mapping_target(&self, vg: &str, lv: &str) -> Option<u64> {
        let offset = self.data_offset(&self.lv_sealed(vg, lv));
        self.ix.lv(vg, lv).map(|l| l.size.saturating_sub(offset))
    }

    /// `cryptsetup resize` of each open mapping of an encrypted LV that grows in this plan, or
    /// that an earlier lvextend left smaller than its LV; before its filesystem grows.
    pub(in crate::plan) fn grow_mappings(&mut self) {
        let d = self.d;
        for vg in d.volume_groups.values().filter(|v| !v.absent) {
            for lv in vg.lvs.values().filter(|l| !l.absent) {
                let Some(e) = &lv.encryption else { continue };
                let Some(have) = self.mapping_size(&e.name) else {
                    continue;
                };
                let extends = self.steps.iter().any(
                    |s| matches!(&s.step, Step::ExtendLv(x) if x.vg == vg.name && x.lv == lv.name),
                );
                let short = self
                    .mapping_target(&vg.name, &lv.name)
                    .is_some_and(|t| t.saturating_sub(have) >= 1 << 20);
                if !extends && !short {
                    continue;
                }
                let why = if extends {
                    "the LV grows in this plan: its mapping follows, then what is on it"
                } else {
                    "the mapping is smaller than its LV (an earlier lvextend ran without it)"
                };
                self.steps.push(ps(
                    Step::ResizeLuks(ResizeLuks {
                        on: CryptOn::Lv {
                            vg: vg.name.clone(),
                            lv: lv.name.clone(),
                        },
                        name: e.name.clone(),
                        key_file: e.key_file.clone(),
                    }),
                    Risk::Safe,
                    why,
                ));
            }
        }
    }

    /// Bytes of the open mapping /dev/mapper/NAME.
    pub(in crate::plan) fn mapping_size(&self, name: &str) -> Option<u64> {
        self.o
            .other_devices
            .iter()
            .find(|o| o.kind == "crypt" && o.name.as_deref() == Some(name))
            .map(|o| o.size)
    }

    /// An encrypted LV of the file, after the VG's LV steps: Some(()) when what is inside can
    /// be planned (the mapping is open, or this plan formats and opens it).
    pub(in crate::plan) fn encrypted_lv(
        &mut self,
        vg: &str,
        lv: &str,
        e: &EncryptionSpec,
    ) -> Option<()> {
        let t = self.lv_sealed(vg, lv);
        if !t.created && self.ix.lv(vg, lv).is_none_or(|l| l.hidden) {
            return None;
        }
        let ours = self.recorded_lines();
        let recorded = ours.iter().find(|l| l.name == e.name);
        let uuid = self.encrypted(&t, e, recorded)?;
        let dm = crate::observe::filesystems::dm_name(vg, lv);
        self.crypttab_wanted
            .push((e.clone(), uuid, format!("{} /dev/mapper/{dm}", t.device)));
        if self.opening.contains_key(&t.key) {
            self.notes.push(format!("{}: its LUKS header is opened by this plan; what is inside is seen only then, so its filesystem is checked once it is open (apply plans again)", t.object));
            return None;
        }
        Some(())
    }

    /// An LV the file removes with a LUKS mapping open on it: lvremove would fail ("in use"),
    /// and hyraid does not close a mapping. True when refused.
    pub(in crate::plan) fn open_mapping_refused(&mut self, vg: &str, lv: &str) -> bool {
        let t = self.lv_sealed(vg, lv);
        let Some(map) = self.luks_at(&t).and_then(|h| h.mapping.clone()) else {
            return false;
        };
        self.refuse(&t.object, format!("the LV is open as /dev/mapper/{}: hyraid does not close an encrypted mapping to remove its LV", map.name), format!("once nothing on it is used, `cryptsetup close {}` and remove its line from /etc/crypttab, then plan again", map.name));
        true
    }
}

impl Planner<'_> {
    /// The mapping of an encrypted mirror whose array grows in this plan (to `size`), or that
    /// an earlier apply left smaller than its array, then its PV: `cryptsetup resize`, then
    /// `pvresize` of the mapping (after the resync of the new region when one still runs).
    pub(in crate::plan) fn follow_encrypted_mirror(
        &mut self,
        m: &MirrorSpec,
        a: &crate::observe::MdArray,
        to: Option<u64>,
        size: u64,
    ) -> Vec<PlannedStep> {
        let Some(e) = &m.encryption else {
            return vec![];
        };
        // Closed: it is opened first, and grown in the plan after that.
        let Some(have) = self.mapping_size(&e.name) else {
            return vec![];
        };
        let t = self.mirror_sealed(m);
        let target = size.saturating_sub(self.data_offset(&t));
        let resize = to.is_some() || target.saturating_sub(have) >= 1 << 20;
        let pv = self.mapping_kname(m).and_then(|k| self.ix.pv(&k));
        let pv_short = pv.is_some_and(|p| p.dev_size + (1 << 20) < target);
        let mut steps = Vec::new();
        if (resize || pv_short) && to.is_none() && !a.is_idle() {
            steps.push(ps(
                Step::WaitIdle(WaitIdle {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                }),
                Risk::Safe,
                "the array grew and its new region is being resynced; its mapping takes it once every member holds it",
            ));
        }
        // While the file changes the key (its steps come later in the plan), the key that opens
        // the header now: the new one once it is in a slot, else the one crypttab names.
        let h = self.luks_at(&t);
        let old = self
            .recorded_lines()
            .into_iter()
            .find(|l| l.name == e.name)
            .and_then(|l| l.key);
        let opens = |k: &str| h.and_then(|h| h.opens_with.get(k).copied());
        let key = match old {
            Some(old) if old != e.key_file && opens(&e.key_file) != Some(true) => old,
            _ => e.key_file.clone(),
        };
        if resize {
            steps.push(ps(
                Step::ResizeLuks(ResizeLuks {
                    on: t.on.clone(),
                    name: e.name.clone(),
                    key_file: key,
                }),
                Risk::Safe,
                "the array under the LUKS header has grown; the mapping takes the new space",
            ));
        }
        if let Some(pv) = pv.filter(|_| resize || pv_short) {
            steps.push(ps(
                Step::ResizePv(ResizePv {
                    device: e.mapper_path(),
                    from: pv.dev_size,
                    to: target,
                }),
                Risk::Safe,
                "the mapping under the PV has grown; the PV takes the new space",
            ));
        }
        steps
    }
}

impl Planner<'_> {
    /// A cache this plan attaches on an unencrypted device in front of an LV on encrypted mirrors
    /// (a file can only accept it, `plaintext-cache`): its step says where plaintext lies.
    pub(in crate::plan) fn plaintext_caches(&mut self) {
        let encrypted = |r: &DeviceRef| match r {
            DeviceRef::Mirror(n) => self
                .d
                .mirrors
                .get(n)
                .is_some_and(|m| m.encryption.is_some()),
            DeviceRef::Disk(_) => false,
        };
        let mut says = Vec::new();
        for (i, s) in self.steps.iter().enumerate() {
            let (vg, lv) = match &s.step {
                Step::AttachWritecache(a) => (&a.vg, &a.lv),
                Step::AttachCache(a) => (&a.vg, &a.lv),
                _ => continue,
            };
            let Some(vgs) = self.d.volume_groups.get(vg) else {
                continue;
            };
            let Some(spec) = vgs.lvs.get(lv) else {
                continue;
            };
            let cache_pvs = match (&spec.writecache, &spec.cache) {
                (Some(w), _) => &w.pvs,
                (None, Some(c)) => &c.pvs,
                (None, None) => continue,
            };
            let data = spec.pvs.as_ref().unwrap_or(&vgs.pvs);
            let plain: Vec<&str> = cache_pvs
                .iter()
                .filter(|r| !encrypted(r))
                .map(|r| r.name())
                .collect();
            if data.iter().any(encrypted) && !plain.is_empty() {
                says.push((i, format!("; PLAINTEXT: the cache is on {}, which is not encrypted, while the LV's mirrors are: its data lie there unencrypted (accepted in the file: plaintext-cache)", plain.join(", "))));
            }
        }
        for (i, text) in says {
            self.steps[i].reason.push_str(&text);
        }
    }
}
