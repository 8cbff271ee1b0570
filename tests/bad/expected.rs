//! The first error each file in tests/bad gives (`tests/it/validate.rs` checks every file has one).

/// File in tests/bad → the first error, as `line:col: path: message`.
pub const EXPECTED: &[(&str, &str)] = &[
    (
        "accept-lint-of-another-kind.yaml",
        "8:18: accept.mirror data0[0]: `drive-worn` is reported on a disk, never on `mirror data0`: accepting it here accepts nothing",
    ),
    (
        "check-budget-list.yaml",
        "8:11: check.budget: invalid value [\"6h\"]: expected a string (How long one run may take, e.g. `6h` (the default, as Debian's mdcheck): a run that reaches it stops, and the next run resumes where it stopped)",
    ),
    (
        "encryption-key-misspelt.yaml",
        "6:49: mirrors.data0.encryption.key_flie: unknown key `key_flie`",
    ),
    (
        "check-budget-too-long.yaml",
        "8:11: check.budget: `30d` is longer than 7d, the most `budget` hyraid takes",
    ),
    (
        "check-speed-max-too-fast.yaml",
        "8:14: check.speed_max: 8796093022208 bytes per second is more than md takes (its limit is a count of KiB/s below 2 TiB/s), and more than any disk reads",
    ),
    (
        "check-schedule-words.yaml",
        "8:13: check.schedule: `every` in `every sunday` is not a weekday (`Sun`, `Mon,Thu`), a shorthand alone (`weekly`, `monthly`) or a time zone at the end (`UTC`)",
    ),
    (
        "alerts-email-no-user.yaml",
        "10:17: alerts.email.to[0]: `@localhost` is not a mail address",
    ),
    (
        "alerts-token-in-tmp.yaml",
        "10:51: alerts.ntfy.token_file: `/tmp/ntfy.token` is under /tmp/, which does not keep a file across a reboot",
    ),
    (
        "alerts-url-no-host.yaml",
        "10:19: alerts.webhook.url: `https:///hook` is not an http(s) URL: it names no host",
    ),
    (
        "alerts-url-port.yaml",
        "10:16: alerts.ntfy.url: `https://ntfy.example.com:99999/nas` is not an http(s) URL: its port `99999` is not one (1 to 65535)",
    ),
    (
        "adopt-device-md-name.yaml",
        "8:13: mirrors.md0.device: `/dev/md/data` is not an md kernel device (/dev/mdN)",
    ),
    (
        "adopt-device-without-uuid.yaml",
        "6:10: mirrors.md0.device: mirror `md0` has `device` but no `uuid`",
    ),
    (
        "adopt-uuid-not-an-md-uuid.yaml",
        "7:11: mirrors.md0.uuid: `299ac1e1:b48af26d` is not an md array UUID",
    ),
    (
        "adopt-uuid-twice.yaml",
        "9:16: mirrors.md1.uuid: UUID `299ac1e1:b48af26d:b272044d:c4cd2cc2` is already adopted by mirror `md0`",
    ),
    (
        "adopt-uuid-without-device.yaml",
        "7:5: mirrors.md0.uuid: mirror `md0` has `uuid` but no `device`",
    ),
    (
        "bitmap-chunk-not-pow2.yaml",
        "6:52: mirrors.data0.bitmap.chunk: bitmap chunk 104857600 bytes must be a power of two of at least 4KiB",
    ),
    (
        "bitmap-chunk-too-large.yaml",
        "6:52: mirrors.data0.bitmap.chunk: bitmap chunk 2GiB is larger than md takes: mdadm reads `--bitmap-chunk` into a 32-bit count of 512-byte sectors (at most INT_MAX/512, just under 2GiB), and the superblock keeps it in 32 bits",
    ),
    (
        "bitmap-file.yaml",
        r#"6:45: mirrors.data0.bitmap.file: a write-intent bitmap in a file is deprecated by the kernel (drivers/md/Kconfig: `config MD_BITMAP_FILE`, bool "MD bitmap file support (deprecated)", commit "md: deprecate bitmap file support"; md logs "using deprecated bitmap file support") and mdadm 4.4 no longer creates one ("Custom write-intent bitmap file option is not supported.")"#,
    ),
    (
        "bitmap-path.yaml",
        r#"6:43: mirrors.data0.bitmap: a write-intent bitmap in a file is deprecated by the kernel (drivers/md/Kconfig: `config MD_BITMAP_FILE`, bool "MD bitmap file support (deprecated)", commit "md: deprecate bitmap file support"; md logs "using deprecated bitmap file support") and mdadm 4.4 no longer creates one ("Custom write-intent bitmap file option is not supported.")"#,
    ),
    (
        "bitmap-yes.yaml",
        r#"6:43: mirrors.data0.bitmap: invalid value "yes": expected `none`, or `{ chunk: SIZE }`"#,
    ),
    (
        "block-size-1024.yaml",
        "9:75: volume_groups.vg0.lvs.data.writecache.settings.block_size: `block_size` must be 512 or 4096, not `1024`",
    ),
    (
        "disk-in-two-mirrors.yaml",
        "8:22: mirrors.data1.members[0]: disk `ssd0` is already used by mirror `data0`",
    ),
    (
        "disk-no-id.yaml",
        "3:3: disks.ssd0: disk `ssd0` has neither `id` nor `serial`",
    ),
    (
        "disks-as-list.yaml",
        r#"2:8: disks: invalid value ["ssd0","hdd0"]: expected a mapping of disk names to `{ id: … }`"#,
    ),
    (
        "duplicate-key.yaml",
        "4:3: disks.ssd0: key `ssd0` appears twice in the same mapping",
    ),
    ("empty-file.yaml", "1:1: (file): file is empty"),
    (
        "cache-and-writecache.yaml",
        "9:75: volume_groups.vg0.lvs.data.cache: an LV has a writecache or a cache, not both",
    ),
    (
        "cache-mode-unknown.yaml",
        r#"9:52: volume_groups.vg0.lvs.data.cache.mode: invalid value "writearound": expected `writethrough` or `writeback`"#,
    ),
    (
        "cache-no-pvs.yaml",
        "9:63: volume_groups.vg0.lvs.data.cache.pvs: cache needs at least one fast PV",
    ),
    (
        "cache-on-data-pv.yaml",
        "9:64: volume_groups.vg0.lvs.data.cache.pvs[0]: `d` also holds the LV's data",
    ),
    (
        "fua-and-nofua.yaml",
        "9:83: volume_groups.vg0.lvs.data.writecache.settings.nofua: `fua` and `nofua` exclude each other",
    ),
    (
        "host-with-space.yaml",
        "2:7: host: `my host` is not a hostname",
    ),
    (
        "id-dev-path.yaml",
        "3:12: disks.d.id: `/dev/sda` is not a name under /dev/disk/by-id",
    ),
    (
        "id-kernel-name.yaml",
        "4:15: disks.hdd0.id: `sdc` is a kernel name, which can name another disk after the next boot or hotplug",
    ),
    (
        "id-is-dm.yaml",
        "3:12: disks.d.id: `dm-name-vg0-data` names an md or device-mapper device, not a disk",
    ),
    (
        "id-is-lvm-pv.yaml",
        "3:12: disks.d.id: `lvm-pv-uuid-IeyjLi-0000-0000` names an md or device-mapper device, not a disk",
    ),
    (
        "id-is-md.yaml",
        "3:15: disks.ssd0.id: `md-uuid-263e1fc9:5e52a71e:0141a8e8:fe8e251e` names an md or device-mapper device, not a disk",
    ),
    (
        "id-is-partition.yaml",
        "3:15: disks.ssd0.id: `ata-SSD_1-part2` names a partition, not a whole disk",
    ),
    (
        "id-shell-metachar.yaml",
        "3:12: disks.d.id: `ata-D_1;reboot` is not a name under /dev/disk/by-id",
    ),
    (
        "id-twice.yaml",
        "4:15: disks.ssd1.id: id `ata-SSD_1` is already used by disk `ssd0`",
    ),
    (
        "lv-name-leading-dash.yaml",
        "5:27: volume_groups.vg0.lvs.-rf: name `-rf` is not allowed: use letters, digits, `.`, `_` and `-`, starting with a letter or digit",
    ),
    (
        "lv-name-space.yaml",
        "5:27: volume_groups.vg0.lvs.my data: name `my data` is not allowed: use letters, digits, `.`, `_` and `-`, starting with a letter or digit",
    ),
    (
        "lv-reserved-name.yaml",
        "8:7: volume_groups.vg0.lvs.data_wcorig: LV name `data_wcorig` contains `_wcorig`, which LVM reserves for hidden volumes",
    ),
    (
        "lvs-as-list.yaml",
        r#"5:25: volume_groups.vg0.lvs: invalid value ["data"]: expected a mapping of LV names to `{ size: … }`"#,
    ),
    (
        "many-errors.yaml",
        "4:26: disks.hdd0.write_cach: unknown key `write_cach`",
    ),
    (
        "many-semantic-errors.yaml",
        "6:28: mirrors.data0.members[1]: member `hdd7` is not defined under `disks:`",
    ),
    (
        "member-twice.yaml",
        "5:28: mirrors.data0.members[1]: `ssd0` is listed twice in mirror `data0`",
    ),
    (
        "members-as-string.yaml",
        r#"5:21: mirrors.data0.members: invalid value "ssd0": expected a list of names"#,
    ),
    (
        "mirror-absent-in-vg.yaml",
        "6:42: mirrors.data0.state: mirror `data0` is `state: absent`, but volume group `vg0` still has it as a PV",
    ),
    (
        "mirror-one-disk.yaml",
        "5:32: mirrors.data0.members[1]: `ssd0:b` and `ssd0:a` are partitions of the same disk `ssd0`: the mirror would not survive losing it",
    ),
    (
        "mirror-of-mirror.yaml",
        "8:22: mirrors.outer.members[0]: `inner` is a mirror; the members of a mirror are disks",
    ),
    (
        "missing-version.yaml",
        "1:1: (top level): missing required key `version`",
    ),
    (
        "name-shell.yaml",
        "6:3: mirrors.data;reboot: name `data;reboot` is not allowed: use letters, digits, `.`, `_` and `-`, starting with a letter or digit",
    ),
    (
        "name-slash.yaml",
        "3:3: disks.a/b: name `a/b` is not allowed: use letters, digits, `.`, `_` and `-`, starting with a letter or digit",
    ),
    (
        "one-member.yaml",
        "5:21: mirrors.data0.members: mirror `data0` has 1 member(s); a mirror needs at least 2",
    ),
    (
        "partition-rest-not-last.yaml",
        "6:30: disks.d.partitions[0].size: only the last partition can take `rest`",
    ),
    (
        "partition-twice.yaml",
        "3:70: disks.d.partitions[1].name: partition `raid` is declared twice on disk `d`",
    ),
    (
        "partition-undefined.yaml",
        "6:35: mirrors.data0.members[1]: member disk `hdd0` has no partition `rad`",
    ),
    (
        "partitioned-disk-used-whole.yaml",
        "6:22: mirrors.data0.members[0]: member disk `ssd0` is partitioned; name one of its partitions",
    ),
    (
        "pv-in-mirror-and-vg.yaml",
        "8:23: volume_groups.vg0.pvs[1]: `hdd0` is already used by mirror `data0`",
    ),
    (
        "pv-in-two-vgs.yaml",
        "6:16: volume_groups.vg1.pvs[0]: `d` is already used by volume group `vg0`",
    ),
    (
        "pv-undefined.yaml",
        "5:16: volume_groups.vg0.pvs[0]: `dat0` is neither a mirror nor a disk",
    ),
    (
        "serial-newline.yaml",
        r#"3:19: disks.hdd0.serial: serial `ZA4000001\nACTION=="add", RUN+="/bin/rm"` contains `\n`: udev keeps only letters, digits and `#+-.:=@_` in a serial, and hyraid's udev rule matches it as written"#,
    ),
    (
        "serial-udev-injection.yaml",
        r#"5:13: disks.hdd0.serial: serial `ZA4", RUN+="/bin/sh -c reboot` contains `"`: udev keeps only letters, digits and `#+-.:=@_` in a serial, and hyraid's udev rule matches it as written"#,
    ),
    (
        "settings-as-list.yaml",
        r#"9:73: volume_groups.vg0.lvs.data.writecache.settings: invalid value ["high_watermark"]: expected a mapping of setting names to values"#,
    ),
    (
        "size-negative.yaml",
        "5:38: volume_groups.vg0.lvs.a.size: -5 is out of range (limit 0)",
    ),
    (
        "size-overflow.yaml",
        "8:18: volume_groups.vg0.lvs.a.size: size `20000PiB` is too large (more than 2^64-1 bytes)",
    ),
    (
        "size-parsecs.yaml",
        "11:21: volume_groups.vg0.lvs.data.size: unknown unit `parsecs` in size `12 parsecs`; write bytes as an integer, or a number with one of B, KiB, MiB, GiB, TiB, PiB (powers of 1024) or kB, MB, GB, TB, PB (powers of 1000), e.g. `1TiB` or `500GB`",
    ),
    (
        "size-percent-over.yaml",
        "5:38: volume_groups.vg0.lvs.a.size: percentage in `150%VG` must be a whole number from 1 to 100",
    ),
    (
        "size-u64-overflow-int.yaml",
        "5:38: volume_groups.vg0.lvs.a.size: number is too large (more than 2^64-1)",
    ),
    (
        "size-zero.yaml",
        "8:18: volume_groups.vg0.lvs.a.size: size is zero",
    ),
    (
        "state-gone.yaml",
        r#"6:42: mirrors.data0.state: invalid value "gone": expected `present` or `absent`"#,
    ),
    (
        "stripes-float.yaml",
        "5:53: volume_groups.vg0.lvs.a.stripes: invalid value 1.5: expected a whole number from 1 to 128",
    ),
    (
        "stripes-too-many.yaml",
        "8:33: volume_groups.vg0.lvs.a.stripes: 2 stripes need 2 PVs, but only 1 are available to this LV",
    ),
    (
        "stripes-zero.yaml",
        "5:53: volume_groups.vg0.lvs.a.stripes: 0 is out of range (limit 1)",
    ),
    (
        "tab-indent.yaml",
        "3:1: (file): not valid YAML: found character that cannot start any token",
    ),
    (
        "top-level-list.yaml",
        r#"1:1: (top level): invalid value [{"version":1}]: expected a mapping that starts with `version: 1`"#,
    ),
    (
        "top-level-scalar.yaml",
        r#"1:1: (top level): invalid value "hello": expected a mapping that starts with `version: 1`"#,
    ),
    (
        "two-documents.yaml",
        "1:1: (file): not valid YAML: deserializing from YAML containing more than one document is not supported",
    ),
    (
        "two-percent-free.yaml",
        "9:18: volume_groups.vg0.lvs.b.size: LV `a` already takes a share of free space in `vg0`",
    ),
    (
        "unclosed-quote.yaml",
        "4:1: (file): not valid YAML: found unexpected end of stream",
    ),
    (
        "undefined-member.yaml",
        "6:28: mirrors.data0.members[1]: member `hdd9` is not defined under `disks:`",
    ),
    (
        "unknown-bitmap-key.yaml",
        "6:59: mirrors.data0.bitmap.chunks: unknown key `chunks`",
    ),
    (
        "unknown-disk-key.yaml",
        "3:26: disks.ssd0.write_cahce: unknown key `write_cahce`",
    ),
    (
        "unknown-key-mirror.yaml",
        "8:5: mirrors.data0.write_mosty: unknown key `write_mosty`",
    ),
    (
        "unknown-lv-key.yaml",
        "8:27: volume_groups.vg0.lvs.data.stripe: unknown key `stripe`",
    ),
    (
        "unknown-partition-key.yaml",
        "5:44: disks.d.partitions[0].typ: unknown key `typ`",
    ),
    ("unknown-top-key.yaml", "2:1: disk: unknown key `disk`"),
    (
        "unknown-vg-key.yaml",
        "5:8: volume_groups.vg0: missing required key `pvs`",
    ),
    (
        "unknown-writecache-key.yaml",
        "11:45: volume_groups.vg0.lvs.data.writecache.setings: unknown key `setings`",
    ),
    (
        "version-2.yaml",
        "1:10: version: 2 is out of range (limit 1)",
    ),
    (
        "version-string.yaml",
        r#"1:10: version: invalid value "one": expected `1`"#,
    ),
    (
        "vg-name-subshell.yaml",
        "5:3: volume_groups.vg$(id): name `vg$(id)` is not allowed: use letters, digits, `.`, `_` and `-`, starting with a letter or digit",
    ),
    (
        "vg-name-dev-entry.yaml",
        "5:3: volume_groups.md: VG name `md` is taken by /dev/md",
    ),
    (
        "vg-no-pvs.yaml",
        "3:15: volume_groups.vg0.pvs: volume group `vg0` has no PVs",
    ),
    (
        "watermarks-crossed.yaml",
        "9:95: volume_groups.vg0.lvs.data.writecache.settings.low_watermark: low_watermark 60 is above high_watermark 40",
    ),
    (
        "wm-not-member.yaml",
        "7:50: mirrors.data0.write_mostly[0]: `hdd1` is not a member of mirror `data0`",
    ),
    (
        "write-behind-no-wm.yaml",
        "9:19: mirrors.data0.write_behind: write_behind > 0 without a write-mostly member",
    ),
    (
        "write-behind-string.yaml",
        r#"6:49: mirrors.data0.write_behind: invalid value "lots": expected a whole number from 0 to 16383"#,
    ),
    (
        "write-behind-too-large.yaml",
        "6:49: mirrors.data0.write_behind: 16384 is out of range (limit 16383)",
    ),
    (
        "write-cache-maybe.yaml",
        r#"3:39: disks.hdd0.write_cache: invalid value "maybe": expected `on` or `off`"#,
    ),
    (
        "write-mostly-inverted.yaml",
        "8:19: mirrors.data0.write_mostly: write_mostly lists every SSD member of mirror `data0` (ssd0): md would serve reads from the HDDs",
    ),
    (
        "write-mostly-yes.yaml",
        r#"6:49: mirrors.data0.write_mostly: invalid value "yes": expected `auto`, or a list of member names (`[]` for none)"#,
    ),
    (
        "writecache-on-data-pv.yaml",
        "11:41: volume_groups.vg0.lvs.data.writecache.pvs[0]: `d` also holds the LV's data",
    ),
    (
        "writecache-pause.yaml",
        "11:57: volume_groups.vg0.lvs.data.writecache.settings.pause_writeback: `pause_writeback` needs lvm2 2.03.18 or later; lvm2 2.03.16 (Debian 12) asks an unanswerable question and aborts",
    ),
    (
        "writecache-unknown-setting.yaml",
        "12:57: volume_groups.vg0.lvs.data.writecache.settings.high_watermak: unknown writecache setting `high_watermak`",
    ),
    (
        "yaml-syntax.yaml",
        "4:8: (file): not valid YAML: did not find expected ',' or '}'",
    ),
    (
        "stripe-size-one-stripe.yaml",
        "5:44: volume_groups.vg0.lvs.a.stripe_size: `stripe_size` needs `stripes` of 2 or more (LVM ignores it on one stripe)",
    ),
    (
        "stripe-size-not-pow2.yaml",
        "6:72: volume_groups.vg0.lvs.a.stripe_size: stripe size 98304 bytes must be a power of two of at least 4KiB",
    ),
    (
        "stripe-size-too-small.yaml",
        "6:72: volume_groups.vg0.lvs.a.stripe_size: stripe size 2048 bytes must be a power of two of at least 4KiB",
    ),
    (
        "metadata-unquoted.yaml",
        r#"6:38: mirrors.boot.metadata: invalid value 1.0: expected `"1.0"` or `"1.2"`, quoted"#,
    ),
    (
        "metadata-0.90.yaml",
        r#"6:38: mirrors.boot.metadata: invalid value "0.90": expected `"1.0"` or `"1.2"`, quoted"#,
    ),
    (
        "md-name-with-host-too-long.yaml",
        "7:3: mirrors.nextcloud-data: the array's name in its superblock would be `storage-node-07.example:nextcloud-data`, 38 characters; mdadm keeps at most 31 (homehost:name), and beyond that writes the name without the host, so the array would not be this host's",
    ),
    (
        "md-name-too-long.yaml",
        "6:3: mirrors.a-mirror-name-of-thirty-two-chrs: name `a-mirror-name-of-thirty-two-chrs` is longer than 31 characters",
    ),
    (
        "fs-label-too-long.yaml",
        "8:59: volume_groups.vg0.lvs.data.filesystem.label: label `nextcloud-data` is 14 bytes; xfs keeps at most 12",
    ),
    (
        "fs-label-ext4-too-long.yaml",
        "8:60: volume_groups.vg0.lvs.data.filesystem.label: label `nextcloud-archive` is 17 bytes; ext4 keeps at most 16",
    ),
    (
        "fs-mount-relative.yaml",
        "8:60: volume_groups.vg0.lvs.data.filesystem.mount: mount point `srv/data` must be an absolute path without spaces, `.`, `..` or a trailing `/`",
    ),
    (
        "fs-type-btrfs.yaml",
        r#"8:47: volume_groups.vg0.lvs.data.filesystem.type: invalid value "btrfs": expected `ext4` or `xfs`"#,
    ),
    (
        "fs-option-comma.yaml",
        "8:81: volume_groups.vg0.lvs.data.filesystem.options[0]: mount option `noatime,nodev` must be one word without spaces or commas",
    ),
    (
        "mirror-fs-and-pv.yaml",
        "6:29: mirrors.data0.filesystem: mirror `data0` carries a filesystem and is also a PV of volume group `vg0`",
    ),
    (
        "mirror-fs-label-too-long.yaml",
        "6:62: mirrors.backup.filesystem.label: label `nightly-backup` is 14 bytes; xfs keeps at most 12",
    ),
    (
        "mirror-fs-mount-os.yaml",
        "6:63: mirrors.backup.filesystem.mount: `/usr` belongs to the operating system; hyraid mounts data filesystems only",
    ),
    (
        "stripes-whole-float.yaml",
        "10:18: volume_groups.vg0.lvs.a.stripes: `2.0` is a decimal number; this setting takes a whole number",
    ),
    (
        "stripes-inf.yaml",
        "10:18: volume_groups.vg0.lvs.a.stripes: `.inf` is infinity or not-a-number, which no setting takes",
    ),
    (
        "host-nan.yaml",
        "2:7: host: `.NaN` is infinity or not-a-number, which no setting takes",
    ),
    (
        "accept-unknown-lint.yaml",
        "7:14: accept.lv vg0/a[0]: `writecache-on-one-ssd` is not a lint a file can accept",
    ),
    (
        "accept-bad-object.yaml",
        "7:3: accept.vg0/a: `vg0/a` is not an object status reports lints on",
    ),
];
