//! hyraid's block of /etc/fstab: the lines of the file's filesystems between two marker lines,
//! every other line kept byte for byte. Pure text in, text out.

/// First line of hyraid's block.
pub const FSTAB_BEGIN: &str =
    "# hyraid: the filesystems of hyraid.yaml; `hyraid apply` keeps the lines up to the end mark";
/// Last line of hyraid's block.
pub const FSTAB_END: &str = "# hyraid: end";

/// One line of the block: `UUID=… mountpoint type options 0 pass`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FstabEntry {
    pub uuid: String,
    pub mountpoint: String,
    pub fstype: String,
    pub options: String,
    pub pass: u8,
}

impl FstabEntry {
    pub fn line(&self) -> String {
        format!(
            "UUID={} {} {} {} 0 {}",
            self.uuid, self.mountpoint, self.fstype, self.options, self.pass
        )
    }
}

/// The lines outside hyraid's block, and where the block was (the index of the line it stood
/// before), if there was one.
fn outside(old: &str) -> (Vec<&str>, Option<usize>) {
    outside_of(old, FSTAB_BEGIN, FSTAB_END)
}

/// The lines outside the block between `begin` and `end`, and where it was.
fn outside_of<'t>(old: &'t str, begin: &str, end: &str) -> (Vec<&'t str>, Option<usize>) {
    let mut keep = Vec::new();
    let mut at = None;
    let mut inside = false;
    for line in old.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        if !inside && bare == begin {
            inside = true;
            at.get_or_insert(keep.len());
        } else if inside && bare == end {
            inside = false;
        } else if !inside {
            keep.push(line);
        }
    }
    (keep, at)
}

/// (source, mount point, type, options) of the lines hyraid does not own (comments and blank
/// lines left out).
pub fn foreign_lines(old: &str) -> Vec<(String, String, String, String)> {
    outside(old)
        .0
        .iter()
        .filter_map(|l| {
            let l = l.trim();
            if l.is_empty() || l.starts_with('#') {
                return None;
            }
            let mut f = l.split_whitespace().map(str::to_string);
            Some((
                f.next()?,
                f.next()?,
                f.next().unwrap_or_default(),
                f.next().unwrap_or_default(),
            ))
        })
        .collect()
}

/// (source, mount point, type, options) of every line, hyraid's own included.
pub fn lines(text: &str) -> Vec<(String, String, String, String)> {
    let mut v = foreign_lines(text);
    for l in text.lines().filter(|l| l.starts_with("UUID=")) {
        let f: Vec<String> = l.split_whitespace().map(str::to_string).collect();
        if f.len() >= 4 && !v.iter().any(|x| x.0 == f[0] && x.1 == f[1]) {
            v.push((f[0].clone(), f[1].clone(), f[2].clone(), f[3].clone()));
        }
    }
    v
}

/// Every source a line of /etc/fstab may give a filesystem, as mount(8) reads them: `UUID=` and
/// its by-uuid path, `LABEL=` and its by-label path, and the `paths` of its device.
pub fn sources(uuid: Option<&str>, label: Option<&str>, paths: &[String]) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(u) = uuid {
        v.push(format!("UUID={u}"));
        v.push(format!("/dev/disk/by-uuid/{u}"));
    }
    if let Some(l) = label {
        v.push(format!("LABEL={l}"));
        v.push(format!("/dev/disk/by-label/{l}"));
    }
    v.extend(paths.iter().cloned());
    v
}

/// Mount points of the lines hyraid does not own.
pub fn foreign_mountpoints(old: &str) -> Vec<String> {
    foreign_lines(old).into_iter().map(|l| l.1).collect()
}

/// The `UUID=` lines of hyraid's block: (the line as written, the UUID, the mount point).
pub fn block_lines(old: &str) -> Vec<(String, String, String)> {
    let Some((_, rest)) = old.split_once(FSTAB_BEGIN) else {
        return Vec::new();
    };
    let block = rest.split_once(FSTAB_END).map_or(rest, |(b, _)| b);
    block
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let uuid = f.next()?.strip_prefix("UUID=")?;
            Some((l.to_string(), uuid.to_string(), f.next()?.to_string()))
        })
        .collect()
}

/// /etc/fstab with hyraid's block holding the `kept` lines as they were, then `entries` (none
/// of either: no block), where the block was or at the end.
pub fn managed_fstab(old: Option<&str>, kept: &[String], entries: &[FstabEntry]) -> String {
    let lines: Vec<String> = kept
        .iter()
        .cloned()
        .chain(entries.iter().map(FstabEntry::line))
        .collect();
    managed_block(old, FSTAB_BEGIN, FSTAB_END, lines)
}

/// The lines between `begin` and `end` in `text` (none: no block).
pub fn lines_between<'t>(text: &'t str, begin: &str, end: &str) -> Vec<&'t str> {
    let Some((_, rest)) = text.split_once(begin) else {
        return Vec::new();
    };
    let block = rest.split_once(end).map_or(rest, |(b, _)| b);
    block.lines().filter(|l| !l.trim().is_empty()).collect()
}

/// A configuration file with hyraid's block (between `begin` and `end`) holding `lines`, where
/// the block was or at the end, and every other line byte for byte; no lines, no block. Lines
/// already in the block keep their order; new ones follow, in the order given.
pub fn managed_block(old: Option<&str>, begin: &str, end: &str, mut lines: Vec<String>) -> String {
    let (mut keep, at) = outside_of(old.unwrap_or(""), begin, end);
    let before = lines_between(old.unwrap_or(""), begin, end);
    lines.sort_by_key(|l| before.iter().position(|b| b == l).unwrap_or(usize::MAX));
    let mut block = String::new();
    if !lines.is_empty() {
        block.push_str(begin);
        block.push('\n');
        for l in &lines {
            block.push_str(l);
            block.push('\n');
        }
        block.push_str(end);
        block.push('\n');
    }
    let at = at.unwrap_or(keep.len());
    // The line before the block must end, or the block would join it.
    let mut fixed_last = String::new();
    if at > 0 && !keep[at - 1].ends_with('\n') && !block.is_empty() {
        fixed_last = format!("{}\n", keep[at - 1]);
    }
    if !fixed_last.is_empty() {
        keep[at - 1] = &fixed_last;
    }
    let mut out = String::new();
    for l in &keep[..at] {
        out.push_str(l);
    }
    out.push_str(&block);
    for l in &keep[at..] {
        out.push_str(l);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(m: &str) -> FstabEntry {
        FstabEntry {
            uuid: "0b5a2f3c-0000-4000-8000-000000000001".into(),
            mountpoint: m.into(),
            fstype: "ext4".into(),
            options: "noatime".into(),
            pass: 2,
        }
    }

    #[test]
    fn keeps_other_lines_byte_for_byte() {
        let old = "# /etc/fstab\nUUID=abc / ext4 errors=remount-ro 0 1\n\t/dev/sr0  /media/cdrom0 udf,iso9660 user,noauto 0 0";
        let new = managed_fstab(Some(old), &[], &[e("/srv/a")]);
        assert_eq!(
            new,
            format!(
                "{old}\n{FSTAB_BEGIN}\nUUID=0b5a2f3c-0000-4000-8000-000000000001 /srv/a ext4 noatime 0 2\n{FSTAB_END}\n"
            )
        );
        // The block is rewritten in place, the rest untouched; no entries, no block.
        let moved = format!("{new}# after\n");
        let again = managed_fstab(Some(&moved), &[], &[e("/srv/b")]);
        assert!(again.ends_with(&format!("/srv/b ext4 noatime 0 2\n{FSTAB_END}\n# after\n")));
        assert_eq!(
            managed_fstab(Some(&moved), &[], &[]),
            format!("{old}\n# after\n")
        );
        let kept = "UUID=11111111-2222-4333-8444-555555555555  /srv/old xfs defaults 0 0";
        let with_kept = managed_fstab(Some(&moved), &[kept.into()], &[e("/srv/c")]);
        assert!(with_kept.contains(&format!("{FSTAB_BEGIN}\n{kept}\nUUID=0b5a")));
        assert_eq!(
            block_lines(&with_kept),
            vec![
                (
                    kept.to_string(),
                    "11111111-2222-4333-8444-555555555555".into(),
                    "/srv/old".into()
                ),
                (e("/srv/c").line(), e("/srv/c").uuid, "/srv/c".into()),
            ]
        );
        assert_eq!(
            foreign_mountpoints(&moved),
            vec!["/".to_string(), "/media/cdrom0".into()]
        );
    }
}
