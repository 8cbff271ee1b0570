#!/usr/bin/env bash
# The oldest Rust hyraid builds with is Cargo.toml's `rust-version`: this builds and tests hyraid
# with exactly that toolchain, and checks that the release before it is refused by cargo for the
# package itself (not a dependency failing to compile). By hand, not in .ci/run: it fetches two
# toolchains with rustup (about 300 MB from static.rust-lang.org).
#   tests/msrv.sh            # the build and tests in $TMPDIR/hyraid-msrv (target dir of its own)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
msrv=$(sed -n 's/^rust-version = "\([0-9.]*\)"/\1/p' Cargo.toml)
[ -n "$msrv" ] || { echo "no rust-version in Cargo.toml" >&2; exit 1; }
IFS=. read -r major minor <<<"$msrv"
older="$major.$((minor - 1)).0"
for t in "$msrv.0" "$older"; do
    rustup toolchain list | grep -q "^$t-" || rustup toolchain install "$t" --profile minimal >/dev/null
done
export CARGO_TARGET_DIR=${TMPDIR:-/tmp}/hyraid-msrv
echo "== Rust $older: refused, and not only for hyraid's own rust-version"
# A copy whose rust-version says $older: what refuses it then is a dependency's rust-version, or
# the compiler on hyraid's code.
copy=$(mktemp -d "${TMPDIR:-/tmp}/hyraid-msrv-src.XXXXXX"); trap 'rm -rf "$copy"' EXIT
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$copy"
sed -i "s/^rust-version = .*/rust-version = \"$major.$((minor - 1))\"/" "$copy/Cargo.toml"
if out=$(cd "$copy" && cargo "+$older" build --locked 2>&1); then
    echo "FAIL: Rust $older built hyraid; rust-version $msrv is not the minimum"; exit 1
fi
echo "$out" | grep -E "requires rustc|^error" | head -3 || true
echo "== Rust $msrv.0: build and the whole cargo test"
cargo "+$msrv.0" --version
cargo "+$msrv.0" test --locked 2>&1 | grep -E "^test result|FAILED|panicked|^error" | awk '
    /^test result/ { p += $4; f += $6; i += $8; next } { print } 
    END { printf "Rust '"$msrv"': %d passed, %d failed, %d ignored\n", p, f, i; exit f > 0 }'
