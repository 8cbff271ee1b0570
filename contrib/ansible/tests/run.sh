#!/usr/bin/env bash
# Test the Ansible collection with ansible-core from PyPI: the playbook runs the hyraid module on
# localhost against a copy of the microserver snapshot (check mode, diff, apply, re-run, errors).
# Env: HYRAID_BIN (default target/debug/hyraid, built when missing), HYRAID_ANSIBLE_VENV
# (default /tmp/hyraid-ansible-venv, reused when it has the pinned version).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
ANSIBLE_CORE=2.19.14
BIN=${HYRAID_BIN:-$ROOT/target/debug/hyraid}
[ -x "$BIN" ] || (cd "$ROOT" && cargo build --locked --quiet)
VENV=${HYRAID_ANSIBLE_VENV:-/tmp/hyraid-ansible-venv}
if ! "$VENV/bin/ansible-playbook" --version 2>/dev/null | grep -q "core $ANSIBLE_CORE"; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "ansible-core==$ANSIBLE_CORE"
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/hyraid-ansible.XXXXXX")
trap 'rm -rf "$W"' EXIT
cp "$ROOT/examples/snapshots/microserver-gen8.json" "$W/snapshot.json"
export ANSIBLE_COLLECTIONS_PATH="$ROOT/contrib/ansible" ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=0 \
    ANSIBLE_INVENTORY_UNPARSED_WARNING=0 ANSIBLE_HOME="$W/ansible-home"
"$VENV/bin/ansible-playbook" --version | head -1
"$VENV/bin/ansible-playbook" -i localhost, "$HERE/playbook.yml" \
    -e "hyraid_bin=$BIN snapshot=$W/snapshot.json config=$ROOT/examples/microserver-gen8.yaml" \
    -e "ansible_python_interpreter=$VENV/bin/python" "$@"
