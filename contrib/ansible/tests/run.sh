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
# The installed version, read without a pipe: `ansible-playbook --version | head -1` under pipefail
# let head close the pipe early and ansible die of BrokenPipeError (rc 250), and the venv was then
# thrown away and reinstalled. Python prints the version itself; nothing is cut off.
installed_core() { "$VENV/bin/python" -c 'import ansible.release; print(ansible.release.__version__)' 2>/dev/null || true; }
if [ "$(installed_core)" != "$ANSIBLE_CORE" ]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "ansible-core==$ANSIBLE_CORE"
    [ "$(installed_core)" = "$ANSIBLE_CORE" ] || { echo "ansible-core $ANSIBLE_CORE did not install into $VENV" >&2; exit 1; }
fi
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
