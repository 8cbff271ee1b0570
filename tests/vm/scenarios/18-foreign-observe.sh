#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M old1:hdd:256M old2:hdd:256M junk:ssd:256M
# Seed 004's layout: a foreign RAID1 whose bitmap is a file on another filesystem, plus a device
# node (not a link) left under /dev/md by a failed mdadm command. plan, status and import
# observe the rest; import writes legacy (plan would convert its file bitmap); apply of a file
# that does not name legacy builds data0 and leaves the foreign array as it was.
. /mnt/host/files/guest-lib.sh
O1=/dev/disk/by-id/ata-HYRAID_HDD_HYOLD1; O2=/dev/disk/by-id/ata-HYRAID_HDD_HYOLD2; J=/dev/disk/by-id/ata-HYRAID_SSD_HYJUNK
mkfs.ext4 -q $J && mkdir -p /mnt/junk && mount $J /mnt/junk
mdadm --create /dev/md/legacy --run --quiet --level=1 --raid-devices=2 --metadata=1.2 --bitmap=/mnt/junk/legacy.bitmap --bitmap-chunk=4K $O1 $O2
udevadm settle
check "the file bitmap shows in /proc/mdstat" grep -q "file: /mnt/junk/legacy.bitmap" /proc/mdstat
mknod /dev/md/stray b 9 99
check "a device node under /dev/md" test -b /dev/md/stray
UUID=$(mdadm --detail --export /dev/md/legacy | sed -n 's/^MD_UUID=//p')
hy plan $CFG/foreign.yaml; expect "plan exits 0" $? 0
grep -q "cannot observe" /tmp/hy.out && bad "plan could not observe: $(cat /tmp/hy.out)" || ok "plan observed the machine"
grep -q "legacy" /tmp/hy.out && ok "plan reports the foreign array" || bad "foreign array not reported"
hy status; r=$?; [ "$r" != 1 ] && ok "status is not an error (exit $r)" || bad "status failed: $(cat /tmp/hy.out)"
grep -q "cannot observe" /tmp/hy.out && bad "status could not observe" || ok "status observed the machine"
grep -qi "file" /tmp/hy.out && ok "status names the file bitmap" || bad "status output: $(cat /tmp/hy.out)"
hy import -o /tmp/imported.yaml; expect "import exits 0" $? 0
grep -q "note: /dev/md/legacy: its bitmap is in the file /mnt/junk/legacy.bitmap (deprecated" /tmp/hy.out && ok "import says plan converts the file bitmap" || bad "import output: $(cat /tmp/hy.out)"
check "the imported file names legacy" grep -q "legacy" /tmp/imported.yaml
hy apply $CFG/foreign.yaml --yes; expect "apply exits 0" $? 0
check "data0 built" test -b /dev/md/data0
expect "the foreign array keeps its UUID" "$(mdadm --detail --export /dev/md/legacy | sed -n 's/^MD_UUID=//p')" "$UUID"
check "its bitmap is still the file" grep -q "file: /mnt/junk/legacy.bitmap" /proc/mdstat
check "the stray node is untouched" test -b /dev/md/stray
expect "plan after apply exits 0" "$(hy_rc plan $CFG/foreign.yaml --detailed-exitcode)" 0
finish
