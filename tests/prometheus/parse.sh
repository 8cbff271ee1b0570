#!/usr/bin/env bash
# `hyraid status --format prometheus` read by a real Prometheus parser: the integration test
# tests/it/status_prometheus.rs writes a textfile per case (converged, degraded, drifted,
# resyncing) into target/hyraid-prometheus/, and check.py reads each with prometheus_client's
# text parser and checks the values each case must show.
# Env: HYRAID_PROM_VENV (default /tmp/hyraid-prom-venv), reused while it has requirements.txt's pins.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VENV=${HYRAID_PROM_VENV:-/tmp/hyraid-prom-venv}
if ! cmp -s "$HERE/requirements.txt" "$VENV/hyraid-requirements.txt"; then
    echo "making $VENV (pinned in $HERE/requirements.txt)"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$HERE/requirements.txt"
    cp "$HERE/requirements.txt" "$VENV/hyraid-requirements.txt"
fi
rm -rf "$ROOT/target/hyraid-prometheus"
(cd "$ROOT" && cargo test --locked --quiet --test it status_prometheus:: >/dev/null)
"$VENV/bin/python" "$HERE/check.py" "$ROOT/target/hyraid-prometheus"
