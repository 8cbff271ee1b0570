#!/bin/sh
# disks: ssd1:ssd:1G hdd1:hdd:1G ssd2:ssd:1G hdd2:hdd:1G cache:ssd:512M
# releases: bookworm trixie
# why both: what a kill leaves half-made (an array mdadm 4.4 started, an LV lvm2 2.03.31 began) is
#   the tools' own
# hyraid is killed (SIGKILL) after the k-th command of the fresh build, for several k; a second
# apply completes the build, and plan then has nothing left. Debian 12 is killed at six points;
# Debian 13 (one vCPU, half the speed) at three of them, early, middle and late, which keeps
# .ci/run's two releases inside its time limit.
# Nothing here waits for a resync, so they crawl: at full speed each round's two fresh 1 GiB
# mirrors took the emulated CPU from the applies.
. /mnt/host/files/guest-lib.sh
. /etc/os-release
resync_crawls
POINTS="1 3 5 8 11 13"; [ "$VERSION_CODENAME" = bookworm ] || POINTS="1 5 11"
for k in $POINTS; do
    say "kill after command $k"
    teardown
    hdparm -W0 /dev/disk/by-id/ata-HYRAID_HDD_HYHDD1 /dev/disk/by-id/ata-HYRAID_HDD_HYHDD2 >/dev/null
    rm -f /tmp/j.jsonl
    "$HY" apply $CFG/microserver.yaml --yes --journal /tmp/j.jsonl > /tmp/crash.out 2>&1 &
    pid=$!
    while kill -0 $pid 2>/dev/null && [ "$(cat /tmp/j.jsonl 2>/dev/null | wc -l)" -lt $k ]; do sleep 0.01; done
    kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    n=$(cat /tmp/j.jsonl 2>/dev/null | wc -l)
    echo "killed with $n command(s) journaled"
    udevadm settle
    hy apply $CFG/microserver.yaml --yes > /tmp/second.out 2>&1; r=$?
    [ $r = 0 ] || cat /tmp/second.out
    expect "k=$k: second apply converges" $r 0
    expect "k=$k: plan after exits 0" "$(hy_rc plan $CFG/microserver.yaml --detailed-exitcode)" 0
    check "k=$k: hdd0 write-mostly" is_wm data0 ata-HYRAID_HDD_HYHDD1
    expect "k=$k: writecache attached" "$(lvfield vg0/nextcloud segtype)" writecache
    echo "k=$k journaled=$n" >> $OUT/crash-points.txt
done
finish
