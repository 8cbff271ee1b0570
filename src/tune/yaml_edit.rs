//! The recommendation as an edit of the user's own file: each setting set, added or removed in
//! place, keeping every comment and the layout around it. An edit is kept only when the edited
//! text loads to exactly the state recommended; otherwise the caller lists the changes instead.

use crate::config::position::{Pos, escape_segment};

/// One edit: the keys down to the setting and its new value as YAML (`None`: remove the key).
pub struct Edit<'a> {
    pub path: &'a [String],
    pub to: Option<&'a str>,
}

fn pointer(path: &[String]) -> String {
    path.iter()
        .map(|s| format!("/{}", escape_segment(s)))
        .collect()
}

fn indent(line: &str) -> usize {
    line.chars().take_while(|c| *c == ' ').count()
}

/// The character index (0-based) of a 1-based column, as a byte offset into `line`.
fn byte_at(line: &str, col: usize) -> usize {
    line.char_indices()
        .nth(col.saturating_sub(1))
        .map(|(i, _)| i)
        .unwrap_or(line.len())
}

/// The end (byte offset) of a value starting at byte `start` of `line` when it stays on that
/// line: a flow collection up to its matching bracket, a scalar up to a flow separator (inside a
/// flow mapping), a comment or the end of the line.
fn value_end(line: &str, start: usize, in_flow: bool) -> usize {
    let rest = &line[start..];
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for (i, c) in rest.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') if depth == 0 && i == 0 => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return start + i + 1;
                }
            }
            (None, ',' | ']' | '}') if depth == 0 && in_flow => {
                return start + rest[..i].trim_end().len();
            }
            (None, '#') if depth == 0 && rest[..i].ends_with(' ') => {
                return start + rest[..i].trim_end().len();
            }
            _ => {}
        }
    }
    start + rest.trim_end().len()
}

/// The line (0-based) after the block that the key at `key_line` (0-based) opens: every later
/// line more indented than the key, or blank, up to the last such non-blank line.
fn block_end(lines: &[String], key_line: usize) -> usize {
    let base = indent(&lines[key_line]);
    let mut end = key_line + 1;
    let mut i = key_line + 1;
    while i < lines.len() {
        let l = &lines[i];
        if l.trim().is_empty() || l.trim_start().starts_with('#') && indent(l) > base {
            i += 1;
            continue;
        }
        if indent(l) <= base {
            break;
        }
        i += 1;
        end = i;
    }
    end
}

/// Whether position `p` lies inside a flow collection on its line (an opening bracket before it
/// that is not closed before it).
fn in_flow(line: &str, p: usize) -> bool {
    let mut depth = 0i32;
    for c in line[..p].chars() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    depth > 0
}

fn apply_one(text: &str, e: &Edit) -> Option<String> {
    let (_, pos) = crate::config::yaml::parse(text).ok()?;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let ptr = pointer(e.path);
    let key = e.path.last()?;
    match (pos.key_exact(&ptr), e.to) {
        (Some(k), to) => {
            let li = k.line - 1;
            let line = lines[li].clone();
            let kb = byte_at(&line, k.col);
            let flow = in_flow(&line, kb);
            let v: Pos = pos.value_exact(&ptr)?;
            if to.is_none() {
                if flow {
                    // `, key: value` (or `key: value, `) out of the flow mapping.
                    let end = value_end(&line, byte_at(&line, v.col), true);
                    let before = line[..kb].trim_end();
                    let (from, to_) = match (
                        before.ends_with(','),
                        line[end..].trim_start().starts_with(','),
                    ) {
                        (_, true) => (kb, end + line[end..].find(',')? + 1),
                        (true, false) => (before.len() - 1, end),
                        _ => (kb, end),
                    };
                    let mut l = line.clone();
                    l.replace_range(from..to_, "");
                    lines[li] = l;
                } else {
                    let end = block_end(&lines, li);
                    lines.drain(li..end);
                }
            } else if v.line == k.line {
                let vb = byte_at(&line, v.col);
                let end = value_end(&line, vb, flow);
                let mut l = line.clone();
                l.replace_range(vb..end, to?);
                lines[li] = l;
            } else {
                // A block value on the lines below: replaced by the flow form on the key's line.
                let end = block_end(&lines, li);
                let head = &line[..kb];
                lines.splice(li..end, [format!("{head}{key}: {}", to?)]);
            }
        }
        (None, None) => return Some(text.to_string()),
        (None, Some(to)) => {
            let parent = pointer(&e.path[..e.path.len() - 1]);
            let pk = pos.key_exact(&parent)?;
            let pv = pos.value_exact(&parent)?;
            let li = pk.line - 1;
            let line = lines[li].clone();
            if pv.line == pk.line {
                // A flow mapping on the parent's line: the key goes before its closing brace.
                let vb = byte_at(&line, pv.col);
                if !line[vb..].starts_with('{') {
                    return None;
                }
                let end = value_end(&line, vb, false);
                let close = end - 1;
                let inner = line[vb + 1..close].trim();
                let add = if inner.is_empty() {
                    format!(" {key}: {to} ")
                } else {
                    format!(", {key}: {to} ")
                };
                let mut l = line.clone();
                let trimmed = l[..close].trim_end().len();
                l.replace_range(trimmed..close, &add);
                lines[li] = l;
            } else {
                let children = pos.child_keys(&parent);
                let col = children.iter().map(|p| p.col).min()?;
                let end = block_end(&lines, li);
                lines.insert(end, format!("{}{key}: {to}", " ".repeat(col - 1)));
            }
        }
    }
    let mut out = lines.join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    Some(out)
}

/// The file's text with every edit made, or `None` when one cannot be made in place.
pub fn apply(text: &str, edits: &[Edit]) -> Option<String> {
    let mut t = text.to_string();
    for e in edits {
        t = apply_one(&t, e)?;
    }
    Some(t)
}

/// A unified diff of the file before and after, as `git diff` shows one.
pub fn diff(name: &str, old: &str, new: &str) -> String {
    // An absolute path as git writes it: `a/etc/hyraid/hyraid.yaml`, not `a//etc/…`.
    let name = name.trim_start_matches('/');
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Vec<String> {
        p.split('.').map(str::to_string).collect()
    }

    fn edit(text: &str, p: &str, to: Option<&str>) -> String {
        let pth = path(p);
        apply(text, &[Edit { path: &pth, to }]).expect("editable")
    }

    const FILE: &str = "\
disks:
  ssd0: { id: ata-SSD_1 }
  hdd0:
    id: ata-HDD_1
    write_cache: off   # the UPS is not wired yet
  hdd1: { id: ata-HDD_2, write_cache: off }
mirrors:
  data0:
    members: [ssd0, hdd0]
    bitmap_chunk: 64MiB
volume_groups:
  vg0:
    pvs: [data0]
    lvs:
      data:
        size: 10GiB
        writecache:
          size: 1GiB
          pvs: [fast0]
";

    #[test]
    fn a_block_scalar_keeps_its_comment() {
        let t = edit(FILE, "disks.hdd0.write_cache", Some("on"));
        assert!(
            t.contains("    write_cache: on   # the UPS is not wired yet\n"),
            "{t}"
        );
    }

    #[test]
    fn a_flow_scalar_is_set_in_place() {
        let t = edit(FILE, "disks.hdd1.write_cache", Some("on"));
        assert!(
            t.contains("  hdd1: { id: ata-HDD_2, write_cache: on }\n"),
            "{t}"
        );
    }

    #[test]
    fn a_missing_key_is_added_under_its_block_or_into_its_flow_mapping() {
        let t = edit(FILE, "mirrors.data0.write_behind", Some("2048"));
        assert!(
            t.contains("    bitmap_chunk: 64MiB\n    write_behind: 2048\nvolume_groups:"),
            "{t}"
        );
        let t = edit(FILE, "disks.ssd0.write_cache", Some("on"));
        assert!(
            t.contains("  ssd0: { id: ata-SSD_1, write_cache: on }\n"),
            "{t}"
        );
    }

    #[test]
    fn a_block_mapping_is_removed_or_replaced_whole() {
        let t = edit(FILE, "volume_groups.vg0.lvs.data.writecache", None);
        assert!(t.ends_with("        size: 10GiB\n"), "{t}");
        let t = edit(
            FILE,
            "volume_groups.vg0.lvs.data.writecache",
            Some("{ size: 2GiB, pvs: [fast0] }"),
        );
        assert!(
            t.ends_with("        writecache: { size: 2GiB, pvs: [fast0] }\n"),
            "{t}"
        );
        let t = edit(FILE, "disks.hdd1.write_cache", None);
        assert!(t.contains("  hdd1: { id: ata-HDD_2 }\n"), "{t}");
    }

    #[test]
    fn a_flow_list_is_replaced_to_its_bracket() {
        let t = edit(FILE, "mirrors.data0.members", Some("[ssd0]"));
        assert!(t.contains("    members: [ssd0]\n"), "{t}");
    }

    #[test]
    fn the_diff_is_unified() {
        let new = edit(FILE, "disks.hdd0.write_cache", Some("on"));
        let d = diff("hyraid.yaml", FILE, &new);
        assert!(
            d.starts_with("--- a/hyraid.yaml\n+++ b/hyraid.yaml\n@@"),
            "{d}"
        );
        assert!(d.contains("-    write_cache: off   # the UPS is not wired yet\n+    write_cache: on   # the UPS is not wired yet\n"), "{d}");
        // An absolute path is named as git names it.
        let d = diff("/etc/hyraid/hyraid.yaml", FILE, &new);
        assert!(
            d.starts_with("--- a/etc/hyraid/hyraid.yaml\n+++ b/etc/hyraid/hyraid.yaml\n"),
            "{d}"
        );
    }
}
