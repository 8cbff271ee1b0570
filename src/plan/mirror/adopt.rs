//! Which observed array a mirror of the file is. A mirror is the array /dev/md/NAME, or, adopted
//! by UUID (`uuid:` and `device:`), an array built by hand as /dev/mdN without a name: matched by
//! its UUID and addressed by the device the file names, so nothing is renamed under a mounted
//! filesystem. Part of the planner (a child of `diff`).

use super::Planner;
use crate::config::MirrorSpec;
use crate::observe::MdArray;
use crate::observe::names::norm_uuid;

/// The observed array that is mirror `m` (as [`Planner::array_of`], without an index).
pub fn array_for<'o>(o: &'o crate::observe::Observed, m: &MirrorSpec) -> Option<&'o MdArray> {
    match &m.adopted {
        Some(ad) => {
            let want = norm_uuid(&ad.uuid);
            o.arrays
                .iter()
                .find(|a| a.uuid.as_deref().map(norm_uuid).as_deref() == Some(&want))
        }
        None => o.array_named(&m.name),
    }
}

impl<'a> Planner<'a> {
    /// The observed array that is mirror `m`: by UUID when adopted, else by /dev/md/NAME.
    pub(in crate::plan) fn array_of(&self, m: &MirrorSpec) -> Option<&'a MdArray> {
        match &m.adopted {
            Some(ad) => {
                let want = norm_uuid(&ad.uuid);
                self.o
                    .arrays
                    .iter()
                    .find(|a| a.uuid.as_deref().map(norm_uuid).as_deref() == Some(&want))
            }
            None => self.ix.array_named(&m.name),
        }
    }

    /// The observed array of the file's mirror `name` (a PV reference).
    pub(in crate::plan) fn array_of_mirror(&self, name: &str) -> Option<&'a MdArray> {
        match self.d.mirrors.get(name) {
            Some(m) => self.array_of(m),
            None => self.ix.array_named(name),
        }
    }

    /// Whether an observed array is one of the file's mirrors.
    pub(in crate::plan) fn is_file_array(&self, a: &MdArray) -> bool {
        self.d
            .mirrors
            .values()
            .any(|m| self.array_of(m).is_some_and(|x| x.kname == a.kname))
    }

    /// Path and kernel name of a mirror used as a PV: /dev/md/NAME, or an adopted array's device.
    /// An encrypted mirror's PV is its opened mapping, /dev/mapper/NAME.
    pub(in crate::plan) fn mirror_pv(&self, name: &str) -> (String, Option<String>) {
        match self.d.mirrors.get(name) {
            Some(m) if m.encryption.is_some() => (m.pv_path(), self.mapping_kname(m)),
            Some(m) => (m.md_path(), self.array_of(m).map(|a| a.kname.clone())),
            None => (
                format!("/dev/md/{name}"),
                self.ix.array_named(name).map(|a| a.kname.clone()),
            ),
        }
    }

    /// The line mdadm.conf lists the mirror by: its name, or the adopted array's device.
    pub(in crate::plan) fn conf_entry(m: &MirrorSpec) -> String {
        m.md_device().unwrap_or_else(|| m.name.clone())
    }

    /// Refuses (and blocks) a mirror whose array cannot be the one the file means: an adopted
    /// array that is not on this machine or not at the device the file names, or an array
    /// /dev/md/NAME that another mirror of the file adopts by UUID. True when refused.
    pub(in crate::plan) fn adoption_refused(&mut self, m: &MirrorSpec) -> bool {
        let object = format!("mirror {}", m.name);
        let refusal = match (&m.adopted, self.array_of(m)) {
            (Some(ad), None) => Some((
                format!("no array with UUID {} is on this machine; a mirror adopted by UUID is an array that exists, hyraid does not create one", ad.uuid),
                "check the UUID (`mdadm --detail --scan`), or remove `uuid` and `device` to have hyraid create /dev/md/NAME".to_string(),
            )),
            (Some(ad), Some(a)) if format!("/dev/{}", a.kname) != ad.device => Some((
                format!("the array with UUID {} is /dev/{} now, but the file says `device: {}`; hyraid never addresses an array by a name the file does not give", ad.uuid, a.kname, ad.device),
                format!("set `device: /dev/{}` if that is the array (its ARRAY line in mdadm.conf keeps the name across reboots)", a.kname),
            )),
            (None, Some(a)) => {
                let uuid = a.uuid.as_deref().map(norm_uuid);
                self.d
                    .mirrors
                    .values()
                    .find(|o| {
                        o.adopted.as_ref().map(|ad| norm_uuid(&ad.uuid)) == uuid && uuid.is_some()
                    })
                    .map(|other| {
                        (
                            format!("/dev/md/{} is the array mirror {} adopts by UUID", m.name, other.name),
                            "describe each array once: remove one of the two mirrors".to_string(),
                        )
                    })
            }
            _ => None,
        };
        let Some((reason, fix)) = refusal else {
            return false;
        };
        self.refuse(object, reason, fix);
        self.blocked.insert(m.name.clone());
        true
    }
}
