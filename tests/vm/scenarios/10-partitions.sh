#!/bin/sh
# disks: ssd1:ssd:1536M hdd1:hdd:1536M ssd2:ssd:1536M hdd2:hdd:1536M
# Blank disks → GPT partitions by name → mirrors of partitions (HDD ones write-mostly) → LVM with
# a writecache on an SSD+SSD mirror; verified with lsblk/sgdisk/sysfs; then plan is empty.
. /mnt/host/files/guest-lib.sh
resync_crawls   # nothing here waits for a resync
hy apply $CFG/partitioned.yaml --yes; expect "apply exits 0" $? 0
for d in ata-HYRAID_SSD_HYSSD1 ata-HYRAID_SSD_HYSSD2; do
    expect "$d partition names (lsblk)" "$(lsblk -rno PARTLABEL /dev/disk/by-id/$d | grep . | tr '\n' ' ')" "raid cache "
    expect "$d partition 1 size (lsblk)" "$(lsblk -bdno SIZE /dev/disk/by-id/$d-part1)" 1073741824
    expect "$d partition 1 type Linux RAID (sgdisk)" "$(sgdisk -i 1 /dev/disk/by-id/$d | sed -n 's/^Partition GUID code: \([^ ]*\).*/\1/p')" A19D880F-05FC-4D3B-A006-743F0F84911E
done
expect "hdd0 partition names (lsblk)" "$(lsblk -rno PARTLABEL /dev/disk/by-id/ata-HYRAID_HDD_HYHDD1 | grep . | tr '\n' ' ')" "raid "
check "hdd0:raid is write-mostly in data0 (sysfs)" is_wm data0 ata-HYRAID_HDD_HYHDD1-part1
check "ssd0:raid is not write-mostly" sh -c "! grep -q write_mostly /sys/block/$(md data0)/md/dev-$(kname ata-HYRAID_SSD_HYSSD1-part1)/state"
expect "cache mirror members are the SSD cache partitions" "$(ls /sys/block/$(md cache)/md/ | grep -c '^dev-')" 2
expect "writecache on the cache mirror" "$(lvs -a --noheadings -o devices vg0/nextcloud_wc_cvol | tr -d ' ')" "/dev/$(md cache)(0)"
expect "plan after apply exits 0" "$(hy_rc plan $CFG/partitioned.yaml --detailed-exitcode)" 0
"$HY" observe --capture $OUT/capture-partitioned.json -o /dev/null
finish
