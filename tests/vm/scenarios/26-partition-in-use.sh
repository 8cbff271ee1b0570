#!/bin/sh
# disks: hdd1:hdd:2G
# Partition added to an in-use disk: hdd1's first partition (made by hand) holds a mounted ext4
# with data; the file adds a second partition beside it, which the kernel cannot re-read while
# the first is mounted: hyraid adds it with partx and makes it vg1's PV, the first stays mounted
# and its data intact. Then the file gives the PV partition the rest of the disk: growpart grows
# it, the kernel and LVM see the new size, and the next plan is empty.
. /mnt/host/files/guest-lib.sh
H=/dev/disk/by-id/ata-HYRAID_HDD_HYHDD1
sgdisk -n1:0:+512M -c1:data $H >/dev/null && udevadm settle
mkfs.ext4 -q $H-part1 && mkdir -p /mnt/data && mount $H-part1 /mnt/data
head -c 64M /dev/urandom > /mnt/data/blob && sync
SUM=$(sha256sum < /mnt/data/blob)
check "ext4 mounted from part1" mountpoint -q /mnt/data
K=$(kname ata-HYRAID_HDD_HYHDD1)

say "a partition added beside the mounted one"
hy plan $CFG/part-in-use.yaml; expect "plan exits 0" $? 0
grep -q "partx --add --nr 2 $H" /tmp/hy.out && ok "plan shows partx --add" || bad "plan lacks partx: $(cat /tmp/hy.out)"
hy apply $CFG/part-in-use.yaml --yes; expect "apply exits 0" $? 0
check "the kernel has partition 2 (sysfs)" test -e /sys/block/$K/${K}2
expect "partition 2 size (sysfs, sectors)" "$(cat /sys/block/$K/${K}2/size)" 1048576
expect "partition 2 is vg1's PV (pvs)" "$(pvs --noheadings -o vg_name "$(readlink -f $H-part2)" | tr -d ' ')" vg1
expect "scratch LV active (lvs)" "$(lvfield vg1/scratch lv_active)" active
check "part1 still mounted" mountpoint -q /mnt/data
expect "data on part1 intact (sha256)" "$(sha256sum < /mnt/data/blob)" "$SUM"
expect "second plan exits 0 (no changes)" "$(hy_rc plan $CFG/part-in-use.yaml --detailed-exitcode)" 0

say "the last partition grows into the rest of the disk"
hy plan $CFG/part-grow.yaml; expect "plan exits 0" $? 0
grep -q "growpart $H 2" /tmp/hy.out && ok "plan shows growpart" || bad "plan lacks growpart: $(cat /tmp/hy.out)"
hy apply $CFG/part-grow.yaml --yes; expect "apply exits 0" $? 0
# 4194304 sectors, last usable 4194270, partition 2 starts at 1050624.
expect "partition 2 grown (sysfs, sectors)" "$(cat /sys/block/$K/${K}2/size)" 3143647
expect "the table agrees (partx --show)" "$(partx --show --noheadings --output SECTORS --nr 2 $H | tr -d ' ')" 3143647
expect "PV size follows (pvs dev_size, bytes)" "$(pvs --noheadings --units b --nosuffix -o dev_size "$(readlink -f $H-part2)" | tr -d ' ')" $((3143647 * 512))
check "part1 still mounted" mountpoint -q /mnt/data
expect "data on part1 intact (sha256)" "$(sha256sum < /mnt/data/blob)" "$SUM"
expect "plan after grow exits 0 (no changes)" "$(hy_rc plan $CFG/part-grow.yaml --detailed-exitcode)" 0
finish
