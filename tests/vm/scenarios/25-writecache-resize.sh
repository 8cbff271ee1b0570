#!/bin/sh
# disks: ssd1:ssd:1G hdd1:hdd:1G cache:ssd:512M
# A writecache resized with data on it, mounted: the plan shows the dirty amount lvs reports
# (used blocks x block size), apply detaches it (lvm2 writes the dirty blocks back first),
# removes the old cache volume, creates one of the new size and attaches it with the same
# settings; grown, then shrunk; the files read back the same and the next plan is empty.
. /mnt/host/files/guest-lib.sh
C=/tmp/c.yaml
sed 's/files: { size: 256MiB, pvs: \[data0\] }/files: { size: 384MiB, pvs: [data0], writecache: { size: 64MiB, pvs: [cache0], settings: { high_watermark: 90 } } }/' $CFG/pair.yaml > $C
hy apply $C --yes; expect "apply exits 0" $? 0
expect "LV has a writecache" "$(lvfield vg0/files segtype)" writecache
mkfs.ext4 -q -b 4096 /dev/vg0/files && mkdir -p /mnt/d && mount /dev/vg0/files /mnt/d
dd if=/dev/urandom of=/mnt/d/f bs=1M count=24 2>/dev/null; sync
SUM=$(sha256sum /mnt/d/f | cut -d' ' -f1)
same() { echo 3 > /proc/sys/vm/drop_caches; expect "file intact after $1" "$(sha256sum /mnt/d/f | cut -d' ' -f1)" "$SUM"; }
used() { lvs --noheadings -o writecache_total_blocks,writecache_free_blocks vg0/files | awk '{print $1-$2}'; }
U=$(used); say "writecache blocks in use before the resize: $U (lvs writecache_total_blocks - writecache_free_blocks)"
[ "$U" -gt 0 ] && ok "the cache holds dirty blocks ($U)" || bad "cache clean before the resize: $U"
dmsetup status vg0-files
sed -i 's/size: 64MiB, pvs: \[cache0\]/size: 128MiB, pvs: [cache0]/' $C
hy plan $C; expect "plan exits 0" $? 0
grep -q 'resize the writecache 64.00 MiB → 128.00 MiB: .* dirty (.* of .* blocks of 4096 B)' /tmp/hy.out && ok "plan shows the dirty amount" || bad "no dirty amount in the plan"
grep -q '\$ lvconvert --yes --splitcache vg0/files' /tmp/hy.out && ok "plan detaches (flushing) first" || bad "no splitcache"
grep -q '\$ lvcreate --yes -n files_wc -L 134217728b --addtag hyraid_cachevol vg0' /tmp/hy.out && ok "plan creates the new cache volume" || bad "no lvcreate"
hy apply $C --yes; expect "grow: apply exits 0" $? 0
expect "LV has a writecache again" "$(lvfield vg0/files segtype)" writecache
expect "new cache volume size (lvs -a)" "$(lvs -a --noheadings --units b --nosuffix -o lv_size vg0/files_wc_cvol | tr -d ' ')" 134217728
expect "settings kept (lvs cache_settings)" "$(lvfield vg0/files cache_settings)" high_watermark=90
expect "dm target (dmsetup status)" "$(dmsetup status vg0-files | awk '{print $3}')" writecache
lvs -a -o lv_name,segtype,lv_size,devices,cache_settings vg0
dd if=/dev/urandom of=/mnt/d/g bs=1M count=8 2>/dev/null; sync
G=$(sha256sum /mnt/d/g | cut -d' ' -f1)
same "growing the writecache"
sed -i 's/size: 128MiB, pvs: \[cache0\]/size: 32MiB, pvs: [cache0]/' $C
hy apply $C --yes; expect "shrink: apply exits 0" $? 0
expect "shrunk cache volume size (lvs -a)" "$(lvs -a --noheadings --units b --nosuffix -o lv_size vg0/files_wc_cvol | tr -d ' ')" 33554432
same "shrinking the writecache"
expect "second file intact" "$(sha256sum /mnt/d/g | cut -d' ' -f1)" "$G"
expect "plan after apply exits 0" "$(hy_rc plan $C --detailed-exitcode)" 0
umount /mnt/d
finish
