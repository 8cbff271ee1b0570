#!/bin/sh
# disks: d512:hdd:1G c512:ssd:256M d4k:hdd:1G:scsi:lbs=4096 c4k:ssd:256M:scsi:lbs=4096
# Writecache block size (issue 13 §5): on an LV with a filesystem, hyraid makes the filesystem
# first (4 KiB blocks; xfs with 4 KiB sectors) and attaches the writecache with
# `--cachesettings block_size=4096`, so lvconvert never warns "using a writecache block size
# larger than the file system block size may corrupt the file system". ext4 and xfs, on 512-byte
# and on 4Kn drives; checked with blockdev, blkid's BLOCK_SIZE, lvs writecache_block_size and
# apply's own output (every line a tool printed); data checksummed; the second plan is empty.
. /mnt/host/files/guest-lib.sh
resync_crawls   # nothing here waits for a resync
dev() { echo "/dev/$(lsblk -dno NAME,SERIAL | awk -v s="$1" '$2==s{print $1}')"; }
expect "512-byte drive (blockdev --getss)" "$(blockdev --getss "$(dev HYD512)")" 512
expect "4Kn drive (blockdev --getss)" "$(blockdev --getss "$(dev HYD4K)")" 4096
hy plan $CFG/wc-block-size.yaml; expect "plan exits 0" $? 0
n=$(grep -c -- '--cachesettings block_size=4096 ' /tmp/hy.out); expect "every attach names block_size=4096" "$n" 4
for vg in vg512 vg4k; do for lv in e x; do
    m=$(grep -n "mkfs.* /dev/$vg/$lv\$" /tmp/hy.out | head -1 | cut -d: -f1)
    a=$(grep -n "lvconvert --yes --type writecache .* $vg/$lv\$" /tmp/hy.out | head -1 | cut -d: -f1)
    [ -n "$m" ] && [ -n "$a" ] && [ "$m" -lt "$a" ] && ok "$vg/$lv: mkfs before the attach" || bad "$vg/$lv: order mkfs line $m, attach line $a"
done; done
hy apply $CFG/wc-block-size.yaml --yes; expect "apply exits 0" $? 0
grep -q "may corrupt the file system" /tmp/hy.out && bad "lvconvert warned: $(grep -m1 'may corrupt' /tmp/hy.out)" || ok "no block size warning in apply's output"
grep -q "unable to detect a file system block size" /tmp/hy.out && bad "lvconvert found no filesystem" || ok "lvconvert found every filesystem"
for vg in vg512 vg4k; do for lv in e x; do
    expect "$vg/$lv writecache_block_size (lvs)" "$(lvfield $vg/$lv writecache_block_size)" 4096
    expect "$vg/$lv BLOCK_SIZE (blkid)" "$(blkid -p -s BLOCK_SIZE -o value /dev/$vg/$lv)" 4096
done; done
expect "ext4 on 512 mounted (findmnt)" "$(findmnt -n -o FSTYPE /srv/e512)" ext4
expect "xfs on 4Kn mounted (findmnt)" "$(findmnt -n -o FSTYPE /srv/x4k)" xfs
for m in e512 x512 e4k x4k; do dd if=/dev/urandom of=/srv/$m/data bs=1M count=32 2>/dev/null; done; sync
S=$(cat /srv/e512/data /srv/x512/data /srv/e4k/data /srv/x4k/data | sha256sum | cut -d' ' -f1)
sync; echo 3 > /proc/sys/vm/drop_caches
expect "data intact through the writecaches (sha256)" "$(cat /srv/e512/data /srv/x512/data /srv/e4k/data /srv/x4k/data | sha256sum | cut -d' ' -f1)" "$S"
expect "plan after apply exits 0" "$(hy_rc plan $CFG/wc-block-size.yaml --detailed-exitcode)" 0
finish
