//! Day-2 §6, seed 004: a write-intent bitmap in a file. The file cannot ask for one (the kernel
//! deprecated them, mdadm 4.4 dropped the option); an array the file names that has one is
//! converted to an internal bitmap: wait for idle, drop the file bitmap, add the internal one.

use crate::common;
use common::*;
use hyraid::config::load_str;
use hyraid::import;
use hyraid::observe::BitmapKind;
use hyraid::plan::{Policy, Risk, Step};

const FILE: &str = "/mnt/ssd/md-home.bitmap";
/// `mdadm --wait` as apply runs it: until idle with no resync held back.
const WAIT: &str = r#"md=/sys/block/$(basename "$(readlink -f /dev/md/md-home)")/md; while [ "$(cat $md/sync_action)" != idle ] || { [ "$(cat $md/resync_start)" != none ] && ! grep -qx -e read-auto -e readonly $md/array_state; }; do sleep 1; done"#;

/// The commands of the plan's md steps, in order (mdadm.conf and the initramfs left out).
fn md_commands(p: &hyraid::plan::Plan) -> Vec<String> {
    p.steps
        .iter()
        .filter(|s| !matches!(s.step, Step::WriteFile(_) | Step::RegenerateInitramfs(_)))
        .flat_map(|s| s.step.commands())
        .map(|c| hyraid::render::command_line(&c))
        .collect()
}

#[test]
fn the_file_cannot_ask_for_a_file_bitmap() {
    for (yaml, at) in [
        (
            "bitmap: { file: /mnt/ssd/md0.bitmap }",
            "6:45: mirrors.data0.bitmap.file: ",
        ),
        (
            "bitmap: /mnt/ssd/md0.bitmap",
            "6:43: mirrors.data0.bitmap: ",
        ),
    ] {
        let text = format!(
            "version: 1\ndisks:\n  ssd0: {{ id: ata-SSD_1 }}\n  hdd0: {{ id: ata-HDD_1 }}\nmirrors:\n  data0: {{ members: [ssd0, hdd0], {yaml} }}\n"
        );
        let e = load_str("f.yaml", &text).unwrap_err();
        let first = &e.0[0];
        let line = format!("{}:{}: {}: ", first.line, first.col, first.path);
        assert_eq!(line, at);
        assert!(
            first.message.contains("`config MD_BITMAP_FILE`"),
            "{}",
            first.message
        );
        assert!(first.message.contains("md: deprecate bitmap file support"));
        assert!(
            first
                .message
                .contains("Custom write-intent bitmap file option is not supported.")
        );
        assert!(
            first
                .hint
                .as_deref()
                .unwrap()
                .contains("`bitmap: { chunk: SIZE }`")
        );
    }
}

#[test]
fn the_simulator_answers_a_file_bitmap_as_the_kernel_does() {
    let (d, h) = seed_004_box("1M");
    let mdstat = hyraid::host::Host::read_file(&h, "/proc/mdstat").unwrap();
    assert!(
        mdstat.contains(&format!(
            "      bitmap: 0/1 pages [0KB], 1024KB chunk, file: {FILE}\n"
        )),
        "{mdstat}"
    );
    let a = observe(&h, &d).arrays.into_iter().next().unwrap();
    let b = a.bitmap.unwrap();
    assert_eq!(
        (b.kind, b.chunk, b.file.as_deref()),
        (BitmapKind::File, 1 << 20, Some(FILE))
    );
}

#[test]
fn an_array_with_a_file_bitmap_is_converted_to_an_internal_one() {
    let (d, h) = seed_004_box("1M");
    let p = plan_for(&h, &d, Policy::default());
    assert!(p.refused.is_empty(), "{:?}", p.refused);
    let cmds = md_commands(&p);
    assert_eq!(
        cmds,
        [
            WAIT,
            "mdadm --grow /dev/md/md-home --bitmap=none",
            "mdadm --grow /dev/md/md-home --bitmap=internal --bitmap-chunk=64M --write-behind=0",
        ]
    );
    let risks: Vec<Risk> = p.steps.iter().take(3).map(|s| s.risk).collect();
    assert_eq!(risks, [Risk::Safe, Risk::Degrades, Risk::Safe]);
    let Step::RemoveBitmap(r) = &p.steps[1].step else {
        panic!()
    };
    assert_eq!(r.file.as_deref(), Some(FILE));
    assert!(
        p.steps[1]
            .reason
            .contains(&format!("the bitmap is in the file {FILE}")),
        "{}",
        p.steps[1].reason
    );
    assert!(p.notes.iter().any(|n| n == &format!("mirror md-home: the old bitmap file {FILE} can be deleted by hand once apply has run (hyraid never deletes files it does not own)")), "{:?}", p.notes);
    // Applied: internal bitmap of the file's chunk, and the second plan is empty.
    apply(&h, &d, Policy::default()).unwrap();
    let b = observe(&h, &d).arrays[0].bitmap.clone().unwrap();
    assert_eq!(
        (b.kind, b.chunk, b.file),
        (BitmapKind::Internal, 64 << 20, None)
    );
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());
}

#[test]
fn an_auto_read_only_array_is_made_writable_first_and_a_read_only_one_is_refused() {
    let (d, h) = seed_004_box("1M");
    let mut w = h.world();
    w.arrays[0].array_state = "read-auto".into();
    let h = hyraid::sim::SimHost::new(w.clone());
    let p = plan_for(&h, &d, Policy::default());
    let cmds = md_commands(&p);
    assert_eq!(
        cmds,
        [
            "mdadm --readwrite /dev/md/md-home",
            WAIT,
            "mdadm --grow /dev/md/md-home --bitmap=none",
            "mdadm --grow /dev/md/md-home --bitmap=internal --bitmap-chunk=64M --write-behind=0",
        ]
    );
    apply(&h, &d, Policy::default()).unwrap();
    assert!(plan_for(&h, &d, Policy::default()).steps.is_empty());

    w.arrays[0].array_state = "readonly".into();
    let h = hyraid::sim::SimHost::new(w);
    let p = plan_for(&h, &d, Policy::default());
    assert!(
        p.steps
            .iter()
            .all(|s| !matches!(s.step, Step::RemoveBitmap(_) | Step::AddBitmap(_)))
    );
    assert_eq!(p.refused.len(), 1, "{:?}", p.refused);
    assert!(p.refused[0].reason.contains("read-only"), "{:?}", p.refused);
}

#[test]
fn the_simulated_kernel_refuses_to_drop_a_file_bitmap_while_a_resync_runs() {
    let (_, h) = example("single-pair");
    let o = run(
        &h,
        &[
            "mdadm",
            "--create",
            "/dev/md/x",
            "--level=1",
            "--raid-devices=2",
            &format!("--bitmap={FILE}"),
            "/dev/disk/by-id/ata-CT500MX500SSD1_2204E6000001",
            "/dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001",
            "--run",
        ],
    );
    assert_eq!(o.status, 0, "{}", o.stderr);
    // mdadm 4.2's default file chunk: 4 KiB doubled until at most 2^20 chunks.
    assert_eq!(
        h.world().arrays[0].bitmap.as_ref().unwrap().chunk,
        512 << 10
    );
    let o = run(&h, &["mdadm", "--grow", "/dev/md/x", "--bitmap=none"]);
    assert_eq!(
        (o.status, o.stderr.as_str()),
        (
            1,
            "mdadm: failed to remove bitmap /mnt/ssd/md-home.bitmap\n"
        )
    );
    h.finish_syncs();
    assert_eq!(
        run(&h, &["mdadm", "--grow", "/dev/md/x", "--bitmap=none"]).status,
        0
    );
    assert_eq!(h.world().arrays[0].bitmap, None);
}

#[test]
fn import_of_a_seed_004_box_writes_a_file_that_plans_the_conversion() {
    let (d, h) = seed_004_box("1M");
    let r = import::import(&observe(&h, &d));
    assert!(
        r.notes.iter().any(|s| s == &format!("/dev/md/md-home: its bitmap is in the file {FILE} (deprecated by the kernel, gone from mdadm 4.4): the file asks for an internal bitmap of the same chunk, and `hyraid plan` on it shows the conversion (wait for idle, `--bitmap=none`, then `--bitmap=internal`); the old file can be deleted by hand afterwards")),
        "{:#?}",
        r.notes
    );
    assert!(r.skipped.is_empty(), "{:#?}", r.skipped);
    let yaml = import::to_yaml(&r);
    assert!(
        yaml.contains("bitmap: { chunk: 1MiB }") || yaml.contains("chunk: 1MiB"),
        "{yaml}"
    );
    let back = load_str("imported.yaml", &yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    let p = plan_for(&h, &back, Policy::default());
    let kinds = md_commands(&p);
    assert_eq!(
        kinds,
        [
            WAIT,
            "mdadm --grow /dev/md/md-home --bitmap=none",
            "mdadm --grow /dev/md/md-home --bitmap=internal --bitmap-chunk=1M --write-behind=0",
        ]
    );
    apply(&h, &back, Policy::default()).unwrap();
    assert!(plan_for(&h, &back, Policy::default()).steps.is_empty());
}

/// Status gives a fix that works: a 1.x array with a file bitmap is imported and converted by
/// apply; a 0.90 one import leaves out, so its fix is the conversion by hand.
#[test]
fn status_says_how_to_convert_a_file_bitmap_by_the_arrays_metadata() {
    let (_, h) = seed_004_box("1M");
    let fix_of = |o: &hyraid::observe::Observed| {
        hyraid::status::status(o, None, None)
            .into_iter()
            .find(|f| f.message.contains("deprecated"))
            .map(|f| f.fix)
            .unwrap()
    };
    let mut w = h.world();
    assert!(fix_of(&w).contains("`hyraid import` writes it"));
    for a in w.arrays.iter_mut() {
        a.superblock = Some("0.90".into());
    }
    let fix = fix_of(&w);
    assert!(
        fix.contains("does not manage 0.90 arrays") && fix.contains("bitmap="),
        "{fix}"
    );
    assert!(!fix.contains("hyraid import"), "{fix}");
    let imp = import::import(&w);
    assert!(
        imp.skipped.iter().any(|s| s.contains("0.90")),
        "{:?}",
        imp.skipped
    );
}
