#!/usr/bin/env bash
# The checkers of Ansible's collection tooling, on this collection: ansible-doc on the
# module (the collection README's own instruction), `ansible-test sanity` (every test of the pinned
# ansible-core, in its own venv, on this machine's python3 only), the changelog with
# antsibull-changelog's linter, and `ansible-lint --profile production --strict` on the collection
# and on this directory's playbook. All versions are pinned (requirements.txt; ansible-test pins
# each sanity test's own packages); the only network used is PyPI.
# ansible-test puts pip into each venv it creates with a get-pip.py downloaded from a host of its
# own, which this project's machines cannot reach: get_pip.py stands in for it (ensurepip, then pip
# from PyPI at the version ansible-test asks for) from the cache ansible-test looks in first.
# The checkers run on a copy of contrib/ansible, so that ansible-test's tests/output and
# ansible-lint's caches are never written into the checkout.
# Env: HYRAID_ANSIBLE_VENV (see venv.sh); ansible-test's per-test venvs are kept in it too.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/venv.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/hyraid-ansible-sanity.XXXXXX")
trap 'rm -rf "$W"' EXIT
cp -a "$HERE/.." "$W/ansible"
rm -rf "$W/ansible/ansible_collections/hyraid/storage/tests/output"
COLL="$W/ansible/ansible_collections/hyraid/storage"
# ansible-test and ansible-lint keep their venvs and caches under ~: the venv's, not the user's.
export HOME="$VENV/home" PATH="$VENV/bin:$PATH" ANSIBLE_COLLECTIONS_PATH="$W/ansible" \
    ANSIBLE_HOME="$W/ansible-home" ANSIBLE_NOCOLOR=1 NO_COLOR=1
pip_version=$(python - <<'PY'
import os, re, ansible_test
src = os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")
print(re.search(r"pip='([0-9.]+)'", open(src).read()).group(1))
PY
)
mkdir -p "$HOME/.ansible/test/cache"
cp "$HERE/get_pip.py" "$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
python_version=$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')

echo "== ansible-doc -t module hyraid.storage.hyraid"
doc=$(ansible-doc -t module hyraid.storage.hyraid)
echo "${doc%%$'\n'*}"
# Versions read without a pipe: under pipefail, `| head -1` closing early kills ansible (rc 250).
core=$(ansible --version)
echo "== ansible-test sanity --local --python $python_version (${core%%$'\n'*})"
(cd "$COLL" && ansible-test sanity --local --python "$python_version" --color no)
echo "== antsibull-changelog lint-changelog-yaml changelogs/changelog.yaml"
(cd "$COLL" && antsibull-changelog lint-changelog-yaml changelogs/changelog.yaml)
# --offline: no version check, no schema refresh, no collection installs (network beyond PyPI).
echo "== ansible-lint --profile production --strict --offline"
(cd "$W/ansible" && ansible-lint --offline --version && ansible-lint --profile production --strict --offline --nocolor --project-dir .)
