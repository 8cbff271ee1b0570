#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M
# An array assembled auto-read-only (as after boot) with a resync pending, and no bitmap: hyraid
# makes it read-write first (`mdadm --readwrite`), waits for the resync that then starts, and
# only then adds the bitmap. Before, `mdadm --grow --bitmap=internal` failed on every re-run.
. /mnt/host/files/guest-lib.sh
S=/dev/disk/by-id/ata-HYRAID_SSD_HYSSD1; H=/dev/disk/by-id/ata-HYRAID_HDD_HYHDD1
echo 1000 > /proc/sys/dev/raid/speed_limit_max
mdadm --create /dev/md/data0 --run --quiet --level=1 --raid-devices=2 --metadata=1.2 --bitmap=none $S $H
sleep 2
mdadm --stop /dev/md/data0 >/dev/null 2>&1
echo 1 > /sys/module/md_mod/parameters/start_ro
mdadm --assemble /dev/md/data0 $S $H >/dev/null 2>&1
udevadm settle
expect "array is auto-read-only (sysfs)" "$(cat /sys/block/$(md data0)/md/array_state)" read-auto
check "a resync is pending (/proc/mdstat)" grep -q "resync=PENDING" /proc/mdstat
check "no bitmap (sysfs)" sh -c "[ \"\$(cat /sys/block/$(md data0)/md/bitmap/location 2>/dev/null || echo none)\" = none ]"
echo 200000 > /proc/sys/dev/raid/speed_limit_max
hy plan $CFG/read-auto.yaml; expect "plan exits 0" $? 0
grep -q '\$ mdadm --readwrite /dev/md/data0' /tmp/hy.out && ok "plan switches the array read-write first" || bad "no --readwrite: $(cat /tmp/hy.out)"
rw=$(grep -n 'mdadm --readwrite' /tmp/hy.out | cut -d: -f1); add=$(grep -n 'bitmap=internal' /tmp/hy.out | cut -d: -f1)
[ -n "$rw" ] && [ -n "$add" ] && [ "$rw" -lt "$add" ] && ok "read-write comes before the bitmap" || bad "order: readwrite line $rw, bitmap line $add"
grep -q "wait for resync" /tmp/hy.out && ok "the plan waits for the resync" || bad "no wait step"
hy apply $CFG/read-auto.yaml --yes; expect "apply exits 0" $? 0
check "apply waited for the resync" grep -q "idle now\|data0: idle" /tmp/hy.out
expect "bitmap chunk (sysfs)" "$(bitmap_chunk data0)" 67108864
expect "bitmap chunk (mdadm -X)" "$(mdadm -X $H | sed -n 's/ *Chunksize : //p')" "64 MB"
check "no longer auto-read-only" sh -c "[ \"\$(cat /sys/block/$(md data0)/md/array_state)\" != read-auto ]"
expect "plan after apply exits 0" "$(hy_rc plan $CFG/read-auto.yaml --detailed-exitcode)" 0
finish
