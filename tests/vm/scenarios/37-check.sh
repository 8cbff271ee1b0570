#!/bin/sh
# disks: ssd1:ssd:64M hdd1:hdd:64M
# releases: bookworm trixie
# why both: kernel 6.12's md check and its sync_min bookkeeping (it pauses elsewhere), and Debian
#   13's own mdcheck timer, which apply switches off
# A mirror's scheduled check on the real kernel. apply installs hyraid's settings, the check
# service and the mirror's timer (linked), points md's monitor at hyraid and switches the
# release's schedule off; the timer's service, run as systemd runs it (given a 20 s budget, as a
# person shortens one run: the file's least is a minute) checks at the file's 2 MiB/s and pauses,
# md keeping the place in sync_min; the next run resumes there and completes. status and the textfile show the paused check, then the completed one;
# the speed limit is put back; a degraded mirror's check is skipped, with why.
. /mnt/host/files/guest-lib.sh
C=$CFG/check.yaml
H=ata-HYRAID_HDD_HYHDD1
# hyraid where the units and mdadm.conf name it (the package puts it in /usr/bin).
ln -sf "$HY" /usr/local/bin/hyraid
mkdir -p /etc/hyraid && echo s3cret > /etc/hyraid/hook.token && chmod 600 /etc/hyraid/hook.token
TRIXIE=no; [ -e /lib/systemd/system/mdcheck_start.timer ] && grep -q RandomizedDelaySec /lib/systemd/system/mdcheck_start.timer && TRIXIE=yes
[ "$TRIXIE" = yes ] && check "Debian 13 enables its mdcheck timer (the release's schedule)" test -L /etc/systemd/system/mdmonitor.service.wants/mdcheck_start.timer

hy apply $C --yes; expect "apply exits 0" $? 0
wait_idle data0
check "hyraid's settings are written" test -s /etc/hyraid/monitoring.json
check "the check service is installed" grep -q '^ExecStart=/usr/local/bin/hyraid check %i --scheduled' /etc/systemd/system/hyraid-check@.service
check "the mirror's timer has the file's schedule" grep -qx 'OnCalendar=Sun \*-\*-1..7 02:00' /etc/systemd/system/hyraid-check@data0.timer
check "the timer is enabled (linked in timers.target.wants)" test -L /etc/systemd/system/timers.target.wants/hyraid-check@data0.timer
check "md's monitor runs hyraid (mdadm.conf PROGRAM)" grep -qx 'PROGRAM /usr/local/bin/hyraid' /etc/mdadm/mdadm.conf
if [ "$TRIXIE" = yes ]; then
    check "the release's mdcheck timer is switched off" test ! -e /etc/systemd/system/mdmonitor.service.wants/mdcheck_start.timer
fi
expect "plan after apply exits 0" "$(hy_rc plan $C --detailed-exitcode)" 0
hy status $C; expect "status before any check exits 2 (never checked)" $? 2
grep -q "no check of it has completed" /tmp/hy.out && ok "status says no check completed" || bad "status: nothing on the check"

MD=$(md data0)
# The timer's service, as systemd starts it (the guest has no systemd).
EXEC=$(sed -n 's/^ExecStart=//p' /etc/systemd/system/hyraid-check@.service | sed 's/%i/data0/g')
say "the scheduled check, first run (budget 20 s at 2 MiB/s)"
T0=$(date +%s)
$EXEC --budget 20s > /tmp/run1.out 2>&1; r=$?; cat /tmp/run1.out
expect "the first run exits 0" $r 0
T1=$(date +%s)
[ $((T1 - T0)) -ge 18 ] && ok "it ran for its budget ($((T1 - T0)) s)" || bad "it ended after $((T1 - T0)) s"
grep -q "paused at" /tmp/run1.out && ok "it says it paused" || bad "no pause said"
POS=$(cat /sys/block/$MD/md/sync_min)
[ "$POS" -gt 0 ] && ok "md keeps the place in sync_min ($POS)" || bad "sync_min is $POS"
expect "md is idle after the run (sysfs)" "$(cat /sys/block/$MD/md/sync_action)" idle
grep -q "(system)" /sys/block/$MD/md/sync_speed_max && ok "the speed limit is md's own again ($(cat /sys/block/$MD/md/sync_speed_max))" || bad "sync_speed_max left at $(cat /sys/block/$MD/md/sync_speed_max)"
hy status $C
grep -q "a check is paused at" /tmp/hy.out && ok "status shows the paused check" || bad "status: no paused check"
hy status $C --format prometheus
R=$(sed -n 's/^hyraid_check_resume_ratio{array="data0",device="[^"]*"} //p' /tmp/hy.out)
awk -v r="${R:-0}" 'BEGIN { exit !(r > 0 && r < 1) }' && ok "the textfile says where it resumes ($R)" || bad "resume ratio '$R'"
cp /tmp/hy.out $OUT/paused.prom

say "the scheduled check, second run (given 5 minutes, so that it completes however fast md goes)"
$EXEC --budget 5m > /tmp/run2.out 2>&1; r=$?; cat /tmp/run2.out
expect "the second run exits 0" $r 0
grep -q "resuming at sector $POS" /tmp/run2.out && ok "it resumed at sector $POS" || bad "not resumed at $POS"
grep -q "completed, no mismatch" /tmp/run2.out && ok "it completed, no mismatch" || bad "not completed"
expect "sync_min is back to 0 (md forgets it at the end)" "$(cat /sys/block/$MD/md/sync_min)" 0
expect "mismatch_cnt (sysfs)" "$(cat /sys/block/$MD/md/mismatch_cnt)" 0
REC=$(ls /var/lib/hyraid/checks/*.json)
grep -q '"runs": 2' "$REC" && ok "the record's last pass took 2 runs" || bad "record: $(cat $REC)"
cp "$REC" $OUT/check-record.json
hy status $C; expect "status after the check exits 0" $? 0
grep -q "last check completed .* ago, no mismatch" /tmp/hy.out && ok "status shows the last check" || bad "status: no last check"
hy status $C --format prometheus
grep -q '^hyraid_check_last_completed_timestamp_seconds{array="data0"' /tmp/hy.out && ok "the textfile has the last completed check" || bad "no last check in the textfile"
expect "the textfile: no mismatch" "$(sed -n 's/^hyraid_check_mismatch_sectors{array="data0",device="[^"]*"} //p' /tmp/hy.out)" 0
cp /tmp/hy.out $OUT/completed.prom
hy check; grep -q "last completed check: .* ago, 0 mismatch(es), in 2 run(s)" /tmp/hy.out && ok "hyraid check lists it" || bad "hyraid check: no listing"

say "a degraded mirror's check is skipped"
mdadm /dev/md/data0 --fail /dev/disk/by-id/$H >/dev/null 2>&1
$EXEC > /tmp/run3.out 2>&1; r=$?; cat /tmp/run3.out
expect "the run exits 0" $r 0
grep -q "skipped: the array is degraded" /tmp/run3.out && ok "it says why it skipped" || bad "no skip said"
expect "no check started (sysfs)" "$(cat /sys/block/$MD/md/sync_action)" idle
grep -q '"outcome": "skipped"' "$REC" && ok "the record keeps the skipped run" || bad "record: no skipped run"
finish
