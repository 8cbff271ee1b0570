#!/bin/sh
# disks: boot1:ssd:256M boot2:hdd:256M ssd1:ssd:512M hdd1:hdd:512M ssd2:ssd:512M hdd2:hdd:512M
# Layout options fixed at creation: a mirror with `metadata: "1.0"` (superblock at the end, so a
# member reads as the filesystem made on the array, as a boot loader reads /boot), and an LV
# striped over two mirrors with `stripe_size: 64KiB`. Checked with mdadm --detail/--examine,
# sysfs, blkid on a member, lvs and mdadm.conf; data checksummed; the second plan is empty.
. /mnt/host/files/guest-lib.sh
B1=/dev/disk/by-id/ata-HYRAID_SSD_HYBOOT1; B2=/dev/disk/by-id/ata-HYRAID_HDD_HYBOOT2
C=$CFG/metadata-stripes.yaml

say "plan and apply"
hy plan $C; expect "plan exits 0" $? 0
grep -q -- '--metadata=1.0 ' /tmp/hy.out && ok "boot is created with --metadata=1.0" || bad "no --metadata=1.0"
grep -q 'lvcreate --yes -n data -L 419430400b -i 2 -I 64k vg0' /tmp/hy.out && ok "lvcreate -i 2 -I 64k" || bad "no lvcreate -I 64k"
hy apply $C --yes; expect "apply exits 0" $? 0
wait_idle boot data0 data1

say "the 1.0 mirror"
expect "mdadm --detail: Version" "$(mdadm --detail /dev/md/boot | sed -n 's/^ *Version : //p')" 1.0
expect "sysfs metadata_version" "$(cat /sys/block/$(md boot)/md/metadata_version)" 1.0
expect "mdadm --examine of a member: Version" "$(mdadm --examine $B1 | sed -n 's/^ *Version : //p')" 1.0
# mdadm prints a Data Offset only when it is not 0; the superblock is 8 to 12 KiB before the end.
check "mdadm --examine: no Data Offset (data from sector 0)" sh -c "! mdadm --examine $B1 | grep -q 'Data Offset'"
expect "mdadm --examine: Super Offset" "$(mdadm --examine $B1 | sed -n 's/^ *Super Offset : //p')" "524272 sectors"
# 256 MiB members: (524288 - 32) sectors before the superblock area, in KiB rounded to 64 KiB.
expect "array size as the plan's capacity model says (mdadm --detail)" "$(mdadm --detail /dev/md/boot | sed -n 's/^ *Array Size : \([0-9]*\).*/\1/p')" 262080
grep -q "ARRAY /dev/md/boot metadata=1.0 UUID=" /etc/mdadm/mdadm.conf && ok "mdadm.conf: metadata=1.0" || bad "mdadm.conf: $(grep boot /etc/mdadm/mdadm.conf)"
grep -q "ARRAY /dev/md/data0 metadata=1.2 UUID=" /etc/mdadm/mdadm.conf && ok "mdadm.conf: data0 stays 1.2" || bad "mdadm.conf data0"
mkfs.ext4 -q -L hyboot /dev/md/boot && mkdir -p /mnt/b && mount /dev/md/boot /mnt/b
dd if=/dev/urandom of=/mnt/b/vmlinuz bs=1M count=32 2>/dev/null; sync
BSUM=$(sha256sum /mnt/b/vmlinuz | cut -d' ' -f1)
FSU=$(blkid -o value -s UUID /dev/md/boot)
echo 3 > /proc/sys/vm/drop_caches
# As a boot loader that knows no md: the member itself, probed for filesystems only.
expect "blkid on a member sees the array's ext4" "$(blkid -p -u filesystem -o value -s TYPE $B1)" ext4
expect "… with the array's filesystem UUID" "$(blkid -p -u filesystem -o value -s UUID $B2)" "$FSU"
expect "… and its label" "$(blkid -p -u filesystem -o value -s LABEL $B1)" hyboot

say "the striped LV"
expect "lvs stripes" "$(lvfield vg0/data stripes)" 2
expect "lvs stripe_size" "$(lvs --noheadings --units b --nosuffix -o stripe_size vg0/data | tr -d ' ')" 65536
lvs -o lv_name,stripes,stripe_size,devices vg0
mkfs.ext4 -q /dev/vg0/data && mkdir -p /mnt/d && mount /dev/vg0/data /mnt/d
dd if=/dev/urandom of=/mnt/d/f bs=1M count=128 2>/dev/null; sync
SUM=$(sha256sum /mnt/d/f | cut -d' ' -f1)

say "converged"
hy plan $C --detailed-exitcode; expect "second plan is empty (exit 0)" $? 0
grep -q "No changes" /tmp/hy.out && ok "plan says no changes" || bad "plan: $(cat /tmp/hy.out)"
echo 3 > /proc/sys/vm/drop_caches
expect "file on the striped LV intact" "$(sha256sum /mnt/d/f | cut -d' ' -f1)" "$SUM"
expect "file on the 1.0 mirror intact" "$(sha256sum /mnt/b/vmlinuz | cut -d' ' -f1)" "$BSUM"
finish
