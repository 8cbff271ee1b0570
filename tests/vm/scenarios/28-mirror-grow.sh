#!/bin/sh
# disks: hdd1:hdd:1G hdd2:hdd:1G
# Mirror grow: a mirror of two 512 MiB partitions, one per HDD, with an internal bitmap, LVM and
# an ext4 LV holding a checksummed file; the file then gives both partitions the rest of the
# disk: growpart on each (the kernel's view follows), `mdadm --grow --size=max`, a wait for the
# resync of the new region, `pvresize`. Checked with sysfs (partition size, component_size,
# sync_action), mdadm --detail, pvs and the file's checksum; the plan after apply is empty.
. /mnt/host/files/guest-lib.sh
H1=/dev/disk/by-id/ata-HYRAID_HDD_HYHDD1; H2=/dev/disk/by-id/ata-HYRAID_HDD_HYHDD2
K1=$(kname ata-HYRAID_HDD_HYHDD1); K2=$(kname ata-HYRAID_HDD_HYHDD2)
comp() { cat "/sys/block/$(md data0)/md/component_size"; }
psize() { cat "/sys/block/$1/${1}1/size"; }

say "a mirror of two partitions with LVM and data"
hy apply $CFG/mgrow-small.yaml --yes; expect "apply exits 0" $? 0
wait_idle data0
mkfs.ext4 -q /dev/vg0/files && mkdir -p /mnt/f && mount /dev/vg0/files /mnt/f
dd if=/dev/urandom of=/mnt/f/data bs=1M count=64 2>/dev/null; sync
SUM=$(sha256sum /mnt/f/data | cut -d' ' -f1)
OLD=$(comp)
echo "component_size before: $OLD KiB; mdadm --detail:"; mdadm --detail /dev/md/data0 | grep -E "Array Size|Used Dev Size|Intent Bitmap"
expect "partition 1 of hdd1 (sysfs, sectors)" "$(psize $K1)" 1048576

say "the file gives both partitions the rest of their disks"
hy plan $CFG/mgrow-rest.yaml; expect "plan exits 0" $? 0
grep -q "growpart $H1 1" /tmp/hy.out && ok "plan grows hdd1's partition" || bad "no growpart of hdd1"
grep -q "growpart $H2 1" /tmp/hy.out && ok "plan grows hdd2's partition" || bad "no growpart of hdd2"
grep -q -- "mdadm --grow /dev/md/data0 --size=max" /tmp/hy.out && ok "plan grows the array" || bad "no --grow --size=max"
grep -q "wait for resync" /tmp/hy.out && ok "plan waits for the resync" || bad "no wait step"
grep -q "pvresize /dev/md/data0" /tmp/hy.out && ok "plan resizes the PV" || bad "no pvresize"
hy apply $CFG/mgrow-rest.yaml --yes; expect "apply exits 0" $? 0
# 2097152 sectors, last usable 2097118, the partitions start at 2048.
expect "hdd1's partition grown (sysfs, sectors)" "$(psize $K1)" 2095071
expect "hdd2's partition grown (sysfs, sectors)" "$(psize $K2)" 2095071
OFF=$(cat "/sys/block/$(md data0)/md/dev-${K1}1/offset")
expect "component_size: the partition after the data offset (sysfs, KiB)" "$(comp)" $(( (2095071 - OFF) / 2 ))
expect "Used Dev Size follows (mdadm --detail, KiB)" "$(mdadm --detail /dev/md/data0 | sed -n 's/^ *Used Dev Size : \([0-9]*\).*/\1/p')" "$(comp)"
expect "Array Size follows (mdadm --detail, KiB)" "$(mdadm --detail /dev/md/data0 | sed -n 's/^ *Array Size : \([0-9]*\).*/\1/p')" "$(comp)"
mdadm --detail /dev/md/data0 | grep -E "Array Size|Used Dev Size|Intent Bitmap|State :"
expect "idle after the wait (sysfs sync_action)" "$(cat /sys/block/$(md data0)/md/sync_action)" idle
check "[2/2] [UU] (/proc/mdstat)" grep -q "\[2/2\] \[UU\]" /proc/mdstat
# The array's size is in sectors (mdadm's KiB are rounded down): compare with the kernel's.
expect "the PV takes the array (pvs dev_size = blockdev --getsize64, bytes)" "$(pvs --noheadings --units b --nosuffix -o dev_size "$(readlink -f /dev/md/data0)" | tr -d ' ')" "$(blockdev --getsize64 /dev/md/data0)"
pvs -o pv_name,pv_size,pv_free,dev_size "$(readlink -f /dev/md/data0)"
check "ext4 still mounted" mountpoint -q /mnt/f
sync; echo 3 > /proc/sys/vm/drop_caches
expect "file intact after the grow (sha256)" "$(sha256sum /mnt/f/data | cut -d' ' -f1)" "$SUM"
expect "plan after apply exits 0 (no changes)" "$(hy_rc plan $CFG/mgrow-rest.yaml --detailed-exitcode)" 0
echo "mdadm -X of a member:"; mdadm -X "$H1-part1" | grep -E "Chunksize|Sync Size|Bitmap"
finish
