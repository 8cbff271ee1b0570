#!/bin/sh
# disks: ssd1:ssd:1G hdd1:hdd:1G
# Filesystems on LVs (issue 13 §1): an ext4 and an xfs LV on a mirror, made by hyraid with the
# UUID the plan showed, listed in hyraid's block of /etc/fstab and mounted. Data is written and
# checksummed; the file then grows both LVs and apply grows the filesystems while they stay
# mounted (resize2fs online, xfs_growfs), after an lvextend run by hand as an apply killed
# between the two commands leaves it. Checked with blkid, findmnt, df, dumpe2fs and xfs_info;
# the second plan is empty. Then the ext4 shrinks (refused below resize2fs -P's minimum and
# without --allow-destroy; with it: unmounted, checked, resized, lvreduce, mounted again, data
# intact) and an xfs shrink is refused.
. /mnt/host/files/guest-lib.sh
fsbytes() { df -B1 --output=size "$1" | tail -1 | tr -d ' '; }
blocks_ext4() { dumpe2fs -h /dev/vg0/files 2>/dev/null | sed -n 's/^Block count: *//p'; }
blocks_xfs() { xfs_info /srv/media | sed -n 's/^data *= *bsize=[0-9]* *blocks=\([0-9]*\),.*/\1/p'; }
[ -f /etc/fstab ] && cp /etc/fstab /tmp/fstab.before || : > /tmp/fstab.before

say "an ext4 and an xfs LV, made and mounted"
hy plan $CFG/fs.yaml; expect "plan exits 0" $? 0
U1=$(sed -n 's/.*mkfs.ext4 -b 4096 -U \([0-9a-f-]*\) -L files .*/\1/p' /tmp/hy.out)
U2=$(sed -n 's/.*mkfs.xfs -b size=4096 -s size=4096 -m uuid=\([0-9a-f-]*\) -L media .*/\1/p' /tmp/hy.out)
[ -n "$U1" ] && [ -n "$U2" ] && ok "plan names both UUIDs ($U1, $U2)" || bad "no mkfs with a UUID in the plan"
grep -q "+UUID=$U1 /srv/files ext4 noatime 0 2" /tmp/hy.out && ok "plan shows the ext4 fstab line" || bad "no ext4 fstab line in the diff"
grep -q "+UUID=$U2 /srv/media xfs defaults 0 0" /tmp/hy.out && ok "plan shows the xfs fstab line" || bad "no xfs fstab line in the diff"
hy apply $CFG/fs.yaml --yes; expect "apply exits 0" $? 0
expect "ext4 UUID (blkid)" "$(blkid -p -s UUID -o value /dev/vg0/files)" "$U1"
expect "xfs UUID (blkid)" "$(blkid -p -s UUID -o value /dev/vg0/media)" "$U2"
expect "ext4 label (blkid)" "$(blkid -p -s LABEL -o value /dev/vg0/files)" files
expect "xfs label (blkid)" "$(blkid -p -s LABEL -o value /dev/vg0/media)" media
expect "ext4 block size (dumpe2fs)" "$(dumpe2fs -h /dev/vg0/files 2>/dev/null | sed -n 's/^Block size: *//p')" 4096
expect "ext4 mounted (findmnt)" "$(findmnt -n -o SOURCE,FSTYPE,OPTIONS /srv/files | awk '{print $2, ($3 ~ /noatime/)}')" "ext4 1"
expect "xfs mounted (findmnt)" "$(findmnt -n -o FSTYPE /srv/media)" xfs
head -c "$(wc -c < /tmp/fstab.before)" /etc/fstab | cmp -s - /tmp/fstab.before && ok "the lines of fstab before hyraid's block are kept byte for byte" || bad "fstab's own lines changed"
check "hyraid's block ends fstab" sh -c "tail -1 /etc/fstab | grep -qx '# hyraid: end'"
expect "plan after apply exits 0" "$(hy_rc plan $CFG/fs.yaml --detailed-exitcode)" 0

say "data on both"
dd if=/dev/urandom of=/srv/files/data bs=1M count=100 2>/dev/null
dd if=/dev/urandom of=/srv/media/data bs=1M count=200 2>/dev/null; sync
S1=$(sha256sum /srv/files/data | cut -d' ' -f1); S2=$(sha256sum /srv/media/data | cut -d' ' -f1)
E0=$(fsbytes /srv/files); X0=$(fsbytes /srv/media)
echo "df before: ext4 $E0, xfs $X0 bytes"

say "an apply killed after the ext4's lvextend, then the file grows both"
lvextend -q -L 320m vg0/files >/dev/null 2>&1; expect "LV grown by hand (lvs)" "$(lvfield vg0/files lv_size)" 320.00m
expect "ext4 not grown yet (dumpe2fs)" "$(blocks_ext4)" 51200
hy plan $CFG/fs-grown.yaml; expect "plan exits 0" $? 0
grep -q '\$ resize2fs /dev/vg0/files' /tmp/hy.out && ok "plan grows the ext4 (resize2fs)" || bad "no resize2fs"
grep -q '\$ lvextend -L 335544320b vg0/files' /tmp/hy.out && bad "plan extends the ext4's LV again" || ok "the ext4's LV is not extended again"
grep -q '\$ lvextend -L 503316480b vg0/media' /tmp/hy.out && ok "plan extends the xfs LV" || bad "no lvextend of media"
grep -q '\$ xfs_growfs /srv/media' /tmp/hy.out && ok "plan grows the xfs (xfs_growfs)" || bad "no xfs_growfs"
hy apply $CFG/fs-grown.yaml --yes; expect "apply exits 0" $? 0
expect "ext4 still mounted (findmnt)" "$(findmnt -n -o FSTYPE /srv/files)" ext4
expect "xfs still mounted (findmnt)" "$(findmnt -n -o FSTYPE /srv/media)" xfs
expect "ext4 blocks (dumpe2fs)" "$(blocks_ext4)" 81920
expect "xfs data blocks (xfs_info)" "$(blocks_xfs)" 122880
E1=$(fsbytes /srv/files); X1=$(fsbytes /srv/media)
echo "df after: ext4 $E1, xfs $X1 bytes"
[ "$E1" -gt "$E0" ] && ok "ext4 grew online (df $E0 -> $E1)" || bad "ext4 did not grow: $E0 -> $E1"
[ "$X1" -gt "$X0" ] && ok "xfs grew online (df $X0 -> $X1)" || bad "xfs did not grow: $X0 -> $X1"
sync; echo 3 > /proc/sys/vm/drop_caches
expect "ext4 data intact (sha256)" "$(sha256sum /srv/files/data | cut -d' ' -f1)" "$S1"
expect "xfs data intact (sha256)" "$(sha256sum /srv/media/data | cut -d' ' -f1)" "$S2"
expect "plan after apply exits 0" "$(hy_rc plan $CFG/fs-grown.yaml --detailed-exitcode)" 0

say "the ext4 shrinks offline, never below what it holds; the xfs never"
sed 's/files: { size: 320MiB/files: { size: 64MiB/' $CFG/fs-grown.yaml > /tmp/fs-tiny.yaml
sed 's/files: { size: 320MiB/files: { size: 160MiB/' $CFG/fs-grown.yaml > /tmp/fs-shrunk.yaml
sed 's/media: { size: 480MiB/media: { size: 400MiB/' $CFG/fs-grown.yaml > /tmp/fs-xfs-small.yaml
expect "a shrink below the data is refused, even with --allow-destroy" "$(hy_rc plan /tmp/fs-tiny.yaml --allow-destroy)" 1
grep -E '^ *!|fix:' /tmp/hy.out
grep -q "smaller than its ext4 can shrink to" /tmp/hy.out && ok "the refusal names resize2fs -P's minimum" || bad "no minimum in the refusal"
expect "ext4 still mounted after the refused plan" "$(findmnt -n -o FSTYPE /srv/files)" ext4
expect "a shrink without --allow-destroy is refused" "$(hy_rc plan /tmp/fs-shrunk.yaml)" 1
grep -q -- "--allow-destroy" /tmp/hy.out && ok "the refusal names --allow-destroy" || bad "no flag in the refusal"
hy plan /tmp/fs-shrunk.yaml --allow-destroy; expect "plan with --allow-destroy exits 0" $? 0
grep -q '\$ resize2fs /dev/vg0/files 163840K' /tmp/hy.out && ok "plan resizes the ext4 to the LV's new size" || bad "no resize2fs to 163840K"
grep -q 'data-at-risk' /tmp/hy.out && ok "the shrink is marked data-at-risk" || bad "no data-at-risk mark"
hy apply /tmp/fs-shrunk.yaml --yes --allow-destroy; expect "shrink apply exits 0" $? 0
expect "ext4 blocks after the shrink (dumpe2fs)" "$(blocks_ext4)" 40960
expect "LV size after the shrink (lvs)" "$(lvfield vg0/files lv_size)" 160.00m
expect "ext4 mounted again (findmnt)" "$(findmnt -n -o FSTYPE /srv/files)" ext4
sync; echo 3 > /proc/sys/vm/drop_caches
expect "ext4 data intact after the shrink (sha256)" "$(sha256sum /srv/files/data | cut -d' ' -f1)" "$S1"
expect "plan after the shrink exits 0" "$(hy_rc plan /tmp/fs-shrunk.yaml --detailed-exitcode)" 0
expect "an xfs shrink is refused" "$(hy_rc plan /tmp/fs-xfs-small.yaml --allow-destroy)" 1
grep -E '^ *!|fix:' /tmp/hy.out
grep -q "carries xfs, which cannot shrink" /tmp/hy.out && ok "the refusal says xfs cannot shrink" || bad "no xfs refusal"
finish
