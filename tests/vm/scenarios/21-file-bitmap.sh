#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M bm1:ssd:256M
# Seed 004's box, built by hand: an md RAID1 of an SSD and a write-mostly HDD whose write-intent
# bitmap is a file (`--bitmap=/mnt/ssd/md0.bitmap`) on a filesystem on another disk, with an ext4
# on the array holding a checksummed file. Debian 12 (kernel 6.1, mdadm 4.2) still supports file
# bitmaps; the kernel deprecated them (MD_BITMAP_FILE) and mdadm 4.4 dropped the option.
# `hyraid import` writes a file naming the array with an internal bitmap of the same chunk, and
# says so; plan shows the conversion (wait for idle, --bitmap=none, --bitmap=internal); apply;
# checked with /proc/mdstat, sysfs bitmap/location and mdadm -X; the data is intact, the old
# bitmap file is left alone, the second plan is empty. The box's own ARRAY line named the bitmap
# file (`bitmap=`): it is rewritten without it, so the array still assembles from mdadm.conf
# once that file is deleted.
. /mnt/host/files/guest-lib.sh
S=/dev/disk/by-id/ata-HYRAID_SSD_HYSSD1; H=/dev/disk/by-id/ata-HYRAID_HDD_HYHDD1
B=/dev/disk/by-id/ata-HYRAID_SSD_HYBM1
F=/tmp/imported.yaml
BM=/mnt/ssd/md0.bitmap

say "hand-built, as seed 004: the bitmap in a file on the SSD's own filesystem"
mkfs.ext4 -q $B && mkdir -p /mnt/ssd && mount $B /mnt/ssd
check "bitmap filesystem mounted" mountpoint -q /mnt/ssd
mdadm --create /dev/md/data0 --run --quiet --level=1 --raid-devices=2 --metadata=1.2 \
    --bitmap=$BM --bitmap-chunk=1M $S --write-mostly $H
udevadm settle
mdadm --wait /dev/md/data0 >/dev/null 2>&1
check "the bitmap file exists" test -f $BM
expect "bitmap is a file (sysfs bitmap/location)" "$(cat /sys/block/$(md data0)/md/bitmap/location)" file
check "mdstat names the bitmap file" grep -q "1024KB chunk, file: $BM" /proc/mdstat
expect "file bitmap chunk (mdadm -X of the file)" "$(mdadm -X $BM | sed -n 's/ *Chunksize : //p')" "1 MB"
is_wm data0 ata-HYRAID_HDD_HYHDD1 && ok "the HDD is write-mostly (sysfs)" || bad "HDD state $(member_state data0 ata-HYRAID_HDD_HYHDD1)"
mkfs.ext4 -q /dev/md/data0 && mkdir -p /mnt/d && mount /dev/md/data0 /mnt/d
dd if=/dev/urandom of=/mnt/d/f bs=1M count=64 2>/dev/null; sync
SUM=$(sha256sum /mnt/d/f | cut -d' ' -f1)
same() { echo 3 > /proc/sys/vm/drop_caches; expect "file intact after $1" "$(sha256sum /mnt/d/f | cut -d' ' -f1)" "$SUM"; }
# The ARRAY line the box was built with, as seed 004's: it names the bitmap file.
U=$(mdadm --detail --export /dev/md/data0 | sed -n 's/^MD_UUID=//p')
echo "ARRAY /dev/md/data0 metadata=1.2 UUID=$U bitmap=$BM" >> /etc/mdadm/mdadm.conf
"$HY" observe --capture $OUT/capture-file-bitmap.json -o /dev/null

say "import"
"$HY" import -o $F 2>/tmp/import.err; expect "import exits 0" $? 0
cat /tmp/import.err; cat $F
grep -q "^  data0:" $F && ok "the array is imported as mirror data0" || bad "no mirror data0 in the file"
grep -q "chunk: 1MiB" $F && ok "the file asks for an internal bitmap of the same chunk" || bad "no 1MiB chunk in the file"
grep -q "its bitmap is in the file $BM" $F && ok "the file says the bitmap is converted" || bad "no word on the conversion in the file"
grep -q "not imported: /dev/md/data0" /tmp/import.err && bad "data0 left out" || ok "data0 not left out"
hy validate $F; expect "the imported file validates" $? 0

say "plan: the conversion"
hy plan $F; expect "plan exits 0" $? 0
none=$(grep -n '\$ mdadm --grow /dev/md/data0 --bitmap=none' /tmp/hy.out | cut -d: -f1)
int=$(grep -n '\$ mdadm --grow /dev/md/data0 --bitmap=internal --bitmap-chunk=1M' /tmp/hy.out | cut -d: -f1)
[ -n "$none" ] && [ -n "$int" ] && [ "$none" -lt "$int" ] && ok "--bitmap=none, then --bitmap=internal of 1M" || bad "order: none line $none, internal line $int"
grep -q "wait for resync" /tmp/hy.out && ok "the plan waits for idle first" || bad "no wait step"
grep -q "in the file $BM" /tmp/hy.out && ok "the plan names the bitmap file" || bad "no bitmap file in the plan"
grep -q "can be deleted by hand" /tmp/hy.out && ok "the plan says the old file can be deleted by hand" || bad "no note on the old file"

say "apply"
hy apply $F --yes; expect "apply exits 0" $? 0
loc=$(cat /sys/block/$(md data0)/md/bitmap/location)
case "$loc" in +*) ok "bitmap is internal (sysfs bitmap/location $loc)";; *) bad "bitmap/location: $loc";; esac
expect "bitmap chunk (sysfs)" "$(bitmap_chunk data0)" 1048576
check "mdstat shows the bitmap without a file" sh -c "grep -A3 '^$(md data0) ' /proc/mdstat | grep -q 'bitmap: .*1024KB chunk\$'"
check "mdstat names no bitmap file any more" sh -c "! grep -q 'file: $BM' /proc/mdstat"
expect "internal bitmap chunk (mdadm -X of the HDD)" "$(mdadm -X $H | sed -n 's/ *Chunksize : //p')" "1 MB"
expect "internal bitmap chunk (mdadm -X of the SSD)" "$(mdadm -X $S | sed -n 's/ *Chunksize : //p')" "1 MB"
is_wm data0 ata-HYRAID_HDD_HYHDD1 && ok "the HDD is still write-mostly (sysfs)" || bad "HDD state $(member_state data0 ata-HYRAID_HDD_HYHDD1)"
check "the old bitmap file is left alone" test -f $BM
check "mdadm.conf names no bitmap file any more" sh -c "! grep -q 'bitmap=' /etc/mdadm/mdadm.conf"
check "mdadm.conf lists the array by its UUID" grep -q "UUID=$U" /etc/mdadm/mdadm.conf
same "the conversion"
"$HY" observe --capture $OUT/capture-file-bitmap-converted.json -o /dev/null
expect "plan after apply exits 0" "$(hy_rc plan $F --detailed-exitcode)" 0
grep -q "No changes" /tmp/hy.out && ok "plan says No changes" || bad "plan output: $(cat /tmp/hy.out)"

say "the old bitmap file deleted, as the plan says it may be: the array assembles from mdadm.conf"
umount /mnt/d
rm -f $BM
mdadm --stop /dev/md/data0 >/dev/null 2>&1
mdadm --assemble --scan > /tmp/asm.out 2>&1; cat /tmp/asm.out
udevadm settle
st=$(cat /sys/block/$(md data0)/md/array_state 2>/dev/null)
case "$st" in clean|active|read-auto) ok "the array assembles and runs (array_state $st)";; *) bad "array_state after assembly: '$st'";; esac
grep -q "Could not open bitmap file" /tmp/asm.out && bad "mdadm looked for the bitmap file" || ok "mdadm did not look for the bitmap file"
mount /dev/md/data0 /mnt/d && same "assembly from mdadm.conf"
umount /mnt/d
finish
