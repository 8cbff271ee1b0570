#!/bin/sh
# disks: ssd1:ssd:1536M hdd1:hdd:1536M
# firmware: uefi
# boots: 5
# boot 2: from-disks uefi
# boot 3: from-disks uefi only=hdd1
# boot 4: from-disks only=ssd1
# boot 5: from-disks only=hdd1
# timeout: 600
# why one: the budget (this scenario is the suite's dearest boot sequence); Debian 13's grub
#   2.12 and initramfs are the next to prove here
# The machine boots from the mirror with either disk dead, through UEFI and through a BIOS.
# Boot 1 (the image's kernel, UEFI) is the helper: `boot:` lays out each disk (BIOS boot
# partition, ESP, the mirror's partition), the system (a copy of this guest's root) goes onto
# vg0/root, and hyraid, run inside it, puts grub on both ESPs and boot sectors, one firmware
# entry per disk and the update hooks. Boots 2-5 start what the disks hold, not the image's
# kernel: OVMF with both disks, OVMF with the HDD alone, SeaBIOS with the SSD alone, SeaBIOS with
# the HDD alone; each time / is vg0/root on the mirror and status names the disk that is gone.
. /mnt/host/files/guest-lib.sh
C=$CFG/boot-mirror.yaml
SSD=ata-HYRAID_SSD_HYSSD1; HDD=ata-HYRAID_HDD_HYHDD1
M=/mnt/sys

if [ "$HYRAID_BOOT" = 1 ]; then
    hy apply $C --yes; expect "apply exits 0" $? 0
    check "the loaders wait for the system to be on the mirror (plan says so)" grep -q "the boot loaders are installed once the system is on mirror system" /tmp/hy.out
    for disk in $SSD $HDD; do
        expect "$disk partitions (lsblk)" "$(lsblk -rno PARTLABEL /dev/disk/by-id/$disk | grep . | tr '\n' ' ')" "bios-boot esp system "
        expect "$disk partition 1 is a BIOS boot partition (sgdisk)" "$(sgdisk -i 1 /dev/disk/by-id/$disk | sed -n 's/^Partition GUID code: \([^ ]*\).*/\1/p')" 21686148-6449-6E6F-744E-656564454649
        expect "$disk partition 2 is an EFI system partition (sgdisk)" "$(sgdisk -i 2 /dev/disk/by-id/$disk | sed -n 's/^Partition GUID code: \([^ ]*\).*/\1/p')" C12A7328-F81F-11D2-BA4B-00A0C93EC93B
        expect "$disk ESP is FAT32 (blkid)" "$(blkid -p -s VERSION -o value /dev/disk/by-id/$disk-part2)" FAT32
    done

    say "the system onto the mirror: this guest's root, copied"
    # Only the blocks in use (e2image -ra), not the whole image.
    e2image -raf /dev/vda /dev/vg0/root 2>/dev/null
    e2fsck -fy /dev/vg0/root >/dev/null 2>&1
    tune2fs -U random /dev/vg0/root >/dev/null
    mkdir -p $M && mount /dev/vg0/root $M
    echo "/dev/mapper/vg0-root / ext4 defaults 0 1" > $M/etc/fstab
    mkdir -p $M/etc/hyraid && cp $C $M/etc/hyraid/hyraid.yaml
    # mdadm.conf as hyraid wrote it here (its ARRAY line), so the system's first initramfs
    # assembles the mirror and hyraid inside has no second one to make.
    cp /etc/mdadm/mdadm.conf $M/etc/mdadm/mdadm.conf
    # The kernel command line of the disks' boots: this suite's init, the serial console.
    cat > $M/etc/default/grub <<'GRUB'
GRUB_DEFAULT=0
GRUB_TIMEOUT=0
GRUB_DISTRIBUTOR=Debian
GRUB_CMDLINE_LINUX_DEFAULT=""
GRUB_CMDLINE_LINUX="console=ttyS0 init=/sbin/hyraid-init panic=-1 panic_on_oops=1 loglevel=4"
GRUB_TERMINAL=console
GRUB_DISABLE_OS_PROBER=true
GRUB
    # The image's initramfs lists only the virtio modules it boots from (MODULES=list: Debian's
    # `most` takes minutes under TCG); a system on the disks needs their controller's too.
    printf 'ahci\nsd_mod\n' >> $M/etc/initramfs-tools/modules
    # zstd's default level 19 takes two minutes of TCG for this initramfs; level 1 seconds.
    echo COMPRESSLEVEL=1 >> $M/etc/initramfs-tools/conf.d/hyraid.conf
    mountpoint -q /sys/firmware/efi/efivars || mount -t efivarfs efivarfs /sys/firmware/efi/efivars
    for d in dev proc sys run; do mount --rbind /$d $M/$d; done
    mkdir -p $M/mnt/host && mount --bind /mnt/host $M/mnt/host
    in_sys() { chroot $M "$@"; }
    say "inside the system: hyraid's package, the initramfs"
    check "hyraid's package installs in the system" in_sys sh -c 'dpkg -i /mnt/host/files/hyraid_*.deb'
    # An installed system has its initramfs (this image boots with one of its own, and has none).
    check "the system's initramfs is made" in_sys update-initramfs -c -k "$(uname -r)"
    say "hyraid apply, inside the system on the mirror"
    in_sys /usr/bin/hyraid apply /etc/hyraid/hyraid.yaml --yes > /tmp/hy.out 2>&1; r=$?
    cat /tmp/hy.out
    expect "apply inside the system exits 0" $r 0
    GRUB_V=$(in_sys grub-install --version | head -1)
    check "grub.cfg written (update-grub), root on vg0/root" grep -q "root=/dev/mapper/vg0-root" $M/boot/grub/grub.cfg
    for disk in $SSD $HDD; do
        expect "$disk ESP stamp is the installed grub (mtype)" "$(mtype -i /dev/disk/by-id/$disk-part2 ::/EFI/hyraid/loader)" "$GRUB_V"
        check "$disk ESP has the removable path EFI/BOOT/BOOTX64.EFI (mdir)" sh -c "mdir -b -i /dev/disk/by-id/$disk-part2 ::/EFI/BOOT | grep -qi bootx64.efi"
        check "$disk has grub in its boot sector (the MBR's GRUB signature)" sh -c "dd if=/dev/disk/by-id/$disk bs=512 count=1 status=none | grep -aq GRUB"
    done
    check "the ESPs are not left mounted" sh -c "! grep -q /run/hyraid/esp /proc/mounts"
    efibootmgr -v > /tmp/efi.txt
    check "firmware entry 'hyraid ssd1' (efibootmgr)" grep -q "hyraid ssd1" /tmp/efi.txt
    check "firmware entry 'hyraid hdd1' (efibootmgr)" grep -q "hyraid hdd1" /tmp/efi.txt
    check "the kernel hook is executable" test -x $M/etc/kernel/postinst.d/zzz-hyraid-boot
    check "the initramfs hook is executable" test -x $M/etc/initramfs/post-update.d/hyraid-boot
    check "apt's hook is there" grep -q "apply --loaders-only" $M/etc/apt/apt.conf.d/90hyraid-boot
    expect "plan inside the system exits 0" "$(in_sys /usr/bin/hyraid plan /etc/hyraid/hyraid.yaml --detailed-exitcode >/dev/null 2>&1; echo $?)" 0
    say "the mirror's initial resync"
    wait_idle system
    sync
    umount $M/mnt/host
    umount -R $M 2>/dev/null || umount -lR $M
    finish
fi

say "boot $HYRAID_BOOT: started from the disks"
expect "/ is vg0/root on the mirror (findmnt)" "$(findmnt -no SOURCE /)" /dev/mapper/vg0-root
case "$HYRAID_BOOT" in 2|3) fw=uefi;; *) fw=bios;; esac
if [ $fw = uefi ]; then
    check "started through UEFI (/sys/firmware/efi)" test -d /sys/firmware/efi
    mount -t efivarfs efivarfs /sys/firmware/efi/efivars 2>/dev/null
    cur=$(efibootmgr | sed -n 's/^BootCurrent: //p')
    label=$(efibootmgr | sed -n "s/^Boot$cur\*\? *//p")
    say "the firmware started Boot$cur: $label"
else
    check "started through a BIOS (no /sys/firmware/efi)" test ! -d /sys/firmware/efi
fi
hy status /etc/hyraid/hyraid.yaml; r=$?
case "$HYRAID_BOOT" in
2)
    check "the firmware started ssd1's loader, first in BootOrder ($label)" sh -c "echo '$label' | grep -q '^hyraid ssd1'"
    expect "status exits 0" $r 0
    check "status: ssd1 boots the machine" grep -q "disk ssd1: boots the machine" /tmp/hy.out
    check "status: hdd1 boots the machine" grep -q "disk hdd1: boots the machine" /tmp/hy.out
    ;;
*)
    case "$HYRAID_BOOT" in 3|5) here=hdd1; gone=ssd1;; *) here=ssd1; gone=hdd1;; esac
    [ $fw = uefi ] && check "the firmware passed over ssd1's entry (first in BootOrder, its disk gone) and started hdd1's ($label)" sh -c "echo '$label' | grep -q 'hyraid hdd1'"
    expect "the mirror runs degraded (sysfs)" "$(cat /sys/block/$(md system)/md/degraded)" 1
    expect "status exits 1 (a disk the file names is missing: an error)" $r 1
    check "status: $gone is not present" grep -q "ERROR  disk $gone: not present" /tmp/hy.out
    check "status: boot redundancy lost, $gone is not on the machine" grep -q "disk $gone: boot redundancy lost: $gone is not ready to start the machine: the disk is not on the machine" /tmp/hy.out
    check "status: the machine boots from $here alone" grep -q "the machine boots from $here alone" /tmp/hy.out
    ;;
esac
finish
