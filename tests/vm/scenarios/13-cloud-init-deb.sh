#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M
# First boot as a fleet does it: hyraid installed from its Debian package (as when baking the
# image), then cloud-init (NoCloud seed) runs the documented user-data: write_files puts the
# config in /etc/hyraid, runcmd runs `hyraid apply --yes` and records a plan that must be empty.
. /mnt/host/files/guest-lib.sh
say "install the .deb"
deb=$(ls /mnt/host/files/hyraid_*_amd64.deb 2>/dev/null | head -1)
[ -n "$deb" ] && ok "package built on the host: $(basename "$deb")" || { bad "no hyraid .deb in the share"; finish; }
dpkg -i "$deb" > /tmp/dpkg.out 2>&1; r=$?; cat /tmp/dpkg.out; expect "dpkg -i exits 0" $r 0
expect "hyraid is /usr/bin/hyraid" "$(command -v hyraid)" /usr/bin/hyraid
expect "package status" "$(dpkg-query -W -f='${Status}' hyraid)" "install ok installed"
dpkg-query -W -f='${Depends}\n' hyraid | tr ',' '\n' | sed 's/^ *//; s/ .*//' > /tmp/deps
for d in mdadm lvm2 hdparm fdisk libgcc-s1; do grep -qx "$d" /tmp/deps && ok "depends on $d" || bad "no dependency on $d"; done
# (the test image's dpkg excludes /usr/share/man, so look in the package itself)
dpkg-deb -c "$deb" > /tmp/deb-contents
grep -q ' ./usr/share/man/man1/hyraid.1.gz$' /tmp/deb-contents && ok "the package ships the manual" || bad "no manual in the package"
check "bash completion installed" grep -q hyraid /usr/share/bash-completion/completions/hyraid
check "schema installed" test -s /usr/share/hyraid/hyraid.schema.json
# The image's dpkg also excludes /usr/share/doc: read the examples from the package itself.
dpkg-deb -x "$deb" /tmp/debx
ex=/tmp/debx/usr/share/doc/hyraid/examples
for f in single-pair.yaml cloud-init/user-data.yaml snapshots/single-pair.json filesystems/nextcloud.yaml ci/plan-all.sh; do
    check "the package ships examples/$f" test -s $ex/$f
done
expect "an example's modeline names the installed schema" "$(head -1 $ex/filesystems/nextcloud.yaml)" \
    '# yaml-language-server: $schema=/usr/share/hyraid/hyraid.schema.json'
expect "the shipped example validates" "$(hyraid validate $ex/single-pair.yaml >/dev/null 2>&1; echo $?)" 0
dpkg-query -W -f='${Conffiles}\n' hyraid > /tmp/conffiles
check "the journal's logrotate policy is a conffile" grep -q '^ /etc/logrotate.d/hyraid ' /tmp/conffiles
check "it names the journal" grep -q '^/var/log/hyraid/journal.jsonl {' /etc/logrotate.d/hyraid
# A Files field lists a licence group's crates one per line; serde's is a continuation line.
check "the copyright lists the linked crates" grep -qE '^(Files:)? +cargo-registry/serde-[0-9]' /usr/share/doc/hyraid/copyright

say "cloud-init first boot (NoCloud)"
mkdir -p /var/lib/cloud/seed/nocloud /etc/cloud/cloud.cfg.d
cp $CFG/cloud-init-user-data.yaml /var/lib/cloud/seed/nocloud/user-data
printf 'instance-id: hyraid-vm-first-boot\nlocal-hostname: hyraid-vm\n' > /var/lib/cloud/seed/nocloud/meta-data
# The test image has no locales but C.UTF-8 (cloud-init's default en_US.UTF-8 would fail).
printf 'datasource_list: [ NoCloud, None ]\nlocale: C.UTF-8\n' > /etc/cloud/cloud.cfg.d/90-hyraid-test.cfg
# The stages systemd would start at boot, in order.
for stage in "init --local" "init" "modules --mode=config" "modules --mode=final"; do
    echo "\$ cloud-init $stage"
    cloud-init $stage > /tmp/ci.out 2>&1; r=$?
    tail -3 /tmp/ci.out
    expect "cloud-init $stage exits 0" $r 0
done
cloud-init status --long > /tmp/ci-status 2>&1; cat /tmp/ci-status
check "cloud-init finished without errors" grep -q "^status: done" /tmp/ci-status
echo "--- /var/log/cloud-init-output.log (tail)"; tail -40 /var/log/cloud-init-output.log

say "the result"
check "write_files put the config in place" test -s /etc/hyraid/hyraid.yaml
check "mirror data0 exists" test -e /dev/md/data0
check "hdd0 is write-mostly" is_wm data0 ata-HYRAID_HDD_HYHDD1
expect "hdd0 write cache on" "$(wcache ata-HYRAID_HDD_HYHDD1)" 1
expect "LV vg0/data exists" "$(lvfield vg0/data lv_name)" data
check "the first-boot plan was recorded" test -s /var/log/hyraid/first-boot-plan.txt
cat /var/log/hyraid/first-boot-plan.txt
check "apply wrote its journal" test -s /var/log/hyraid/journal.jsonl
wait_idle data0
expect "plan with the installed binary exits 0" "$(hy_rc() { hyraid "$@" > /tmp/hy.out 2>&1; echo $?; }; hy_rc plan /etc/hyraid/hyraid.yaml --detailed-exitcode)" 0
finish
