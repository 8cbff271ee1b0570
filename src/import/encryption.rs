//! The LUKS layer of an adopted mirror or LV: a header on the array or the LV, open under a name
//! that a line of /etc/crypttab opens with a key file. The file names the key file, never the key.

use crate::config::encryption::RawEncryption;
use crate::config::raw::{RawMirror, RawVolumeGroup};
use crate::observe::Observed;
use crate::observe::luks::crypttab_lines;
use std::collections::BTreeMap;

/// The `encryption:` of the array or LV `kname` and its mapping's kernel name (`default`: the
/// mapping name the file need not write); Err(why) when it has a LUKS header hyraid cannot
/// describe (not open, no crypttab line, a passphrase); Ok(None) when it has none.
pub(super) fn encryption(
    o: &Observed,
    kname: &str,
    default: &str,
) -> Result<Option<(RawEncryption, String)>, String> {
    let Some(h) = o.luks.iter().find(|l| l.device == kname) else {
        return Ok(None);
    };
    let Some(map) = &h.mapping else {
        return Err("it has a LUKS header that is not open, so what it holds cannot be seen; open it and import again".into());
    };
    let lines = crypttab_lines(o.boot.crypttab.as_deref().unwrap_or(""));
    let Some(line) = lines.iter().find(|l| l.name == map.name) else {
        return Err(format!(
            "its LUKS mapping {} has no line in /etc/crypttab, so nothing opens it at boot",
            map.name
        ));
    };
    let uuid = h.uuid.as_deref().unwrap_or("");
    let source_ok = line.device == format!("UUID={uuid}")
        || line.device == format!("/dev/disk/by-uuid/{uuid}")
        || line.device == format!("/dev/{kname}")
        || o.lvm.lvs.iter().any(|l| {
            let dm = crate::observe::filesystems::dm_name(&l.vg, &l.name);
            o.filesystems
                .iter()
                .any(|f| f.kname == kname && f.vg == l.vg && f.lv == l.name)
                && (line.device == format!("/dev/{}/{}", l.vg, l.name)
                    || line.device == format!("/dev/mapper/{dm}"))
        });
    if !source_ok {
        return Err(format!(
            "its crypttab line for {} opens {}, which is not this header (UUID {uuid}) by UUID",
            map.name, line.device
        ));
    }
    let known = ["luks", "discard", "tpm2-device=auto"];
    if let Some(o) = line.options.iter().find(|o| !known.contains(&o.as_str())) {
        return Err(format!(
            "its crypttab line for {} has the option `{o}`, which hyraid does not manage",
            map.name
        ));
    }
    if line.key.is_some() && line.options.iter().any(|o| o == "tpm2-device=auto") {
        return Err(format!(
            "its crypttab line for {} unlocks with a TPM2 and names a key file; hyraid pairs a TPM2 with a passphrase only",
            map.name
        ));
    }
    Ok(Some((
        RawEncryption {
            // No key file in crypttab: a passphrase asked at boot.
            passphrase: line.key.is_none().then_some(true),
            tpm2: line
                .options
                .iter()
                .any(|o| o == "tpm2-device=auto")
                .then_some(true),
            key_file: line.key.clone(),
            name: (map.name != default).then(|| map.name.clone()),
            cipher: None,
            discard: line.options.iter().any(|o| o == "discard").then_some(true),
            header_backup: None,
        },
        map.kname.clone(),
    )))
}

/// The LVs whose cache lies on a device without encryption in front of PVs that are encrypted
/// mirrors: what is there is a choice the file must state (`accept: … [plaintext-cache]`), so
/// the import accepts it and says so.
pub(super) fn plaintext_caches(
    mirrors: &BTreeMap<String, RawMirror>,
    vgs: &BTreeMap<String, RawVolumeGroup>,
    notes: &mut Vec<String>,
) -> BTreeMap<String, Vec<String>> {
    let encrypted = |n: &String| mirrors.get(n).is_some_and(|m| m.encryption.is_some());
    let mut accept = BTreeMap::new();
    for (vg_name, vg) in vgs {
        for (lv_name, lv) in &vg.lvs {
            let cache_pvs = match (&lv.writecache, &lv.cache) {
                (Some(w), _) => &w.pvs,
                (None, Some(c)) => &c.pvs,
                (None, None) => continue,
            };
            let data = lv.pvs.as_ref().unwrap_or(&vg.pvs);
            let plain: Vec<&String> = cache_pvs.iter().filter(|p| !encrypted(p)).collect();
            if data.iter().any(encrypted) && !plain.is_empty() {
                let object = format!("lv {vg_name}/{lv_name}");
                notes.push(format!("{object}: its cache is on {}, which is not encrypted, in front of encrypted mirrors: its data lie there in plaintext. The file accepts it (`plaintext-cache`) as it is; encrypt the cache's device to end it", plain.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")));
                accept.insert(
                    object,
                    vec![crate::config::encryption::PLAINTEXT_CACHE.to_string()],
                );
            }
        }
    }
    accept
}
