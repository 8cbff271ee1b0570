#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M cache:ssd:256M
# A known file on the LV survives: LV growth, writecache attach and detach (mounted), bitmap
# re-chunk, and the HDD member failing and being rebuilt (then read back from the HDD alone); while
# md rebuilds, apply and plan say the mirror is not yet as the file says (plan exits 2), then 0.
. /mnt/host/files/guest-lib.sh
H=ata-HYRAID_HDD_HYHDD1; S=ata-HYRAID_SSD_HYSSD1
C=/tmp/c.yaml; cp $CFG/pair.yaml $C
hy apply $C --yes; expect "apply exits 0" $? 0
mkfs.ext4 -q /dev/vg0/files && mkdir -p /mnt/d && mount /dev/vg0/files /mnt/d
dd if=/dev/urandom of=/mnt/d/f bs=1M count=48 2>/dev/null; sync
SUM=$(sha256sum /mnt/d/f | cut -d' ' -f1)
same() { echo 3 > /proc/sys/vm/drop_caches; expect "file intact after $1" "$(sha256sum /mnt/d/f | cut -d' ' -f1)" "$SUM"; }
sed -i 's/size: 256MiB/size: 384MiB/' $C
hy apply $C --yes; expect "grow: apply exits 0" $? 0
expect "LV grown" "$(lvs --noheadings --units b --nosuffix -o lv_size vg0/files | tr -d ' ')" 402653184
resize2fs -f /dev/vg0/files >/dev/null 2>&1; same "growing the LV"
sed -i 's/files: { size: 384MiB, pvs: \[data0\] }/files: { size: 384MiB, pvs: [data0], writecache: { size: 64MiB, pvs: [cache0] } }/' $C
hy apply $C --yes; expect "writecache attach (mounted): apply exits 0" $? 0
expect "LV has a writecache" "$(lvfield vg0/files segtype)" writecache
dd if=/dev/urandom of=/mnt/d/g bs=1M count=8 2>/dev/null; sync; same "attaching a writecache"
sed -i 's/chunk: 64MiB/chunk: 128MiB/' $C
hy apply $C --yes; expect "bitmap re-chunk: apply exits 0" $? 0
expect "bitmap chunk (sysfs)" "$(bitmap_chunk data0)" 134217728
same "re-chunking the bitmap"
sed -i 's/, writecache: { size: 64MiB, pvs: \[cache0\] }//' $C
hy apply $C --yes; expect "writecache detach: apply exits 0" $? 0
expect "LV is linear again" "$(lvfield vg0/files segtype)" linear
check "hyraid's cache volume removed" sh -c '! lvs vg0/files_wc'
same "detaching the writecache"
say "the HDD member fails and is replaced by a blank disk in the same slot"
wait_idle data0
mdadm /dev/md/data0 --fail /dev/disk/by-id/$H >/dev/null 2>&1; mdadm /dev/md/data0 --remove /dev/disk/by-id/$H >/dev/null 2>&1
mdadm --zero-superblock /dev/disk/by-id/$H; wipefs -a -q /dev/disk/by-id/$H; udevadm settle
expect "array degraded (sysfs)" "$(cat /sys/block/$(md data0)/md/degraded)" 1
"$HY" observe --capture $OUT/capture-degraded.json -o /dev/null
hy plan $C; grep -q "add hdd0 (write-mostly)" /tmp/hy.out && ok "plan adds the HDD back write-mostly" || bad "no add step"
# md rebuilds at 1 MiB/s while plan looks: the recovery is still running, deterministically.
MD=$(md data0); echo 1024 > /sys/block/$MD/md/sync_speed_max
hy apply $C --yes; expect "rebuild: apply exits 0" $? 0
grep -q -E "nothing is left to change, but the machine is not yet as the file says: mirror data0: md (is rebuilding|has yet to rebuild) hdd0" /tmp/hy.out \
    && ok "apply says the mirror is still rebuilding, not that it matches" || bad "apply: $(tail -1 /tmp/hy.out)"
"$HY" observe --capture $OUT/capture-recovering.json -o /dev/null
expect "plan --detailed-exitcode while md rebuilds exits 2" "$(hy_rc plan $C --detailed-exitcode)" 2
grep -q "not yet as the file says" /tmp/hy.out && ! grep -q "matches the file" /tmp/hy.out \
    && ok "the plan's headline says the mirror is rebuilding ($(grep -o 'recover, [0-9.]*% done' /tmp/hy.out))" || bad "plan headline: $(head -3 /tmp/hy.out)"
echo system > /sys/block/$MD/md/sync_speed_max
wait_idle data0
expect "plan --detailed-exitcode once rebuilt exits 0" "$(hy_rc plan $C --detailed-exitcode)" 0
check "rebuilt member is write-mostly (sysfs)" is_wm data0 $H
expect "array healthy (sysfs)" "$(cat /sys/block/$(md data0)/md/degraded)" 0
same "rebuilding the HDD member"
say "read the file with the SSD failed: every byte now comes from the HDD"
mdadm /dev/md/data0 --fail /dev/disk/by-id/$S >/dev/null 2>&1
expect "SSD failed (sysfs)" "$(member_state data0 $S | cut -d, -f1)" faulty
same "failing the SSD (HDD copy)"
umount /mnt/d
finish
