//! The bitmap and write-behind of an existing mirror: a bitmap re-created for a new chunk (never
//! on a read-only array), write-behind set or cleared.

use super::*;
use crate::observe::BitmapKind;
use crate::plan::step::{AddBitmap, ReadWrite, RemoveBitmap, SetWriteBehind, WaitIdle};

impl<'a> Planner<'a> {
    /// Refuses bitmap and write-behind changes on a read-only array (`mdadm --readonly`).
    pub(super) fn bitmap_refused_read_only(
        &mut self,
        m: &MirrorSpec,
        a: &MdArray,
        object: &str,
        recreate: bool,
    ) -> bool {
        let write_behind_changes = a
            .bitmap
            .as_ref()
            .is_some_and(|b| b.backlog != m.write_behind);
        if (recreate || write_behind_changes) && a.array_state == "readonly" {
            self.refuse(
                object,
                "the array is read-only (`mdadm --readonly`); md refuses bitmap changes on it",
                format!("make it writable (`mdadm --readwrite {}`) if that is intended, then apply again", m.md_path()),
            );
            return true;
        }
        false
    }

    /// The bitmap removed and added again (its chunk changes, or it comes or goes): made
    /// read-write and idle first, as md refuses bitmap changes otherwise.
    pub(super) fn recreate_bitmap(
        &mut self,
        m: &MirrorSpec,
        a: &MdArray,
        joins: bool,
        replaced: bool,
        out: &mut Vec<PlannedStep>,
    ) {
        let have_chunk = a.bitmap.as_ref().map(|b| b.chunk);
        let made_writable = out.iter().any(|s| matches!(s.step, Step::ReadWrite(_)));
        if a.auto_read_only() && !made_writable {
            // After boot or assembly an array is read-only until its first write; md refuses
            // bitmap changes until then, and a pending resync starts at that first write.
            out.push(ps(
                Step::ReadWrite(ReadWrite {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                }),
                Risk::Safe,
                "the array is auto-read-only (after boot or assembly); md refuses bitmap changes until it is read-write",
            ));
        }
        let file = file_bitmap(a);
        let must_wait = !a.is_idle() || joins || a.auto_read_only() || a.resync_pending;
        if (must_wait || file.is_some()) && !replaced {
            out.push(ps(
                Step::WaitIdle(WaitIdle {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                }),
                Risk::Safe,
                if !must_wait {
                    "md refuses to drop a file bitmap while a resync or recovery runs (one may start before apply)".to_string()
                } else { format!(
                    "the kernel refuses bitmap changes while {} runs",
                    if joins {
                        "the recovery this plan starts"
                    } else if a.is_idle() {
                        "the pending resync (it starts when the array turns read-write)"
                    } else {
                        a.sync_action.as_str()
                    }
                ) },
            ));
        }
        if let Some(have) = have_chunk {
            let why = match (m.bitmap_chunk, &file) {
                (Some(c), Some(f)) => format!("the bitmap is in the file {f} (file bitmaps are deprecated by the kernel, `MD_BITMAP_FILE`, and gone from mdadm 4.4): converted to an internal bitmap of {}; until re-added an unclean shutdown means a full resync", human(c)),
                (None, Some(f)) => format!("the bitmap is in the file {f} and the file says `bitmap: none`: every unclean shutdown will mean a full resync and a dropped member a full recovery"),
                (Some(c), None) => format!("bitmap chunk {} → {}: md changes it only by removing and re-adding; until re-added an unclean shutdown means a full resync", human(have), human(c)),
                (None, None) => "the file says `bitmap: none`: every unclean shutdown will mean a full resync and a dropped member a full recovery".into(),
            };
            out.push(ps(
                Step::RemoveBitmap(RemoveBitmap {
                    array: m.name.clone(),
                    md_device: m.md_device(),
                    file: file.clone(),
                }),
                Risk::Degrades,
                why,
            ));
        }
        if let Some(f) = &file {
            self.notes.push(format!("mirror {}: the old bitmap file {f} can be deleted by hand once apply has run (hyraid never deletes files it does not own)", m.name));
        }
        if let Some(c) = m.bitmap_chunk {
            let risk = if m.write_behind > 0 {
                Risk::DataAtRisk
            } else {
                Risk::Safe
            };
            out.push(ps(Step::AddBitmap(AddBitmap { array: m.name.clone(), md_device: m.md_device(), chunk: c, write_behind: m.write_behind }), risk, "internal write-intent bitmap: short resyncs after a crash, fast re-add of a dropped member"));
        }
    }

    /// The write-behind of a kept bitmap, when the file asks another.
    pub(super) fn write_behind_change(&self, m: &MirrorSpec, a: &MdArray) -> Option<PlannedStep> {
        let b = a.bitmap.as_ref().filter(|b| b.backlog != m.write_behind)?;
        let (risk, why) = if m.write_behind > b.backlog {
            (
                Risk::DataAtRisk,
                format!(
                    "write-behind {} → {}: writes are acknowledged before the write-mostly member has them",
                    b.backlog, m.write_behind
                ),
            )
        } else {
            (
                Risk::Safe,
                format!("write-behind {} → {}", b.backlog, m.write_behind),
            )
        };
        Some(ps(
            Step::SetWriteBehind(SetWriteBehind {
                array: m.name.clone(),
                md: a.kname.clone(),
                value: m.write_behind,
            }),
            risk,
            why,
        ))
    }
}

/// The file of an array's file bitmap (`file` in sysfs `bitmap/location`, named by mdstat).
fn file_bitmap(a: &MdArray) -> Option<String> {
    let b = a.bitmap.as_ref().filter(|b| b.kind == BitmapKind::File)?;
    Some(
        b.file
            .clone()
            .unwrap_or_else(|| "(a file mdstat does not name)".into()),
    )
}

/// Whether the bitmap is removed and added again: its chunk changes, the file adds or drops
/// it, or it is in a file (converted to an internal bitmap).
pub(super) fn bitmap_recreated(m: &MirrorSpec, a: &MdArray) -> bool {
    if file_bitmap(a).is_some() {
        return true;
    }
    let have_chunk = a.bitmap.as_ref().map(|b| b.chunk);
    match (m.bitmap_chunk, have_chunk) {
        (Some(w), Some(h)) => w != h,
        (w, h) => w.is_some() != h.is_some(),
    }
}
