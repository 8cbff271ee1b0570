#!/bin/sh
# disks: ssd1:ssd:1G hdd1:hdd:1G ssd2:ssd:1G hdd2:hdd:1G cache:ssd:512M
# benchmark
# alone: it times apply against sh; a VM beside it would skew the ratio
# The cost of `hyraid apply` beyond the commands it runs (issue 15 §4, P3), on the real kernel.
# From blank disks, alternately: `sh` running the plan's `--format shell` output (the floor: the
# same commands, nothing else) and `hyraid apply --yes`, with a teardown to blank disks and the
# boot files restored between runs; both must leave a machine whose plan is empty. Medians and
# their ratio as a table. Then one traced run of each, with every tool wrapped by a shim that
# logs when it starts and ends: the spawns apply makes beyond the script's, and the time between
# commands that is apply's own.
# A benchmark: run.sh runs it with HYRAID_VM_PERF=full (4 rounds, 8 runs) or when named (2
# rounds); .ci/run does not. A warm-up apply comes first.
. /mnt/host/files/guest-lib.sh
CONF=$CFG/microserver.yaml
install -m 0755 "$HY" /usr/local/bin/hyraid; H=/usr/local/bin/hyraid
ROUNDS=2; [ "${HYRAID_VM_PERF:-short}" = full ] && ROUNDS=4
cp /etc/mdadm/mdadm.conf /tmp/mdadm.conf.orig
# The new arrays' resync is held to 1 KiB/s while this runs: under TCG a resync at full speed
# takes most of the emulated CPU, and how it overlaps each command (different on every run)
# changed a run's time by more than apply's own cost (sh alone: 20.7 s and 23.5 s in two runs of
# one guest). Held back, it leaves the commands, and apply's own work, to be timed.
echo 1 > /proc/sys/dev/raid/speed_limit_min; echo 1 > /proc/sys/dev/raid/speed_limit_max
blank() {
    teardown
    cp /tmp/mdadm.conf.orig /etc/mdadm/mdadm.conf
    rm -f /etc/udev/rules.d/61-hyraid-write-cache.rules; udevadm control --reload
    for d in /dev/disk/by-id/ata-HYRAID_HDD_*; do case "$d" in *-part*) ;; *) hdparm -W0 "$d" > /dev/null;; esac; done
    sync; echo 3 > /proc/sys/vm/drop_caches
}
ms() { s=$(date +%s%N); "$@" > /tmp/run.out 2>&1; r=$?; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); return $r; }
converged() { $H plan $CONF --detailed-exitcode > /tmp/after.out 2>&1; }
# reads [probe]: what apply reads of the machine, and nothing else, run side by side by sh: the
# lsblk and LVM report, and with `probe` the wipefs, that hyraid itself ran in a plan on blank
# disks (their argv taken after the warm-up). Before it plans from blank disks apply runs all
# three; after its steps, to verify, the first two.
reads() {
    $LSBLK_CMD > /dev/null & $LVM_CMD > /dev/null &
    [ -z "${1:-}" ] || $WIPEFS_CMD > /dev/null
    wait
}
# run_sh: the plan's shell script, made from this blank machine, run by sh (its making untimed;
# the page cache is dropped again after it, so that sh starts as cold as apply: the plan would
# otherwise have loaded lvm, lsblk and wipefs for it). Around it, untimed in sh's figure, the
# reads apply cannot do without (cold before, as apply's first are; warm after): sh plus them
# is the floor for apply, which plans from what it reads and verifies what it did.
run_sh() {
    $H plan $CONF --format shell > /tmp/plan.sh 2> /tmp/plan.err || { cat /tmp/plan.err; return 1; }
    sync; echo 3 > /proc/sys/vm/drop_caches
    r1=$(ms reads probe)
    sync; echo 3 > /proc/sys/vm/drop_caches
    t=$(ms sh /tmp/plan.sh) || { cat /tmp/run.out; return 1; }
    r2=$(ms reads)
    echo "$t" >> /tmp/sh.ms; echo $((t + r1 + r2)) >> /tmp/floor.ms
    echo "sh: $t ms (the reads before and after, by sh: $r1 ms, $r2 ms)"
}
run_apply() {
    t=$(ms $H apply $CONF --yes) || { cat /tmp/run.out; return 1; }
    echo "$t" >> /tmp/apply.ms; echo "apply: $t ms"
}
: > /tmp/sh.ms; : > /tmp/apply.ms; : > /tmp/floor.ms
# The first run in a fresh guest pays for loading every tool and the kernel's modules (33.9 s for
# a first sh against 18.0 s for the next, in one run here): a warm-up run, not timed.
say "warm-up: one apply, not timed"
blank; $H apply $CONF --yes > /tmp/warmup.out 2>&1; expect "the warm-up apply exits 0" $? 0
# The reads' argv, as hyraid runs them: one plan on blank disks with lsblk, lvm and wipefs
# wrapped by shims that log their arguments.
blank; mkdir -p /tmp/logshim; : > /tmp/reads.log
for t in lsblk lvm wipefs; do
    printf '#!/bin/sh\necho "%s $*" >> /tmp/reads.log\nPATH=/usr/sbin:/usr/bin:/sbin:/bin exec %s "$@"\n' "$t" "$t" > /tmp/logshim/$t
    chmod +x /tmp/logshim/$t
done
PATH=/tmp/logshim:$PATH $H plan $CONF > /dev/null 2>&1
cat /tmp/reads.log
LSBLK_CMD=$(grep -m 1 '^lsblk ' /tmp/reads.log); LVM_CMD=$(grep -m 1 '^lvm fullreport ' /tmp/reads.log)
WIPEFS_CMD=$(grep -m 1 '^wipefs ' /tmp/reads.log)
expect "a plan on blank disks reads them with lsblk, the LVM report and wipefs" \
    "$([ -n "$LSBLK_CMD" ] && [ -n "$LVM_CMD" ] && [ -n "$WIPEFS_CMD" ] && echo yes)" yes
say "timing: $ROUNDS rounds, alternating order, blank disks before every run"
for r in $(seq 1 $ROUNDS); do
    if [ $((r % 2)) = 1 ]; then order="run_sh run_apply"; else order="run_apply run_sh"; fi
    for f in $order; do
        blank
        $f; expect "round $r: $f exits 0" $? 0
        converged; expect "round $r: after $f the plan is empty" $? 0
    done
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
S=$(median /tmp/sh.ms); A=$(median /tmp/apply.ms)
R=$(awk -v a="$A" -v s="$S" 'BEGIN { printf "%.2f", a / s }')
echo "| $(. /etc/os-release; echo "$PRETTY_NAME"), $(nproc) vCPU | median of $ROUNDS |"
echo "|---|---|"
echo "| sh of \`hyraid plan --format shell\` (the commands alone) | $S ms |"
echo "| hyraid apply --yes | $A ms |"
echo "| ratio apply / sh | ${R}x |"
F=$(median /tmp/floor.ms)
echo "| sh + the reads apply must make (before it plans, to verify), by sh: the floor | $F ms |"
echo "| ratio floor / sh | $(awk -v f="$F" -v s="$S" 'BEGIN { printf "%.2f", f / s }')x |"
echo "| ratio apply / floor | $(awk -v a="$A" -v f="$F" 'BEGIN { printf "%.2f", a / f }')x |"
echo "sh runs (ms): $(tr '\n' ' ' < /tmp/sh.ms)"
echo "apply runs (ms): $(tr '\n' ' ' < /tmp/apply.ms)"

say "trace: every spawn of one run each, with its start and end"
mkdir -p /tmp/shim
for t in lsblk lvm pvcreate vgcreate lvcreate lvconvert lvchange lvs wipefs mdadm hdparm sdparm blkid dumpe2fs xfs_info xfs_admin udevadm partx sfdisk dmsetup findmnt update-initramfs; do
    p=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v $t) || continue
    printf '#!/bin/sh\ns=$(date +%%s%%N)\n%s "$@"\nr=$?\necho "$s $(date +%%s%%N) %s $*" >> /tmp/spawns.log\nexit $r\n' "$p" "$t" > /tmp/shim/$t
    chmod +x /tmp/shim/$t
done
# trace NAME COMMAND...: the command with the shims first on PATH; its spawns, and the time that
# is not inside any of them (the gaps between commands and around them).
trace() {
    name=$1; shift; : > /tmp/spawns.log
    s=$(date +%s%N); PATH=/tmp/shim:$PATH "$@" > /tmp/trace.out 2>&1; r=$?; e=$(date +%s%N)
    sort -n /tmp/spawns.log > /tmp/$name.spawns
    awk -v s="$s" -v e="$e" -v name="$name" '
        { d = ($2 - $1) / 1e6; inside += d; n++; t = $3; per[t] += d; cnt[t]++
          if ($1 > last) gap += ($1 - (last ? last : s)) / 1e6; if ($2 > last) last = $2 }
        !($3 == "lsblk" || ($3 == "lvm" && $4 == "fullreport") || ($3 == "wipefs" && $4 == "--no-act")) { cmds += d }
        END { printf "%s: %d ms in all, %d spawns taking %d ms, %d ms outside them\n", name, (e - s) / 1e6, n, inside, gap + (e - last) / 1e6
              for (t in per) printf "  %-18s %3d x %6d ms\n", t, cnt[t], per[t]
              printf "%d\n", (e - s) / 1e6 - cmds > ("/tmp/" name ".own") }' /tmp/$name.spawns
    return $r
}
blank; $H plan $CONF --format shell > /tmp/plan.sh; sync; echo 3 > /proc/sys/vm/drop_caches
trace sh sh /tmp/plan.sh; expect "traced sh exits 0" $? 0
blank; trace apply $H apply $CONF --yes; expect "traced apply exits 0" $? 0
echo "spawns apply makes that the script does not (tool and first arguments, count):"
cut -d' ' -f3-5 /tmp/sh.spawns | sort > /tmp/sh.cmds; cut -d' ' -f3-5 /tmp/apply.spawns | sort > /tmp/apply.cmds
diff /tmp/sh.cmds /tmp/apply.cmds | sed -n 's/^> //p' | sort | uniq -c | sort -rn
cp /tmp/sh.spawns /tmp/apply.spawns $OUT/ 2>/dev/null
# The traced runs' time beyond the plan's own commands (a command's time varies from run to run
# more than apply's own cost does, so it is taken out): for sh the shell and the shims, for
# apply the same plus its observations, planning and checks.
so=$(cat /tmp/sh.own 2>/dev/null); ao=$(cat /tmp/apply.own 2>/dev/null)
echo "beyond the plan's commands: sh ${so:-?} ms, apply ${ao:-?} ms: apply's own work about $(( ${ao:-0} - ${so:-0} )) ms"

say "apply's own timeline (HYRAID_TIMINGS=1, no shims): ms since hyraid started, at each boundary"
blank; HYRAID_TIMINGS=1 $H apply $CONF --yes > /dev/null 2> /tmp/timings.err; expect "timed apply exits 0" $? 0
cut -c1-150 /tmp/timings.err
# Under TCG the figures are noisy; the guard is against a regression, the table is the measure.
awk -v r="$R" 'BEGIN { exit !(r <= 1.5) }' && ok "apply within 1.5x of sh (${R}x)" || bad "apply costs ${R}x the commands alone"
finish
