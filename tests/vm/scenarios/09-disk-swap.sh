#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M cache:ssd:256M
# releases: bookworm trixie
# why both: a boot with a member gone (mdadm 4.4's udev rules leave the array inactive) and the
#   rebuild onto a new disk
# disks2: ssd1:ssd:512M hdd9:hdd:512M cache:ssd:256M
# boots: 2
# Boot 1 builds the pair; between boots the HDD is pulled and a blank disk goes into its bay
# (new serial HYHDD9); boot 2 applies the file with the new id: the mirror is rebuilt onto the
# new disk, which is write-mostly, and the data is intact. The same edit asks a larger bitmap
# chunk: md shows no bitmap for an array it has not started, so hyraid reads the members'
# superblocks, and the one plan starts the mirror, adds the disk and re-chunks the bitmap.
. /mnt/host/files/guest-lib.sh
if [ "$HYRAID_BOOT" = 1 ]; then
    hy apply $CFG/pair.yaml --yes; expect "apply exits 0" $? 0
    mkfs.ext4 -q /dev/vg0/files && mkdir -p /mnt/d && mount /dev/vg0/files /mnt/d
    dd if=/dev/urandom of=/mnt/d/f bs=1M count=32 2>/dev/null; sha256sum /mnt/d/f | cut -d" " -f1 > /root/sum
    umount /mnt/d; wait_idle data0; sync
    finish
fi
N=ata-HYRAID_HDD_HYHDD9
# The file names the new disk and, in the same edit, a larger bitmap chunk.
C=/tmp/swapped.yaml; sed 's/chunk: 64MiB/chunk: 128MiB/' $CFG/swapped.yaml > $C
check "after the swap udev assembled the mirror but did not start it" grep -q "inactive" /proc/mdstat
"$HY" observe --capture $OUT/capture-inactive.json -o /dev/null
hy plan $C; expect "plan exits 0" $? 0
grep -q "start it degraded" /tmp/hy.out && ok "plan starts the mirror degraded" || bad "no start step"
grep -q "add hdd0 (write-mostly)" /tmp/hy.out && ok "plan adds the new disk write-mostly" || bad "no add step"
grep -q -- "--bitmap=internal --bitmap-chunk=128M" /tmp/hy.out && ok "the same plan re-chunks the bitmap the members' superblocks told of" || bad "no bitmap step"
grep -q "checked once it runs" /tmp/hy.out && bad "the plan leaves the bitmap for later" || ok "nothing is left for after the start"
cp /tmp/hy.out $OUT/swap-plan.txt
hy apply $C --yes; expect "apply exits 0" $? 0
wait_idle data0
expect "bitmap chunk (sysfs)" "$(cat /sys/block/$(md data0)/md/bitmap/chunksize)" 134217728
check "the new disk is write-mostly (sysfs)" is_wm data0 $N
expect "the array is whole again (sysfs)" "$(cat /sys/block/$(md data0)/md/degraded)" 0
expect "new member in sync (mdadm --detail)" "$(mdadm --detail /dev/md/data0 | grep -c 'active sync writemostly')" 1
vgchange -ay vg0 >/dev/null 2>&1; mkdir -p /mnt/d && mount /dev/vg0/files /mnt/d
echo 3 > /proc/sys/vm/drop_caches
expect "data intact" "$(sha256sum /mnt/d/f | cut -d' ' -f1)" "$(cat /root/sum)"
umount /mnt/d
expect "plan after exits 0" "$(hy_rc plan $C --detailed-exitcode)" 0
finish
