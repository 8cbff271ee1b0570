#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M
# releases: bookworm
# why one: on Debian 13 an encrypted LV is built and opened by 45, a header opened from crypttab at
#   boot 40's
# boots: 2
# An encrypted LV (LV -> LUKS2 -> ext4) on a hybrid mirror, built from blank disks: the LV is
# formatted with LUKS2 by the UUID the plan gave it, its header backed up (0400) to a file of the
# same UUID, opened as vg0-home_crypt, and the ext4 made inside the mapping, listed in fstab by
# its own UUID and mounted; crypttab opens the LV's header with the key file; data written
# through it is not on the LV in plaintext; plan is empty. The LV grows: lvextend, cryptsetup
# resize, resize2fs online, the filesystem spans the LV less its header. `hyraid import` writes
# the LV's `encryption:` and `filesystem:`, and plan on it is empty. Boot 2 opens it from
# crypttab once LVM has activated the VG (as systemd does), and the data and an empty plan are there.
. /mnt/host/files/guest-lib.sh
resync_crawls   # nothing here waits for a resync
M=hyraid-plaintext-marker-7a2c
if [ "$HYRAID_BOOT" = 1 ]; then
    hy plan $CFG/encrypted-lv.yaml --format shell > /mnt/host/out/plan.sh 2>&1
    cat /mnt/host/out/plan.sh | grep -E "cryptsetup|mkfs|lvcreate|mount"
    check "the shell plan formats and opens the LV, then makes the ext4 inside" sh -c 'grep -q "cryptsetup luksFormat --batch-mode --type luks2 --uuid .* --key-file /etc/hyraid/keys/home.key --pbkdf pbkdf2 --pbkdf-force-iterations 1000 /dev/vg0/home" /mnt/host/out/plan.sh && grep -q "cryptsetup open --type luks --key-file /etc/hyraid/keys/home.key /dev/vg0/home vg0-home_crypt" /mnt/host/out/plan.sh && grep -q "mkfs.ext4 .*/dev/mapper/vg0-home_crypt" /mnt/host/out/plan.sh'
    hy apply $CFG/encrypted-lv.yaml --yes; expect "apply exits 0" $? 0
    expect "key file: mode, owner, size (stat)" "$(stat -c '%a %u %s' /etc/hyraid/keys/home.key)" "400 0 512"
    check "the LV carries a LUKS2 header (luksDump)" sh -c 'cryptsetup luksDump /dev/vg0/home | grep -Eq "^Version:[[:space:]]+2$"'
    U=$(cryptsetup luksUUID /dev/vg0/home)
    check "the planned UUID is the header's" grep -q -- "--uuid $U " /mnt/host/out/plan.sh
    expect "/dev/mapper/vg0-home_crypt is a crypt device (lsblk)" "$(lsblk -dno TYPE /dev/mapper/vg0-home_crypt)" crypt
    expect "crypttab: hyraid's line" "$(grep '^vg0-home_crypt ' /etc/crypttab)" "vg0-home_crypt UUID=$U /etc/hyraid/keys/home.key luks"
    expect "header backup: mode, owner (stat)" "$(stat -c '%a %u' /root/home.luks-header)" "400 0"
    expect "header backup is this header (luksUUID of the file)" "$(cryptsetup luksUUID /root/home.luks-header)" "$U"
    expect "mounted from the mapping (findmnt)" "$(findmnt -no SOURCE /srv/home)" /dev/mapper/vg0-home_crypt
    FU=$(blkid -s UUID -o value /dev/mapper/vg0-home_crypt)
    check "fstab lists the ext4 inside by its own UUID" grep -q "^UUID=$FU /srv/home ext4 " /etc/fstab
    lsblk --json --bytes -o NAME,KNAME,TYPE,FSTYPE,UUID,PKNAME,MAJ:MIN,MOUNTPOINT > /mnt/host/out/lsblk.json
    lvm fullreport --all --reportformat json --units b --nosuffix > /mnt/host/out/lvm-fullreport.json 2>/dev/null
    expect "plan after apply exits 0" "$(hy_rc plan $CFG/encrypted-lv.yaml --detailed-exitcode)" 0
    [ -s /tmp/hy.out ] && cat /tmp/hy.out
    for i in $(seq 2000); do echo "$M $i"; done > /srv/home/f
    sha256sum /srv/home/f | cut -d' ' -f1 > /root/sum
    sync; echo 3 > /proc/sys/vm/drop_caches
    check "the data is in the mapping" sh -c "grep -qa '$M' /dev/mapper/vg0-home_crypt"
    check "and not on the LV in plaintext (grep reads it and finds nothing)" sh -c "grep -qa '$M' /dev/vg0/home; [ \$? = 1 ]"

    say "the LV grows: its mapping and its ext4 follow"
    sed 's|size: 256MiB|size: 384MiB|' $CFG/encrypted-lv.yaml > /root/grown.yaml
    hy plan /root/grown.yaml
    check "plan: lvextend, cryptsetup resize, resize2fs" sh -c 'grep -q "lvextend" /tmp/hy.out && grep -q "cryptsetup resize --key-file /etc/hyraid/keys/home.key vg0-home_crypt" /tmp/hy.out && grep -q "resize2fs /dev/mapper/vg0-home_crypt" /tmp/hy.out'
    hy apply /root/grown.yaml --yes; expect "apply exits 0" $? 0
    LV=$(blockdev --getsize64 /dev/vg0/home); MAP=$(blockdev --getsize64 /dev/mapper/vg0-home_crypt)
    expect "the LV is 384 MiB" "$LV" $((384 << 20))
    expect "the mapping is the LV less the 16 MiB header" "$MAP" $(((384 - 16) << 20))
    BS=$(dumpe2fs -h /dev/mapper/vg0-home_crypt 2>/dev/null | awk -F: '/^Block size/ {gsub(/ /,"",$2); print $2}')
    BC=$(dumpe2fs -h /dev/mapper/vg0-home_crypt 2>/dev/null | awk -F: '/^Block count/ {gsub(/ /,"",$2); print $2}')
    expect "the ext4 spans the mapping (dumpe2fs)" "$((BS * BC))" "$MAP"
    expect "the data is intact" "$(sha256sum /srv/home/f | cut -d' ' -f1)" "$(cat /root/sum)"
    expect "plan exits 0" "$(hy_rc plan /root/grown.yaml --detailed-exitcode)" 0
    [ -s /tmp/hy.out ] && cat /tmp/hy.out

    say "the header backup gone: status says so, apply takes it again"
    mv /root/home.luks-header /root/home.luks-header.away
    hy status /root/grown.yaml; expect "status exits 2" $? 2
    check "status: the header backup is missing, and what to do" sh -c 'grep -q "lv vg0/home: the header backup /root/home.luks-header the file names is missing" /tmp/hy.out && grep -q "cryptsetup luksHeaderBackup /dev/vg0/home" /tmp/hy.out'
    hy apply /root/grown.yaml --yes; expect "apply exits 0" $? 0
    expect "the backup taken again is this header" "$(cryptsetup luksUUID /root/home.luks-header)" "$U"
    hy status /root/grown.yaml
    check "status ran and no longer names it" sh -c 'grep -q "error(s),\|Healthy" /tmp/hy.out && ! grep -q "header backup" /tmp/hy.out'

    say "import"
    hy import -o /tmp/imported.yaml; expect "import exits 0" $? 0
    cat /tmp/imported.yaml
    check "import writes the LV's key file" sh -c "grep -A8 '^      home:' /tmp/imported.yaml | grep -q 'key_file: /etc/hyraid/keys/home.key'"
    check "and its filesystem's mount point" sh -c "grep -A8 '^      home:' /tmp/imported.yaml | grep -q 'mount: /srv/home'"
    expect "plan on the imported file exits 0 (empty)" "$(hy_rc plan /tmp/imported.yaml --detailed-exitcode)" 0
    [ -s /tmp/hy.out ] && cat /tmp/hy.out
    umount /srv/home
    sync
    finish
fi
say "after the reboot"
check "opened at boot from crypttab once the VG is active" test -b /dev/mapper/vg0-home_crypt
mkdir -p /srv/home && mount /srv/home
expect "data on the encrypted LV" "$(sha256sum /srv/home/f | cut -d' ' -f1)" "$(cat /root/sum)"
expect "plan after the reboot exits 0" "$(hy_rc plan /root/grown.yaml --detailed-exitcode)" 0
[ -s /tmp/hy.out ] && cat /tmp/hy.out
finish
