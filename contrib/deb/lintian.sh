#!/usr/bin/env bash
# Check a built package with lintian: `contrib/deb/lintian.sh target/debian/hyraid_*.deb`.
# Prints lintian's full output (--pedantic --info) and exits 1 on any error (E:) or warning (W:).
# Installs lintian with apt-get when it is missing (root, or sudo).
set -euo pipefail
deb=${1:?usage: contrib/deb/lintian.sh PACKAGE.deb}
if ! command -v lintian >/dev/null 2>&1; then
    SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q >/dev/null
    $SUDO apt-get install -y -q --no-install-recommends lintian >/dev/null
fi
out=$(lintian --pedantic --info --tag-display-limit 0 "$deb" 2>&1) || true
[ -z "$out" ] || printf '%s\n' "$out"
bad=$(grep -E '^[EW]: ' <<<"$out" || true)
if [ -n "$bad" ]; then
    echo "lintian: $(wc -l <<<"$bad") error(s) or warning(s) in $(basename "$deb")"
    exit 1
fi
echo "lintian: no errors or warnings in $(basename "$deb") (lintian $(lintian --version | awk '{print $2}'))"
