#!/bin/sh
# disks: ssd1:ssd:256M hdd1:hdd:256M sas1:hdd:64M:scsi nv1:ssd:64M:nvme
# releases: bookworm trixie
# why both: mdadm 4.4's monitor and its events, smartmontools 7.4's JSON
# What the checks and md find reaches a person, on the real kernel. A webhook listens on
# 127.0.0.1 in the guest. `hyraid alert --test` reaches it with the token; blocks written to
# the write-mostly HDD's data area behind md's back are found by a check (mismatch_cnt > 0),
# reported by status as degraded and sent; mdadm's own monitor (--test, --oneshot, and running
# while a member fails) runs hyraid as its PROGRAM, and the events arrive with the array, the
# member and the host; smartctl's JSON of the guest's SATA, SCSI and NVMe disks is read, and
# kept as fixtures.
. /mnt/host/files/guest-lib.sh
C=$CFG/check-fast.yaml
H=ata-HYRAID_HDD_HYHDD1
ln -sf "$HY" /usr/local/bin/hyraid
mkdir -p /etc/hyraid && echo s3cret > /etc/hyraid/hook.token && chmod 600 /etc/hyraid/hook.token
listen_hooks

hy apply $C --yes; expect "apply exits 0" $? 0
wait_idle data0
hy alert --test; expect "alert --test exits 0" $? 0
grep -qx "webhook: sent" /tmp/hy.out && ok "alert --test says the webhook took it" || bad "alert --test: $(cat /tmp/hy.out)"
grep -q '"state":"test"' /tmp/hook/000.json && ok "the test alert arrived" || bad "no test alert: $(hooks)"
expect "the webhook got the token" "$(cat /tmp/hook/000.auth)" "Bearer s3cret"
grep -q s3cret /tmp/hook/000.json && bad "the token is in the body" || ok "the token is not in the body"

say "blocks on the write-mostly HDD differ from the SSD's"
MD=$(md data0)
OFF=$(mdadm --examine /dev/disk/by-id/$H | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p')
[ -n "$OFF" ] && ok "the HDD's data offset ($OFF sectors)" || bad "no data offset"
dd if=/dev/urandom of=/dev/disk/by-id/$H bs=512 seek=$((OFF + 100000)) count=64 conv=notrunc oflag=direct 2>/dev/null; sync
hy check data0 --now; expect "the check exits 2 (mismatches found)" $? 2
CNT=$(cat /sys/block/$MD/md/mismatch_cnt)
[ "$CNT" -gt 0 ] && ok "md counted the mismatch (mismatch_cnt $CNT)" || bad "mismatch_cnt $CNT"
grep -q "sector(s) differ between the members" /tmp/hy.out && ok "the check says so" || bad "check: no mismatch said"
hy status $C; expect "status exits 2 (degraded)" $? 2
grep -q "DEGRADED  mirror data0: its last check (completed .* ago) found $CNT sector(s) that differ" /tmp/hy.out && ok "status reports the mismatch with md's count" || bad "status: no mismatch"
grep -q "repair" /tmp/hy.out && ok "status says what repair would do" || bad "no repair in the fix"
hooks | grep -q "\"object\":\"mirror data0\",\"event\":\"finding\",\"message\":\"its last check" && ok "the mismatch was sent as it was found" || bad "no mismatch alert: $(hooks)"
cp /tmp/hook/*.json $OUT/ 2>/dev/null

say "md's own monitor runs hyraid"
mdadm --monitor --scan --oneshot --test >/dev/null 2>&1
sleep 1
hooks | grep -q '"event":"TestMessage"' && ok "mdadm --monitor --test reached the webhook" || bad "no TestMessage: $(hooks)"
hooks | grep '"event":"TestMessage"' | grep -q '"host":"hyraid-vm"' && ok "the event names the host" || bad "no host"
mdadm --monitor --scan --delay=1 >/dev/null 2>&1 & MON=$!
sleep 3
mdadm /dev/md/data0 --fail /dev/disk/by-id/$H >/dev/null 2>&1
K=$(kname $H)
for i in 1 2 3 4 5 6 7 8 9 10; do hooks | grep -q '"event":"Fail"' && break; sleep 1; done
kill $MON 2>/dev/null
hooks | grep '"event":"Fail"' | grep -q "\"object\":\"mirror data0\"" && ok "md's Fail event arrived for mirror data0" || bad "no Fail event: $(hooks)"
hooks | grep '"event":"Fail"' | grep -q "/dev/$K" && ok "the Fail event names the member (/dev/$K)" || bad "no member in the Fail event"
mdadm --monitor --scan --oneshot >/dev/null 2>&1; sleep 1
hooks | grep -q '"event":"DegradedArray"' && ok "--oneshot sent DegradedArray" || bad "no DegradedArray: $(hooks)"
N=$(ls /tmp/hook/*.json | wc -l)
mdadm --monitor --scan --oneshot >/dev/null 2>&1; sleep 1
expect "the same degraded array is not sent twice within a day" "$(ls /tmp/hook/*.json | wc -l)" "$N"

say "the drives' SMART"
for d in $(ls /dev/disk/by-id/ | grep -E '^(ata-HYRAID|scsi-0HYRAID|scsi-SHYRAID|nvme-QEMU|nvme-nvme)' | grep -v -- -part); do
    smartctl --json -a -n standby /dev/disk/by-id/$d > $OUT/smart-$d.json 2>&1
done
ls $OUT/smart-*.json | sed 's|.*/||'
hy status $C --format prometheus
grep -q '^hyraid_drive_smart_passed{disk="ssd0"' /tmp/hy.out && ok "status read the SSD's SMART" || bad "no SMART of ssd0"
grep -q '^hyraid_drive_write_mostly{disk="hdd0",serial="HYHDD1"} 1' /tmp/hy.out && ok "the HDD is known as the write-mostly member" || bad "no write-mostly drive"
kill $LISTENER 2>/dev/null
finish
