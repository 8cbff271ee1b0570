#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M cache:ssd:256M
# Drift as monitoring (issue 15 §3): the package's hyraid-drift.service, run on the real kernel
# exactly as its unit file says (the guest has no systemd as PID 1: run_unit executes the
# unit's ExecStartPre/ExecStart lines in order and stops at the first failing one not marked
# `-`, as systemd does for a oneshot service). On the converged machine it succeeds; with
# write-mostly cleared in sysfs it fails and its textfile says drift; with a member failed it
# fails and the textfile shows the degraded array.
. /mnt/host/files/guest-lib.sh
UNIT=/usr/lib/systemd/system/hyraid-drift.service
PROM=/var/lib/prometheus/node-exporter/hyraid.prom
# run_unit FILE: the service's commands as systemd runs a Type=oneshot unit.
run_unit() {
    grep -E '^ExecStart(Pre)?=' "$1" | sed 's/^[^=]*=//' > /tmp/unit.cmds
    urc=0
    while read -r cmd; do
        ign=0; case "$cmd" in -*) ign=1; cmd=${cmd#-};; esac
        echo "+ $cmd"; sh -c "$cmd" < /dev/null; r=$?
        if [ $r != 0 ] && [ $ign = 0 ]; then urc=$r; echo "(the unit fails: exit $r)"; break; fi
    done < /tmp/unit.cmds
    return $urc
}
metric() { sed -n "s/^$1 //p" $PROM; }

say "install the .deb: the units and the timer"
deb=$(ls /mnt/host/files/hyraid_*_amd64.deb 2>/dev/null | head -1)
dpkg -i "$deb" > /tmp/dpkg.out 2>&1; expect "dpkg -i exits 0" $? 0
check "the service is installed" test -f $UNIT
check "the timer is installed" test -f /usr/lib/systemd/system/hyraid-drift.timer
grep -q '^OnUnitActiveSec=15min' /usr/lib/systemd/system/hyraid-drift.timer && ok "the timer runs every 15 minutes" || bad "no OnUnitActiveSec in the timer"
grep -q '^WantedBy=timers.target' /usr/lib/systemd/system/hyraid-drift.timer && ok "the timer is wanted by timers.target" || bad "no [Install] in the timer"

say "converged: the unit succeeds"
# Debian's monthly checkarray as a default install has it (the guest image turns it off): the file
# has no `check:`, so without the release's schedule status would rightly lint
# `no-scheduled-check` and the unit fail.
sed -i 's/^AUTOCHECK=.*/AUTOCHECK=true/' /etc/default/mdadm
mkdir -p /etc/hyraid; cp $CFG/pair.yaml /etc/hyraid/hyraid.yaml
hyraid apply /etc/hyraid/hyraid.yaml --yes > /tmp/apply.out 2>&1; expect "apply exits 0" $? 0
wait_idle data0
run_unit $UNIT > /tmp/unit.out 2>&1; r=$?; cat /tmp/unit.out
expect "the drift unit succeeds on the converged machine" $r 0
check "the textfile is written" test -s $PROM
cat $PROM
expect "textfile: no drift" "$(metric hyraid_drift)" 0
expect "textfile: data0 complete" "$(metric "hyraid_md_degraded{array=\"data0\",device=\"$(md data0)\"}")" 0
expect "textfile: hdd0 write-mostly" "$(metric "hyraid_md_member_write_mostly{array=\"data0\",device=\"$(md data0)\",member=\"$(kname ata-HYRAID_HDD_HYHDD1)\"}")" 1
expect "textfile: no temporary file left" "$(ls -A /var/lib/prometheus/node-exporter | tr '\n' ' ')" "hyraid.prom "

say "write-mostly cleared in the guest: the unit fails, the textfile says drift"
echo -writemostly > /sys/block/$(md data0)/md/dev-$(kname ata-HYRAID_HDD_HYHDD1)/state
run_unit $UNIT > /tmp/unit.out 2>&1; r=$?; cat /tmp/unit.out
expect "the drift unit fails (exit 2: status's lint stops it before the plan)" $r 2
grep -q "a rotational member is not write-mostly" /tmp/unit.out && ok "the unit's log names the lost write-mostly" || bad "no write-mostly finding in the unit's output"
expect "textfile: drift" "$(metric hyraid_drift)" 1
expect "textfile: write-mostly lost on data0" "$(metric "hyraid_md_write_mostly_lost{array=\"data0\",device=\"$(md data0)\"}")" 1
hyraid plan /etc/hyraid/hyraid.yaml > /tmp/plan.out 2>&1
grep -q "set write-mostly on hdd0" /tmp/plan.out && ok "the plan has the step that fixes it" || bad "no write-mostly step in the plan: $(cat /tmp/plan.out)"
hyraid apply /etc/hyraid/hyraid.yaml --yes > /tmp/apply.out 2>&1; expect "apply fixes the drift" $? 0
run_unit $UNIT > /tmp/unit.out 2>&1; expect "the unit succeeds again" $? 0

say "a member failed: the unit fails, the textfile shows the degraded array"
mdadm /dev/md/data0 --fail /dev/disk/by-id/ata-HYRAID_HDD_HYHDD1; expect "mdadm --fail exits 0" $? 0
run_unit $UNIT > /tmp/unit.out 2>&1; r=$?; cat /tmp/unit.out
expect "the drift unit fails (status: degraded, exit 2)" $r 2
grep -q "DEGRADED" /tmp/unit.out && ok "the unit's log names the degraded array" || bad "no DEGRADED in the unit's output"
cat $PROM
expect "textfile: data0 degraded by one" "$(metric "hyraid_md_degraded{array=\"data0\",device=\"$(md data0)\"}")" 1
expect "textfile: status exit 2" "$(metric hyraid_status_exit_code)" 2
finish
