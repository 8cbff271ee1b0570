#!/usr/bin/env bash
# Test the Ansible collection with ansible-core from PyPI: the playbook runs the hyraid module on
# localhost against a copy of the microserver snapshot (check mode, diff, apply, re-run, errors).
# Env: HYRAID_BIN (default target/debug/hyraid, built when missing), HYRAID_ANSIBLE_VENV (the
# venv of pinned packages, see venv.sh).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BIN=${HYRAID_BIN:-$ROOT/target/debug/hyraid}
[ -x "$BIN" ] || (cd "$ROOT" && cargo build --locked --quiet)
. "$HERE/venv.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/hyraid-ansible.XXXXXX")
trap 'rm -rf "$W"' EXIT
cp "$ROOT/examples/snapshots/microserver-gen8.json" "$W/snapshot.json"
export ANSIBLE_COLLECTIONS_PATH="$ROOT/contrib/ansible" ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=0 \
    ANSIBLE_INVENTORY_UNPARSED_WARNING=0 ANSIBLE_HOME="$W/ansible-home"
version=$("$VENV/bin/ansible-playbook" --version)
echo "${version%%$'\n'*}"
"$VENV/bin/ansible-playbook" -i localhost, "$HERE/playbook.yml" \
    -e "hyraid_bin=$BIN snapshot=$W/snapshot.json config=$ROOT/examples/microserver-gen8.yaml" \
    -e "ansible_python_interpreter=$VENV/bin/python" "$@"
