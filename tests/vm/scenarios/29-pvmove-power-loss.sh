#!/bin/sh
# disks: ssd1:ssd:192M hdd1:hdd:192M ssd2:ssd:128M::bpsw=6M hdd2:hdd:128M::bpsw=6M
# boots: 2
# A pvmove through a power loss: vg0 on mirror data0 with an ext4 LV holding a checksummed file;
# the file names data1 instead (its disks' writes are throttled to 6 MB/s, so the move takes a
# while; data0's are not) and, during
# `pvmove --background`, the power is cut (sysrq o: no sync, nothing unmounted). Boot 2 (the
# same disks): the arrays assemble and udev's LVM rules activate vg0 with its pvmove LV (seen
# on Debian 12: the move LV is active, nothing polls it). hyraid's plan follows what it observes:
# an active move is resumed with bare `pvmove --background` (never a second start); an inactive
# one (a boot that does not activate LVM; the simulator's tests cover it) gets `vgchange
# --activate y --poll n vg0` first. Apply finishes the move, reduces
# vg0 and wipes data0's label. Checked with lvs -a, pvs and the file's checksum; the plan after
# apply is empty.
. /mnt/host/files/guest-lib.sh
lvdevs() { lvs --noheadings -o devices vg0/files | tr -d ' '; }
pvlist() { pvs --noheadings -o pv_name | tr -d ' ' | tr '\n' ' '; }
moving() { lvs -a --noheadings -o lv_attr vg0 | grep -q '^ *p'; }
if [ "$HYRAID_BOOT" = 1 ]; then
    say "vg0 on data0, an ext4 LV with data"
    hy apply $CFG/pvmove-one.yaml --yes; expect "apply exits 0" $? 0
    mkfs.ext4 -q /dev/vg0/files && mkdir -p /mnt/f && mount /dev/vg0/files /mnt/f
    dd if=/dev/urandom of=/mnt/f/data bs=1M count=64 2>/dev/null; sync
    sha256sum /mnt/f/data | cut -d' ' -f1 > /root/sum; sync
    say "the file puts vg0 on data1; the power is cut during the move"
    "$HY" apply $CFG/pvmove-two.yaml --yes > /tmp/bg.out 2>&1 &
    n=0; while ! moving && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done
    moving && ok "the move is running (lvs -a: pvmove LV)" || bad "no pvmove LV appeared"
    sleep 3
    lvs -a -o lv_name,lv_attr,copy_percent,move_pv,devices vg0
    power_loss
fi
say "boot 2, after the power loss"
cat /proc/mdstat
check "/dev/md/data0 assembled" test -b /dev/md/data0
check "/dev/md/data1 assembled" test -b /dev/md/data1
M0=$(md data0); M1=$(md data1)
lvs -a -o lv_name,lv_attr,copy_percent,move_pv,devices vg0
ACT=$(lvs -a --noheadings -o lv_attr,lv_active vg0 | awk '$1 ~ /^p/ {print $2}')
echo "the move LV after the boot: lv_active='$ACT'"
lvm fullreport --all --reportformat json --units b --nosuffix > $OUT/lvm-fullreport-pvmove-after-power-loss.json 2>/dev/null
lvs -a --reportformat json -o lv_name,lv_attr,move_pv,copy_percent vg0 > $OUT/lvs-pvmove-after-power-loss.json 2>/dev/null
moving && ok "the pvmove LV is there after the reboot (lvs -a)" || bad "no pvmove LV after the reboot"
hy plan $CFG/pvmove-two.yaml; expect "plan exits 0" $? 0
if [ "$ACT" = active ]; then
    grep -q "vgchange" /tmp/hy.out && bad "plan activates an active VG" || ok "the move LV is active: no vgchange in the plan"
else
    grep -q "vgchange --activate y --poll n vg0$" /tmp/hy.out && ok "the move LV is inactive: plan activates vg0 without a poller" || bad "no vgchange"
fi
grep -q "pvmove --background$" /tmp/hy.out && ok "plan resumes the move (bare pvmove)" || bad "no resume"
grep -q "pvmove --background /dev/" /tmp/hy.out && bad "plan starts the move again" || ok "the move is not started twice"
hy apply $CFG/pvmove-two.yaml --yes; expect "apply exits 0" $? 0
expect "the LV is on data1 only (lvs devices)" "$(lvdevs)" "/dev/$M1(0)"
pvlist | grep -q "/dev/$M0 " && bad "data0 is still a PV: $(pvlist)" || ok "data0 is no PV (pvs: $(pvlist))"
moving && bad "a pvmove LV is left" || ok "no pvmove LV left (lvs -a)"
mkdir -p /mnt/f && mount /dev/vg0/files /mnt/f; expect "the ext4 mounts (journal replayed)" $? 0
expect "file intact after the power loss and the move (sha256)" "$(sha256sum /mnt/f/data | cut -d' ' -f1)" "$(cat /root/sum)"
umount /mnt/f
expect "plan after apply exits 0" "$(hy_rc plan $CFG/pvmove-two.yaml --detailed-exitcode)" 0
finish
