//! Semantic checks of a configuration, with positions and fixes, by object kind: disks,
//! mirrors, LVM; names; and the schema errors.

mod boot;
mod disks;
mod encryption;
mod lvm;
mod mirrors;
mod monitoring;
mod names;
mod schema;

pub(super) use lvm::writecache_settings_schema;
pub(super) use schema::schema_errors;

use super::desired::*;
use super::position::{Positions, escape_segment};
use super::raw::*;
use super::size;
use super::{ConfigError, ConfigErrors, path_of};
use std::collections::HashMap;

struct Ctx<'a> {
    pos: &'a Positions,
    file: &'a str,
    errors: Vec<ConfigError>,
}

impl Ctx<'_> {
    fn err(&mut self, pointer: &str, key: bool, message: impl Into<String>, hint: Option<String>) {
        let p = if key {
            self.pos.key(pointer)
        } else {
            self.pos.value(pointer)
        };
        self.errors.push(ConfigError {
            file: self.file.into(),
            line: p.line,
            col: p.col,
            path: path_of(pointer),
            message: message.into(),
            hint,
        });
    }
}

fn seg(s: &str) -> String {
    escape_segment(s)
}

pub(super) fn semantic(
    raw: &RawConfig,
    pos: &Positions,
    file: &str,
) -> Result<Desired, ConfigErrors> {
    let mut c = Ctx {
        pos,
        file,
        errors: Vec::new(),
    };
    if raw.version != 1 {
        c.err(
            "/version",
            false,
            format!("version {} is not supported", raw.version),
            Some("this hyraid reads `version: 1`".into()),
        );
    }
    if let Some(h) = &raw.host
        && (h.is_empty() || h.contains(char::is_whitespace))
    {
        c.err("/host", false, format!("`{h}` is not a hostname"), None);
    }

    let mut disks = disks::disks(&mut c, raw);
    let refs = disks::Refs::new(&disks);
    let mut used_by: HashMap<String, String> = HashMap::new();
    let mut mirrors = mirrors::mirrors(&mut c, raw, &refs, &mut used_by);
    monitoring::checks(&mut c, raw, &mut mirrors);
    let alerts = monitoring::alerts(&mut c, raw);
    let vgs = lvm::volume_groups(&mut c, raw, &refs, &mirrors, &mut used_by);
    encryption::unique_names(&mut c, &mirrors, &vgs);
    encryption::outside_own_volume(&mut c, &mirrors, &vgs);
    encryption::plaintext_caches(&mut c, raw, &mirrors, &vgs);
    accepted_lints(&mut c, raw);
    // Last: the boot partitions are laid out on disks whose own are checked, and are never
    // what a member or a PV may name.
    let boot = boot::boot(&mut c, raw, &mut disks, &mirrors);

    if c.errors.is_empty() {
        Ok(Desired {
            host: raw.host.clone(),
            disks,
            mirrors,
            volume_groups: vgs,
            accept: raw.accept.clone(),
            check_distribution: raw
                .check
                .as_ref()
                .and_then(|c| c.distribution)
                .unwrap_or_default(),
            alerts,
            boot,
        })
    } else {
        c.errors.sort_by_key(|e| (e.line, e.col));
        Err(ConfigErrors(c.errors))
    }
}

fn size_bytes(s: &RawSize) -> Result<u64, String> {
    match s {
        RawSize::Bytes(0) => Err("size is zero".into()),
        RawSize::Bytes(b) => Ok(*b),
        RawSize::Text(t) => size::parse_bytes(t).map_err(|e| e.0),
    }
}

fn nearest<'a, I, S>(word: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a S>,
    S: AsRef<str> + 'a + ?Sized,
{
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::damerau_levenshtein(word, c.as_ref()),
                c.as_ref().to_string(),
            )
        })
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min()
        .map(|(_, c)| c)
}

/// Whether `name` is a disk name the file takes (what `hyraid import` may reuse).
pub(crate) fn disk_name_ok(name: &str) -> bool {
    names::check_name(name, 64).is_ok()
}

/// `accept:`: each object names a kind status reports (`mirror data0`, `lv vg0/nextcloud`), and
/// each lint is one a file may accept.
fn accepted_lints(c: &mut Ctx, raw: &RawConfig) {
    let names: Vec<&str> = super::desired::ACCEPTABLE_LINTS
        .iter()
        .map(|(n, _)| *n)
        .collect();
    for (object, lints) in &raw.accept {
        let at = format!("/accept/{}", seg(object));
        let kind = object.split_once(' ').map(|(k, _)| k);
        if !matches!(kind, Some("mirror" | "array" | "lv" | "disk")) && object != "host" {
            c.err(
                &at,
                true,
                format!("`{object}` is not an object status reports lints on"),
                Some(
                    "write it as status names it: `mirror NAME`, `array /dev/mdN`, `lv VG/LV`, `disk NAME` or `host`"
                        .into(),
                ),
            );
        }
        // A mirror or LV the file does not have: the acceptance would silently accept nothing.
        let mirrors: Vec<String> = raw.mirrors.keys().map(|m| format!("mirror {m}")).collect();
        let lvs: Vec<String> = raw
            .volume_groups
            .iter()
            .flat_map(|(vg, v)| v.lvs.keys().map(move |lv| format!("lv {vg}/{lv}")))
            .collect();
        let disks: Vec<String> = raw.disks.keys().map(|d| format!("disk {d}")).collect();
        let known = match kind {
            Some("disk") => Some(&disks),
            Some("mirror") => Some(&mirrors),
            Some("lv") => Some(&lvs),
            _ => None,
        };
        if let Some(known) = known
            && !known.contains(object)
        {
            c.err(
                &at,
                true,
                format!("`{object}` is not in this file"),
                Some(match known.is_empty() {
                    true => "the file has none of that kind: remove the entry".into(),
                    false => format!("objects of that kind in the file: {}", known.join(", ")),
                }),
            );
        }
        for (i, l) in lints.iter().enumerate() {
            if !names.contains(&l.as_str()) {
                c.err(
                    &format!("{at}/{i}"),
                    false,
                    format!("`{l}` is not a lint a file can accept"),
                    Some(format!("one of: {}", names.join(", "))),
                );
                continue;
            }
            // A lint status never reports on this kind of object would accept nothing.
            let kinds = lint_kinds(l);
            let this = kind.unwrap_or(object.as_str());
            if !kinds.contains(&this) {
                let fits: Vec<&str> = names
                    .iter()
                    .copied()
                    .filter(|n| lint_kinds(n).contains(&this))
                    .collect();
                c.err(
                    &format!("{at}/{i}"),
                    false,
                    format!(
                        "`{l}` is reported on {}, never on `{object}`: accepting it here accepts nothing",
                        kinds.iter().map(|k| format!("a {k}")).collect::<Vec<_>>().join(" or ")
                    ),
                    Some(match fits.is_empty() {
                        true => "remove it".into(),
                        false => format!("the lints of a {this}: {}", fits.join(", ")),
                    }),
                );
            }
        }
    }
}

/// The kinds of object (`mirror`, `array`, `lv`, `disk`, `host`) status reports a lint on.
fn lint_kinds(lint: &str) -> &'static [&'static str] {
    match lint {
        "writecache-not-redundant"
        | "dm-cache-not-redundant"
        | "cache-not-faster"
        | "plaintext-cache" => &["lv"],
        "no-smart" | "boots-from-one-disk" | "esp-on-md" | "esp-mount-stops-boot" => &["host"],
        "drive-reallocated" | "drive-worn" => &["disk"],
        "hdd-not-write-mostly"
        | "write-behind-without-write-mostly"
        | "no-bitmap"
        | "small-bitmap-chunk"
        | "never-checked"
        | "check-overdue"
        | "no-scheduled-check"
        | "two-check-schedules" => &["mirror", "array"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_acceptable_lint_says_what_it_is_reported_on() {
        for (l, _) in super::super::desired::ACCEPTABLE_LINTS {
            assert!(!super::lint_kinds(l).is_empty(), "{l}");
        }
    }
}
