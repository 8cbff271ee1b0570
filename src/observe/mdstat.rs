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
    /// Bitmap chunk in bytes, when a bitmap line is present.
    pub bitmap_chunk: Option<u64>,
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
                } else {
                    return Err(err(ln, format!("unexpected word `{w}`")));
                }
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
                bitmap_chunk: None,
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
        } else if t.starts_with("bitmap:") {
            let chunk = t
                .rsplit(", ")
                .next()
                .and_then(|c| c.strip_suffix(" chunk"))
                .ok_or_else(|| err(ln, format!("bitmap line `{t}`")))?;
            let (num, mult) = if let Some(n) = chunk.strip_suffix("KB") {
                (n, 1024)
            } else if let Some(n) = chunk.strip_suffix('B') {
                (n, 1)
            } else {
                (chunk, 1)
            };
            cur.bitmap_chunk = Some(
                num.parse::<u64>()
                    .map_err(|_| err(ln, format!("bitmap chunk `{chunk}`")))?
                    * mult,
            );
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
            if let Some((d, tot)) = nums.and_then(|n| n.split_once('/')) {
                let d = d.parse().map_err(|_| err(ln, format!("progress `{t}`")))?;
                let tot = tot
                    .parse()
                    .map_err(|_| err(ln, format!("progress `{t}`")))?;
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
        assert_eq!(a[2].bitmap_chunk, Some(64 << 20));
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
        assert_eq!(r[0].bitmap_chunk, Some(128 << 20));
        let d = parse(&fx("mdstat-degraded.txt")).unwrap();
        assert_eq!(d[0].disks, Some((2, 1)));
        let ro = parse(&fx("mdstat-assembled.txt")).unwrap();
        assert_eq!(ro[0].read_only.as_deref(), Some("auto-read-only"));
        assert!(parse(&fx("mdstat-stopped.txt")).unwrap().is_empty());
        let nb = parse(&fx("mdstat-no-bitmap.txt")).unwrap();
        assert_eq!(nb[0].bitmap_chunk, None);
    }

    #[test]
    fn inactive_and_garbage() {
        let a = parse("md127 : inactive sda2[0](S)\n      976630464 blocks super 1.2\n       \n")
            .unwrap();
        assert!(!a[0].active);
        assert_eq!(a[0].members[0].flags, vec!['S']);
        assert!(parse("md0 active raid1").is_err());
        assert!(parse("      123 blocks").is_err());
    }
}
