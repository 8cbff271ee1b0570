#!/bin/sh
# disks: ssd1:ssd:512M hdd1:hdd:512M cache:ssd:256M
# host-driver: ansible-ssh.sh
# Ansible against a real machine over SSH (issue 15 §2): this guest installs the .deb and serves
# SSH (run.sh boots it with --ssh-port); the host runs contrib/ansible/examples/site.yml at it
# with become (tests/vm/host/ansible-ssh.sh: check+diff, apply, a re-run with nothing changed,
# write-mostly cleared in the guest, check mode reporting it, apply fixing it). Then this guest
# checks the end state with the kernel's and the tools' own output.
. /mnt/host/files/guest-lib.sh
HDD=ata-HYRAID_HDD_HYHDD1

say "install the .deb"
deb=$(ls /mnt/host/files/hyraid_*_amd64.deb 2>/dev/null | head -1)
dpkg -i "$deb" > /tmp/dpkg.out 2>&1; expect "dpkg -i exits 0" $? 0
check "hyraid is on PATH for the module" test -x /usr/bin/hyraid
check "sshd is running" pgrep -x sshd
touch /run/hyraid-ready

say "the host's playbook runs (over SSH)"
i=0
while [ ! -e /run/hyraid-host-done ] && [ $i -lt 840 ]; do sleep 1; i=$((i+1)); done
check "the host said it is done (after ${i}s)" test -e /run/hyraid-host-done

say "the machine as Ansible left it"
wait_idle data0
check "data0 is a RAID1" sh -c "mdadm --detail /dev/md/data0 | grep -q 'Raid Level : raid1'"
is_wm data0 $HDD && ok "the HDD is write-mostly again ($(member_state data0 $HDD))" || bad "the HDD is not write-mostly: $(member_state data0 $HDD)"
expect "the HDD's write cache (hdparm -W)" "$(wcache $HDD)" 1
expect "bitmap chunk" "$(bitmap_chunk data0)" 67108864
expect "LV vg0/files" "$(lvfield vg0/files lv_size)" 256.00m
check "the playbook installed the drift timer's file" cmp /etc/hyraid/hyraid.yaml $CFG/pair.yaml
hyraid plan /etc/hyraid/hyraid.yaml --detailed-exitcode > /tmp/plan.out 2>&1; r=$?
cat /tmp/plan.out
expect "plan on the guest: no changes (--detailed-exitcode)" $r 0
n=$(grep -c 'Accepted publickey for ops from 10.0.2.2' $OUT/sshd.log)
[ "$n" -ge 6 ] && ok "sshd let the host in as ops by key, $n times" || bad "sshd accepted $n logins"
finish
