#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M cache:ssd:256M
# prep: hdd1=ext4
# host: checksum
# plan and apply --dry-run (even with --allow-destroy over an ext4 disk) leave every disk
# byte-identical; the host compares checksums of the raw images before and after.
. /mnt/host/files/guest-lib.sh
hy plan $CFG/pair.yaml; expect "plan exits 1 (a change is refused)" $? 1
grep -q "carries ext4" /tmp/hy.out && ok "plan refuses the ext4 disk" || bad "no refusal in plan"
hy apply $CFG/pair.yaml --dry-run --allow-destroy; expect "dry run exits 0" $? 0
grep -q "wipefs --all /dev/disk/by-id/ata-HYRAID_HDD_HYHDD1" /tmp/hy.out && ok "dry run shows the wipe it would do" || bad "dry run lacks wipefs"
grep -q "Dry run: nothing was changed" /tmp/hy.out && ok "dry run says so" || bad "no dry-run line"
hy plan $CFG/pair.yaml --allow-destroy --format shell >/dev/null; expect "shell plan exits 0" $? 0
hy apply $CFG/pair.yaml --yes; expect "apply without --allow-destroy exits 1 (refused)" $? 1
check "no md array was created" sh -c '! grep -q "^md" /proc/mdstat'
sync
finish
