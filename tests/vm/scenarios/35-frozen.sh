#!/bin/sh
# disks: ssd1:ssd:256M hdd1:hdd:256M
# A frozen array (`echo frozen > sync_action`: md starts no resync or recovery and refuses
# bitmap changes until someone writes idle). A bitmap change on it is refused at plan time with
# how to thaw it, and plan returns (it waited forever in its preview before); status says it is
# frozen; thawed, the same file applies. An array frozen while apply waits for a check to end
# stops that wait after a minute, with the fix, and runs nothing after it.
. /mnt/host/files/guest-lib.sh
H=/dev/disk/by-id/ata-HYRAID_HDD_HYHDD1
SA() { echo "/sys/block/$(md data0)/md/sync_action"; }

hy apply $CFG/read-auto.yaml --yes; expect "build: apply exits 0" $? 0
mdadm --wait /dev/md/data0 >/dev/null 2>&1
expect "bitmap chunk 64 MiB (sysfs)" "$(bitmap_chunk data0)" 67108864

say "frozen at plan time"
echo frozen > "$(SA)"
expect "sync_action reads frozen" "$(cat "$(SA)")" frozen
timeout 120 "$HY" plan $CFG/frozen-chunk.yaml > /tmp/hy.out 2>&1; rc=$?; cat /tmp/hy.out
expect "plan refuses and returns (exit 1, not a timeout)" $rc 1
grep -q "is frozen" /tmp/hy.out && ok "the refusal says the array is frozen" || bad "no word on frozen"
grep -q "echo idle > /sys/block/$(md data0)/md/sync_action" /tmp/hy.out && ok "the fix says how to thaw it" || bad "no thaw command"
hy status $CFG/read-auto.yaml; expect "status exits 2" $? 2
grep -q "resync and recovery are frozen" /tmp/hy.out && ok "status reports the frozen array" || bad "status says nothing of frozen"
hy apply $CFG/frozen-chunk.yaml --yes; expect "apply refuses (exit 1)" $? 1
expect "bitmap chunk unchanged (sysfs)" "$(bitmap_chunk data0)" 67108864
echo idle > "$(SA)"
expect "thawed: sync_action reads idle" "$(cat "$(SA)")" idle
hy apply $CFG/frozen-chunk.yaml --yes; expect "thawed: apply exits 0" $? 0
expect "bitmap chunk 128 MiB (sysfs)" "$(bitmap_chunk data0)" 134217728
expect "plan after apply exits 0" "$(hy_rc plan $CFG/frozen-chunk.yaml --detailed-exitcode)" 0

say "frozen while apply waits"
echo 1 > /sys/block/$(md data0)/md/sync_speed_max
echo check > "$(SA)"
expect "a check runs (sysfs)" "$(cat "$(SA)")" check
"$HY" apply $CFG/read-auto.yaml --yes > /tmp/apply.out 2>&1 &
pid=$!
# The plan is made while the check runs: its first step waits for idle.
n=0; until grep -q "wait for resync" /tmp/apply.out || [ $n -ge 120 ]; do sleep 1; n=$((n + 1)); done
sleep 3
echo frozen > "$(SA)"
wait $pid; rc=$?; cat /tmp/apply.out
expect "apply stops (exit 1)" $rc 1
grep -q "stayed frozen" /tmp/apply.out && ok "apply says the array stayed frozen" || bad "no word on frozen"
grep -q "echo idle > /sys/block/$(md data0)/md/sync_action" /tmp/apply.out && ok "apply says how to thaw it" || bad "no thaw command"
expect "bitmap chunk unchanged (sysfs)" "$(bitmap_chunk data0)" 134217728
echo idle > "$(SA)"; echo idle > "$(SA)" 2>/dev/null
echo max > /sys/block/$(md data0)/md/sync_speed_max
mdadm --wait /dev/md/data0 >/dev/null 2>&1
hy apply $CFG/read-auto.yaml --yes; expect "thawed: apply exits 0" $? 0
expect "bitmap chunk 64 MiB (sysfs)" "$(bitmap_chunk data0)" 67108864
expect "plan after apply exits 0" "$(hy_rc plan $CFG/read-auto.yaml --detailed-exitcode)" 0
finish
