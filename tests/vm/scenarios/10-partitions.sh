#!/bin/sh
# disks: ssd1:ssd:1536M hdd1:hdd:1536M ssd2:ssd:1536M hdd2:hdd:1536M
# Blank disks → GPT partitions by name → mirrors of partitions (HDD ones write-mostly) → LVM with
# a writecache on an SSD+SSD mirror; verified with lsblk/sgdisk/sysfs; then plan is empty.
# firmware: uefi
# Booted through UEFI (OVMF: 2.5 s more boot; these checks 20 s): with /boot on an LV of the
# mirrors and the only EFI system partition on one disk (as an installer leaves it), status and
# import say the machine boots from one disk and name the three without an ESP; a /boot/efi line
# without nofail is said too. The ESP beside the file's partition is left alone (plan stays
# empty). Its capture is tests/fixtures/vm/partitions-esp-one-disk.json.
. /mnt/host/files/guest-lib.sh
resync_crawls   # nothing here waits for a resync
hy apply $CFG/partitioned.yaml --yes; expect "apply exits 0" $? 0
for d in ata-HYRAID_SSD_HYSSD1 ata-HYRAID_SSD_HYSSD2; do
    expect "$d partition names (lsblk)" "$(lsblk -rno PARTLABEL /dev/disk/by-id/$d | grep . | tr '\n' ' ')" "raid cache "
    expect "$d partition 1 size (lsblk)" "$(lsblk -bdno SIZE /dev/disk/by-id/$d-part1)" 1073741824
    expect "$d partition 1 type Linux RAID (sgdisk)" "$(sgdisk -i 1 /dev/disk/by-id/$d | sed -n 's/^Partition GUID code: \([^ ]*\).*/\1/p')" A19D880F-05FC-4D3B-A006-743F0F84911E
done
expect "hdd0 partition names (lsblk)" "$(lsblk -rno PARTLABEL /dev/disk/by-id/ata-HYRAID_HDD_HYHDD1 | grep . | tr '\n' ' ')" "raid "
check "hdd0:raid is write-mostly in data0 (sysfs)" is_wm data0 ata-HYRAID_HDD_HYHDD1-part1
check "ssd0:raid is not write-mostly" sh -c "! grep -q write_mostly /sys/block/$(md data0)/md/dev-$(kname ata-HYRAID_SSD_HYSSD1-part1)/state"
expect "cache mirror members are the SSD cache partitions" "$(ls /sys/block/$(md cache)/md/ | grep -c '^dev-')" 2
expect "writecache on the cache mirror" "$(lvs -a --noheadings -o devices vg0/nextcloud_wc_cvol | tr -d ' ')" "/dev/$(md cache)(0)"
expect "plan after apply exits 0" "$(hy_rc plan $CFG/partitioned.yaml --detailed-exitcode)" 0
"$HY" observe --capture $OUT/capture-partitioned.json -o /dev/null

say "one ESP under a mirrored /boot"
check "booted through UEFI (/sys/firmware/efi)" test -d /sys/firmware/efi
H1=/dev/disk/by-id/ata-HYRAID_HDD_HYHDD1
# The disk's first partition is in use (an md member): the kernel keeps its table until told of
# the new one (BLKPG, as an installer's partitioner does).
sgdisk --new=9:0:+64M --typecode=9:ef00 --change-name=9:EFI $H1 >/dev/null 2>&1
partx --add --nr 9 $H1; udevadm settle
expect "the ESP's type (lsblk PARTTYPE)" "$(lsblk -no PARTTYPE $H1-part9)" c12a7328-f81f-11d2-ba4b-00a0c93ec93b
mkfs.ext4 -q /dev/vg0/nextcloud && mount /dev/vg0/nextcloud /boot
expect "/boot on the LV over both mirrors (findmnt)" "$(findmnt -no SOURCE /boot)" /dev/mapper/vg0-nextcloud
hy status $CFG/partitioned.yaml; expect "status exits 2" $? 2
grep -q "the machine boots from one disk: its only EFI system partition is on disk hdd0" /tmp/hy.out \
    && ok "status: the machine boots from one disk (hdd0's ESP)" || bad "status says nothing of the one ESP"
fix=$(grep -A3 "boots from one disk" /tmp/hy.out | tr '\n' ' ')
for d in ssd0 ssd1 hdd1; do
    case "$fix" in *"disk $d"*) ok "the fix names $d";; *) bad "the fix does not name $d";; esac
done
expect "plan with the ESP beside the file's partition exits 0" "$(hy_rc plan $CFG/partitioned.yaml --detailed-exitcode)" 0
echo "UUID=5A1B-2C3D /boot/efi vfat umask=0077 0 1" >> /etc/fstab
hy status $CFG/partitioned.yaml
grep -q "/etc/fstab mounts /boot/efi without \`nofail\`" /tmp/hy.out && ok "status: the /boot/efi line stops the boot" || bad "nothing said of /boot/efi without nofail"
"$HY" import > /tmp/import.yaml 2> /tmp/import.err; expect "import exits 0" $? 0
grep -q "^boot: the machine boots from one disk" /tmp/import.err && ok "import says it" || bad "import: $(cat /tmp/import.err)"
grep -q "^# boot: the machine boots from one disk" /tmp/import.yaml && ok "the imported file says it" || bad "not in the imported file"
"$HY" observe --capture $OUT/capture-esp.json -o /dev/null
umount /boot
finish
