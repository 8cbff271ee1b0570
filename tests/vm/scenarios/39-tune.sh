#!/bin/sh
# disks: ssd1:ssd:256M hdd1:hdd:256M::iops=100,bps=40M wc1:ssd:320M
# timeout: 1200
# releases: bookworm
# hyraid tune on a real kernel. The HDD is throttled by QEMU to 100 IOPS / 40 MB/s (a 5400-rpm
# disk), the SSDs are not. One run measures the field report's jobs under every configuration
# the layout allows (the file's, write-mostly off, write-behind 2048, the HDD's drive cache on, a
# writecache on the second SSD), two rounds, changing each setting live; afterwards the state is
# exactly the file's (each member's sysfs state, bitmap/backlog, hdparm -W, lvs), the table, the
# JSON and the picture are kept. Where the reads went is the kernel's count, not a speed: with
# the file's write-mostly the HDD serves none of the read jobs' reads, with write-mostly off it
# serves some (md balances reads by pending I/O). The speeds are printed, not asserted: under
# emulation an SSD-served read costs host CPU, and a first run saw spreads over 100% between
# rounds (tune then recommends nothing, as it should). Then a second run is killed (SIGKILL) while its
# writecache is attached: status says the run did not end, plan shows the way back (the
# writecache detached, the drive cache off again), apply converges and ends the run's record.
# What is asserted is counted (reads per member, states), never timed, so the scenario runs beside
# others; the default (CI) measures a 32 MiB file for 1 s, and one of the six jobs (`--job
# rand-read-4k-qd32`: at QD32 md balances reads when write-mostly is off, which the counts
# above need), HYRAID_VM_PERF=full all six on a 128 MiB file for 2 s. The disks are as small as
# the full variant needs: the HDD's initial resync, throttled, is paid first.
. /mnt/host/files/guest-lib.sh
C=$CFG/tune.yaml
HDD=/dev/disk/by-id/ata-HYRAID_HDD_HYHDD1
TUNE="--size 32MiB --runtime 1 --job rand-read-4k-qd32"
[ "${HYRAID_VM_PERF:-short}" = full ] && TUNE="--size 128MiB --runtime 2"
# The settings tune changes, as the kernel and the tools say them.
state() {
    M=$(md data0)
    for f in /sys/block/$M/md/dev-*/state; do echo "$(basename "$(dirname "$f")") $(cat "$f")"; done
    echo "backlog $(cat /sys/block/$M/md/bitmap/backlog)"
    echo "hdparm -W: $(hdparm -W $HDD | sed -n 's/.*write-caching *= *//p')"
    lvs --noheadings -o lv_name,lv_size,segtype,lv_tags vg0 | sed 's/^ *//' | sort
}

hy apply $C --yes; expect "apply exits 0" $? 0
wait_idle data0
state > /tmp/before; cat /tmp/before
grep -q "write_mostly" /tmp/before && ok "the HDD is write-mostly (sysfs)" || bad "no write-mostly member"
grep -q "hdparm -W: 0 (off)" /tmp/before && ok "the HDD's drive cache is off, as the file says" || bad "drive cache: $(grep hdparm /tmp/before)"

say "a tune run: every configuration, two rounds"
T0=$(date +%s)
echo "\$ hyraid tune $C /srv/files --yes $TUNE -o tune.json --plot tune.svg"
"$HY" tune $C /srv/files --yes $TUNE -o $OUT/tune.json --plot $OUT/tune.svg > /tmp/tune.out 2> /tmp/tune.err
r=$?; cat /tmp/tune.err; cat /tmp/tune.out
echo "the run took $(( $(date +%s) - T0 )) s"
expect "tune exits 0" $r 0
cp /tmp/tune.out $OUT/tune.txt
for c in "as the file says" "write-mostly off" "write-behind 2048" "drive cache on" "writecache on wc0"; do
    [ "$(grep -c "^| $c " /tmp/tune.out)" = 2 ] && ok "measured and compared: $c" || bad "not in both tables: $c"
done
grep -q "^Recommendation: " /tmp/tune.out && ok "a recommendation is made" || bad "no recommendation"
grep -q "^→ drive cache on: .*drive write cache on" /tmp/tune.err && ok "the drive cache was turned on for its configuration" || bad "no drive cache change shown"
grep -q "^← the file's state: " /tmp/tune.err && ok "the file's state was applied back" || bad "no restore shown"
state > /tmp/after
if diff /tmp/before /tmp/after; then ok "afterwards the state is exactly the file's (member states, backlog, hdparm -W, lvs)"; else bad "the state differs after tune"; fi
check "the run's record is gone" test ! -e /var/lib/hyraid/tune.json
expect "plan after tune exits 0" "$(hy_rc plan $C --detailed-exitcode)" 0
check "the picture is written" grep -q "<svg" $OUT/tune.svg
check "fio's test file is removed" sh -c '! ls /srv/files/hyraid-bench.* 2>/dev/null | grep -q .'
# Where the read jobs' reads went, by the kernel's counters in the run's JSON.
HK=$(basename "$(readlink -f $HDD)")
python3 - "$OUT/tune.json" "$HK" > /tmp/hdd-reads <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["configs"]:
    if c.get("skipped"):
        continue
    n = sum(j.get("members", {}).get(sys.argv[2], {}).get("reads", 0)
            for run in c["runs"] for j in run["jobs"] if j["rw"].endswith("read"))
    print(f"{c['name']}\t{n}")
PY
cat /tmp/hdd-reads
expect "the HDD ($HK) serves no read with the file's write-mostly" "$(sed -n 's/^as the file says\t//p' /tmp/hdd-reads)" 0
N=$(sed -n 's/^write-mostly off\t//p' /tmp/hdd-reads)
[ "${N:-0}" -gt 0 ] && ok "with write-mostly off the HDD serves reads ($N)" || bad "write-mostly off: the HDD served '${N}' reads"
grep -q "^Reads each member served in the read jobs" /tmp/tune.out && ok "the table says which member served the reads" || bad "no member reads in the table"

say "a tune run killed while its writecache is attached"
"$HY" tune $C /srv/files --yes $TUNE > /tmp/kill.out 2>&1 &
P=$!
i=0
while [ $i -lt 600 ]; do
    if grep -q '"measuring": "writecache on wc0"' /var/lib/hyraid/tune.json 2>/dev/null && lvs --noheadings -o segtype vg0/files | grep -q writecache; then break; fi
    kill -0 $P 2>/dev/null || break
    sleep 1; i=$((i + 1))
done
sleep 2
kill -9 $P; wait $P 2>/dev/null
tail -3 /tmp/kill.out
lvs --noheadings -o segtype vg0/files | grep -q writecache && ok "killed with the writecache attached ($i s in)" || bad "no writecache when killed"
state > /tmp/killed; cat /tmp/killed
diff -q /tmp/before /tmp/killed >/dev/null && bad "the kill left nothing to put back" || ok "the machine differs from the file after the kill"
hy status $C; expect "status exits 2" $? 2
grep -q 'a `hyraid tune` run did not end: it was measuring `writecache on wc0`' /tmp/hy.out && ok "status says the run did not end" || bad "status: no word of the run"
hy plan $C --detailed-exitcode; expect "plan exits 2" $? 2
grep -q 'did not end (it was measuring `writecache on wc0`)' /tmp/hy.out && ok "plan notes what it undoes" || bad "plan: no note"
grep -q "detach writecache" /tmp/hy.out && ok "plan detaches the writecache" || bad "plan: no detach"
cp /tmp/hy.out $OUT/plan-after-kill.txt
hy apply $C --yes; expect "apply exits 0" $? 0
grep -q "was removed: the machine is as the file says" /tmp/hy.out && ok "apply ends the run's record" || bad "apply: record not ended"
state > /tmp/restored
if diff /tmp/before /tmp/restored; then ok "after apply the state is exactly the file's"; else bad "the state differs after apply"; fi
check "the run's record is gone" test ! -e /var/lib/hyraid/tune.json
expect "plan after apply exits 0" "$(hy_rc plan $C --detailed-exitcode)" 0
finish
