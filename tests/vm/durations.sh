#!/usr/bin/env bash
# tests/vm/durations.tsv: the seconds each scenario took on each release in its last run (the
# project's 2-core machine, two guests at a time, one vCPU each). tests/vm/run.sh starts the
# longest first, and a scenario's line is what it costs the suite's budget.
#
#   durations.sh update FILE RUN   merge RUN ("NAME[RELEASE] SECONDS" lines) into FILE: the lines
#                                  of the scenarios that ran are replaced, the others kept, longest
#                                  first; the header comment is kept
#   durations.sh sum FILE          the sum of FILE's seconds
set -euo pipefail
case "${1:-}" in
    update)
        file=$2 run=$3 tmp=$(mktemp)
        grep '^#' "$file" > "$tmp" 2>/dev/null || true
        awk 'FNR == NR { if ($1 !~ /^#/ && NF == 2) new[$1] = $2; next }
             $1 !~ /^#/ && NF == 2 && !($1 in new) { print }
             END { for (k in new) print k, new[k] }' "$run" "$file" | sort -k2,2nr -k1,1 >> "$tmp"
        cat "$tmp" > "$file"; rm -f "$tmp";;
    sum) awk '$1 !~ /^#/ && NF == 2 { s += $2 } END { print s + 0 }' "$2";;
    *) echo "usage: durations.sh update FILE RUN | sum FILE" >&2; exit 2;;
esac
