#!/bin/sh
# disks: ssd1:ssd:384M hdd1:hdd:384M ssd2:ssd:384M hdd2:hdd:384M cache:ssd:192M
# releases: bookworm trixie
# why both: mdadm 4.4 makes the arrays and lvm2 2.03.31 the VG, LVs and writecache; lsblk 2.41 and
#   udev 257 name what they made
# Blank 2 SSD + 2 HDD + cache SSD → apply the microserver layout → verify with the kernel and
# the tools themselves → plan has nothing left.
. /mnt/host/files/guest-lib.sh
H1=ata-HYRAID_HDD_HYHDD1; H2=ata-HYRAID_HDD_HYHDD2; S1=ata-HYRAID_SSD_HYSSD1; S2=ata-HYRAID_SSD_HYSSD2
hdparm -W0 /dev/disk/by-id/$H1 /dev/disk/by-id/$H2 >/dev/null
"$HY" observe --capture $OUT/capture-blank.json -o /dev/null
expect "rotational flags as QEMU set them" "$(cat /sys/block/$(kname $S1)/queue/rotational)$(cat /sys/block/$(kname $H1)/queue/rotational)" 01
expect "plan on the blank machine exits 2" "$(hy_rc plan $CFG/microserver.yaml --detailed-exitcode)" 2
hy apply $CFG/microserver.yaml --yes; expect "apply exits 0" $? 0
check "/dev/md/data0 exists" test -b /dev/md/data0
check "/dev/md/data1 exists" test -b /dev/md/data1
check "hdd0 is write-mostly (sysfs)" is_wm data0 $H1
check "hdd1 is write-mostly (sysfs)" is_wm data1 $H2
expect "ssd0 state (sysfs)" "$(member_state data0 $S1)" in_sync
expect "ssd1 state (sysfs)" "$(member_state data1 $S2)" in_sync
check "hdd0 write-mostly in its superblock (mdadm --examine)" sh -c "mdadm --examine /dev/disk/by-id/$H1 | grep -q 'Flags : write-mostly'"
expect "data0 bitmap chunk (sysfs)" "$(bitmap_chunk data0)" 67108864
expect "data0 bitmap chunk (mdadm -X)" "$(mdadm -X /dev/disk/by-id/$H1 | sed -n 's/ *Chunksize : //p')" "64 MB"
expect "data1 write-behind (sysfs)" "$(backlog data1)" 256
expect "data1 write-behind (mdadm -X)" "$(mdadm -X /dev/disk/by-id/$H2 | sed -n 's/ *Write Mode : //p')" "Allow write behind, max 256"
expect "data0 write-behind (sysfs)" "$(backlog data0)" 0
expect "hdd0 drive write cache (hdparm -W)" "$(wcache $H1)" 1
expect "hdd1 drive write cache (hdparm -W)" "$(wcache $H2)" 1
expect "VG PVs" "$(vgs --noheadings -o pv_count vg0 | tr -d ' ')" 3
expect "LV segment type" "$(lvfield vg0/nextcloud segtype)" writecache
expect "LV size" "$(lvs --noheadings --units b --nosuffix -o lv_size vg0/nextcloud | tr -d ' ')" 536870912
expect "origin striped over 2" "$(lvs -a --noheadings -o stripes vg0/nextcloud_wcorig | tr -d ' ')" 2
expect "writecache settings" "$(lvs --noheadings -o cache_settings vg0/nextcloud | tr -d ' ')" "high_watermark=50,writeback_jobs=1024"
expect "cache volume on the cache SSD" "$(lvs -a --noheadings -o devices vg0/nextcloud_wc_cvol | tr -d ' ')" "/dev/$(kname ata-HYRAID_SSD_HYCACHE)(0)"
expect "plan after apply exits 0" "$(hy_rc plan $CFG/microserver.yaml --detailed-exitcode)" 0
grep -q "No changes" /tmp/hy.out && ok "plan says No changes" || bad "plan output: $(cat /tmp/hy.out)"
wait_idle data0 data1
"$HY" observe --capture $OUT/capture-built.json -o /dev/null
expect "plan after the resync still exits 0" "$(hy_rc plan $CFG/microserver.yaml --detailed-exitcode)" 0
finish
