#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M cache:ssd:256M
# Caches with data on the LV, mounted. dm-cache: attached writethrough on the cache SSD
# (`lvconvert --type cache --cachevol`), checked with lvs -a and dmsetup, more data written,
# flushed and detached (`--splitcache`), the cache volume removed. Writecache resize: the plan
# shows the dirty amount lvs reports (used blocks x block size), apply detaches it (lvm2 writes
# the dirty blocks back first), removes the old cache volume, creates one of the new size and
# attaches it with the same settings; grown, then shrunk. The files read back the same after
# every change and the next plan is empty.
. /mnt/host/files/guest-lib.sh
resync_crawls   # nothing here waits for a resync
C=/tmp/c.yaml
sed 's/files: { size: 256MiB, pvs: \[data0\] }/files: { size: 384MiB, pvs: [data0] }/' $CFG/pair.yaml > $C
hy apply $C --yes; expect "apply exits 0" $? 0
mkfs.ext4 -q -b 4096 /dev/vg0/files && mkdir -p /mnt/d && mount /dev/vg0/files /mnt/d
dd if=/dev/urandom of=/mnt/d/f bs=1M count=24 2>/dev/null; sync
SUM=$(sha256sum /mnt/d/f | cut -d' ' -f1)
same() { echo 3 > /proc/sys/vm/drop_caches; expect "file intact after $1" "$(sha256sum /mnt/d/f | cut -d' ' -f1)" "$SUM"; }
say "dm-cache writethrough attach"
sed -i 's/files: { size: 384MiB, pvs: \[data0\] }/files: { size: 384MiB, pvs: [data0], cache: { mode: writethrough, size: 64MiB, pvs: [cache0] } }/' $C
hy plan $C; expect "plan exits 0" $? 0
grep -q '\$ lvconvert --yes --type cache --cachevol files_cache --cachemode writethrough vg0/files' /tmp/hy.out && ok "plan attaches the dm-cache" || bad "no lvconvert --type cache"
hy apply $C --yes; expect "dm-cache attach (mounted): apply exits 0" $? 0
lvs -a -o+cache_mode,segtype,devices vg0
expect "LV is a cache LV (lvs segtype)" "$(lvfield vg0/files segtype)" cache
expect "cache mode (lvs cache_mode)" "$(lvfield vg0/files cache_mode)" writethrough
expect "hidden cache volume (lvs -a)" "$(lvs -a --noheadings -o lv_name vg0 | tr -d ' ' | grep -c '^\[files_cache_cvol\]$')" 1
expect "hidden origin (lvs -a)" "$(lvs -a --noheadings -o lv_name vg0 | tr -d ' ' | grep -c '^\[files_corig\]$')" 1
dmsetup status vg0-files
expect "dm target (dmsetup status)" "$(dmsetup status vg0-files | awk '{print $3}')" cache
dmsetup status vg0-files | grep -qw writethrough && ok "dm-cache runs writethrough (dmsetup status features)" || bad "no writethrough in dmsetup status"
dd if=/dev/urandom of=/mnt/d/h bs=1M count=8 2>/dev/null; sync
HS=$(sha256sum /mnt/d/h | cut -d' ' -f1)
same "attaching the dm-cache"
hy status $C; grep -q "dm-cache writethrough:" /tmp/hy.out && ok "status shows the dm-cache mode and blocks" || bad "status has no dm-cache line"
expect "plan after attach exits 0" "$(hy_rc plan $C --detailed-exitcode)" 0
say "dm-cache detach"
sed -i 's/, cache: { mode: writethrough, size: 64MiB, pvs: \[cache0\] }//' $C
hy apply $C --yes; expect "dm-cache detach: apply exits 0" $? 0
expect "LV is linear again" "$(lvfield vg0/files segtype)" linear
check "hyraid's cache volume removed" sh -c '! lvs vg0/files_cache'
same "detaching the dm-cache"
echo 3 > /proc/sys/vm/drop_caches
expect "file written under the cache intact" "$(sha256sum /mnt/d/h | cut -d' ' -f1)" "$HS"
expect "plan after detach exits 0" "$(hy_rc plan $C --detailed-exitcode)" 0
say "writecache resize"
sed -i 's/files: { size: 384MiB, pvs: \[data0\] }/files: { size: 384MiB, pvs: [data0], writecache: { size: 64MiB, pvs: [cache0], settings: { high_watermark: 90 } } }/' $C
hy apply $C --yes; expect "writecache attach: apply exits 0" $? 0
expect "LV has a writecache" "$(lvfield vg0/files segtype)" writecache
dd if=/dev/urandom of=/mnt/d/w bs=1M count=16 2>/dev/null; sync
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
