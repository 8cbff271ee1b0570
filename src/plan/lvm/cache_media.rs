//! Whether a cache is on media faster than what it caches, by the media the machine reports (or
//! the file's `media:`): a writecache or dm-cache on HDDs in front of an LV on SSDs slows it down
//! and adds a device to lose. Refused unless the file accepts it (`cache-not-faster`); the
//! steps' words about speed name the media observed.

use super::*;

/// How fast a PV is for writes, slowest first: HDDs, a mirror of an SSD and an HDD (md writes
/// to both), SSDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(in crate::plan) enum Speed {
    Hdd,
    Mixed,
    Ssd,
}

impl Speed {
    fn words(self, mirror: bool) -> &'static str {
        match (self, mirror) {
            (Speed::Hdd, false) => "an HDD",
            (Speed::Hdd, true) => "a mirror of HDDs",
            (Speed::Mixed, _) => "a mirror of an SSD and an HDD",
            (Speed::Ssd, false) => "an SSD",
            (Speed::Ssd, true) => "a mirror of SSDs",
        }
    }
}

/// The lint name a file accepts a slow cache by.
pub(in crate::plan) const CACHE_NOT_FASTER: &str = "cache-not-faster";

impl<'a> Planner<'a> {
    /// A disk's (or partition's) speed, when its media is known.
    fn disk_speed(&self, name: &str) -> Option<Speed> {
        let r = self.disks.get(name)?;
        r.media_known
            .then_some(if r.rotational { Speed::Hdd } else { Speed::Ssd })
    }

    /// A PV's speed and words: a disk by its media, a mirror by its members'.
    pub(in crate::plan) fn pv_speed(&self, r: &DeviceRef) -> Option<(Speed, &'static str)> {
        match r {
            DeviceRef::Disk(n) => self.disk_speed(n).map(|s| (s, s.words(false))),
            DeviceRef::Mirror(n) => {
                let m = self.d.mirrors.get(n)?;
                let all: Option<Vec<Speed>> =
                    m.members.iter().map(|x| self.disk_speed(x)).collect();
                let all = all?;
                let s = match (all.iter().min()?, all.iter().max()?) {
                    (a, b) if a == b => *a,
                    _ => Speed::Mixed,
                };
                Some((s, s.words(true)))
            }
        }
    }

    /// The cache's media, in words for the step's reason; `None` (and a refusal) when it is not
    /// faster than the LV's PVs and the file does not accept it.
    pub(in crate::plan) fn cache_media(
        &mut self,
        vg: &VgSpec,
        lv: &LvSpec,
        kind: &str,
        cache_pvs: &[DeviceRef],
    ) -> Option<String> {
        let object = format!("lv {}/{}", vg.name, lv.name);
        let origin: Vec<&DeviceRef> = match &lv.pvs {
            Some(p) => p.iter().collect(),
            None => vg.pvs.iter().filter(|r| !cache_pvs.contains(r)).collect(),
        };
        // The slowest cache PV against the fastest the LV may be on.
        let cache = cache_pvs
            .iter()
            .map(|r| self.pv_speed(r))
            .collect::<Option<Vec<_>>>();
        let origin = origin
            .iter()
            .map(|r| self.pv_speed(r))
            .collect::<Option<Vec<_>>>();
        let (Some(cache), Some(origin)) = (cache, origin) else {
            return Some("the cache PV".into());
        };
        let (Some(slow), Some(fast)) = (cache.iter().min(), origin.iter().max()) else {
            return Some("the cache PV".into());
        };
        if slow.0 > fast.0 {
            return Some(slow.1.into());
        }
        let accepted = self
            .d
            .accept
            .get(&object)
            .is_some_and(|l| l.iter().any(|x| x == CACHE_NOT_FASTER));
        if accepted {
            self.notes.push(format!("{object}: the {kind} is on {} and the LV on {}: no faster (accepted in the file: {CACHE_NOT_FASTER})", slow.1, fast.1));
            return Some(slow.1.into());
        }
        self.refuse(
            &object,
            format!(
                "the {kind} is on {} but the LV is on {}: a cache no faster than what it caches only slows writes down and adds a device to lose",
                slow.1, fast.1
            ),
            format!(
                "put the cache on faster media (an SSD, or a mirror of SSDs), or accept it with `accept: {{ \"{object}\": [{CACHE_NOT_FASTER}] }}`"
            ),
        );
        None
    }
}
