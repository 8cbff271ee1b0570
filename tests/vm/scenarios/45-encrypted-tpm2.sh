#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M
# releases: bookworm trixie
# why both: systemd-cryptenroll 257 (in systemd-cryptsetup) and the renamed tpm2-tss libraries it
#   loads
# boots: 2
# tpm
# An encrypted LV whose key is a passphrase, with the machine's TPM2 (swtpm) enrolled beside it
# (`tpm2: true`). The plan formats the LV, enrols the TPM2 with systemd-cryptenroll (the
# passphrase in its $PASSWORD, PCR 7) before the header backup, and crypttab names `none` with
# `tpm2-device=auto`. The header holds a systemd-tpm2 token and two key slots, and so does its
# backup; the plan is then empty. Closed by hand, systemd-cryptsetup opens it with the TPM2 alone
# (headless: nobody types), and the passphrase still opens it. `hyraid import` writes `tpm2: true`
# and its plan is empty. Boot 2 (the same TPM): opened by the TPM2 again, the data is there, the
# plan is empty.
. /mnt/host/files/guest-lib.sh
resync_crawls   # nothing here waits for a resync
F=$CFG/encrypted-tpm2.yaml
P='correct horse battery staple'
# systemd-cryptsetup: /lib/systemd on Debian 12, /usr/bin on 13.
SC=$(for c in /usr/bin/systemd-cryptsetup /lib/systemd/systemd-cryptsetup /usr/lib/systemd/systemd-cryptsetup; do [ -x $c ] && echo $c && break; done)
tpm_open() { $SC attach vg0-home_crypt /dev/vg0/home none tpm2-device=auto,headless=true; }
if [ "$HYRAID_BOOT" = 1 ]; then
    check "the guest has a TPM2 (/dev/tpmrm0)" test -c /dev/tpmrm0
    check "systemd-cryptenroll lists it" sh -c 'systemd-cryptenroll --tpm2-device=list | grep -q /dev/tpmrm0'
    printf '%s\n' "$P" > /dev/shm/pass
    hy plan $F --format shell > /mnt/host/out/plan.sh 2>&1
    grep -E "cryptsetup|cryptenroll" /mnt/host/out/plan.sh
    check "the shell plan enrols the TPM2 with the passphrase in \$PASSWORD, before the header backup" sh -c "grep -qF \"PASSWORD=\\\"\\\$(hyraid_passphrase 'lv vg0/home')\\\" systemd-cryptenroll --tpm2-device=auto --tpm2-pcrs=7 /dev/vg0/home\" /mnt/host/out/plan.sh && [ \$(grep -n 'systemd-cryptenroll' /mnt/host/out/plan.sh | head -1 | cut -d: -f1) -lt \$(grep -n 'luksHeaderBackup' /mnt/host/out/plan.sh | head -1 | cut -d: -f1) ]"
    hy apply $F --yes --passphrase-file /dev/shm/pass; expect "apply exits 0" $? 0
    U=$(cryptsetup luksUUID /dev/vg0/home)
    expect "crypttab: none and tpm2-device=auto" "$(grep '^vg0-home_crypt ' /etc/crypttab)" "vg0-home_crypt UUID=$U none luks,tpm2-device=auto"
    cryptsetup luksDump --dump-json-metadata /dev/vg0/home > /mnt/host/out/luks-tpm2.json
    check "the header has a systemd-tpm2 token (luksDump JSON)" grep -q '"type":"systemd-tpm2"' /mnt/host/out/luks-tpm2.json
    expect "two key slots: the passphrase's and the TPM2's" "$(cryptsetup luksDump /dev/vg0/home | grep -cE '^  [0-9]+: luks2')" 2
    expect "and so does the header backup" "$(cryptsetup luksDump /root/home.luks-header | grep -cE '^  [0-9]+: luks2')" 2
    systemd-cryptenroll /dev/vg0/home
    check "systemd-cryptenroll lists a tpm2 slot" sh -c 'systemd-cryptenroll /dev/vg0/home | grep -q tpm2'
    expect "mounted from the mapping" "$(findmnt -no SOURCE /srv/home)" /dev/mapper/vg0-home_crypt
    expect "plan after apply exits 0" "$(hy_rc plan $F --detailed-exitcode)" 0
    [ -s /tmp/hy.out ] && cat /tmp/hy.out
    seq 7000 > /srv/home/f
    sha256sum /srv/home/f | cut -d' ' -f1 > /root/sum

    say "closed by hand: the TPM2 alone opens it (headless), the passphrase too"
    umount /srv/home && cryptsetup close vg0-home_crypt
    tpm_open; expect "systemd-cryptsetup attach with tpm2-device=auto,headless=true exits 0" $? 0
    check "the mapping is open" test -b /dev/mapper/vg0-home_crypt
    mount /dev/mapper/vg0-home_crypt /srv/home
    expect "the data is intact" "$(sha256sum /srv/home/f | cut -d' ' -f1)" "$(cat /root/sum)"
    check "the passphrase still opens the header" sh -c "printf '%s\n' '$P' | cryptsetup open --test-passphrase /dev/vg0/home"
    expect "plan exits 0" "$(hy_rc plan $F --detailed-exitcode)" 0
    [ -s /tmp/hy.out ] && cat /tmp/hy.out

    say "import"
    hy import -o /tmp/imported.yaml; expect "import exits 0" $? 0
    cat /tmp/imported.yaml
    check "import writes passphrase and tpm2" sh -c "grep -A10 '^      home:' /tmp/imported.yaml | grep -q 'passphrase: true' && grep -A10 '^      home:' /tmp/imported.yaml | grep -q 'tpm2: true'"
    expect "plan on the imported file exits 0 (empty)" "$(hy_rc plan /tmp/imported.yaml --detailed-exitcode)" 0
    [ -s /tmp/hy.out ] && cat /tmp/hy.out
    rm -f /dev/shm/pass
    umount /srv/home
    sync
    finish
fi
say "after the reboot, the same TPM2"
# The init opens crypttab's key-file lines; a TPM2 line is systemd's: opened here as it would.
[ -b /dev/mapper/vg0-home_crypt ] || { vgchange -ay vg0 >/dev/null 2>&1; tpm_open; }
check "opened by the TPM2 after the reboot" test -b /dev/mapper/vg0-home_crypt
mkdir -p /srv/home && mount /dev/mapper/vg0-home_crypt /srv/home
expect "the data is intact" "$(sha256sum /srv/home/f | cut -d' ' -f1)" "$(cat /root/sum)"
expect "plan after the reboot exits 0" "$(hy_rc plan $F --detailed-exitcode)" 0
[ -s /tmp/hy.out ] && cat /tmp/hy.out
finish
