#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M
# releases: bookworm trixie
# why both: udev 257's rules and mdadm 4.4's incremental assembly bring the array back at boot,
#   with its flags
# boots: 2
# Boot 1 builds the layout; boot 2 (same disks, same root filesystem) must come up with
# /dev/md/data0, write-mostly, the bitmap chunk, write-behind and the HDD cache as the file says,
# and plan must be empty.
. /mnt/host/files/guest-lib.sh
H=ata-HYRAID_HDD_HYHDD1
if [ "$HYRAID_BOOT" = 1 ]; then
    hy apply $CFG/reboot.yaml --yes; expect "apply exits 0" $? 0
    wait_idle data0
    check "mdadm.conf lists the array by UUID" grep -q "^ARRAY /dev/md/data0 metadata=1.2 UUID=$(mdadm --detail --export /dev/md/data0 | sed -n 's/^MD_UUID=//p')" /etc/mdadm/mdadm.conf
    check "the udev rule for the HDD cache exists" grep -q 'ID_SERIAL_SHORT}=="HYHDD1", RUN+="/usr/sbin/hdparm -W0' /etc/udev/rules.d/61-hyraid-write-cache.rules
    # (this image boots its kernel and initrd from outside; the journal shows the command ran and succeeded)
    check "update-initramfs ran and succeeded (journal)" grep -q '"command":"update-initramfs -u","status":0' /var/log/hyraid/journal.jsonl
    expect "HDD cache off now" "$(wcache $H)" 0
    mkfs.ext4 -q /dev/vg0/files && mkdir -p /mnt/d && mount /dev/vg0/files /mnt/d && echo before-reboot > /mnt/d/f && umount /mnt/d
    sync
    finish
fi
say "after the reboot"
check "/dev/md/data0 is back under its name" test -b /dev/md/data0
check "hdd0 still write-mostly (sysfs)" is_wm data0 $H
expect "bitmap chunk (sysfs)" "$(bitmap_chunk data0)" 134217728
expect "write-behind (sysfs)" "$(backlog data0)" 256
expect "HDD cache off again: the udev rule re-applied it (hdparm -W)" "$(wcache $H)" 0
vgchange -ay vg0 >/dev/null 2>&1
mkdir -p /mnt/d && mount /dev/vg0/files /mnt/d
expect "data on the LV" "$(cat /mnt/d/f)" before-reboot
umount /mnt/d
expect "plan after the reboot exits 0" "$(hy_rc plan $CFG/reboot.yaml --detailed-exitcode)" 0
[ -s /tmp/hy.out ] && cat /tmp/hy.out
finish
