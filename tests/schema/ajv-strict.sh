#!/usr/bin/env bash
# The published JSON Schemas pass ajv (the validator editors' YAML plugins and CI pipelines use)
# in strict mode, and every example and snapshot in the tree validates against them with it.
# ajv and ajv-cli come from the npm registry at the versions package-lock.json pins, installed
# with `npm ci` into HYRAID_AJV_DIR (default /tmp/hyraid-ajv, reused while the lock is the same).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DIR=${HYRAID_AJV_DIR:-/tmp/hyraid-ajv}
command -v npm >/dev/null 2>&1 || { echo "npm not found: install nodejs and npm (Debian: apt-get install npm)" >&2; exit 1; }
if ! cmp -s "$HERE/package-lock.json" "$DIR/package-lock.json" || [ ! -x "$DIR/node_modules/.bin/ajv" ]; then
    rm -rf "$DIR"; mkdir -p "$DIR"
    cp "$HERE/package.json" "$HERE/package-lock.json" "$DIR/"
    (cd "$DIR" && npm ci --silent --no-audit --no-fund)
fi
AJV="$DIR/node_modules/.bin/ajv"
echo "ajv $(node -p "require('$DIR/node_modules/ajv/package.json').version") (ajv-cli $(node -p "require('$DIR/node_modules/ajv-cli/package.json').version")), strict mode"
cd "$ROOT"
for s in schemas/hyraid.schema.json schemas/hyraid-snapshot.schema.json; do
    "$AJV" compile --spec=draft2020 --strict=true -s "$s"
done
mapfile -t files < <(find examples -name '*.yaml' -not -path 'examples/cloud-init/*' -not -path 'examples/ci/*' | sort)
"$AJV" validate --spec=draft2020 --strict=true -s schemas/hyraid.schema.json "${files[@]/#/-d=}"
mapfile -t snaps < <(find examples/snapshots -name '*.json' | sort)
"$AJV" validate --spec=draft2020 --strict=true -s schemas/hyraid-snapshot.schema.json "${snaps[@]/#/-d=}"
