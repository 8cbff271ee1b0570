//! hyraid's block of /etc/crypttab: one line per encrypted mirror and LV, opened at boot by the
//! header's UUID with its key file (or `none`: a passphrase asked on the console).

use super::fstab::{lines_between, managed_block};
use super::*;
use crate::config::encryption::EncryptionSpec;
use crate::observe::luks::{CRYPTTAB_PATH, CrypttabLine, crypttab_lines};
use crate::plan::step::WriteFile;

/// First line of hyraid's block of /etc/crypttab.
pub const CRYPTTAB_BEGIN: &str = "# hyraid: the encrypted mirrors of hyraid.yaml; `hyraid apply` keeps the lines up to the end mark";
/// Last line of hyraid's block.
pub const CRYPTTAB_END: &str = "# hyraid: end";

/// Start of the comment in hyraid's block that keeps a rotation's old key file until its slot
/// is removed: `# hyraid: old key NAME FILE …`. crypttab names the new key before the old slot
/// goes (a box stopped between the two still boots), and the comment tells the next plan which
/// slot is left to remove when an apply stopped there.
pub const OLD_KEY_MARK: &str = "# hyraid: old key ";

/// The old key file hyraid's block of `crypttab` keeps for the mapping `name` until its slot is
/// removed.
pub fn old_key(crypttab: &str, name: &str) -> Option<String> {
    lines_between(crypttab, CRYPTTAB_BEGIN, CRYPTTAB_END)
        .into_iter()
        .filter_map(|l| l.trim().strip_prefix(OLD_KEY_MARK))
        .find_map(|rest| {
            let mut f = rest.split_whitespace();
            (f.next() == Some(name)).then(|| f.next().map(str::to_string))?
        })
}

/// The crypttab line of an encrypted mirror.
fn crypttab_line(e: &EncryptionSpec, uuid: &str) -> String {
    format!(
        "{} UUID={uuid} {} {}",
        e.name,
        e.crypttab_key(),
        e.crypttab_options()
    )
}

/// The lines of hyraid's block of a crypttab.
pub fn hyraid_lines(text: &str) -> Vec<CrypttabLine> {
    crypttab_lines(&lines_between(text, CRYPTTAB_BEGIN, CRYPTTAB_END).join("\n"))
}

/// Whether a crypttab line names the header `uuid` on `device` (its paths, space-separated): by
/// `UUID=`, its by-uuid path, or the device.
fn same_source(l: &CrypttabLine, uuid: &str, device: &str) -> bool {
    l.device == format!("UUID={uuid}")
        || l.device == format!("/dev/disk/by-uuid/{uuid}")
        || device.split(' ').any(|d| l.device == d)
}

/// Whether a crypttab line (hyraid's or the box's own) opens `e` on the header `uuid` (by
/// `UUID=`, its by-uuid path, or the array's device) with the same key and options.
pub fn opens(l: &CrypttabLine, e: &EncryptionSpec, uuid: &str, device: &str) -> bool {
    let source = same_source(l, uuid, device);
    // systemd-cryptsetup detects LUKS by itself: `luks` may be there or not.
    let mut want: Vec<String> = e
        .crypttab_options()
        .split(',')
        .filter(|o| *o != "luks")
        .map(str::to_string)
        .collect();
    let mut have: Vec<String> = l.options.iter().filter(|o| *o != "luks").cloned().collect();
    want.sort();
    have.sort();
    l.name == e.name && source && l.key.as_deref() == e.key_path() && want == have
}

impl Planner<'_> {
    /// Before the slot of the key file `old` is removed from the header `uuid`: hyraid's line
    /// names the new key, with the old one kept in a comment until the removal is done (an apply
    /// stopped between them leaves a box that boots, and a plan that still removes it).
    pub(in crate::plan) fn crypttab_before_removal(
        &mut self,
        e: &EncryptionSpec,
        uuid: &str,
        old: &str,
    ) {
        let now = self.crypttab_now.clone();
        let text = now.as_deref().unwrap_or("");
        let line = crypttab_line(e, uuid);
        let block = lines_between(text, CRYPTTAB_BEGIN, CRYPTTAB_END);
        if block.contains(&line.as_str()) && old_key(text, &e.name).as_deref() == Some(old) {
            return;
        }
        let mut lines: Vec<String> = block
            .into_iter()
            .filter(|l| {
                let mine = crypttab_lines(l).first().is_some_and(|c| c.name == e.name);
                let mark = l
                    .trim()
                    .strip_prefix(OLD_KEY_MARK)
                    .is_some_and(|r| r.split_whitespace().next() == Some(e.name.as_str()));
                !mine && !mark
            })
            .map(str::to_string)
            .collect();
        lines.push(format!(
            "{OLD_KEY_MARK}{} {old} (still in a key slot of UUID={uuid}: `hyraid apply` removes it next)",
            e.name
        ));
        lines.push(line);
        let new = managed_block(now.as_deref(), CRYPTTAB_BEGIN, CRYPTTAB_END, lines);
        self.steps.push(ps(
            Step::WriteFile(WriteFile {
                path: CRYPTTAB_PATH.into(),
                old: now,
                content: new.clone(),
                purpose: format!("{} opened at boot with the new key", e.name),
            }),
            Risk::Safe,
            format!("crypttab names the new key before the old key's slot is removed, so the box boots whichever step an apply stops at; the comment keeps {old} until its slot is gone"),
        ));
        self.crypttab_now = Some(new);
    }

    /// hyraid's block of /etc/crypttab: one line per encrypted mirror and LV, unless the box's own line
    /// (outside the block) already opens it the same way; the block's lines for mappings the file
    /// does not name are kept.
    pub(in crate::plan) fn crypttab_block(&mut self) {
        let old = self.crypttab_now.clone();
        let wanted = std::mem::take(&mut self.crypttab_wanted);
        let foreign: Vec<CrypttabLine> = old
            .as_deref()
            .map(|t| {
                let inside =
                    crypttab_lines(&lines_between(t, CRYPTTAB_BEGIN, CRYPTTAB_END).join("\n"));
                crypttab_lines(t)
                    .into_iter()
                    .filter(|l| !inside.contains(l))
                    .collect()
            })
            .unwrap_or_default();
        let mut lines = Vec::new();
        for (e, uuid, device) in &wanted {
            let line = crypttab_line(e, uuid);
            // The box's own line for this header under another name: two units would race
            // for it at boot (the second finds it busy, and what waits on it fails).
            if let Some(f) = foreign
                .iter()
                .find(|l| l.name != e.name && same_source(l, uuid, device))
            {
                self.refuse(
                    format!("file {CRYPTTAB_PATH}"),
                    format!("its own line for {} (outside hyraid's block) opens the same LUKS header ({}) that the file opens as {}: at boot two units would race for one header", f.name, f.device, e.name),
                    format!("set `name: {}` in the file's `encryption` (hyraid then keeps that line when it opens the header as the file says), or remove that line from {CRYPTTAB_PATH}", f.name),
                );
                continue;
            }
            match foreign.iter().find(|l| l.name == e.name) {
                Some(f) if opens(f, e, uuid, device) => {}
                Some(f) => self.refuse(
                    format!("file {CRYPTTAB_PATH}"),
                    format!("its own line for {} (outside hyraid's block) opens {} with {}, not as the file says: `{line}`", e.name, f.device, f.key.as_deref().unwrap_or("a passphrase")),
                    format!("remove that line from {CRYPTTAB_PATH} (hyraid then writes its own), or make the file match it"),
                ),
                None => lines.push(line),
            }
        }
        // A mirror or LV marked absent loses its line: boot must not wait for a device that is gone.
        let absent_lvs = self.d.volume_groups.values().flat_map(|v| {
            v.lvs
                .values()
                .filter(move |l| l.absent || v.absent)
                .filter_map(|l| l.encryption.as_ref().map(|e| &e.name))
        });
        // The headers on the LVs of a VG the file removes, whether the file lists them or not.
        let gone: Vec<String> = (self.d.volume_groups.values().filter(|v| v.absent))
            .flat_map(|v| {
                self.o
                    .lvm
                    .lvs
                    .iter()
                    .filter(move |l| l.vg == v.name && !l.hidden)
            })
            .filter_map(|l| self.luks_at(&self.lv_sealed(&l.vg, &l.name))?.uuid.clone())
            .map(|u| format!("UUID={u}"))
            .collect();
        let of_gone: Vec<String> = hyraid_lines(old.as_deref().unwrap_or(""))
            .into_iter()
            .filter(|l| gone.contains(&l.device))
            .map(|l| l.name)
            .collect();
        let names: Vec<&String> = wanted
            .iter()
            .map(|(e, _, _)| &e.name)
            .chain(&of_gone)
            .chain(
                self.d
                    .mirrors
                    .values()
                    .filter(|m| m.absent)
                    .filter_map(|m| m.encryption.as_ref().map(|e| &e.name)),
            )
            .chain(absent_lvs)
            .collect();
        let kept: Vec<String> = old
            .as_deref()
            .map(|t| lines_between(t, CRYPTTAB_BEGIN, CRYPTTAB_END))
            .unwrap_or_default()
            .into_iter()
            .filter(|l| !l.starts_with('#'))
            .filter(|l| {
                crypttab_lines(l)
                    .first()
                    .is_some_and(|c| !names.contains(&&c.name))
            })
            .map(str::to_string)
            .collect();
        let all: Vec<String> = kept.into_iter().chain(lines).collect();
        let owned = old.as_deref().is_some_and(|t| t.contains(CRYPTTAB_BEGIN));
        if all.is_empty() && !owned {
            return;
        }
        let new = managed_block(old.as_deref(), CRYPTTAB_BEGIN, CRYPTTAB_END, all);
        if old.as_deref() != Some(new.as_str()) {
            self.steps.push(ps(
                Step::WriteFile(WriteFile {
                    path: CRYPTTAB_PATH.into(),
                    old,
                    content: new,
                    purpose: "crypttab lines of the encrypted mirrors and LVs".into(),
                }),
                Risk::Safe,
                "the encrypted mirrors and LVs are opened at boot, by the header's UUID and the key file (a passphrase is asked on the console)",
            ));
        }
    }
}
