//! /proc/mdstat as kernel 6.1 prints it.

use crate::observe::{BitmapKind, Observed};

/// The personality's part of the blocks line (raid0_status, raid5_status, …), before `[n/m] [U_]`.
fn level_status(a: &crate::observe::MdArray) -> (&'static str, bool) {
    match a.level.as_str() {
        "raid0" => (" 512k chunks", false),
        "linear" => (" 0k rounding", false),
        "raid10" => (" 512K chunks 2 near-copies", true),
        "raid4" => (" level 4, 512k chunk, algorithm 0", true),
        "raid5" => (" level 5, 512k chunk, algorithm 2", true),
        "raid6" => (" level 6, 512k chunk, algorithm 2", true),
        _ => ("", true),
    }
}

pub fn mdstat(w: &Observed) -> String {
    let mut o = String::from(
        "Personalities : [linear] [multipath] [raid0] [raid1] [raid6] [raid5] [raid4] [raid10] \n",
    );
    for a in w.arrays.iter().rev() {
        let mut members: Vec<String> = Vec::new();
        for (i, m) in a.members.iter().enumerate().rev() {
            let mut t = format!("{}[{}]", m.kname, m.slot.unwrap_or(a.raid_disks + i as u32));
            if m.write_mostly() {
                t.push_str("(W)");
            }
            if m.faulty() {
                t.push_str("(F)");
            } else if m.has("spare") && a.sync_action != "recover" {
                t.push_str("(S)");
            }
            members.push(t);
        }
        let metadata = a
            .metadata
            .as_deref()
            .or(a.superblock.as_deref())
            .unwrap_or("1.2");
        if a.array_state == "inactive" {
            // md_seq_show: no level, members with (S), blocks without [n/m] for an array that does not run.
            o.push_str(&format!(
                "{} : inactive {}\n      {} blocks super {metadata}\n       \n",
                a.kname,
                members.join(" "),
                a.size_kib
            ));
            continue;
        }
        o.push_str(&format!(
            "{} : active {} {}\n",
            a.kname,
            a.level,
            members.join(" ")
        ));
        let working = a.members.iter().filter(|m| m.has("in_sync")).count() as u32;
        let slots: String = (0..a.raid_disks)
            .map(|s| {
                if a.members
                    .iter()
                    .any(|m| m.slot == Some(s) && m.has("in_sync"))
                {
                    'U'
                } else {
                    '_'
                }
            })
            .collect();
        let (status, redundant) = level_status(a);
        o.push_str(&format!(
            "      {} blocks super {metadata}{status}",
            a.size_kib
        ));
        if redundant {
            o.push_str(&format!(" [{}/{}] [{}]", a.raid_disks, working, slots));
        }
        o.push('\n');
        if let Some((done, total)) = a.sync_completed {
            let op = match a.sync_action.as_str() {
                "recover" => "recovery",
                "check" => "check",
                "reshape" => "reshape",
                _ => "resync",
            };
            let permille = (done * 1000).checked_div(total).unwrap_or(0);
            let bar = (permille / 50) as usize;
            o.push_str(&format!(
                "      [{}>{}]  {op} = {:>3}.{}% ({}/{}) finish=1.0min speed=100000K/sec\n",
                "=".repeat(bar),
                ".".repeat(19usize.saturating_sub(bar)),
                permille / 10,
                permille % 10,
                done / 2,
                total / 2
            ));
        }
        match &a.bitmap {
            Some(b) => {
                o.push_str(&format!(
                    "      bitmap: 0/1 pages [0KB], {}KB chunk",
                    b.chunk / 1024
                ));
                if let Some(f) = b.file.as_ref().filter(|_| b.kind == BitmapKind::File) {
                    o.push_str(&format!(", file: {}", f.replace(' ', "\\040")));
                }
                o.push_str("\n\n");
            }
            None => o.push_str("      \n"),
        }
    }
    o.push_str("unused devices: <none>\n");
    o
}
