#!/bin/sh
# disks: ssd1:ssd:192M::bpsw=6M hdd1:hdd:192M::bpsw=6M ssd2:ssd:128M hdd2:hdd:128M
# Moving data off a PV: vg0 on mirror data0 with an ext4 LV holding a checksummed file; the file
# then names data1 instead: hyraid makes data1 a PV, adds it, moves the extents
# (`pvmove --background`, waited for), takes data0 out (`vgreduce`) and wipes its label
# (`pvremove`). Then back onto data0 (its disks' writes are throttled to 6 MB/s, so the move of
# the 96 MiB LV takes a while, and lvs, which only reads, is not held behind the copy):
# hyraid is killed during the move; the move LV is there, the next plan resumes it with bare
# `pvmove` (never a second start), apply finishes it. Checked with pvs, lvs -a -o+devices and
# the file's checksum; the plan after each apply is empty.
. /mnt/host/files/guest-lib.sh
lvdevs() { lvs --noheadings -o devices vg0/files | tr -d ' '; }
pvlist() { pvs --noheadings -o pv_name | tr -d ' ' | tr '\n' ' '; }
moving() { lvs -a --noheadings -o lv_attr vg0 | grep -q '^ *p'; }

say "vg0 on data0, an ext4 LV with data"
hy apply $CFG/pvmove-one.yaml --yes; expect "apply exits 0" $? 0
M0=$(md data0); M1=$(md data1)
mkfs.ext4 -q /dev/vg0/files && mkdir -p /mnt/f && mount /dev/vg0/files /mnt/f
dd if=/dev/urandom of=/mnt/f/data bs=1M count=64 2>/dev/null; sync
SUM=$(sha256sum /mnt/f/data | cut -d' ' -f1)
same() { sync; echo 3 > /proc/sys/vm/drop_caches; expect "file intact after $1" "$(sha256sum /mnt/f/data | cut -d' ' -f1)" "$SUM"; }
expect "the LV is on data0 (lvs devices)" "$(lvdevs)" "/dev/$M0(0)"

say "the file puts vg0 on data1 instead"
hy plan $CFG/pvmove-two.yaml; expect "plan exits 0" $? 0
grep -q "pvmove --background /dev/md/data0 /dev/md/data1" /tmp/hy.out && ok "plan moves data0's extents to data1" || bad "no pvmove"
grep -q "vgreduce vg0 /dev/md/data0" /tmp/hy.out && ok "plan reduces vg0" || bad "no vgreduce"
grep -q "pvremove --yes /dev/md/data0" /tmp/hy.out && ok "plan wipes data0's label" || bad "no pvremove"
grep -q -- "--allow-destroy" /tmp/hy.out && bad "the move needs --allow-destroy" || ok "no --allow-destroy needed"
hy apply $CFG/pvmove-two.yaml --yes; expect "apply exits 0" $? 0
expect "the LV is on data1 only (lvs devices)" "$(lvdevs)" "/dev/$M1(0)"
pvlist | grep -q "/dev/$M0 " && bad "data0 is still a PV: $(pvlist)" || ok "data0 is no PV (pvs: $(pvlist))"
check "no LVM label on data0 (blkid)" sh -c "! blkid -p /dev/$M0 | grep -q LVM2_member"
moving && bad "a pvmove LV is left" || ok "no pvmove LV left (lvs -a)"
same "the move"
expect "plan after apply exits 0" "$(hy_rc plan $CFG/pvmove-two.yaml --detailed-exitcode)" 0

say "back onto data0; hyraid is killed during the move"
"$HY" apply $CFG/pvmove-back.yaml --yes > /tmp/bg.out 2>&1 &
HP=$!
n=0; while ! moving && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done
moving && ok "the move is running (lvs -a: pvmove LV)" || bad "no pvmove LV appeared"
sleep 2
kill -9 $HP; wait $HP 2>/dev/null
cat /tmp/bg.out
lvs -a -o lv_name,lv_attr,copy_percent,move_pv,devices vg0
# lvm2's own reports of the move, kept for the parser's fixtures.
lvm fullreport --all --reportformat json --units b --nosuffix > $OUT/lvm-fullreport-pvmove.json 2>/dev/null
lvs -a --reportformat json -o lv_name,lv_attr,move_pv,copy_percent vg0 > $OUT/lvs-pvmove.json 2>/dev/null
moving && ok "the pvmove LV outlives hyraid" || bad "the move ended with hyraid"
hy plan $CFG/pvmove-back.yaml; expect "plan exits 0" $? 0
grep -q "pvmove --background$" /tmp/hy.out && ok "plan resumes the move (bare pvmove)" || bad "no resume"
grep -q "pvmove --background /dev/" /tmp/hy.out && bad "plan starts the move again" || ok "the move is not started twice"
hy apply $CFG/pvmove-back.yaml --yes; expect "apply exits 0" $? 0
expect "the LV is on data0 only (lvs devices)" "$(lvdevs)" "/dev/$M0(0)"
pvlist | grep -q "/dev/$M1 " && bad "data1 is still a PV: $(pvlist)" || ok "data1 is no PV (pvs: $(pvlist))"
moving && bad "a pvmove LV is left" || ok "no pvmove LV left (lvs -a)"
same "the killed and resumed move"
expect "plan after apply exits 0" "$(hy_rc plan $CFG/pvmove-back.yaml --detailed-exitcode)" 0
finish
