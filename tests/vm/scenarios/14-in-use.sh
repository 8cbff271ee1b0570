#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:1G ssd2:ssd:512M hdd2:hdd:512M old1:hdd:256M
# --allow-destroy allows destroying data at rest, never anything in use. hdd1's first GPT
# partition is free; the others hold an open LUKS volume, active swap, a mounted ext4 and three
# RAID5 legs: hyraid refuses to take the disk and runs nothing. Then a 2-way mirror is asked to
# take a third disk, smaller than its members and carrying ext4: the join is refused, and so is
# the wipe it needed.
. /mnt/host/files/guest-lib.sh
H=/dev/disk/by-id/ata-HYRAID_HDD_HYHDD1
OLD=/dev/disk/by-id/ata-HYRAID_HDD_HYOLD1
sgdisk -n1:0:+64M -n2:0:+64M -n3:0:+64M -n4:0:+128M -n5:0:+64M -n6:0:+64M -n7:0:+64M $H
udevadm settle
check "7 partitions on hdd1" test -b $H-part7
printf 'hyraid-test-key' > /tmp/key
cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file /tmp/key $H-part2 \
    && cryptsetup open --key-file /tmp/key $H-part2 hyraid-luks; check "LUKS volume open on part2" test -b /dev/mapper/hyraid-luks
mkswap -q $H-part3 >/dev/null && swapon $H-part3; check "swap active on part3" sh -c "grep -q '^$(readlink -f $H-part3) ' /proc/swaps"
mkfs.ext4 -q $H-part4 && mkdir -p /mnt/p4 && mount $H-part4 /mnt/p4 && echo precious > /mnt/p4/f && sync
check "ext4 mounted from part4" mountpoint -q /mnt/p4
mdadm --create /dev/md/legacy5 --run --quiet --level=5 --raid-devices=3 --metadata=1.2 --assume-clean $H-part5 $H-part6 $H-part7
check "RAID5 on part5-7" test -b /dev/md/legacy5
udevadm settle
[ "$FAILS" = 0 ] || { bad "the in-use layout could not be built; stopping before hyraid runs"; finish; }
TABLE=$(sgdisk -p $H | sha256sum)
hy plan $CFG/in-use.yaml --allow-destroy; expect "plan --allow-destroy refuses (exit 1)" $? 1
grep -q "wipe" /tmp/hy.out && bad "the plan offers a wipe: $(grep wipe /tmp/hy.out)" || ok "no wipe in the plan"
for want in "is in use by dm-" "is active swap" "is mounted on /mnt/p4" "is a member of /dev/md/legacy5"; do
    grep -q -- "$want" /tmp/hy.out && ok "refusal names: $want" || bad "refusal lacks '$want': $(cat /tmp/hy.out)"
done
grep -q "$(basename "$(readlink -f $H-part1)") " /tmp/hy.out && bad "the free part1 is named as in use" || ok "the free part1 is not named"
hy apply $CFG/in-use.yaml --allow-destroy --yes; expect "apply --allow-destroy refuses (exit 1)" $? 1
grep -q "nothing was run" /tmp/hy.out && ok "apply says nothing was run" || bad "apply output: $(cat /tmp/hy.out)"
check "no mirror data0 was created" sh -c "! test -e /dev/md/data0"
expect "partition table unchanged (sgdisk -p)" "$(sgdisk -p $H | sha256sum)" "$TABLE"
check "LUKS volume still open" test -b /dev/mapper/hyraid-luks
check "swap still active" sh -c "grep -q '^$(readlink -f $H-part3) ' /proc/swaps"
expect "file on the mounted ext4 intact" "$(cat /mnt/p4/f)" precious
check "RAID5 still running" sh -c "grep -q '^$(md legacy5) : active raid5' /proc/mdstat"

say "a join refused (the disk is too small) takes its wipe with it"
mkfs.ext4 -q -F $OLD && mkdir -p /mnt/old && mount $OLD /mnt/old && echo precious > /mnt/old/f && umount /mnt/old
# Build data1 alone (data0 stays refused): a file with only data1.
sed -e '/^  ssd0:\|^  hdd0:\|^  data0:/d' $CFG/in-use.yaml > /tmp/only-data1.yaml
hy apply /tmp/only-data1.yaml --yes; expect "data1 built (exit 0)" $? 0
sed -e '/^  ssd0:\|^  hdd0:\|^  data0:/d' $CFG/in-use-join.yaml > /tmp/join.yaml
hy plan /tmp/join.yaml --allow-destroy; expect "plan refuses the join (exit 1)" $? 1
grep -q "is smaller than the array's members" /tmp/hy.out && ok "refusal says: the disk is smaller" || bad "plan output: $(cat /tmp/hy.out)"
grep -q "wipe" /tmp/hy.out && bad "the wipe is still planned: $(grep wipe /tmp/hy.out)" || ok "no wipe without the join"
hy apply /tmp/join.yaml --allow-destroy --yes; expect "apply refuses (exit 1)" $? 1
expect "old0 still carries ext4 (blkid)" "$(blkid -o value -s TYPE $OLD)" ext4
mount -o ro $OLD /mnt/old && { expect "old0's file intact" "$(cat /mnt/old/f)" precious; umount /mnt/old; }
expect "data1 still has 2 members" "$(mdadm --detail --export /dev/md/data1 | sed -n 's/^MD_DEVICES=//p')" 2
finish
