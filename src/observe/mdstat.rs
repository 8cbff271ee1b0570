//! `/proc/mdstat` (kernel 6.1 md_seq_show grammar).

use super::parse_util::ParseError;

#[derive(Debug, Clone, PartialEq)]
pub struct MdstatArray {
    pub kname: String,
    pub active: bool,
    /// `read-only` or `auto-read-only` when shown.
    pub read_only: Option<String>,
    pub level: Option<String>,
    pub members: Vec<MdstatMember>,
    /// Array size in KiB.
    pub blocks: u64,
    /// `[n/m]`: raid disks, working disks.
    pub disks: Option<(u32, u32)>,
    /// `[UU_]` per slot.
    pub slots: Option<String>,
    /// Progress: operation (`resync`, `recovery`, `check`, `reshape`) and done/total KiB.
    pub progress: Option<(String, u64, u64)>,
    /// `resync=DELAYED` / `PENDING`.
    pub pending: Option<String>,
    /// The bitmap line, when present.
    pub bitmap: Option<MdstatBitmap>,
    /// The word after `super` on the blocks line (`1.2`, `external:imsm`, `external:/md127/0`,
    /// `non-persistent`); None when absent, which is what 0.90 superblocks show.
    pub metadata: Option<String>,
}

/// `bitmap: 1/1 pages [4KB], 65536KB chunk[, file: PATH]`
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MdstatBitmap {
    /// Chunk in bytes; None when it does not read as a size.
    pub chunk: Option<u64>,
    /// The bitmap file (file bitmaps only; seq_file_path escapes blanks as `\040`).
    pub file: Option<String>,
}

impl MdstatBitmap {
    fn parse(line: &str) -> MdstatBitmap {
        let (rest, file) = match line.split_once(", file: ") {
            Some((r, f)) => (r, Some(unescape(f.trim()))),
            None => (line, None),
        };
        let chunk = rest
            .rsplit(", ")
            .next()
            .and_then(|c| c.trim().strip_suffix(" chunk"))
            .and_then(|c| {
                let (n, mult) = match c.strip_suffix("KB") {
                    Some(n) => (n, 1024),
                    None => (c.strip_suffix('B').unwrap_or(c), 1),
                };
                n.parse::<u64>().ok()?.checked_mul(mult)
            });
        MdstatBitmap { chunk, file }
    }
}

/// Undo seq_file_path's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && (b'0'..=b'3').contains(&b[i + 1])
            && b[i + 2..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push(((b[i + 1] - b'0') << 6) | ((b[i + 2] - b'0') << 3) | (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[derive(Debug, Clone, PartialEq)]
pub struct MdstatMember {
    pub kname: String,
    pub desc_nr: u32,
    /// Flags in order: W, J, F, S, R.
    pub flags: Vec<char>,
}

pub fn parse(text: &str) -> Result<Vec<MdstatArray>, ParseError> {
    let err = |line: usize, detail: String| ParseError::Line {
        tool: "/proc/mdstat",
        line,
        detail,
    };
    let mut out: Vec<MdstatArray> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let ln = i + 1;
        if line.starts_with("Personalities")
            || line.starts_with("unused devices")
            || line.trim().is_empty()
        {
            continue;
        }
        if !line.starts_with(char::is_whitespace) {
            let Some((name, rest)) = line.split_once(" : ") else {
                return Err(err(ln, format!("unexpected line `{line}`")));
            };
            let mut words = rest.split_whitespace().peekable();
            let active = match words.next() {
                Some("active") => true,
                Some("inactive") => false,
                other => {
                    return Err(err(
                        ln,
                        format!(
                            "state `{}` is neither active nor inactive",
                            other.unwrap_or("")
                        ),
                    ));
                }
            };
            let mut read_only = None;
            if let Some(w) = words.peek()
                && w.starts_with('(')
            {
                read_only = Some(w.trim_matches(|c| c == '(' || c == ')').to_string());
                words.next();
            }
            let mut level = None;
            let mut members = Vec::new();
            for w in words {
                if let Some(open) = w.find('[') {
                    let kname = w[..open].to_string();
                    let close = w[open..]
                        .find(']')
                        .map(|c| c + open)
                        .ok_or_else(|| err(ln, format!("member `{w}` lacks `]`")))?;
                    let desc_nr = w[open + 1..close]
                        .parse()
                        .map_err(|_| err(ln, format!("member `{w}` has no number")))?;
                    let flags = w[close + 1..]
                        .chars()
                        .filter(|c| c.is_ascii_alphabetic())
                        .collect();
                    members.push(MdstatMember {
                        kname,
                        desc_nr,
                        flags,
                    });
                } else if level.is_none() && active {
                    level = Some(w.to_string());
                }
                // Other words (a future flag) are not understood and not needed.
            }
            out.push(MdstatArray {
                kname: name.trim().to_string(),
                active,
                read_only,
                level,
                members,
                blocks: 0,
                disks: None,
                slots: None,
                progress: None,
                pending: None,
                bitmap: None,
                metadata: None,
            });
            continue;
        }
        let Some(cur) = out.last_mut() else {
            return Err(err(ln, "indented line before any array".into()));
        };
        let t = line.trim();
        if let Some(pos) = t.find(" blocks") {
            cur.blocks = t[..pos]
                .trim()
                .parse()
                .map_err(|_| err(ln, format!("block count in `{t}`")))?;
            let mut words = t.split_whitespace();
            while let Some(w) = words.next() {
                if w == "super" {
                    cur.metadata = words.next().map(str::to_string);
                }
            }
            for part in t.split_whitespace() {
                if let Some(inner) = part.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
                    if let Some((a, b)) = inner.split_once('/') {
                        if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                            cur.disks = Some((a, b));
                        }
                    } else if inner.chars().all(|c| c == 'U' || c == '_') {
                        cur.slots = Some(inner.to_string());
                    }
                }
            }
        } else if let Some(b) = t.strip_prefix("bitmap:") {
            cur.bitmap = Some(MdstatBitmap::parse(b));
        } else if let Some(p) = t.strip_prefix("resync=") {
            cur.pending = Some(p.to_string());
        } else if t.starts_with('[') {
            // [==>....]  resync = 16.3% (256960/1570816) finish=0.1min speed=128480K/sec
            let after = t.split_once(']').map(|(_, r)| r.trim()).unwrap_or("");
            let op = after.split_whitespace().next().unwrap_or("").to_string();
            let nums = t
                .split_once('(')
                .and_then(|(_, r)| r.split_once(')'))
                .map(|(n, _)| n);
            // A progress line that does not read (a future format) leaves the progress unknown.
            if let Some((d, tot)) = nums.and_then(|n| n.split_once('/'))
                && let (Ok(d), Ok(tot)) = (d.trim().parse(), tot.trim().parse())
            {
                cur.progress = Some((op, d, tot));
            }
        }
        // Other indented lines (future additions) are ignored.
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fx(name: &str) -> String {
        crate::observe::parse_util::fixture(name)
    }

    #[test]
    fn three_arrays_resyncing() {
        let a = parse(&fx("layout-three-arrays/mdstat-three-arrays.txt")).unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(a[0].kname, "md125");
        assert_eq!(a[0].pending.as_deref(), Some("DELAYED"));
        assert_eq!(
            a[1].members[0],
            MdstatMember {
                kname: "sdd1".into(),
                desc_nr: 1,
                flags: vec!['W']
            }
        );
        assert_eq!(a[1].progress, Some(("resync".into(), 256960, 1570816)));
        assert_eq!(a[2].blocks, 1570816);
        assert_eq!(a[2].disks, Some((2, 2)));
        assert_eq!(a[2].bitmap.as_ref().unwrap().chunk, Some(64 << 20));
        assert_eq!(a[2].metadata.as_deref(), Some("1.2"));
        assert_eq!(a[2].level.as_deref(), Some("raid1"));
    }

    #[test]
    fn member_flags_and_degraded() {
        let f = parse(&fx("mdstat-faulty.txt")).unwrap();
        assert_eq!(f[0].members[0].flags, vec!['W', 'F']);
        assert_eq!(f[0].slots.as_deref(), Some("U_"));
        let r = parse(&fx("mdstat-replace.txt")).unwrap();
        assert_eq!(r[0].members[0].flags, vec!['R']);
        assert_eq!(r[0].progress.as_ref().unwrap().0, "recovery");
        assert_eq!(r[0].bitmap.as_ref().unwrap().chunk, Some(128 << 20));
        let d = parse(&fx("mdstat-degraded.txt")).unwrap();
        assert_eq!(d[0].disks, Some((2, 1)));
        let ro = parse(&fx("mdstat-assembled.txt")).unwrap();
        assert_eq!(ro[0].read_only.as_deref(), Some("auto-read-only"));
        assert!(parse(&fx("mdstat-stopped.txt")).unwrap().is_empty());
        let nb = parse(&fx("mdstat-no-bitmap.txt")).unwrap();
        assert_eq!(nb[0].bitmap, None);
    }

    #[test]
    fn inactive_and_garbage() {
        let a = parse("md127 : inactive sda2[0](S)\n      976630464 blocks super 1.2\n       \n")
            .unwrap();
        assert!(!a[0].active);
        assert_eq!(a[0].members[0].flags, vec!['S']);
        assert!(parse("md0 active raid1").is_err());
        // A word after the level that nobody knows yet is not an error.
        assert_eq!(
            parse("md0 : active raid1 (new-flag) sda[0]").unwrap()[0]
                .members
                .len(),
            1
        );
        assert!(parse("      123 blocks").is_err());
    }

    #[test]
    fn foreign_levels_and_file_bitmaps() {
        // Seed 004: file bitmaps on 0.90 and 1.2 arrays, RAID10 far layout.
        let seed = "Personalities : [raid1] [linear] [multipath] [raid0] [raid6] [raid5] [raid4] [raid10]\n\
md2 : active raid1 sdb1[0] sda1[1](W)\n      521984 blocks [2/2] [UU]\n      bitmap: 0/64 pages [0KB], 4KB chunk, file: /mnt/ssd-junk/boot-bitmap\n\n\
md3 : active raid10 sdc2[2] sdd2[1]\n      488102656 blocks super 1.2 64K chunks 2 far-copies [2/2] [UU]\n      bitmap: 1/466 pages [4KB], 512KB chunk, file: /mnt/ssd\\040junk/extra-bitmap\n\n\
unused devices: <none>\n";
        let a = parse(seed).unwrap();
        let b = a[0].bitmap.as_ref().unwrap();
        assert_eq!(
            (b.chunk, b.file.as_deref()),
            (Some(4096), Some("/mnt/ssd-junk/boot-bitmap"))
        );
        assert_eq!(a[0].metadata, None, "0.90 shows no `super`");
        assert_eq!(a[1].level.as_deref(), Some("raid10"));
        assert_eq!(a[1].disks, Some((2, 2)));
        let b = a[1].bitmap.as_ref().unwrap();
        assert_eq!(
            (b.chunk, b.file.as_deref()),
            (Some(512 << 10), Some("/mnt/ssd junk/extra-bitmap"))
        );
        let f = parse(&fx("foreign/partitioned-levels.mdstat.txt")).unwrap();
        let by = |k: &str| f.iter().find(|a| a.kname == k).unwrap();
        assert_eq!(by("md122").progress.as_ref().unwrap().0, "reshape");
        assert_eq!(by("md122").disks, Some((4, 4)));
        assert_eq!(by("md123").level.as_deref(), Some("raid0"));
        assert_eq!(by("md123").disks, None);
        assert_eq!(by("md124").blocks, 260096);
        let i = parse(&fx("foreign/imsm.mdstat.txt")).unwrap();
        let by = |k: &str| i.iter().find(|a| a.kname == k).unwrap();
        assert_eq!(by("md119").metadata.as_deref(), Some("external:imsm"));
        assert!(!by("md119").active);
        assert_eq!(by("md118").metadata.as_deref(), Some("external:/md119/0"));
        // A bitmap line whose chunk does not read is still a bitmap.
        let odd = parse("md0 : active raid1 sda[0]\n      10 blocks super 1.2 [1/1] [U]\n      bitmap: 1/1 pages [4KB], ?? chunk\n").unwrap();
        assert_eq!(odd[0].bitmap, Some(MdstatBitmap::default()));
    }
}
