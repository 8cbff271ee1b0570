#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M cache:ssd:256M old1:hdd:256M
# prep: hdd1=ext4
# A member disk carrying ext4 with a file, and a foreign VG: create is refused without
# --allow-destroy, the file stays readable, the foreign VG is never touched.
. /mnt/host/files/guest-lib.sh
OLD=/dev/disk/by-id/ata-HYRAID_HDD_HYOLD1
pvcreate -q $OLD && vgcreate -q oldvg $OLD && lvcreate -q -y -L 64M -n keep oldvg && mkfs.ext4 -q /dev/oldvg/keep
mkdir -p /mnt/keep && mount /dev/oldvg/keep /mnt/keep && dd if=/dev/urandom of=/mnt/keep/f bs=1M count=8 2>/dev/null && sync
SUM=$(sha256sum /mnt/keep/f | cut -d' ' -f1); umount /mnt/keep
META=$(vgs --noheadings -o vg_uuid,vg_seqno,lv_count oldvg)
hy apply $CFG/pair.yaml --yes; expect "apply refuses (exit 1)" $? 1
grep -q "carries ext4" /tmp/hy.out && ok "refusal names ext4" || bad "no ext4 refusal"
grep -q "allow-destroy" /tmp/hy.out && ok "refusal says how" || bad "no fix in refusal"
grep -q "vg oldvg" /tmp/hy.out && ok "foreign VG reported" || bad "foreign VG not reported"
mkdir -p /mnt/h && mount -o ro /dev/disk/by-id/ata-HYRAID_HDD_HYHDD1 /mnt/h
expect "the file on the HDD is intact" "$(cat /mnt/h/precious.txt)" "hyraid-test-data"
umount /mnt/h
hy apply $CFG/pair.yaml --yes --allow-destroy; expect "with --allow-destroy apply exits 0" $? 0
check "mirror created" test -b /dev/md/data0
expect "foreign VG metadata unchanged" "$(vgs --noheadings -o vg_uuid,vg_seqno,lv_count oldvg)" "$META"
mount /dev/oldvg/keep /mnt/keep
expect "foreign LV data unchanged" "$(sha256sum /mnt/keep/f | cut -d' ' -f1)" "$SUM"
umount /mnt/keep
expect "plan after apply exits 0" "$(hy_rc plan $CFG/pair.yaml --detailed-exitcode)" 0
finish
