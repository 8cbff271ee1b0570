#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M ssd2:ssd:512M hdd2:hdd:512M
# A filesystem on a mirror used without LVM (issue 13 §1): an ext4 and an xfs made by hyraid on
# /dev/md/NAME right after mdadm --create (during the initial resync), with the UUID the plan
# showed, listed by UUID in hyraid's block of /etc/fstab and mounted. Checked with blkid,
# findmnt, mdadm --detail and /proc/mdstat; data checksummed; the second plan is empty. Then the
# file changes both labels, set in place (e2label on the mounted ext4; the xfs unmounted for
# xfs_admin -L and mounted again), and the type (refused while mounted without --allow-destroy).
. /mnt/host/files/guest-lib.sh
[ -f /etc/fstab ] && cp /etc/fstab /tmp/fstab.before || : > /tmp/fstab.before

say "two mirrors, an ext4 and an xfs on the arrays themselves"
hy plan $CFG/mirror-fs.yaml; expect "plan exits 0" $? 0
U1=$(sed -n 's/.*mkfs.ext4 -b 4096 -U \([0-9a-f-]*\) -L backup \/dev\/md\/backup$/\1/p' /tmp/hy.out)
U2=$(sed -n 's/.*mkfs.xfs -b size=4096 -s size=4096 -m uuid=\([0-9a-f-]*\) -L scratch \/dev\/md\/scratch$/\1/p' /tmp/hy.out)
[ -n "$U1" ] && [ -n "$U2" ] && ok "plan names both UUIDs ($U1, $U2)" || bad "no mkfs on /dev/md/NAME with a UUID in the plan"
grep -q "+UUID=$U1 /srv/backup ext4 noatime 0 2" /tmp/hy.out && ok "plan shows the ext4 fstab line" || bad "no ext4 fstab line in the diff"
grep -q "+UUID=$U2 /srv/scratch xfs defaults 0 0" /tmp/hy.out && ok "plan shows the xfs fstab line" || bad "no xfs fstab line in the diff"
grep -q 'wait for resync' /tmp/hy.out && bad "the plan waits for a resync" || ok "nothing waits for the initial resync"
hy apply $CFG/mirror-fs.yaml --yes; expect "apply exits 0" $? 0
expect "ext4 UUID (blkid)" "$(blkid -p -s UUID -o value /dev/md/backup)" "$U1"
expect "xfs UUID (blkid)" "$(blkid -p -s UUID -o value /dev/md/scratch)" "$U2"
expect "ext4 label (blkid)" "$(blkid -p -s LABEL -o value /dev/md/backup)" backup
expect "xfs label (blkid)" "$(blkid -p -s LABEL -o value /dev/md/scratch)" scratch
expect "ext4 on the array itself (findmnt)" "$(findmnt -n -o SOURCE,FSTYPE /srv/backup)" "/dev/$(md backup) ext4"
expect "xfs on the array itself (findmnt)" "$(findmnt -n -o SOURCE,FSTYPE /srv/scratch)" "/dev/$(md scratch) xfs"
expect "ext4 mounted noatime (findmnt)" "$(findmnt -n -o OPTIONS /srv/backup | tr , '\n' | grep -cx noatime)" 1
expect "backup is RAID1 of two (mdadm --detail)" "$(mdadm --detail /dev/md/backup | sed -n 's/^ *Raid Devices : //p')" 2
expect "no PV on the arrays (pvs)" "$(pvs --noheadings /dev/md/backup /dev/md/scratch 2>/dev/null | wc -l)" 0
grep -qx "UUID=$U1 /srv/backup ext4 noatime 0 2" /etc/fstab && ok "fstab lists the ext4 by UUID" || bad "no ext4 line in fstab"
grep -qx "UUID=$U2 /srv/scratch xfs defaults 0 0" /etc/fstab && ok "fstab lists the xfs by UUID" || bad "no xfs line in fstab"
head -c "$(wc -c < /tmp/fstab.before)" /etc/fstab | cmp -s - /tmp/fstab.before && ok "the lines of fstab before hyraid's block are kept byte for byte" || bad "fstab's own lines changed"
expect "plan after apply exits 0" "$(hy_rc plan $CFG/mirror-fs.yaml --detailed-exitcode)" 0

say "data on both, read back after the resync"
dd if=/dev/urandom of=/srv/backup/data bs=1M count=100 2>/dev/null
dd if=/dev/urandom of=/srv/scratch/data bs=1M count=100 2>/dev/null; sync
S1=$(sha256sum /srv/backup/data | cut -d' ' -f1); S2=$(sha256sum /srv/scratch/data | cut -d' ' -f1)
wait_idle backup scratch
grep -A2 '^md' /proc/mdstat
expect "backup in sync (mdadm --detail)" "$(mdadm --detail /dev/md/backup | sed -n 's/^ *State : //p' | tr -d ' ')" clean
sync; echo 3 > /proc/sys/vm/drop_caches
expect "ext4 data intact (sha256)" "$(sha256sum /srv/backup/data | cut -d' ' -f1)" "$S1"
expect "xfs data intact (sha256)" "$(sha256sum /srv/scratch/data | cut -d' ' -f1)" "$S2"
expect "plan after the resync exits 0" "$(hy_rc plan $CFG/mirror-fs.yaml --detailed-exitcode)" 0
hy status $CFG/mirror-fs.yaml >/dev/null
grep -q "mirror backup.*ext4 filesystem" /tmp/hy.out && ok "status lists the ext4 on mirror backup" || bad "status does not list it"

say "changed labels, set in place, then a changed type"
sed 's/label: backup/label: nightly/; s/label: scratch/label: bulk/' $CFG/mirror-fs.yaml > /tmp/mfs-label.yaml
hy plan /tmp/mfs-label.yaml; expect "relabel plan exits 0" $? 0
grep -q '\$ e2label /dev/md/backup nightly' /tmp/hy.out && ok "plan relabels the mounted ext4 on the array (e2label)" || bad "no e2label on /dev/md/backup"
grep -A4 'label the xfs filesystem bulk' /tmp/hy.out | grep -q '\$ umount /srv/scratch' && ok "the xfs is unmounted for xfs_admin" || bad "no umount before xfs_admin"
grep -q '\$ xfs_admin -L bulk /dev/md/scratch' /tmp/hy.out && ok "plan relabels the xfs on the array (xfs_admin -L)" || bad "no xfs_admin -L on /dev/md/scratch"
grep 'label the xfs filesystem bulk' /tmp/hy.out | grep -q 'degrades' && ok "the xfs relabel is marked degrades" || bad "no degrades mark"
grep -q 'mkfs' /tmp/hy.out && bad "the relabel plan makes a filesystem" || ok "no mkfs in the relabel plan"
hy apply /tmp/mfs-label.yaml --yes; expect "relabel apply exits 0" $? 0
expect "ext4 label (blkid)" "$(blkid -p -s LABEL -o value /dev/md/backup)" nightly
expect "xfs label (xfs_admin -l)" "$(xfs_admin -l /dev/md/scratch 2>/dev/null)" 'label = "bulk"'
expect "ext4 UUID kept (blkid)" "$(blkid -p -s UUID -o value /dev/md/backup)" "$U1"
expect "xfs UUID kept (blkid)" "$(blkid -p -s UUID -o value /dev/md/scratch)" "$U2"
expect "xfs mounted again (findmnt)" "$(findmnt -n -o SOURCE,FSTYPE /srv/scratch)" "/dev/$(md scratch) xfs"
expect "ext4 data intact after the relabel (sha256)" "$(sha256sum /srv/backup/data | cut -d' ' -f1)" "$S1"
expect "xfs data intact after the relabel (sha256)" "$(sha256sum /srv/scratch/data | cut -d' ' -f1)" "$S2"
expect "plan after the relabel exits 0" "$(hy_rc plan /tmp/mfs-label.yaml --detailed-exitcode)" 0
sed 's/type: ext4, label: nightly/type: xfs, label: nightly/' /tmp/mfs-label.yaml > /tmp/mfs-type.yaml
expect "a changed type is refused while mounted without --allow-destroy" "$(hy_rc plan /tmp/mfs-type.yaml)" 1
grep -E '^ *!|fix:' /tmp/hy.out
grep -q "the array carries ext4 mounted at /srv/backup; the file wants xfs" /tmp/hy.out && ok "the refusal names the mounted ext4" || bad "no refusal for the mounted ext4"
expect "ext4 still mounted (findmnt)" "$(findmnt -n -o FSTYPE /srv/backup)" ext4
expect "ext4 still has its UUID (blkid)" "$(blkid -p -s UUID -o value /dev/md/backup)" "$U1"
finish
