#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M
# One YAML parser (yaml-rust2) with the meanings serde_yaml gave: `write_cache: off` is the word
# off (the drive cache goes off), `write_behind: 0o20` is 16, a quoted "1.2" is the metadata
# version, an alias repeats an anchored list. A tab in the indentation is refused at its line
# and column in libyaml's words before anything runs; import writes the box back in the same
# words and plan on it is empty; a file on the LV keeps its checksum through all of it.
. /mnt/host/files/guest-lib.sh
H=ata-HYRAID_HDD_HYHDD1; S=ata-HYRAID_SSD_HYSSD1
hdparm -W1 /dev/disk/by-id/$H >/dev/null
printf 'version: 1\ndisks:\n\tssd0: { id: %s }\n' $S > /tmp/tab.yaml
hy plan /tmp/tab.yaml; r=$?
[ "$r" != 0 ] && ok "a tab-indented file is refused (exit $r)" || bad "tab file accepted"
check "refused at 3:1 in libyaml's words" grep -qx "/tmp/tab.yaml:3:1: (file): not valid YAML: found character that cannot start any token" /tmp/hy.out
check "nothing was built" sh -c '! test -e /dev/md/data0'
hy apply $CFG/yaml-words.yaml --yes; expect "apply exits 0" $? 0
expect "write_cache: off turned the HDD's cache off (hdparm -W)" "$(wcache $H)" 0
expect "write_behind: 0o20 is 16 (sysfs backlog)" "$(backlog data0)" 16
check "hdd0 write-mostly (sysfs)" is_wm data0 $H
expect "metadata \"1.2\" (mdadm --detail)" "$(mdadm --detail /dev/md/data0 | sed -n 's/^ *Version : //p')" 1.2
expect "the alias gave the LV its PVs (lvs)" "$(lvs --noheadings -o devices vg0/files | tr -d ' ' | sed 's/(.*//')" "/dev/$(md data0)"
expect "size: 268435456 is bytes (lvs)" "$(lvs --noheadings --units b --nosuffix -o lv_size vg0/files | tr -d ' ')" 268435456
mkfs.ext4 -q /dev/vg0/files && mkdir -p /mnt/d && mount /dev/vg0/files /mnt/d
dd if=/dev/urandom of=/mnt/d/f bs=1M count=32 2>/dev/null; sync
SUM=$(sha256sum /mnt/d/f | cut -d' ' -f1)
expect "plan after apply exits 0" "$(hy_rc plan $CFG/yaml-words.yaml --detailed-exitcode)" 0
hy import -o /tmp/imported.yaml; expect "import exits 0" $? 0
cat /tmp/imported.yaml
check "import writes write_cache: off, plain" grep -qx "    write_cache: off" /tmp/imported.yaml
check "import writes write_behind: 16" grep -qx "    write_behind: 16" /tmp/imported.yaml
expect "plan on the imported file exits 0" "$(hy_rc plan /tmp/imported.yaml --detailed-exitcode)" 0
cat /tmp/hy.out
hy apply /tmp/imported.yaml --yes; expect "apply of the imported file exits 0" $? 0
echo 3 > /proc/sys/vm/drop_caches
expect "file intact" "$(sha256sum /mnt/d/f | cut -d' ' -f1)" "$SUM"
expect "HDD cache still off (hdparm -W)" "$(wcache $H)" 0
finish
