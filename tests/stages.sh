# Wall time of the test command's stages, sourced by .ci/run and tests/vm/run.sh.
#
#   stage NAME CMD...   runs CMD and appends "NAME<TAB>SECONDS<TAB>EXIT" to $HYRAID_STAGES
#                       (returns CMD's exit code; without HYRAID_STAGES it only runs CMD). A shell
#                       function run this way runs without set -e: it returns on its own failures
#   stage_table [TOTAL] prints the stages recorded so far as a table, in the order they ran, with
#                       the rest of TOTAL seconds (when given) as "other"
#
# .ci/run exports HYRAID_STAGES, so the stages of tests/vm/run.sh (its builds, each guest image,
# the scenarios) land in the same table; CI's log then ends with where the time went.

stage() {
    local name=$1 t0 rc=0
    shift
    t0=$(date +%s.%N)
    "$@" || rc=$?
    if [ -n "${HYRAID_STAGES:-}" ]; then
        printf '%s\t%s\t%s\n' "$name" "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.0f", a - b }')" "$rc" \
            >> "$HYRAID_STAGES"
    fi
    return $rc
}

stage_table() {
    local total=${1:-}
    [ -n "${HYRAID_STAGES:-}" ] && [ -s "$HYRAID_STAGES" ] || return 0
    awk -F'\t' -v total="$total" '
        function mmss(s) { return sprintf("%d:%02d", int(s / 60), s % 60) }
        { sum += $2; line[NR] = sprintf("%-44s %6d s %7s%s", $1, $2, mmss($2), $3 == 0 ? "" : "  (exit " $3 ")") }
        END {
            print "== where the time went"
            for (i = 1; i <= NR; i++) print "   " line[i]
            if (total != "") {
                if (total > sum) printf "   %-44s %6d s %7s\n", "other (between stages)", total - sum, mmss(total - sum)
                printf "   %-44s %6d s %7s\n", "total", total, mmss(total)
            }
        }' "$HYRAID_STAGES"
}
