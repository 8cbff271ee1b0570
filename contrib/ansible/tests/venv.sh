# Sourced by run.sh and sanity.sh: makes (or reuses) the venv with the pinned packages of
# requirements.txt and sets VENV. Env: HYRAID_ANSIBLE_VENV (default /tmp/hyraid-ansible-venv),
# kept outside the checkout and reused while it has exactly these pins; PyPI is the only network
# it uses.
VENV=${HYRAID_ANSIBLE_VENV:-/tmp/hyraid-ansible-venv}
hyraid_ansible_venv() {
    local req="$1/requirements.txt" stamp="$VENV/hyraid-requirements.txt"
    cmp -s "$req" "$stamp" && return 0
    echo "making $VENV (pinned in $req)"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$req"
    # Written last: a venv whose install was cut short has no stamp and is made again.
    cp "$req" "$stamp"
}
hyraid_ansible_venv "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
