#!/bin/sh
# disks: hdd1:hdd:1G hdd2:hdd:1G
# releases: bookworm trixie
# why both: mdadm 4.4's --grow --size=max and cryptsetup 2.7's resize (the only grow of a mirror
#   on Debian 13)
# An encrypted mirror grows (md -> LUKS2 -> LVM on two 512 MiB partitions, then the rest of the
# disks): growpart on each, `mdadm --grow --size=max`, the wait for the new region's resync,
# `cryptsetup resize` of the mapping with the key file, `pvresize` of the mapping. The apply is
# killed (SIGKILL) once mdadm has grown the array: the next plan holds what is still to do (the
# mapping, the PV) and nothing done twice, and the next apply completes it: the mapping is the
# array less the 16 MiB header, the PV the mapping, the data intact, the plan empty.
. /mnt/host/files/guest-lib.sh
H1=/dev/disk/by-id/ata-HYRAID_HDD_HYHDD1
MAP=/dev/mapper/data0_crypt
arr() { blockdev --getsize64 /dev/md/data0; }
map() { blockdev --getsize64 $MAP; }
pvdev() { pvs --noheadings --units b --nosuffix -o dev_size "$(readlink -f $MAP)" | tr -d ' '; }

say "an encrypted mirror of two partitions, with LVM and data"
hy apply $CFG/egrow-small.yaml --yes; expect "apply exits 0" $? 0
wait_idle data0
mkfs.ext4 -q /dev/vg0/files && mkdir -p /mnt/f && mount /dev/vg0/files /mnt/f
dd if=/dev/urandom of=/mnt/f/data bs=1M count=64 2>/dev/null; sync
SUM=$(sha256sum /mnt/f/data | cut -d' ' -f1)
expect "the mapping is the array less the 16 MiB header" "$(map)" "$(( $(arr) - (16 << 20) ))"

say "the file gives both partitions the rest of their disks"
hy plan $CFG/egrow-rest.yaml; expect "plan exits 0" $? 0
check "plan: growpart, mdadm --grow, cryptsetup resize, pvresize of the mapping" sh -c "grep -q 'growpart $H1 1' /tmp/hy.out && grep -q -- 'mdadm --grow /dev/md/data0 --size=max' /tmp/hy.out && grep -q 'cryptsetup resize --key-file /etc/hyraid/keys/data0.key data0_crypt' /tmp/hy.out && grep -q 'pvresize $MAP' /tmp/hy.out"
rm -f /tmp/j.jsonl
"$HY" apply $CFG/egrow-rest.yaml --yes --journal /tmp/j.jsonl > /tmp/killed.out 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null && ! grep -q "mdadm --grow" /tmp/j.jsonl 2>/dev/null; do sleep 0.01; done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
check "killed once the array grew" test "$(arr)" -gt $((900 << 20))
# What is still to do, as the machine says it (the resync may have let a step run before the kill).
MAPSHORT=0; [ "$(map)" -lt "$(( $(arr) - (16 << 20) ))" ] && MAPSHORT=1
PVSHORT=0; [ "$(pvdev)" -lt "$(( $(arr) - (16 << 20) ))" ] && PVSHORT=1
echo "after the kill: mapping short=$MAPSHORT, PV short=$PVSHORT"
hy plan $CFG/egrow-rest.yaml
check "the plan grows nothing twice (no growpart, no mdadm --grow)" sh -c "! grep -q 'growpart' /tmp/hy.out && ! grep -q -- 'mdadm --grow' /tmp/hy.out"
if [ $MAPSHORT = 1 ]; then
    check "the plan resizes the mapping it left smaller than the array" grep -q "cryptsetup resize --key-file /etc/hyraid/keys/data0.key data0_crypt" /tmp/hy.out
fi
if [ $PVSHORT = 1 ]; then
    check "the plan resizes the PV it left smaller than the mapping" grep -q "pvresize $MAP" /tmp/hy.out
fi
hy apply $CFG/egrow-rest.yaml --yes; expect "the next apply exits 0" $? 0
expect "the mapping is the grown array less the 16 MiB header (blockdev)" "$(map)" "$(( $(arr) - (16 << 20) ))"
expect "the PV takes the mapping (pvs dev_size)" "$(pvdev)" "$(map)"
expect "file intact (sha256)" "$(sha256sum /mnt/f/data | cut -d' ' -f1)" "$SUM"
expect "plan after apply exits 0 (no changes)" "$(hy_rc plan $CFG/egrow-rest.yaml --detailed-exitcode)" 0
[ -s /tmp/hy.out ] && cat /tmp/hy.out
finish
