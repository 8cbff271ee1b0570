#!/bin/sh
# disks: ssd1:ssd:640M hdd1:hdd:640M wc1:ssd:256M
# releases: bookworm
# why one: what import reads of a hand-built box (lsblk, luksDump, crypttab) is read on Debian 13
#   by 40, 43 and 45 and by the trixie fixtures
# A box built by hand with LUKS between md and LVM, as the guides do it: mdadm's array (its ARRAY
# line appended to mdadm.conf), a key file, luksFormat, a crypttab line of its own by UUID, the PV
# on the mapping and an ext4 with a checksummed file. `hyraid import` writes `encryption:` with
# the key file crypttab names (never the key) and the mapping's name; plan on it is empty, and
# the box's own crypttab line is kept as it is. A writecache on the unencrypted SSD is refused at
# validate time, with both ways out; accepted, the plan says where plaintext lies, and it
# converges. The header backup restores onto a copy of the header.
. /mnt/host/files/guest-lib.sh
S1=ata-HYRAID_SSD_HYSSD1; H1=ata-HYRAID_HDD_HYHDD1
F=/tmp/imported.yaml
say "built by hand"
mdadm --create /dev/md0 --level=1 --raid-devices=2 --run /dev/disk/by-id/$S1 --write-mostly /dev/disk/by-id/$H1 2>/dev/null
mdadm --wait /dev/md0 >/dev/null 2>&1
mdadm --detail --scan >> /etc/mdadm/mdadm.conf
dd if=/dev/urandom of=/root/md0.key bs=256 count=1 2>/dev/null; chmod 0400 /root/md0.key
# PBKDF2, as hyraid gives a random key: under TCG a timed Argon2 costs 8 s here and 2.5 s on each
# of hyraid's opens, and import reads the header whatever its key derivation.
cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file /root/md0.key /dev/md0
cryptsetup open --key-file /root/md0.key /dev/md0 cryptdata
U=$(cryptsetup luksUUID /dev/md0)
LINE="cryptdata UUID=$U /root/md0.key luks"
echo "$LINE" >> /etc/crypttab
pvcreate -q /dev/mapper/cryptdata && vgcreate -q vg0 /dev/mapper/cryptdata && lvcreate -q -y -n data -L 512M vg0
mkfs.ext4 -q /dev/vg0/data && mkdir -p /mnt/d && mount /dev/vg0/data /mnt/d
dd if=/dev/urandom of=/mnt/d/f bs=1M count=32 2>/dev/null; sync
SUM=$(sha256sum /mnt/d/f | cut -d' ' -f1)
lsblk --json --bytes -o NAME,KNAME,TYPE,FSTYPE,UUID,PKNAME,MAJ:MIN > /mnt/host/out/lsblk.json
cryptsetup luksDump --dump-json-metadata /dev/md0 > /mnt/host/out/luksDump-json.txt 2>&1

say "import"
hy import -o $F; expect "import exits 0" $? 0
cat $F
check "import names the key file crypttab gives" grep -q "key_file: /root/md0.key" $F
check "and the mapping's name" grep -q "name: cryptdata" $F
check "vg0's PV is the mirror" sh -c "grep -A2 'vg0:' $F | grep -q 'md0'"
expect "plan on the imported file exits 0 (empty)" "$(hy_rc plan $F --detailed-exitcode)" 0
cat /tmp/hy.out
expect "the box's own crypttab line is as it was" "$(grep -v '^#' /etc/crypttab | grep cryptdata)" "$LINE"

say "a writecache on the unencrypted SSD"
cat $F > /tmp/wc.yaml
sed -i "s|^disks:|disks:\n  wc1: { id: ata-HYRAID_SSD_HYWC1 }|" /tmp/wc.yaml
python3 - /tmp/wc.yaml <<'PY'
import sys, re
p = sys.argv[1]; s = open(p).read()
s = s.replace("    pvs:\n    - md0\n", "    pvs:\n    - md0\n    - wc1\n", 1)
s = re.sub(r"(      data:\n        size: [^\n]+\n)", r"\1        pvs: [md0]\n        writecache: { size: 64MiB, pvs: [wc1] }\n", s, count=1)
open(p, "w").write(s)
PY
cat /tmp/wc.yaml
check "the edited file has the writecache on wc1" sh -c 'grep -q "writecache: { size: 64MiB, pvs: \[wc1\] }" /tmp/wc.yaml && grep -q "^    - wc1" /tmp/wc.yaml'
hy validate /tmp/wc.yaml; expect "validate refuses it" $? 1
check "it says where plaintext would lie" grep -q "not encrypted.*plaintext" /tmp/hy.out
check "and both ways out" sh -c 'grep -q "give it .encryption:" /tmp/hy.out && grep -q "plaintext-cache" /tmp/hy.out'
printf 'accept:\n  lv vg0/data: [writecache-not-redundant, plaintext-cache]\n' >> /tmp/wc.yaml
hy apply /tmp/wc.yaml --yes; expect "accepted, apply exits 0" $? 0
check "the plan said the writecache holds plaintext" grep -q "PLAINTEXT: the cache is on wc1" /tmp/hy.out
expect "writecache attached (lvs)" "$(lvfield vg0/data segtype)" writecache
expect "plan exits 0" "$(hy_rc plan /tmp/wc.yaml --detailed-exitcode)" 0
same() { echo 3 > /proc/sys/vm/drop_caches; expect "file intact after $1" "$(sha256sum /mnt/d/f | cut -d' ' -f1)" "$SUM"; }
same "the writecache"

say "a header backup restores onto a copy"
cryptsetup luksHeaderBackup /dev/md0 --header-backup-file /root/h.img
dd if=/dev/md0 of=/tmp/copy.img bs=1M count=17 2>/dev/null
dd if=/dev/zero of=/tmp/copy.img bs=1M count=16 conv=notrunc 2>/dev/null
check "the wiped copy has no header" sh -c '! cryptsetup isLuks /tmp/copy.img'
cryptsetup luksHeaderRestore --batch-mode /tmp/copy.img --header-backup-file /root/h.img
expect "restored: the copy's header is the array's (luksUUID)" "$(cryptsetup luksUUID /tmp/copy.img)" "$U"
check "and opens with the key" cryptsetup open --test-passphrase --key-file /root/md0.key /tmp/copy.img
finish
