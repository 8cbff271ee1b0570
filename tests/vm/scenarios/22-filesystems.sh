#!/bin/sh
# disks: ssd1:ssd:1G hdd1:hdd:1G
# Filesystems on LVs (issue 13 §1): an ext4 and an xfs LV on a mirror, made by hyraid with the
# UUID the plan showed, listed in hyraid's block of /etc/fstab and mounted. Data is written and
# checksummed; the file then grows both LVs and apply grows the filesystems while they stay
# mounted (resize2fs online, xfs_growfs), after an lvextend run by hand as an apply killed
# between the two commands leaves it. Checked with blkid, findmnt, df, dumpe2fs and xfs_info;
# the second plan is empty. Then the ext4 shrinks (refused below resize2fs -P's minimum and
# without --allow-destroy; with it: unmounted, checked, resized, lvreduce, mounted again, data
# intact) and an xfs shrink is refused. Then both labels change in place (e2label on the mounted
# ext4; the xfs unmounted, xfs_admin -L, mounted again, marked degrades), checked with blkid and
# findmnt, data intact; and the mounted xfs is made again as ext4 (refused without
# --allow-destroy; with it: umount, wipefs, mkfs with the plan's new UUID, its fstab line
# replaced, mounted again, the old data gone and new data written). Last, media is taken out of
# the file: left alone, its fstab line stays and still mounts it.
. /mnt/host/files/guest-lib.sh
resync_crawls   # nothing here waits for a resync
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

say "both labels change in place"
sed 's/label: files/label: docs/; s/label: media/label: films/' /tmp/fs-shrunk.yaml > /tmp/fs-relabel.yaml
hy plan /tmp/fs-relabel.yaml; expect "relabel plan exits 0" $? 0
grep -q '\$ e2label /dev/vg0/files docs' /tmp/hy.out && ok "plan relabels the mounted ext4 (e2label)" || bad "no e2label"
grep -A4 'label the xfs filesystem films' /tmp/hy.out | grep -q '\$ umount /srv/media' && ok "the xfs is unmounted for xfs_admin" || bad "no umount before xfs_admin"
grep -q '\$ xfs_admin -L films /dev/vg0/media' /tmp/hy.out && ok "plan relabels the xfs (xfs_admin -L)" || bad "no xfs_admin -L"
grep 'label the xfs filesystem films' /tmp/hy.out | grep -q 'degrades' && ok "the xfs relabel is marked degrades" || bad "no degrades mark"
hy apply /tmp/fs-relabel.yaml --yes; expect "relabel apply exits 0" $? 0
expect "ext4 label (blkid)" "$(blkid -p -s LABEL -o value /dev/vg0/files)" docs
expect "xfs label (blkid)" "$(blkid -p -s LABEL -o value /dev/vg0/media)" films
expect "xfs label (xfs_admin -l)" "$(xfs_admin -l /dev/vg0/media 2>/dev/null)" 'label = "films"'
expect "ext4 still mounted (findmnt)" "$(findmnt -n -o FSTYPE /srv/files)" ext4
expect "xfs mounted again (findmnt)" "$(findmnt -n -o FSTYPE /srv/media)" xfs
sync; echo 3 > /proc/sys/vm/drop_caches
expect "ext4 data intact after the relabel (sha256)" "$(sha256sum /srv/files/data | cut -d' ' -f1)" "$S1"
expect "xfs data intact after the relabel (sha256)" "$(sha256sum /srv/media/data | cut -d' ' -f1)" "$S2"
expect "plan after the relabel exits 0" "$(hy_rc plan /tmp/fs-relabel.yaml --detailed-exitcode)" 0

say "the mounted xfs made again as ext4"
sed 's/media: { size: 480MiB, filesystem: { type: xfs/media: { size: 480MiB, filesystem: { type: ext4/' /tmp/fs-relabel.yaml > /tmp/fs-retype.yaml
OLD=$(blkid -p -s UUID -o value /dev/vg0/media)
expect "a type change without --allow-destroy is refused" "$(hy_rc plan /tmp/fs-retype.yaml)" 1
grep -E '^ *!|fix:' /tmp/hy.out
grep -q "mounted at /srv/media; the file wants ext4" /tmp/hy.out && ok "the refusal names the mounted xfs" || bad "no refusal reason"
grep -q -- "--allow-destroy" /tmp/hy.out && ok "the refusal names --allow-destroy" || bad "no flag in the refusal"
expect "xfs still mounted after the refused plan" "$(findmnt -n -o FSTYPE /srv/media)" xfs
hy plan /tmp/fs-retype.yaml --allow-destroy; expect "type change plan exits 0" $? 0
U3=$(sed -n 's/.*mkfs.ext4 -b 4096 -U \([0-9a-f-]*\) -L films -F \/dev\/vg0\/media.*/\1/p' /tmp/hy.out)
[ -n "$U3" ] && ok "plan makes the ext4 with a new UUID ($U3)" || bad "no mkfs.ext4 -F in the plan"
grep -A6 'make ext4 filesystem' /tmp/hy.out | grep -q '\$ umount /srv/media' && ok "plan unmounts the xfs first" || bad "no umount"
grep -q '\$ wipefs --all /dev/vg0/media' /tmp/hy.out && ok "plan wipes the xfs" || bad "no wipefs"
grep 'make ext4 filesystem' /tmp/hy.out | grep -q 'destroys' && ok "the re-creation is marked destroys" || bad "no destroys mark"
grep -q "+UUID=$U3 /srv/media ext4 defaults 0 2" /tmp/hy.out && ok "plan shows the new fstab line" || bad "no new fstab line"
grep -q -- "-UUID=$OLD /srv/media xfs" /tmp/hy.out && ok "plan removes the old fstab line" || bad "old line not removed"
hy apply /tmp/fs-retype.yaml --yes --allow-destroy; expect "type change apply exits 0" $? 0
expect "new type (blkid)" "$(blkid -p -s TYPE -o value /dev/vg0/media)" ext4
expect "new UUID (blkid)" "$(blkid -p -s UUID -o value /dev/vg0/media)" "$U3"
expect "ext4 mounted at /srv/media (findmnt)" "$(findmnt -n -o FSTYPE /srv/media)" ext4
grep -q "UUID=$OLD" /etc/fstab && bad "the old UUID is still in fstab" || ok "the old fstab line is gone"
check "the new fstab line" grep -qx "UUID=$U3 /srv/media ext4 defaults 0 2" /etc/fstab
[ -e /srv/media/data ] && bad "the old data is still there" || ok "the old data is gone, as the plan said"
dd if=/dev/urandom of=/srv/media/new bs=1M count=50 2>/dev/null; sync
S3=$(sha256sum /srv/media/new | cut -d' ' -f1); sync; echo 3 > /proc/sys/vm/drop_caches
expect "new data on the new ext4 (sha256)" "$(sha256sum /srv/media/new | cut -d' ' -f1)" "$S3"
expect "ext4 on files untouched (sha256)" "$(sha256sum /srv/files/data | cut -d' ' -f1)" "$S1"
expect "plan after the type change exits 0" "$(hy_rc plan /tmp/fs-retype.yaml --detailed-exitcode --allow-destroy)" 0

say "media taken out of the file: left alone, its fstab line too"
sed '/^      media:/d' /tmp/fs-retype.yaml > /tmp/fs-nomedia.yaml
grep -q "media:" /tmp/fs-nomedia.yaml && bad "media still in the file" || ok "media is out of the file"
hy plan /tmp/fs-nomedia.yaml --detailed-exitcode; expect "plan without media exits 0 (no changes)" $? 0
grep -q "lv vg0/media" /tmp/hy.out && ok "the plan lists media as left alone" || bad "media not listed as left alone"
hy apply /tmp/fs-nomedia.yaml --yes; expect "apply without media exits 0" $? 0
check "media's fstab line stays" grep -qx "UUID=$U3 /srv/media ext4 defaults 0 2" /etc/fstab
umount /srv/media && mount /srv/media
expect "media mounts from its line (findmnt)" "$(findmnt -n -o FSTYPE /srv/media)" ext4
expect "media data intact (sha256)" "$(sha256sum /srv/media/new | cut -d' ' -f1)" "$S3"
finish
