#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M hdd2:hdd:512M
# Mirror width (seed 002): a 2-HDD mirror with LVM and an ext4 LV holding a checksummed file;
# the file then adds an SSD: hyraid adds it as a spare, grows the array to 3 slots
# (`mdadm --grow --raid-devices=3`), waits for the recovery and makes the HDDs write-mostly.
# Then the file drops one HDD: refused without --allow-destroy; with it, the HDD is failed,
# removed and the array shrunk to 2. Checked with sysfs (raid_disks, dev-*/state), mdadm
# --detail and the file's checksum; the plan after each apply is empty.
. /mnt/host/files/guest-lib.sh
S=ata-HYRAID_SSD_HYSSD1; H1=ata-HYRAID_HDD_HYHDD1; H2=ata-HYRAID_HDD_HYHDD2
active() { mdadm --detail /dev/md/data0 | sed -n 's/^ *Active Devices : //p'; }
raid_disks() { cat "/sys/block/$(md data0)/md/raid_disks"; }

say "a 2-HDD mirror with LVM and data"
hy apply $CFG/width-two-hdd.yaml --yes; expect "apply exits 0" $? 0
wait_idle data0
expect "2 slots (sysfs raid_disks)" "$(raid_disks)" 2
mkfs.ext4 -q /dev/vg0/files && mkdir -p /mnt/f && mount /dev/vg0/files /mnt/f
dd if=/dev/urandom of=/mnt/f/data bs=1M count=64 2>/dev/null; sync
SUM=$(sha256sum /mnt/f/data | cut -d' ' -f1)
same() { sync; echo 3 > /proc/sys/vm/drop_caches; expect "file intact after $1" "$(sha256sum /mnt/f/data | cut -d' ' -f1)" "$SUM"; }

say "the file adds an SSD"
hy plan $CFG/width-three.yaml; expect "plan exits 0" $? 0
grep -q -- "--add /dev/disk/by-id/.*HYSSD1" /tmp/hy.out && ok "plan adds the SSD" || bad "no --add of the SSD"
grep -q -- "mdadm --grow /dev/md/data0 --raid-devices=3" /tmp/hy.out && ok "plan grows to 3" || bad "no --grow --raid-devices=3"
grep -q "wait for resync" /tmp/hy.out && ok "plan waits for the recovery" || bad "no wait step"
hy apply $CFG/width-three.yaml --yes; expect "apply exits 0" $? 0
expect "3 slots (sysfs raid_disks)" "$(raid_disks)" 3
expect "3 active members (mdadm --detail)" "$(active)" 3
expect "idle (sysfs sync_action)" "$(cat /sys/block/$(md data0)/md/sync_action)" idle
check "[3/3] [UUU] (/proc/mdstat)" grep -q "\[3/3\] \[UUU\]" /proc/mdstat
check "hdd0 write-mostly (sysfs state)" is_wm data0 $H1
check "hdd1 write-mostly (sysfs state)" is_wm data0 $H2
member_state data0 $S | tr , '\n' | grep -qx write_mostly && bad "the SSD is write-mostly" || ok "the SSD takes reads"
same "the grow"
expect "plan after apply exits 0" "$(hy_rc plan $CFG/width-three.yaml --detailed-exitcode)" 0

say "the file removes one HDD"
hy plan $CFG/width-back.yaml; expect "plan without --allow-destroy refuses (exit 1)" $? 1
grep -q -- "--allow-destroy" /tmp/hy.out && ok "the refusal names --allow-destroy" || bad "no --allow-destroy in the fix"
hy apply $CFG/width-back.yaml --yes; expect "apply without --allow-destroy refuses (exit 1)" $? 1
expect "still 3 slots (sysfs raid_disks)" "$(raid_disks)" 3
hy plan $CFG/width-back.yaml --allow-destroy; expect "plan --allow-destroy exits 0" $? 0
grep -q -- "--fail /dev/disk/by-id/" /tmp/hy.out && ok "plan fails the HDD" || bad "no --fail"
grep -q -- "mdadm --grow /dev/md/data0 --raid-devices=2" /tmp/hy.out && ok "plan shrinks to 2" || bad "no --grow --raid-devices=2"
hy apply $CFG/width-back.yaml --allow-destroy --yes; expect "apply --allow-destroy exits 0" $? 0
expect "2 slots (sysfs raid_disks)" "$(raid_disks)" 2
expect "2 active members (mdadm --detail)" "$(active)" 2
check "[2/2] [UU] (/proc/mdstat)" grep -q "\[2/2\] \[UU\]" /proc/mdstat
check "hdd1 is no longer a member (sysfs)" sh -c "! test -e /sys/block/$(md data0)/md/dev-$(kname $H2)"
check "hdd0 still write-mostly (sysfs state)" is_wm data0 $H1
same "the removal"
expect "plan after apply exits 0" "$(hy_rc plan $CFG/width-back.yaml --detailed-exitcode)" 0
cat /tmp/hy.out
finish
