#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M ssd2:ssd:512M hdd2:hdd:512M wc1:ssd:256M
# Adoption of a hand-built box: two mirrors made with mdadm's defaults as /dev/md0 and /dev/md1
# (no name, so no /dev/md/NAME; no bitmap options; md1 still resyncing), LVM on top with an ext4
# LV holding a checksummed file (in fstab by its /dev/mapper name), an LVM raid1 LV and a snapshot
# hyraid does not manage. The LV is small, so mke2fs gives its ext4 1 KiB blocks, as it does any
# filesystem under 512 MB.
# `hyraid import` adopts the arrays by UUID and leaves the rest out, saying why; plan on the file
# shows only mdadm.conf's ARRAY lines. Then the typical edit (write-mostly auto, bitmap chunk
# 128MiB, drive cache on, a writecache on a third SSD, whose block is 512 bytes: lvconvert refuses
# one larger than the ext4's 1 KiB, and knows only 512 and 4096) applies and converges: checked with sysfs,
# mdadm -X, hdparm, lvs and mdadm.conf; the file is intact, nothing was renamed, plan is empty.
. /mnt/host/files/guest-lib.sh
S1=ata-HYRAID_SSD_HYSSD1; H1=ata-HYRAID_HDD_HYHDD1; S2=ata-HYRAID_SSD_HYSSD2; H2=ata-HYRAID_HDD_HYHDD2
WC=ata-HYRAID_SSD_HYWC1
F=/tmp/imported.yaml
wm_of() { cat "/sys/block/$1/md/dev-$(kname "$2")/state"; }

say "hand-built, as a person does it: mdadm's defaults, then LVM"
hdparm -W0 /dev/disk/by-id/$H1 /dev/disk/by-id/$H2 >/dev/null
# --run only answers mdadm's "Continue creating array?" (the 1.x metadata boot note).
mdadm --create /dev/md0 --level=1 --raid-devices=2 --run /dev/disk/by-id/$S1 /dev/disk/by-id/$H1 2>/dev/null
check "md0 made" test -b /dev/md0
mdadm --wait /dev/md0 >/dev/null 2>&1
echo 1000 > /proc/sys/dev/raid/speed_limit_max    # md1's resync crawls until the edit is applied
mdadm --create /dev/md1 --level=1 --raid-devices=2 --run /dev/disk/by-id/$S2 /dev/disk/by-id/$H2 2>/dev/null
check "md1 made" test -b /dev/md1
udevadm settle
check "no /dev/md/NAME link for either (mdadm names a /dev/mdN array by its number only)" sh -c '! ls /dev/md/ 2>/dev/null | grep -q .'
expect "md0 has no bitmap (sysfs)" "$(cat /sys/block/md0/md/bitmap/location 2>/dev/null || echo none)" none
U0=$(mdadm --detail --export /dev/md0 | sed -n 's/^MD_UUID=//p')
U1=$(mdadm --detail --export /dev/md1 | sed -n 's/^MD_UUID=//p')
pvcreate -q /dev/md0 /dev/md1 && vgcreate -q vg0 /dev/md0 /dev/md1 && lvcreate -q -y -n data -L 256M vg0 /dev/md0
check "vg0/data made" test -b /dev/vg0/data
mkfs.ext4 -q /dev/vg0/data && mkdir -p /mnt/d && mount /dev/vg0/data /mnt/d
expect "mke2fs gave the small ext4 1 KiB blocks (dumpe2fs)" "$(dumpe2fs -h /dev/vg0/data 2>/dev/null | sed -n 's/^Block size: *//p')" 1024
# fstab as a person writes it: by the device mapper's name, not by UUID.
echo "/dev/mapper/vg0-data /mnt/d ext4 defaults 0 2" >> /etc/fstab
dd if=/dev/urandom of=/mnt/d/f bs=1M count=64 2>/dev/null; sync
SUM=$(sha256sum /mnt/d/f | cut -d' ' -f1)
same() { echo 3 > /proc/sys/vm/drop_caches; expect "file intact after $1" "$(sha256sum /mnt/d/f | cut -d' ' -f1)" "$SUM"; }
lvcreate -q -y --type raid1 -m 1 -L 32M -n legacy vg0 /dev/md0 /dev/md1
expect "an LVM raid1 LV (lvs)" "$(lvfield vg0/legacy segtype)" raid1
lvcreate -q -y -n scratch -L 32M vg0 && lvcreate -q -y -s -L 16M -n scratch_snap vg0/scratch
expect "a snapshot of scratch (lvs)" "$(lvfield vg0/scratch_snap origin)" scratch
expect "md1 still resyncing (sysfs)" "$(cat /sys/block/md1/md/sync_action)" resync
"$HY" observe --capture $OUT/capture-handbuilt.json -o /dev/null

say "import"
"$HY" import -o $F 2>/tmp/import.err; expect "import exits 0" $? 0
cat /tmp/import.err; cat $F
for md in md0:$U0 md1:$U1; do
    grep -qx "    uuid: ${md#*:}" $F && ok "${md%%:*} adopted by its UUID" || bad "no uuid ${md#*:} in the file"
    grep -qx "    device: /dev/${md%%:*}" $F && ok "${md%%:*} keeps its device" || bad "no device /dev/${md%%:*} in the file"
done
grep -q "not imported: lv vg0/legacy: an LVM raid1 LV" /tmp/import.err && ok "the raid1 LV is left out, saying why" || bad "no word on vg0/legacy"
grep -q "not imported: lv vg0/scratch_snap: a snapshot of scratch" /tmp/import.err && ok "the snapshot is left out, saying why" || bad "no word on vg0/scratch_snap"
expect "no LVM raid1 LV or snapshot in the file" "$(grep -v '^#' $F | grep -c 'legacy\|scratch_snap\|stripes')" 0
grep -q "has no ARRAY line for md0, md1" $F && ok "the file says mdadm.conf lacks the ARRAY lines" || bad "the file does not say what plan will show"
grep -q "bitmap: none" $F && ok "no bitmap, as mdadm's default made it" || bad "bitmap line"
grep -q "mount: /mnt/d" $F && ok "the ext4 of fstab's /dev/mapper/vg0-data line is in the file" || bad "no filesystem of vg0/data in the file"
hy plan $F --format json >/dev/null; expect "plan on the imported file exits 0" $? 0
expect "plan has exactly 2 steps" "$(grep -c '"op":' /tmp/hy.out)" 2
grep -q '"op": "write_file"' /tmp/hy.out && grep -q '"path": "/etc/mdadm/mdadm.conf"' /tmp/hy.out && ok "step 1: mdadm.conf" || bad "no mdadm.conf step"
grep -q '"op": "regenerate_initramfs"' /tmp/hy.out && ok "step 2: the initramfs" || bad "no initramfs step"
grep -q "ARRAY /dev/md0 metadata=1.2 UUID=$U0" /tmp/hy.out && ok "ARRAY line by UUID and kernel device" || bad "ARRAY line for md0"
# (The saved plan carries the file's text, whose header comment speaks of /dev/md/NAME.)
grep -v '"text": ' /tmp/hy.out | grep -q '/dev/md/' && bad "the plan names /dev/md/…" || ok "the plan never names /dev/md/NAME"

say "the typical edit: write-mostly auto, bitmap chunk 128MiB, drive cache on, a writecache"
sed -i -e 's/^    write_mostly: \[\]$/    write_mostly: auto/' \
       -e 's/^    bitmap: none$/    bitmap: { chunk: 128MiB }/' \
       -e '/^    id: ata-HYRAID_HDD_/a\    write_cache: on' \
       -e "s/^disks:\$/disks:\n  cache0: { id: $WC }/" \
       -e 's/^      data:$/      data:\n        writecache: { size: 64MiB, pvs: [cache0] }/' $F
sed -i '/^  vg0:$/,/^    lvs:$/ s/^    - md1$/    - md1\n    - cache0/' $F
cat $F
hy validate $F; expect "the edited file validates" $? 0
echo 200000 > /proc/sys/dev/raid/speed_limit_max
hy apply $F --yes; expect "apply exits 0" $? 0
grep -q 'mdadm --grow /dev/md1 --bitmap=internal --bitmap-chunk=128M' /tmp/hy.out && ok "mdadm is given /dev/md1" || bad "no grow of /dev/md1"
grep -q '/dev/md/' /tmp/hy.out && bad "apply named /dev/md/…" || ok "apply never names /dev/md/NAME"
expect "md0 is still md0, same UUID (mdadm --detail)" "$(mdadm --detail --export /dev/md0 | sed -n 's/^MD_UUID=//p')" "$U0"
expect "md1 is still md1, same UUID (mdadm --detail)" "$(mdadm --detail --export /dev/md1 | sed -n 's/^MD_UUID=//p')" "$U1"
check "no /dev/md/NAME was made" sh -c '! ls /dev/md/ 2>/dev/null | grep -q .'
wm_of md0 $H1 | grep -q write_mostly && ok "hdd0 write-mostly in md0 (sysfs)" || bad "md0/$H1: $(wm_of md0 $H1)"
wm_of md1 $H2 | grep -q write_mostly && ok "hdd1 write-mostly in md1 (sysfs)" || bad "md1/$H2: $(wm_of md1 $H2)"
expect "ssd0 not write-mostly (sysfs)" "$(wm_of md0 $S1)" in_sync
check "write-mostly in hdd0's superblock (mdadm --examine)" sh -c "mdadm --examine /dev/disk/by-id/$H1 | grep -q 'Flags : write-mostly'"
expect "md0 bitmap chunk (sysfs)" "$(cat /sys/block/md0/md/bitmap/chunksize)" 134217728
expect "md1 bitmap chunk (sysfs)" "$(cat /sys/block/md1/md/bitmap/chunksize)" 134217728
expect "md0 bitmap chunk (mdadm -X)" "$(mdadm -X /dev/disk/by-id/$H1 | sed -n 's/ *Chunksize : //p')" "128 MB"
expect "md1 bitmap chunk (mdadm -X)" "$(mdadm -X /dev/disk/by-id/$S2 | sed -n 's/ *Chunksize : //p')" "128 MB"
expect "hdd0 drive write cache (hdparm -W)" "$(wcache $H1)" 1
expect "hdd1 drive write cache (hdparm -W)" "$(wcache $H2)" 1
check "mdadm.conf lists md0 by UUID and device" grep -qx "ARRAY /dev/md0 metadata=1.2 UUID=$U0" /etc/mdadm/mdadm.conf
check "mdadm.conf lists md1 by UUID and device" grep -qx "ARRAY /dev/md1 metadata=1.2 UUID=$U1" /etc/mdadm/mdadm.conf
expect "vg0/data has a writecache (lvs)" "$(lvfield vg0/data segtype)" writecache
expect "the writecache's block is 512, under the ext4's 1 KiB (lvs)" "$(lvfield vg0/data writecache_block_size)" 512
expect "its cache volume is on the third SSD (lvs)" "$(lvs -a --noheadings -o devices vg0/data_wc_cvol | tr -d ' ')" "/dev/$(kname $WC)(0)"
expect "vg0/legacy untouched (lvs)" "$(lvfield vg0/legacy segtype)" raid1
expect "vg0/scratch_snap untouched (lvs)" "$(lvfield vg0/scratch_snap lv_attr | cut -c1)" s
same "the edit"
mdadm --wait /dev/md1 >/dev/null 2>&1
"$HY" observe --capture $OUT/capture-adopted.json -o /dev/null
expect "plan after apply exits 0" "$(hy_rc plan $F --detailed-exitcode)" 0
grep -q "No changes" /tmp/hy.out && ok "plan says No changes" || bad "plan output: $(cat /tmp/hy.out)"
umount /mnt/d
finish
