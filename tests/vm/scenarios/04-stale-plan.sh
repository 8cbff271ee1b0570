#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M cache:ssd:256M
# A saved plan made before the machine changed is refused and changes nothing; a fresh one applies.
. /mnt/host/files/guest-lib.sh
hy plan $CFG/pair.yaml -o /tmp/p.json; expect "plan -o exits 0" $? 0
hdparm -W0 /dev/disk/by-id/ata-HYRAID_SSD_HYCACHE >/dev/null
hy apply /tmp/p.json --yes; expect "stale plan refused (exit 1)" $? 1
grep -q "plan is stale" /tmp/hy.out && ok "error says plan is stale" || bad "no stale message"
check "nothing was created" sh -c '! grep -q "^md" /proc/mdstat'
expect "HDD write cache untouched" "$(wcache ata-HYRAID_HDD_HYHDD1)" 1
hy plan $CFG/pair.yaml -o /tmp/p2.json >/dev/null; expect "fresh plan exits 0" $? 0
hy apply /tmp/p2.json --yes; expect "fresh saved plan applies" $? 0
expect "plan after apply exits 0" "$(hy_rc plan $CFG/pair.yaml --detailed-exitcode)" 0
finish
