//! `encryption:` of mirrors: its paths and names, one mapping per name, and no cache that
//! writes an encrypted LV's data in plaintext to a disk without encryption.

use super::{Ctx, seg};
use crate::config::desired::{DeviceRef, MirrorSpec, VgSpec};
use crate::config::encryption::*;
use crate::config::raw::{RawConfig, RawLogicalVolume, RawMirror};
use std::collections::BTreeMap;

/// The `encryption` of LV `vg/lv` (at `p`), if it has one.
pub(super) fn lv_encryption(
    c: &mut Ctx,
    p: &str,
    vg: &str,
    lv: &str,
    raw: &RawLogicalVolume,
) -> Option<EncryptionSpec> {
    let e = raw.encryption.as_ref()?;
    let ep = format!("{p}/encryption");
    checks(c, &ep, e);
    if raw.writecache.is_some() || raw.cache.is_some() {
        c.err(
            &ep,
            true,
            format!("lv `{vg}/{lv}` has both `encryption` and a cache: hyraid does not put a LUKS layer on a cached LV"),
            Some("encrypt the mirrors under it and the cache's PV instead (`encryption:` on each mirror), or drop the cache".into()),
        );
    }
    Some(EncryptionSpec::from_raw(&default_lv_name(vg, lv), e))
}

/// The `encryption` of mirror `mirror` (at `p`).
pub(super) fn encryption(
    c: &mut Ctx,
    p: &str,
    mirror: &str,
    m: &RawMirror,
    e: &RawEncryption,
) -> EncryptionSpec {
    let ep = format!("{p}/encryption");
    checks(c, &ep, e);
    if m.filesystem.is_some() {
        c.err(
            &ep,
            true,
            format!("mirror `{mirror}` has both `encryption` and `filesystem`: hyraid puts a volume group on an encrypted mirror, not a filesystem directly"),
            Some("name the mirror in a volume group's `pvs` and give the filesystem to an LV (which may have `encryption` of its own)".into()),
        );
    }
    EncryptionSpec::from_raw(&default_name(mirror), e)
}

/// Its paths, name and cipher.
fn checks(c: &mut Ctx, ep: &str, e: &RawEncryption) {
    match (&e.key_file, e.passphrase) {
        (Some(_), Some(true)) => c.err(
            &format!("{ep}/passphrase"),
            false,
            "`key_file` and `passphrase: true` are both given: the key is one or the other",
            Some("keep `key_file` for a box that opens at boot by itself, or `passphrase: true` for one a person unlocks".into()),
        ),
        (Some(k), _) => {
            if let Some(why) = path_problem(k) {
                c.err(
                    &format!("{ep}/key_file"),
                    false,
                    why,
                    Some("give the key file's absolute path, e.g. /etc/hyraid/keys/NAME.key".into()),
                );
            }
        }
        (None, Some(true)) => {}
        (None, _) => c.err(
            ep,
            false,
            "no key: `encryption` needs `key_file` or `passphrase: true`",
            Some("add `key_file: /etc/hyraid/keys/NAME.key` (hyraid makes it), or `passphrase: true` (typed at apply and at boot)".into()),
        ),
    }
    if e.tpm2 == Some(true) && e.passphrase != Some(true) {
        c.err(
            &format!("{ep}/tpm2"),
            false,
            "`tpm2: true` needs `passphrase: true`: the passphrase is the recovery key when the TPM cannot unseal (a firmware update, a new board), and what enrols it",
            Some("add `passphrase: true` (and drop `key_file`)".into()),
        );
    }
    if let Some(b) = &e.header_backup {
        if let Some(why) = path_problem(b) {
            c.err(
                &format!("{ep}/header_backup"),
                false,
                why,
                Some(
                    "give an absolute path on a filesystem that lasts, e.g. /root/NAME.luks-header"
                        .into(),
                ),
            );
        } else if e.key_file.as_deref() == Some(b.as_str()) {
            c.err(
                &format!("{ep}/header_backup"),
                false,
                "the header backup and the key file are the same file",
                None,
            );
        }
    }
    if let Some(n) = &e.name
        && let Some(why) = name_problem(n)
    {
        c.err(&format!("{ep}/name"), false, why, None);
    }
    if let Some(ci) = &e.cipher
        && let Some(why) = cipher_problem(ci)
    {
        c.err(
            &format!("{ep}/cipher"),
            false,
            why,
            Some("leave `cipher` out to take cryptsetup's default".into()),
        );
    }
}

/// Each encryption of the file: where it is (its pointer), what it is (`mirror X`, `lv VG/LV`).
fn all<'a>(
    mirrors: &'a BTreeMap<String, MirrorSpec>,
    vgs: &'a BTreeMap<String, VgSpec>,
) -> Vec<(String, String, &'a EncryptionSpec)> {
    let m = mirrors.iter().filter_map(|(n, s)| {
        let e = s.encryption.as_ref()?;
        Some((
            format!("/mirrors/{}/encryption", seg(n)),
            format!("mirror `{n}`"),
            e,
        ))
    });
    let l = vgs.values().flat_map(|vg| {
        vg.lvs.values().filter_map(move |lv| {
            let e = lv.encryption.as_ref()?;
            let at = format!(
                "/volume_groups/{}/lvs/{}/encryption",
                seg(&vg.name),
                seg(&lv.name)
            );
            Some((at, format!("lv `{}/{}`", vg.name, lv.name), e))
        })
    });
    m.chain(l).collect()
}

/// Two devices opened under one name would be one device; a header backup shared by two,
/// or at a key file's path, would be written over.
pub(super) fn unique_names(
    c: &mut Ctx,
    mirrors: &BTreeMap<String, MirrorSpec>,
    vgs: &BTreeMap<String, VgSpec>,
) {
    let all = all(mirrors, vgs);
    let keys: Vec<&str> = all.iter().filter_map(|(_, _, e)| e.key_path()).collect();
    let mut backups: BTreeMap<&str, &str> = BTreeMap::new();
    for (at, what, e) in &all {
        let Some(b) = e.header_backup.as_deref() else {
            continue;
        };
        let at = format!("{at}/header_backup");
        if keys.contains(&b) {
            c.err(
                &at,
                false,
                format!(
                    "{b} is also a key file of the file: the header backup would be written over it"
                ),
                Some("give the header backup a path of its own".into()),
            );
        } else if let Some(first) = backups.insert(b, what) {
            c.err(
                &at,
                false,
                format!("{first} and {what} keep their header backups in the same file, {b}"),
                Some("give each a header backup of its own".into()),
            );
        }
    }
    let mut by_name: BTreeMap<&str, &str> = BTreeMap::new();
    for (at, what, e) in &all {
        if let Some(first) = by_name.insert(&e.name, what) {
            c.err(
                at,
                true,
                format!(
                    "{first} and {what} are both opened as /dev/mapper/{}",
                    e.name
                ),
                Some("give one of them another `name`".into()),
            );
        }
    }
}

/// A key file or header backup on a filesystem the same encryption carries (an LV of the
/// encrypted mirror's VG, or the encrypted LV's own): the key would be locked inside what it
/// opens (boot could never open it), and the backup could not restore the header it is on.
pub(super) fn outside_own_volume(
    c: &mut Ctx,
    mirrors: &BTreeMap<String, MirrorSpec>,
    vgs: &BTreeMap<String, VgSpec>,
) {
    let under = |path: &str, mount: &str| {
        mount == "/" || path.starts_with(&format!("{}/", mount.trim_end_matches('/')))
    };
    for (at, what, e) in all(mirrors, vgs) {
        // The mount points of what this encryption carries.
        let mut mounts: Vec<(String, &str)> = Vec::new();
        for vg in vgs.values().filter(|v| !v.absent) {
            for lv in vg.lvs.values().filter(|l| !l.absent) {
                let Some(mount) = lv.filesystem.as_ref().and_then(|f| f.mount.as_deref()) else {
                    continue;
                };
                let own = what == format!("lv `{}/{}`", vg.name, lv.name);
                let on_mirror = mirrors.iter().any(|(n, m)| {
                    what == format!("mirror `{n}`")
                        && m.encryption.is_some()
                        && lv
                            .pvs
                            .as_ref()
                            .unwrap_or(&vg.pvs)
                            .iter()
                            .any(|r| matches!(r, DeviceRef::Mirror(x) if x == n))
                });
                if own || on_mirror {
                    mounts.push((format!("lv {}/{}", vg.name, lv.name), mount));
                }
            }
        }
        for (field, path) in [
            ("key_file", e.key_path()),
            ("header_backup", e.header_backup.as_deref()),
        ] {
            let Some(path) = path else { continue };
            if let Some((lv, mount)) = mounts.iter().find(|(_, m)| under(path, m)) {
                c.err(
                    &format!("{at}/{field}"),
                    false,
                    format!("{path} is on {lv} (mounted at {mount}), which {what}'s encryption carries: {}", if field == "key_file" { "the key would be locked inside what it opens, and boot could not open it" } else { "the backup would be lost with the header it restores" }),
                    Some("keep it on a filesystem outside this encryption, e.g. under /etc/hyraid/keys/ or /root/ on the system disk".into()),
                );
            }
        }
    }
}

/// A writecache or dm-cache of an LV whose PVs are encrypted mirrors, on a PV that is not one:
/// the LV's data would lie in plaintext on the cache's disk. Refused unless the file accepts
/// it (`accept: {"lv VG/LV": [plaintext-cache]}`).
pub(super) fn plaintext_caches(
    c: &mut Ctx,
    raw: &RawConfig,
    mirrors: &BTreeMap<String, MirrorSpec>,
    vgs: &BTreeMap<String, VgSpec>,
) {
    let encrypted = |r: &DeviceRef| match r {
        DeviceRef::Mirror(n) => mirrors.get(n).is_some_and(|m| m.encryption.is_some()),
        DeviceRef::Disk(_) => false,
    };
    for vg in vgs.values() {
        for lv in vg.lvs.values().filter(|l| !l.absent) {
            let (kind, cache_pvs) = match (&lv.writecache, &lv.cache) {
                (Some(w), _) => ("writecache", &w.pvs),
                (None, Some(d)) => ("cache", &d.pvs),
                (None, None) => continue,
            };
            let data = lv.pvs.as_ref().unwrap_or(&vg.pvs);
            // An encrypted LV's cache holds what LUKS wrote: ciphertext.
            if lv.encryption.is_some() {
                continue;
            }
            let plain: Vec<&str> = cache_pvs
                .iter()
                .filter(|r| !encrypted(r))
                .map(|r| r.name())
                .collect();
            if !data.iter().any(encrypted) || plain.is_empty() {
                continue;
            }
            let object = format!("lv {}/{}", vg.name, lv.name);
            if raw
                .accept
                .get(&object)
                .is_some_and(|l| l.iter().any(|x| x == PLAINTEXT_CACHE))
            {
                continue;
            }
            c.err(
                &format!("/volume_groups/{}/lvs/{}/{kind}", seg(&vg.name), seg(&lv.name)),
                true,
                format!(
                    "the {kind} of lv {}/{} is on {}, which is not encrypted: the LV's PVs are, and its data would lie in plaintext on that device",
                    vg.name, lv.name, plain.join(", ")
                ),
                Some(format!(
                    "put the {kind} on an encrypted mirror (give it `encryption:`), or accept plaintext there: `accept: {{\"{object}\": [{PLAINTEXT_CACHE}]}}`"
                )),
            );
        }
    }
}
