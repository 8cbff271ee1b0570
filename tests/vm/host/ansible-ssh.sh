#!/usr/bin/env bash
# The host's half of scenario 33-ansible-ssh: contrib/ansible/examples/site.yml, with the example
# inventory, against the guest over SSH (QEMU user network, 127.0.0.1:$HYRAID_SSH_PORT), as user
# ops with become, and ansible-core from PyPI (contrib/ansible/tests/venv.sh):
#   1. --check --diff: the plan is reported, per object, and nothing on the guest changes;
#   2. apply: the mirror is built, write-mostly and the write cache on;
#   3. a re-run: changed=0;
#   4. write-mostly cleared in the guest (sysfs): --check reports it and changes nothing;
#   5. apply fixes it (the guest then checks that its own plan is empty).
# Each step's claims are checked on the guest with the kernel's own files (over SSH), not with
# Ansible's report. Run by tests/vm/run.sh, which boots the guest; env: HYRAID_SSH_PORT,
# HYRAID_SSH_KEY (the private key whose public half the guest's ops has), HYRAID_VM_CONFIG (the
# hyraid file to declare, the guest's own name in it).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
EX=$ROOT/contrib/ansible/examples
PORT=$HYRAID_SSH_PORT KEY=$HYRAID_SSH_KEY CONFIG=$HYRAID_VM_CONFIG
T=$(mktemp -d "${TMPDIR:-/tmp}/hyraid-ansible-ssh.XXXXXX")
trap 'rm -rf "$T"' EXIT
CHECKS=0 FAILS=0
ok() { CHECKS=$((CHECKS+1)); echo "ok - host: $*"; }
bad() { CHECKS=$((CHECKS+1)); FAILS=$((FAILS+1)); echo "NOT OK - host: $*"; }
expect() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else bad "$1: got '$2', want '$3'"; fi; }
finish() { echo "checks: $CHECKS, failed: $FAILS"; [ "$FAILS" = 0 ]; exit $?; }
# A command on the guest, as root.
guest() {
    ssh -p "$PORT" -i "$KEY" -o BatchMode=yes -o StrictHostKeyChecking=no -o LogLevel=ERROR \
        -o UserKnownHostsFile="$T/known_hosts" -o ConnectTimeout=5 ops@127.0.0.1 sudo -n sh -c "'$*'"
}
HDD_STATE='d=$(basename $(readlink -f /dev/md/data0)); m=$(basename $(readlink -f /dev/disk/by-id/ata-HYRAID_HDD_HYHDD1)); cat /sys/block/$d/md/dev-$m/state'
wm() { guest "$HDD_STATE" | tr , '\n' | grep -qx write_mostly; }

echo "--- host: waiting for the guest's sshd and its hyraid package"
up=0
for i in $(seq 1 120); do
    if guest test -e /run/hyraid-ready 2>/dev/null; then up=1; break; fi
    sleep 2
done
[ $up = 1 ] && ok "the guest answers over SSH as ops, sudo works, hyraid is installed" || { bad "no SSH to the guest on 127.0.0.1:$PORT"; finish; }

. "$ROOT/contrib/ansible/tests/venv.sh"
# The example's own ansible.cfg (pipelining), as when ansible-playbook runs in its directory.
export ANSIBLE_CONFIG="$EX/ansible.cfg"
export ANSIBLE_COLLECTIONS_PATH="$ROOT/contrib/ansible" ANSIBLE_HOME="$T/ansible-home" \
    ANSIBLE_NOCOLOR=1 ANSIBLE_HOST_KEY_CHECKING=False ANSIBLE_SSH_CONTROL_PATH_DIR="$T/cp"
version=$("$VENV/bin/ansible-playbook" --version); echo "${version%%$'\n'*}"
# play NAME [ansible-playbook options]: the example playbook and inventory, pointed at the guest.
play() {
    local name=$1; shift
    echo "--- host: ansible-playbook -i inventory.ini site.yml $* ($name)"
    "$VENV/bin/ansible-playbook" -i "$EX/inventory.ini" "$EX/site.yml" --limit storage1 \
        -e "ansible_host=127.0.0.1 ansible_port=$PORT ansible_ssh_private_key_file=$KEY" \
        -e "ansible_ssh_extra_args='-o UserKnownHostsFile=$T/known_hosts'" \
        -e "hyraid_file=$CONFIG" "$@" > "$T/$name.out" 2>&1
    local r=$?
    cat "$T/$name.out"
    recap=$(grep -E '^storage1 +: ok=' "$T/$name.out" | tail -1)
    changed=$(sed -n 's/.* changed=\([0-9]*\).*/\1/p' <<<"$recap")
    failed=$(sed -n 's/.* failed=\([0-9]*\).*/\1/p' <<<"$recap")
    return $r
}

play check --check --diff; expect "check+diff: ansible-playbook exits 0" $? 0
expect "check+diff: failed" "$failed" 0
[ "${changed:-0}" -ge 1 ] && ok "check+diff: changes reported (changed=$changed)" || bad "check+diff reported no change"
grep -q '+ mirror data0: create RAID1' "$T/check.out" && ok "check+diff: the plan's step is in the task's output" || bad "no 'create RAID1' step in the check output"
grep -qE '^\+.*write-mostly' "$T/check.out" && ok "check+diff: the diff shows the HDD write-mostly after" || bad "no write-mostly line in the diff"
expect "check+diff: no array on the guest (/proc/mdstat)" "$(guest grep -c ^md /proc/mdstat)" 0
guest test -e /etc/hyraid/hyraid.yaml && bad "check mode wrote /etc/hyraid/hyraid.yaml" || ok "check+diff: /etc/hyraid/hyraid.yaml not written"

play apply; expect "apply: ansible-playbook exits 0" $? 0
expect "apply: failed" "$failed" 0
[ "${changed:-0}" -ge 1 ] && ok "apply: changed=$changed" || bad "apply reported no change"
wm && ok "apply: the HDD is write-mostly ($(guest "$HDD_STATE"))" || bad "apply: HDD state $(guest "$HDD_STATE")"
expect "apply: the HDD's write cache (hdparm -W)" "$(guest hdparm -W /dev/disk/by-id/ata-HYRAID_HDD_HYHDD1 | sed -n 's/.*write-caching = *\([01]\).*/\1/p')" 1
expect "apply: /etc/hyraid/hyraid.yaml is the file" "$(guest sha256sum /etc/hyraid/hyraid.yaml | cut -c1-64)" "$(sha256sum "$CONFIG" | cut -c1-64)"

play rerun; expect "re-run: ansible-playbook exits 0" $? 0
expect "re-run: changed" "$changed" 0

echo "--- host: drift: write-mostly cleared on the guest"
guest "$(sed 's/cat \(.*\)$/echo -writemostly > \1/' <<<"$HDD_STATE")"
wm && bad "write-mostly could not be cleared" || ok "drift: the HDD is no longer write-mostly ($(guest "$HDD_STATE"))"

play drift-check --check --diff; expect "drift check: ansible-playbook exits 0" $? 0
expect "drift check: changed" "$changed" 1
grep -qiE 'hdd0.*write-mostly' "$T/drift-check.out" && ok "drift check: the step names the HDD's write-mostly" || bad "drift check: no write-mostly step for hdd0"
wm && bad "check mode set write-mostly" || ok "drift check: the guest is unchanged"

play drift-apply; expect "drift apply: ansible-playbook exits 0" $? 0
expect "drift apply: changed" "$changed" 1
wm && ok "drift apply: the HDD is write-mostly again ($(guest "$HDD_STATE"))" || bad "drift apply: HDD state $(guest "$HDD_STATE")"

finish
