#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M cache:ssd:256M
# Capacity on the real kernel. On the blank disks a file that asks too much is refused by plan
# (exit 1, nothing created) and the refusal names the largest LV and writecache that fit: hyraid's
# arithmetic (mdadm 4.2's data offset on the mirror, LVM's 1 MiB PV header and 4 MiB extents).
# One extent more is refused the same way; exactly those sizes are then created by the real
# mdadm and lvcreate and leave vg0 without a free extent; growing by one extent is refused.
. /mnt/host/files/guest-lib.sh
S=ata-HYRAID_SSD_HYSSD1; H=ata-HYRAID_HDD_HYHDD1; C=ata-HYRAID_SSD_HYCACHE
F=/tmp/capacity.yaml
# cfg LV_BYTES WRITECACHE_BYTES: the file, with an LV on the mirror and its writecache on the SSD.
cfg() {
    cat > $F <<EOF
version: 1
host: hyraid-vm
disks:
  ssd0: { id: $S }
  hdd0: { id: $H }
  cache0: { id: $C }
mirrors:
  data0: { members: [ssd0, hdd0] }
volume_groups:
  vg0:
    pvs: [data0, cache0]
    lvs:
      files: { size: $1, pvs: [data0], writecache: { size: $2, pvs: [cache0] } }
EOF
}
blank() {
    check "$1: no md array (/proc/mdstat)" sh -c '! grep -q "^md" /proc/mdstat'
    check "$1: no PV (pvs)" sh -c '[ -z "$(pvs --noheadings 2>/dev/null)" ]'
    check "$1: disks carry no signature (wipefs)" sh -c "[ -z \"\$(wipefs -n /dev/disk/by-id/$S /dev/disk/by-id/$H /dev/disk/by-id/$C)\" ]"
}

cfg 100GiB 100GiB
hy plan $F; expect "plan of a file that does not fit exits 1" $? 1
grep -q "vg0 will have .* free (190 extents) when files is created" /tmp/hy.out && ok "refusal gives vg0's extents" || bad "no VG numbers in the refusal"
LV=$(sed -n 's/.*make files at most \([0-9]*\) bytes.*/\1/p' /tmp/hy.out)
WC=$(sed -n 's/.*make the writecache at most \([0-9]*\) bytes.*/\1/p' /tmp/hy.out)
expect "largest LV on data0, as hyraid computes it (127 extents)" "$LV" 532676608
expect "largest writecache on cache0, as hyraid computes it (63 extents)" "$WC" 264241152
blank "after plan"
hy apply $F --yes; expect "apply of a file that does not fit exits 1" $? 1
blank "after apply"

for more in "$((LV + 4194304)) $WC" "$((LV + 1)) $WC" "$LV $((WC + 4194304))"; do
    cfg $more
    hy plan $F; expect "plan with one extent too many ($more) exits 1" $? 1
    grep -q "does not fit the disks" /tmp/hy.out && ok "plan says nothing is planned" || bad "no withheld note"
done
blank "after the one-extent-too-large plans"

cfg $LV $WC
expect "plan of the exact fit exits 2" "$(hy_rc plan $F --detailed-exitcode)" 2
hy apply $F --yes; expect "apply of the exact fit exits 0" $? 0
M=$(md data0)
expect "md data offset (mdadm --examine)" "$(mdadm --examine /dev/disk/by-id/$S | sed -n 's/ *Data Offset : //p')" "2048 sectors"
expect "array size (blockdev)" "$(blockdev --getsize64 /dev/$M)" 535822336
expect "PV extents on the mirror (pvs)" "$(pvs --noheadings -o pv_pe_count /dev/$M | tr -d ' ')" 127
expect "PV extents on the cache SSD (pvs)" "$(pvs --noheadings -o pv_pe_count /dev/$(kname $C) | tr -d ' ')" 63
expect "LV size (lvs)" "$(lvs --noheadings --units b --nosuffix -o lv_size vg0/files | tr -d ' ')" "$LV"
expect "cache volume size (lvs)" "$(lvs -a --noheadings --units b --nosuffix -o lv_size vg0/files_wc_cvol | tr -d ' ')" "$WC"
expect "LV segment type" "$(lvfield vg0/files segtype)" writecache
expect "vg0 has no free extent (vgs)" "$(vgs --noheadings -o vg_free_count vg0 | tr -d ' ')" 0
expect "plan after apply exits 0" "$(hy_rc plan $F --detailed-exitcode)" 0

cfg $((LV + 4194304)) $WC
hy plan $F; expect "plan growing the LV by one extent exits 1" $? 1
grep -q "growing it to" /tmp/hy.out && ok "refusal says the LV cannot grow" || bad "no grow refusal"
hy apply $F --yes; expect "apply growing the LV by one extent exits 1" $? 1
expect "LV size unchanged (lvs)" "$(lvs --noheadings --units b --nosuffix -o lv_size vg0/files | tr -d ' ')" "$LV"
"$HY" observe --capture $OUT/capture-capacity.json -o /dev/null
finish
