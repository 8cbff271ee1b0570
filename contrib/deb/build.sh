#!/usr/bin/env bash
# Build the Debian package: target/debian/hyraid_VERSION-1_amd64.deb (depends on mdadm, lvm2,
# hdparm, fdisk). Installs cargo-deb into $HYRAID_TOOLS (default /tmp/hyraid-tools) when it is
# missing, builds the release binary, generates the manual and completions from the binary, the
# copyright file from `cargo metadata` (contrib/deb/copyright.py: the licences of every linked
# crate), the changelog (contrib/deb/changelog, gzip -9n) and the examples, whose schema
# modeline is rewritten to name the installed schema, then packages. Prints the path of the .deb
# last. With --tool-only it installs cargo-deb (when missing) and stops.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
TOOLS=${HYRAID_TOOLS:-/tmp/hyraid-tools}
CARGO_DEB_VERSION=3.8.0
have=$("$TOOLS/bin/cargo-deb" --version 2>/dev/null || true)
if [[ "$have" != *"$CARGO_DEB_VERSION"* ]]; then
    cargo install --locked --quiet cargo-deb --version "$CARGO_DEB_VERSION" --root "$TOOLS"
fi
[ "${1:-}" = --tool-only ] && exit 0
cargo build --release --locked --quiet
mkdir -p target/assets
bin=target/release/hyraid
"$bin" man | gzip -9n > target/assets/hyraid.1.gz
"$bin" completions bash > target/assets/hyraid.bash
"$bin" completions zsh > target/assets/_hyraid
"$bin" completions fish > target/assets/hyraid.fish
python3 contrib/deb/copyright.py > target/assets/copyright
gzip -9nc contrib/deb/changelog > target/assets/changelog.Debian.gz
rm -rf target/assets/examples
cp -r examples target/assets/examples
schema='# yaml-language-server: $schema=/usr/share/hyraid/hyraid.schema.json'
find target/assets/examples -name '*.yaml' -exec \
    sed -i "1s|^# yaml-language-server: \$schema=.*|$schema|" {} +
"$TOOLS/bin/cargo-deb" --no-build --locked --quiet --output target/debian/ >/dev/null
version=$(cargo metadata --no-deps --format-version 1 --locked | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "hyraid"))')
deb=target/debian/hyraid_${version}-1_amd64.deb
[ -f "$deb" ] || { echo "cargo-deb did not write $deb" >&2; exit 1; }
dpkg-deb --info "$deb" | sed -n 's/^ \(Package\|Version\|Depends\|Recommends\|Installed-Size\):/\1:/p' >&2
echo "$deb"
