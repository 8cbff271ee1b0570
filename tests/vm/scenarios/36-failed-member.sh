#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M
# releases: bookworm trixie
# why both: how kernel 6.12's md fails a member on I/O errors and shows a deleted SCSI device
# A member md fails on its own, for I/O errors (the HDD's SCSI device set offline, then a
# write): status and plan agree that it failed, plan refuses to put it back (exit 1, never
# "matches the file"), and only `--re-add hdd0` does, as a marked step. Then the HDD is pulled
# (its SCSI device deleted): plan refuses the missing disk, status says degraded and does not
# blame write-behind on the file; rescanned, it goes back only on `--re-add`.
. /mnt/host/files/guest-lib.sh
H=ata-HYRAID_HDD_HYHDD1
C=$CFG/failed-member.yaml

hy apply $C --yes; expect "build: apply exits 0" $? 0
wait_idle data0
check "the HDD is write-mostly (sysfs)" is_wm data0 $H
K=$(kname $H)

say "md fails the HDD for I/O errors"
echo offline > /sys/block/$K/device/state
dd if=/dev/urandom of=/dev/vg0/files bs=1M count=8 oflag=direct 2>/dev/null; sync
for i in 1 2 3 4 5 6 7 8 9 10; do member_state data0 $H | grep -q faulty && break; sleep 1; done
expect "md marked the HDD faulty (sysfs)" "$(member_state data0 $H | cut -d, -f1)" faulty
echo running > /sys/block/$K/device/state
"$HY" observe --capture $OUT/capture-md-failed.json -o /dev/null
hy status $C; expect "status exits 2 (degraded)" $? 2
grep -q "has failed" /tmp/hy.out && ok "status says the member failed" || bad "status: no failed member"
grep -q "write-behind is set" /tmp/hy.out && bad "status blames write-behind on the file" || ok "no write-behind lint while a member failed"
hy plan $C --detailed-exitcode; expect "plan refuses (exit 1)" $? 1
grep -q "matches the file" /tmp/hy.out && bad "plan says it matches the file" || ok "plan does not say it matches"
grep -q "member hdd0 .* has failed" /tmp/hy.out && ok "plan says the member failed" || bad "plan: no failed member"
grep -q -- "--re-add hdd0" /tmp/hy.out && ok "plan names --re-add hdd0 as the explicit way back" || bad "no --re-add in the fix"
hy plan $C --format shell; grep -q -- "mdadm .*--re-add" /tmp/hy.out && bad "the script re-adds it unasked" || ok "no re-add command unasked"
hy apply $C --yes; expect "apply refuses (exit 1)" $? 1
expect "the HDD is still faulty (sysfs)" "$(member_state data0 $H | cut -d, -f1)" faulty
hy plan $C --re-add hdd0; expect "plan --re-add hdd0 exits 0" $? 0
grep -q "data-at-risk" /tmp/hy.out && ok "the re-add step is marked" || bad "re-add not marked"
grep -q "transient" /tmp/hy.out && ok "the step says when it is right" || bad "no word on a transient cause"
hy apply $C --re-add hdd0 --yes; expect "apply --re-add hdd0 exits 0" $? 0
wait_idle data0
expect "the array is whole again (sysfs)" "$(cat /sys/block/$(md data0)/md/degraded)" 0
check "the HDD is write-mostly again (sysfs)" is_wm data0 $H
expect "plan after exits 0" "$(hy_rc plan $C --detailed-exitcode)" 0

say "the HDD is pulled"
HOST=$(readlink -f /sys/block/$K/device | sed -n 's|.*/\(host[0-9]*\)/.*|\1|p')
echo 1 > /sys/block/$K/device/delete; udevadm settle
dd if=/dev/urandom of=/dev/vg0/files bs=1M count=4 oflag=direct 2>/dev/null; sync
for i in 1 2 3 4 5 6 7 8 9 10; do [ "$(cat /sys/block/$(md data0)/md/degraded)" = 1 ] && break; sleep 1; done
expect "the array is degraded (sysfs)" "$(cat /sys/block/$(md data0)/md/degraded)" 1
check "the HDD's by-id link is gone" test ! -e /dev/disk/by-id/$H
"$HY" observe --capture $OUT/capture-hdd-gone.json -o /dev/null
hy plan $C --detailed-exitcode; expect "plan refuses (exit 1)" $? 1
grep -q "disk \`hdd0\` .* is not on this machine" /tmp/hy.out && ok "plan says the disk is not on the machine" || bad "plan: no missing disk"
grep -q "matches the file" /tmp/hy.out && bad "plan says it matches the file" || ok "plan does not say it matches"
hy status $C; expect "status exits 1 (a disk the file names is missing)" $? 1
expect "status names the missing disk once" "$(grep -c "disk hdd0:" /tmp/hy.out)" 1
grep -q "write-behind is set" /tmp/hy.out && bad "status blames write-behind on the file" || ok "no write-behind lint while the HDD is gone"

say "the HDD is back (SCSI rescan)"
echo "- - -" > /sys/class/scsi_host/$HOST/scan; udevadm settle; sleep 2; udevadm settle
check "the HDD's by-id link is back" test -e /dev/disk/by-id/$H
if member_state data0 $H >/dev/null 2>&1; then
    ok "udev's incremental assembly took the HDD back itself (mdadm POLICY)"
else
    hy plan $C; expect "plan refuses the returning disk (exit 1)" $? 1
    grep -q "member hdd0 .* left the array" /tmp/hy.out && ok "plan says it left the array" || bad "plan: nothing on the returning disk"
    hy apply $C --re-add hdd0 --yes; expect "apply --re-add hdd0 exits 0" $? 0
fi
wait_idle data0
expect "the array is whole again (sysfs)" "$(cat /sys/block/$(md data0)/md/degraded)" 0
check "the HDD is write-mostly (sysfs)" is_wm data0 $H
expect "plan after exits 0" "$(hy_rc plan $C --detailed-exitcode)" 0
finish
