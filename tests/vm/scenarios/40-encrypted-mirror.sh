#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M
# releases: bookworm trixie
# why both: cryptsetup 2.7's LUKS2 header and luksDump JSON, and the mapping opened from crypttab
#   at boot
# boots: 2
# An encrypted mirror built from blank disks (md -> LUKS2 -> LVM): the key file hyraid makes is
# 512 bytes, 0400, root's, and its slot PBKDF2 at 1000 iterations; the header is LUKS2 with the
# UUID the plan gave it, backed up (0400) to a file whose UUID is the header's; crypttab opens it
# by that UUID with the key file; the PV is the mapping; data written through it is not on the
# array in plaintext; plan is empty. Closed by hand, plan opens it again (the routine step) and
# converges. The key is rotated with apply killed between adding the new key and removing the old:
# the next apply completes it, and only the new key opens the header and its backup. Boot 2 (same
# disks and root) opens it from crypttab and the new key file as boot does, and the data and an
# empty plan are there.
. /mnt/host/files/guest-lib.sh
resync_crawls   # nothing here waits for a resync
M=hyraid-plaintext-marker-4f1d
if [ "$HYRAID_BOOT" = 1 ]; then
    hy plan $CFG/encrypted.yaml --format shell > /mnt/host/out/plan.sh 2>&1
    check "the shell plan formats, backs up and opens" sh -c 'grep -q "cryptsetup luksFormat --batch-mode --type luks2 --uuid" /mnt/host/out/plan.sh && grep -q "cryptsetup luksHeaderBackup" /mnt/host/out/plan.sh && grep -q "cryptsetup open --type luks --key-file /etc/hyraid/keys/data0.key" /mnt/host/out/plan.sh'
    hy apply $CFG/encrypted.yaml --yes; expect "apply exits 0" $? 0
    expect "key file: mode, owner, size (stat)" "$(stat -c '%a %u %s' /etc/hyraid/keys/data0.key)" "400 0 512"
    check "the array carries a LUKS2 header (luksDump)" sh -c 'cryptsetup luksDump /dev/md/data0 | grep -Eq "^Version:[[:space:]]+2$"'
    U=$(cryptsetup luksUUID /dev/md/data0)
    check "the planned UUID is the header's" grep -q -- "--uuid $U " /mnt/host/out/plan.sh
    expect "/dev/mapper/data0_crypt is a crypt device (lsblk)" "$(lsblk -dno TYPE /dev/mapper/data0_crypt)" crypt
    expect "vg0's PV is the mapping (pvs)" "$(pvs --noheadings -o pv_name,vg_name | awk '{print $1, $2}')" "/dev/mapper/data0_crypt vg0"
    expect "the random key's slot: PBKDF2 at 1000 iterations (luksDump JSON)" "$(kdfs /dev/md/data0)" "0:pbkdf2:1000"
    expect "crypttab: hyraid's line" "$(grep '^data0_crypt ' /etc/crypttab)" "data0_crypt UUID=$U /etc/hyraid/keys/data0.key luks"
    expect "header backup: mode, owner (stat)" "$(stat -c '%a %u' /root/data0.luks-header)" "400 0"
    expect "header backup is this header (luksUUID of the file)" "$(cryptsetup luksUUID /root/data0.luks-header)" "$U"
    cryptsetup luksDump --dump-json-metadata /dev/md/data0 > /mnt/host/out/luksDump-json.txt 2>&1
    cryptsetup luksDump /dev/md/data0 > /mnt/host/out/luksDump.txt 2>&1
    lsblk --json --bytes -o NAME,KNAME,TYPE,FSTYPE,UUID,PKNAME,MAJ:MIN > /mnt/host/out/lsblk.json
    expect "plan after apply exits 0" "$(hy_rc plan $CFG/encrypted.yaml --detailed-exitcode)" 0
    [ -s /tmp/hy.out ] && cat /tmp/hy.out
    mkfs.ext4 -q /dev/vg0/files && mkdir -p /mnt/d && mount /dev/vg0/files /mnt/d
    for i in $(seq 2000); do echo "$M $i"; done > /mnt/d/f
    sha256sum /mnt/d/f | cut -d' ' -f1 > /root/sum
    umount /mnt/d; sync; echo 3 > /proc/sys/vm/drop_caches
    check "the data is on the LV" sh -c "grep -qa '$M' /dev/vg0/files"
    check "and not on the array's members in plaintext" sh -c "! grep -qa '$M' /dev/md/data0"
    say "closed by hand: plan opens it again"
    vgchange -an vg0 >/dev/null && cryptsetup close data0_crypt
    hy plan $CFG/encrypted.yaml
    check "plan: open, the VG waits for it" sh -c 'grep -q "open as /dev/mapper/data0_crypt" /tmp/hy.out && grep -q "vg vg0: mirror data0 is opened by this plan" /tmp/hy.out'
    hy apply $CFG/encrypted.yaml --yes; expect "apply exits 0" $? 0
    vgchange -ay vg0 >/dev/null 2>&1
    check "vg0/files is back" test -b /dev/vg0/files
    expect "plan exits 0" "$(hy_rc plan $CFG/encrypted.yaml --detailed-exitcode)" 0
    say "the key rotated, apply killed between adding the new key and removing the old"
    sed 's|/etc/hyraid/keys/data0.key|/etc/hyraid/keys/data0-2027.key|' $CFG/encrypted.yaml > /root/rotated.yaml
    hy plan /root/rotated.yaml
    check "plan: new key file, add, prove, remove, backup, crypttab" sh -c 'grep -q "cryptsetup luksAddKey --batch-mode --key-file /etc/hyraid/keys/data0.key --pbkdf pbkdf2 --pbkdf-force-iterations 1000 /dev/md/data0 /etc/hyraid/keys/data0-2027.key" /tmp/hy.out && grep -q "cryptsetup open --test-passphrase --key-file /etc/hyraid/keys/data0-2027.key /dev/md/data0" /tmp/hy.out && grep -q "cryptsetup luksRemoveKey --batch-mode /dev/md/data0 /etc/hyraid/keys/data0.key" /tmp/hy.out'
    rm -f /tmp/j.jsonl
    "$HY" apply /root/rotated.yaml --yes --journal /tmp/j.jsonl > /tmp/crash.out 2>&1 &
    pid=$!
    while kill -0 $pid 2>/dev/null && ! grep -q luksAddKey /tmp/j.jsonl 2>/dev/null; do sleep 0.01; done
    kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    check "killed after the add: the new key opens the header" cryptsetup open --test-passphrase --key-file /etc/hyraid/keys/data0-2027.key /dev/md/data0
    check "and the old one still does" cryptsetup open --test-passphrase --key-file /etc/hyraid/keys/data0.key /dev/md/data0
    K=$(awk '$1 == "data0_crypt" { print $3 }' /etc/crypttab)
    check "the key crypttab names ($K) opens the header: the box boots" cryptsetup open --test-passphrase --key-file "$K" /dev/md/data0
    hy apply /root/rotated.yaml --yes; expect "the next apply completes it" $? 0
    check "the old key no longer opens the header" sh -c '! cryptsetup open --test-passphrase --key-file /etc/hyraid/keys/data0.key /dev/md/data0'
    check "the new one does" cryptsetup open --test-passphrase --key-file /etc/hyraid/keys/data0-2027.key /dev/md/data0
    expect "one key slot left, the new random key's, PBKDF2 (luksDump JSON)" "$(kdfs /dev/md/data0)" "1:pbkdf2:1000"
    expect "crypttab names the new key" "$(grep '^data0_crypt ' /etc/crypttab)" "data0_crypt UUID=$U /etc/hyraid/keys/data0-2027.key luks"
    check "the header backup opens with the new key only" sh -c 'cryptsetup open --test-passphrase --key-file /etc/hyraid/keys/data0-2027.key /root/data0.luks-header && ! cryptsetup open --test-passphrase --key-file /etc/hyraid/keys/data0.key /root/data0.luks-header'
    expect "plan exits 0" "$(hy_rc plan /root/rotated.yaml --detailed-exitcode)" 0
    sync
    finish
fi
say "after the reboot"
check "opened at boot from crypttab and the new key file" test -b /dev/mapper/data0_crypt
vgchange -ay vg0 >/dev/null 2>&1
mkdir -p /mnt/d && mount /dev/vg0/files /mnt/d
expect "data on the LV" "$(sha256sum /mnt/d/f | cut -d' ' -f1)" "$(cat /root/sum)"
umount /mnt/d
expect "plan after the reboot exits 0" "$(hy_rc plan /root/rotated.yaml --detailed-exitcode)" 0
[ -s /tmp/hy.out ] && cat /tmp/hy.out
finish
