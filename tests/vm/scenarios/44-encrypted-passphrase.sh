#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M
# releases: bookworm
# why one: on Debian 13, 45 formats an LV with the passphrase on cryptsetup 2.7's stdin and opens
#   it; what differs here (a wrong passphrase, the resize) is cryptsetup's own on both
# boots: 1
# An encrypted LV whose key is a passphrase (`passphrase: true`). `apply --yes` without one is
# refused before anything runs. With --passphrase-file the LV is formatted and opened with the
# passphrase on cryptsetup's stdin (`--key-file -`), no key file is made, and crypttab names
# `none` (asked on the console at boot). The passphrase as a person types it (a line on stdin,
# read without --key-file, as at boot) opens the header; a wrong one does not. Closed by hand,
# status says it is not open (degraded, with how to open it), and the mapping is opened by apply with the passphrase (a wrong one stops at that command) and the
# ext4 mounted again. A grow resizes the mapping with the passphrase. `hyraid import` writes
# `passphrase: true`, and plan on it is empty.
. /mnt/host/files/guest-lib.sh
resync_crawls   # nothing here waits for a resync
F=$CFG/encrypted-passphrase.yaml
P='correct horse battery staple'
hy apply $F --yes; expect "apply --yes without a passphrase exits 1" $? 1
check "it says how to give one" grep -q -- "--passphrase-file FILE" /tmp/hy.out
check "and nothing ran (no array)" sh -c '! test -e /dev/md/data0 && ! grep -q md /proc/mdstat'
printf '%s\n' "$P" > /dev/shm/pass
printf '%s\n' 'Tr0ub4dor&3' > /dev/shm/wrong
hy plan $F --format shell > /mnt/host/out/plan.sh 2>&1
grep -E "cryptsetup|hyraid_passphrase" /mnt/host/out/plan.sh
check "the shell plan writes the passphrase to luksFormat and open (--key-file -)" sh -c "grep -q \"^hyraid_passphrase 'lv vg0/home' | cryptsetup luksFormat --batch-mode --type luks2 --uuid .* --key-file - /dev/vg0/home\$\" /mnt/host/out/plan.sh && grep -q \"^hyraid_passphrase 'lv vg0/home' | cryptsetup open --type luks --key-file - /dev/vg0/home vg0-home_crypt\$\" /mnt/host/out/plan.sh && grep -q '^hyraid_passphrase() {' /mnt/host/out/plan.sh"
hy apply $F --yes --passphrase-file /dev/shm/pass; expect "apply --passphrase-file exits 0" $? 0
check "the output shows no passphrase" sh -c "! grep -q 'battery' /tmp/hy.out"
check "no key file was made" test ! -e /etc/hyraid/keys
U=$(cryptsetup luksUUID /dev/vg0/home)
expect "crypttab: hyraid's line asks at boot (none)" "$(grep '^vg0-home_crypt ' /etc/crypttab)" "vg0-home_crypt UUID=$U none luks"
check "the passphrase typed as at boot (a line, no --key-file) opens the header" sh -c "printf '%s\n' '$P' | cryptsetup open --test-passphrase /dev/vg0/home"
check "a wrong passphrase does not" sh -c "printf '%s\n' 'Tr0ub4dor&3' | cryptsetup open --test-passphrase /dev/vg0/home; [ \$? = 2 ]"
expect "one key slot, the passphrase's, with cryptsetup's Argon2id (luksDump JSON)" "$(kdfs /dev/vg0/home)" "0:argon2id:-"
expect "header backup is this header" "$(cryptsetup luksUUID /root/home.luks-header)" "$U"
expect "mounted from the mapping (findmnt)" "$(findmnt -no SOURCE /srv/home)" /dev/mapper/vg0-home_crypt
expect "plan after apply exits 0" "$(hy_rc plan $F --detailed-exitcode)" 0
[ -s /tmp/hy.out ] && cat /tmp/hy.out
seq 5000 > /srv/home/f
S=$(sha256sum /srv/home/f | cut -d' ' -f1)

say "closed by hand: apply opens it with the passphrase and mounts it again"
umount /srv/home && cryptsetup close vg0-home_crypt
hy status $F; expect "status exits 2 (degraded): nothing on it can be used" $? 2
check "status: the header is not open, and apply opens it with the passphrase" sh -c 'grep -q "DEGRADED  lv vg0/home: its LUKS header on /dev/vg0/home is not open (no /dev/mapper/vg0-home_crypt)" /tmp/hy.out && grep -q "it asks the passphrase" /tmp/hy.out'
hy plan $F
check "plan: open with its passphrase" grep -q "open as /dev/mapper/vg0-home_crypt with its passphrase" /tmp/hy.out
hy apply $F --yes --passphrase-file /dev/shm/wrong; expect "a wrong passphrase: apply exits 1" $? 1
check "stopped at cryptsetup open, which found no key" sh -c 'grep -q "cryptsetup open --type luks --key-file - /dev/vg0/home vg0-home_crypt" /tmp/hy.out && grep -q "No key available with this passphrase" /tmp/hy.out'
check "and the mapping stays closed" test ! -e /dev/mapper/vg0-home_crypt
hy apply $F --yes --passphrase-file /dev/shm/pass; expect "the right one: apply exits 0" $? 0
expect "mounted again" "$(findmnt -no SOURCE /srv/home)" /dev/mapper/vg0-home_crypt
expect "the data is intact" "$(sha256sum /srv/home/f | cut -d' ' -f1)" "$S"
expect "plan exits 0" "$(hy_rc plan $F --detailed-exitcode)" 0
[ -s /tmp/hy.out ] && cat /tmp/hy.out

say "the LV grows: cryptsetup resize reads the passphrase"
sed 's|size: 256MiB|size: 384MiB|' $F > /root/grown.yaml
hy apply /root/grown.yaml --yes --passphrase-file /dev/shm/pass; expect "apply exits 0" $? 0
check "the resize read it on stdin" grep -q "cryptsetup resize --key-file - vg0-home_crypt" /tmp/hy.out
expect "the mapping is the LV less the 16 MiB header" "$(blockdev --getsize64 /dev/mapper/vg0-home_crypt)" $(((384 - 16) << 20))
expect "plan exits 0" "$(hy_rc plan /root/grown.yaml --detailed-exitcode)" 0
[ -s /tmp/hy.out ] && cat /tmp/hy.out

say "import"
hy import -o /tmp/imported.yaml; expect "import exits 0" $? 0
cat /tmp/imported.yaml
check "import writes passphrase: true" sh -c "grep -A8 '^      home:' /tmp/imported.yaml | grep -q 'passphrase: true'"
expect "plan on the imported file exits 0 (empty)" "$(hy_rc plan /tmp/imported.yaml --detailed-exitcode)" 0
[ -s /tmp/hy.out ] && cat /tmp/hy.out
rm -f /dev/shm/pass /dev/shm/wrong
finish
