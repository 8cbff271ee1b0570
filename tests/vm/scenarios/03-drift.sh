#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M cache:ssd:256M
# releases: bookworm
# why one: the drift is read and put back through sysfs and hdparm, the same on both releases;
#   Debian 13's formats are read by 01 and tests/fixtures/trixie
# Drift: write-mostly cleared, drive cache off, backlog changed → plan lists exactly those,
# apply fixes them, plan is empty.
. /mnt/host/files/guest-lib.sh
H=ata-HYRAID_HDD_HYHDD1
hy apply $CFG/pair.yaml --yes; expect "initial apply exits 0" $? 0
wait_idle data0
M=$(md data0)
echo 512 > /sys/block/$M/md/bitmap/backlog
echo -writemostly > /sys/block/$M/md/dev-$(kname $H)/state
hdparm -W0 /dev/disk/by-id/$H >/dev/null
check "drift is real: hdd0 no longer write-mostly" sh -c "! grep -q write_mostly /sys/block/$M/md/dev-$(kname $H)/state"
"$HY" observe --capture $OUT/capture-drifted.json -o /dev/null
hy plan $CFG/pair.yaml --format json >/dev/null; expect "plan exits 0" $? 0
expect "plan has exactly 3 steps" "$(grep -c '"op":' /tmp/hy.out)" 3
for op in set_write_cache set_write_mostly set_write_behind; do
    grep -q "\"op\": \"$op\"" /tmp/hy.out && ok "plan has $op" || bad "plan lacks $op"
done
expect "plan --detailed-exitcode exits 2" "$(hy_rc plan $CFG/pair.yaml --detailed-exitcode)" 2
hy apply $CFG/pair.yaml --yes; expect "apply exits 0" $? 0
check "hdd0 write-mostly again (sysfs)" is_wm data0 $H
expect "backlog back to 0 (sysfs)" "$(backlog data0)" 0
expect "drive cache on (hdparm -W)" "$(wcache $H)" 1
expect "plan after apply exits 0" "$(hy_rc plan $CFG/pair.yaml --detailed-exitcode)" 0
finish
