#!/bin/sh
# disks: ssd1:ssd:384M hdd1:hdd:384M ssd2:ssd:384M hdd2:hdd:384M cache:ssd:192M blank:hdd:64M
# alone: it times hyraid against lvm; a VM beside it would skew the ratio
# The cost of `hyraid plan` on a converged machine (issue 15 §4, P1), on the real kernel. The
# spawn budget: with the tools wrapped by shims that log each call, one plan runs exactly one
# lsblk and one LVM report, and never wipefs on the blank disk the file does not name. Then the
# speed: 15 alternating runs of `hyraid plan` and of the LVM report alone (the same argv hyraid
# runs), medians and their ratio printed as a table; hyraid runs the report while it reads
# lsblk, /proc/mdstat and sysfs, so the plan costs the report plus hyraid's own work.
. /mnt/host/files/guest-lib.sh
CONF=$CFG/microserver.yaml
hy apply $CONF --yes > /dev/null; expect "apply exits 0" $? 0
wait_idle data0 data1
expect "plan after the resync exits 0" "$(hy_rc plan $CONF --detailed-exitcode)" 0

say "spawn budget: every program one plan runs"
mkdir -p /tmp/shim; : > /tmp/spawns.log
for t in lsblk lvm wipefs mdadm hdparm sdparm blkid dumpe2fs xfs_info xfs_admin udevadm partx sfdisk dmsetup resize2fs findmnt; do
    printf '#!/bin/sh\necho "%s $*" >> /tmp/spawns.log\nPATH=/usr/sbin:/usr/bin:/sbin:/bin exec %s "$@"\n' "$t" "$t" > /tmp/shim/$t
    chmod +x /tmp/shim/$t
done
PATH=/tmp/shim:$PATH "$HY" plan $CONF --detailed-exitcode > /tmp/hy.out 2>&1; expect "plan through the shims exits 0" $? 0
cat /tmp/spawns.log
expect "one lsblk" "$(grep -c '^lsblk ' /tmp/spawns.log)" 1
expect "one LVM report" "$(grep -c '^lvm fullreport ' /tmp/spawns.log)" 1
expect "nothing else spawned" "$(grep -v -e '^lsblk ' -e '^lvm fullreport ' /tmp/spawns.log | wc -l)" 0
expect "no wipefs on the blank disk the file does not name" "$(grep -c '^wipefs' /tmp/spawns.log)" 0
LSBLK_ARGS=$(grep -m 1 '^lsblk ' /tmp/spawns.log | cut -d' ' -f2-)

say "apply on the converged machine: the same two reads, taken after its lock"
: > /tmp/spawns.log
PATH=/tmp/shim:$PATH "$HY" apply $CONF --yes > /tmp/hy.out 2>&1; expect "apply through the shims exits 0" $? 0
cat /tmp/spawns.log
expect "apply: one lsblk" "$(grep -c '^lsblk ' /tmp/spawns.log)" 1
expect "apply: one LVM report" "$(grep -c '^lvm fullreport ' /tmp/spawns.log)" 1
expect "apply: nothing else spawned" "$(grep -v -e '^lsblk ' -e '^lvm fullreport ' /tmp/spawns.log | wc -l)" 0
# Another apply holds the lock (a stand-in holding it as apply does, its pid in the file): a
# second apply is refused before it reads anything; a dry run takes no lock and still plans.
sh -c 'exec 9<> /run/lock/hyraid.lock; flock -n 9 || exit 1; echo $$ > /run/lock/hyraid.lock; exec sleep 60' &
holder=$!
for i in $(seq 1 50); do [ "$(cat /run/lock/hyraid.lock 2> /dev/null)" = "$holder" ] && break; sleep 0.1; done
: > /tmp/spawns.log
PATH=/tmp/shim:$PATH "$HY" apply $CONF --yes > /tmp/hy.out 2>&1; rc=$?; cat /tmp/hy.out
expect "a second apply is refused (exit 1)" $rc 1
expect "it names the holder" "$(grep -c "another hyraid apply (pid $holder) holds /run/lock/hyraid.lock" /tmp/hy.out)" 1
expect "it spawned nothing (refused before reading the machine)" "$(wc -l < /tmp/spawns.log)" 0
PATH=/tmp/shim:$PATH "$HY" apply $CONF --dry-run > /tmp/hy.out 2>&1; expect "a dry run meanwhile exits 0" $? 0
expect "the dry run read the machine" "$(grep -c '^lvm fullreport ' /tmp/spawns.log)" 1
kill $holder; wait $holder 2> /dev/null

say "speed: 15 alternating runs, medians in ms"
# The binary runs from the guest's own disk, as the package installs it: loading 13 MB through
# the 9p share of /mnt/host costs more under TCG than the whole observation.
install -m 0755 "$HY" /usr/local/bin/hyraid
ms() { s=$(date +%s%N); "$@" > /dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
: > /tmp/plan.ms; : > /tmp/lvm.ms; : > /tmp/lsblk.ms; : > /tmp/start.ms; : > /tmp/observe.ms; : > /tmp/reads.ms
# The floor under plan: the two reads it waits for, run side by side by sh and nothing else (on
# 2 vCPUs they slow each other; what plan costs beyond this is hyraid's own work).
reads() { lsblk $LSBLK_ARGS > /dev/null & lvm fullreport --all --reportformat json --units b --nosuffix > /dev/null; wait; }
for i in $(seq 1 15); do
    ms /usr/local/bin/hyraid plan $CONF >> /tmp/plan.ms
    ms lvm fullreport --all --reportformat json --units b --nosuffix >> /tmp/lvm.ms
    ms lsblk --json --bytes -O >> /tmp/lsblk.ms
    ms /usr/local/bin/hyraid --version >> /tmp/start.ms
    ms /usr/local/bin/hyraid observe -o /dev/null >> /tmp/observe.ms
    ms reads >> /tmp/reads.ms
done
median() { sort -n "$1" | sed -n 8p; }
# Where one plan's time goes: hyraid's own timeline (HYRAID_TIMINGS=1: ms since it started, at
# each boundary: the arguments parsed, lsblk and the LVM report started, the file read, each
# answer in, the plan made), with the run's wall time beside it.
for i in 1 2 3; do
    s=$(date +%s%N); HYRAID_TIMINGS=1 /usr/local/bin/hyraid plan $CONF > /dev/null 2> /tmp/tl.err; e=$(date +%s%N)
    echo "timeline $i (wall $(( (e - s) / 1000000 )) ms): $(sed 's/^hyraid timings: *//; s/  */ /g' /tmp/tl.err | paste -sd ';')"
done
P=$(median /tmp/plan.ms); L=$(median /tmp/lvm.ms)
R=$(awk -v p="$P" -v l="$L" 'BEGIN { printf "%.2f", p / l }')
echo "| $(. /etc/os-release; echo "$PRETTY_NAME") | median of 15 |"
echo "|---|---|"
echo "| hyraid plan (converged) | $P ms |"
echo "| lvm fullreport --reportformat json | $L ms |"
echo "| lsblk --json -O (for scale) | $(median /tmp/lsblk.ms) ms |"
echo "| hyraid --version (start-up) | $(median /tmp/start.ms) ms |"
echo "| hyraid observe (no file: every probe) | $(median /tmp/observe.ms) ms |"
F=$(median /tmp/reads.ms)
echo "| lsblk and the LVM report side by side, by sh (the reads plan waits for) | $F ms |"
echo "| ratio plan / LVM report | ${R}x |"
echo "| ratio those two reads alone / LVM report (the floor) | $(awk -v f="$F" -v l="$L" 'BEGIN { printf "%.2f", f / l }')x |"
echo "plan runs (ms): $(tr '\n' ' ' < /tmp/plan.ms)"
echo "lvm runs (ms): $(tr '\n' ' ' < /tmp/lvm.ms)"
# Under TCG every figure is noisy (2.29x and 2.40x in two runs here). The bound is a guard
# against a regression past the 2.6x this plan cost before its reads ran side by side, not the
# 1.3x target, which hyraid does not meet yet: the table shows where the rest of the time goes.
awk -v r="$R" 'BEGIN { exit !(r <= 3.0) }' && ok "plan within 3x of one LVM report (${R}x)" || bad "plan costs ${R}x one LVM report"
finish
