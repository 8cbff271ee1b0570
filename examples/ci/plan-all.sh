#!/usr/bin/env bash
# For every host file HOSTS/NAME.yaml: `hyraid validate`, then `hyraid plan --sim
# SNAPSHOTS/NAME.json --format markdown`. Writes one Markdown document (a PR comment) to
# stdout. Exit 0: every file is valid and planned; 1: a file is invalid, a snapshot is missing or
# a plan failed (the document says which). Set HYRAID to the binary (default: hyraid in PATH).
#
# Usage: plan-all.sh HOSTS_DIR SNAPSHOTS_DIR
set -uo pipefail
HY=${HYRAID:-hyraid}
hosts=${1:?usage: plan-all.sh HOSTS_DIR SNAPSHOTS_DIR}
snaps=${2:?usage: plan-all.sh HOSTS_DIR SNAPSHOTS_DIR}
rc=0; changed=0; n=0
body=$(mktemp); trap 'rm -f "$body"' EXIT
for f in "$hosts"/*.yaml; do
    [ -e "$f" ] || continue
    n=$((n+1)); name=$(basename "$f" .yaml); snap="$snaps/$name.json"
    if ! out=$("$HY" validate "$f" 2>&1); then
        rc=1; printf '### ❌ `%s` is not valid\n\n```\n%s\n```\n\n' "$f" "$out" >> "$body"; continue
    fi
    if [ ! -f "$snap" ]; then
        rc=1; printf '### ❌ `%s`: no snapshot `%s`\n\nOn the host: `hyraid observe -o %s.json`, then commit it as `%s`.\n\n' "$f" "$snap" "$name" "$snap" >> "$body"; continue
    fi
    "$HY" plan "$f" --sim "$snap" --format markdown --detailed-exitcode > "$body.one" 2> "$body.err"
    case $? in
        0) printf '<details><summary>✅ <code>%s</code>: no changes</summary>\n\n' "$name" >> "$body"
           cat "$body.one" >> "$body"; printf '\n</details>\n\n' >> "$body";;
        2) changed=$((changed+1)); cat "$body.one" >> "$body"; printf '\n' >> "$body";;
        *) rc=1; printf '### ❌ `%s`: plan failed\n\n```\n%s\n```\n\n' "$f" "$(cat "$body.err")" >> "$body";;
    esac
    rm -f "$body.one" "$body.err"
done
echo "<!-- hyraid-plan-all -->"
echo "## hyraid: $n host file(s), $changed with changes$([ $rc = 0 ] || echo ', errors below')"
echo
cat "$body"
exit $rc
