#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M
# releases: bookworm trixie
# why both: a boot with a member gone (mdadm 4.4's udev rules leave the array inactive) and the
#   rebuild onto a new disk
# disks2: ssd1:ssd:512M hdd9:hdd:512M
# boots: 2
# The degraded day. Boot 1 builds the pair (configs/degraded-day.yaml: one VG on the mirror, an
# LV with its ext4 mounted) and writes data; between boots the HDD is pulled and a blank disk
# goes into its bay (new serial HYHDD9). Boot 2: udev assembled the mirror and did not start it,
# so LVM sees no PV and lsblk no signature there. With the file unchanged, plan refuses (the disk
# is missing) and status says so, each with what to do, and neither shows a pvcreate, vgcreate,
# lvcreate or mkfs for what the array holds. The file then names the new disk and, in the same
# edit, a larger bitmap chunk: md shows no bitmap for an array it has not started, so hyraid reads
# the members' superblocks, and the one plan starts the mirror, adds the disk and re-chunks the
# bitmap, and says that what stands on the mirror is planned once it runs. apply runs that, plans
# again what it can read now (the filesystem's mount: this guest's init mounts nothing from
# fstab), and creates nothing: the new disk is write-mostly, the data reads back, md's check
# finds no mismatch, and the next plan is empty. The file's webhook (a receiver in the guest) gets
# the missing disk and the stopped mirror from `status --alert` on boot 2, and their resolution
# once the mirror is whole.
. /mnt/host/files/guest-lib.sh
ln -sf "$HY" /usr/local/bin/hyraid   # where md's monitor and the alerts run it
if [ "$HYRAID_BOOT" = 1 ]; then
    hy apply $CFG/degraded-day.yaml --yes; expect "apply exits 0" $? 0
    check "ext4 mounted on /srv/files (findmnt)" findmnt -n /srv/files
    dd if=/dev/urandom of=/srv/files/f bs=1M count=32 2>/dev/null; sha256sum /srv/files/f | cut -d" " -f1 > /root/sum
    wait_idle data0; sync
    finish
fi
N=ata-HYRAID_HDD_HYHDD9
# Nothing in a plan or an apply may make what the array already holds.
creates() { grep -E '^ +\$ (pvcreate|vgcreate|lvcreate|mkfs|cryptsetup luksFormat)' "$1"; }
check "after the swap udev assembled the mirror but did not start it" grep -q "inactive" /proc/mdstat
"$HY" observe --capture $OUT/capture-inactive.json -o /dev/null

say "the file unchanged: the disk is missing"
hy plan $CFG/degraded-day.yaml; expect "plan refuses (exit 1)" $? 1
grep -q "disk hdd0" /tmp/hy.out && ok "the refusal names the missing disk" || bad "no refusal of hdd0"
grep -q "mdadm --run /dev/md" /tmp/hy.out && ok "the fix says how to start the array without it" || bad "no mdadm --run in the fix"
grep -q "assembled but not running, so what is on it" /tmp/hy.out && ok "the plan says what stands on the mirror cannot be read yet" || bad "no word of the unread mirror"
creates /tmp/hy.out && bad "the plan shows a create or mkfs for what the mirror holds" || ok "no create or mkfs for what the mirror holds"
cp /tmp/hy.out $OUT/plan-disk-missing.txt
hy status $CFG/degraded-day.yaml; expect "status exits 1 (errors)" $? 1
grep -q "hdd0" /tmp/hy.out && ok "status names the missing disk" || bad "status: no word of hdd0"
grep -q "assembled but not running (1 of 2 members present)" /tmp/hy.out && ok "status says the mirror is assembled and not running" || bad "status: no word of the inactive mirror"
grep -q "mdadm --run /dev/md" /tmp/hy.out && ok "status says how to start it" || bad "status: no mdadm --run"
listen_hooks
hy status $CFG/degraded-day.yaml --alert; expect "status --alert exits 1 (errors)" $? 1
hooks | grep -q '"state":"new","severity":"error","object":"disk hdd0"' && ok "the alert arrived: disk hdd0, new, an error" || bad "no alert of hdd0: $(hooks)"
hooks | grep -q '"object":"mirror data0".*assembled but not running' && ok "and the mirror that is not running" || bad "no alert of the mirror: $(hooks)"

say "the file names the new disk (and a larger bitmap chunk)"
C=/tmp/swapped.yaml; sed 's/chunk: 64MiB/chunk: 128MiB/' $CFG/degraded-day-new-hdd.yaml > $C
hy plan $C; expect "plan exits 0" $? 0
grep -q "start it degraded" /tmp/hy.out && ok "plan starts the mirror degraded" || bad "no start step"
grep -q "add hdd0 (write-mostly)" /tmp/hy.out && ok "plan adds the new disk write-mostly" || bad "no add step"
grep -q -- "--bitmap=internal --bitmap-chunk=128M" /tmp/hy.out && ok "the same plan re-chunks the bitmap the members' superblocks told of" || bad "no bitmap step"
grep -q "checked once it runs" /tmp/hy.out && bad "the plan leaves the bitmap for later" || ok "nothing is left for after the start"
grep -q "assembled but not running, so what is on it" /tmp/hy.out && ok "the plan says what stands on the mirror is planned once it runs" || bad "no note of the unread mirror"
creates /tmp/hy.out && bad "the plan shows a create or mkfs" || ok "no create or mkfs in the plan"
cp /tmp/hy.out $OUT/swap-plan.txt
hy apply $C --yes; expect "apply exits 0" $? 0
grep -q "Started or opened mirror data0" /tmp/hy.out && ok "apply plans again once the mirror runs" || bad "no second round"
creates /tmp/hy.out && bad "apply ran a create or mkfs" || ok "apply ran no create or mkfs"
cp /tmp/hy.out $OUT/swap-apply.txt
wait_idle data0
expect "bitmap chunk (sysfs)" "$(cat /sys/block/$(md data0)/md/bitmap/chunksize)" 134217728
check "the new disk is write-mostly (sysfs)" is_wm data0 $N
expect "the array is whole again (sysfs)" "$(cat /sys/block/$(md data0)/md/degraded)" 0
expect "new member in sync (mdadm --detail)" "$(mdadm --detail /dev/md/data0 | grep -c 'active sync writemostly')" 1
check "ext4 mounted again on /srv/files (findmnt)" findmnt -n /srv/files
echo 3 > /proc/sys/vm/drop_caches
expect "data intact" "$(sha256sum /srv/files/f | cut -d' ' -f1)" "$(cat /root/sum)"
hy check data0 --now; expect "md's check exits 0" $? 0
expect "md's check found no mismatch (sysfs)" "$(cat /sys/block/$(md data0)/md/mismatch_cnt)" 0
expect "plan after exits 0" "$(hy_rc plan $C --detailed-exitcode)" 0
hy status $C --alert
[ "$(hooks | grep -o '"state":"resolved"' | wc -l)" -gt 0 ] && ok "the alerts were resolved" || bad "nothing resolved: $(hooks)"
kill $LISTENER 2>/dev/null
finish
