#!/usr/bin/env bash
# hyraid's real-kernel suite: each scenario in tests/vm/scenarios boots its own Debian VM (QEMU,
# the release's stock kernel and real mdadm / lvm2 / hdparm) with fresh virtual SATA SSDs and
# HDDs, runs hyraid there, and checks the result with the kernel's and the tools' own output.
# Every scenario runs on Debian 12 (bookworm: kernel 6.1, mdadm 4.2, lvm2 2.03.16); those whose
# header has `# releases: bookworm trixie` run on Debian 13 (trixie: kernel 6.12, mdadm 4.4,
# lvm2 2.03.31, udev 257) too, in an image of their own.
#
# Usage: tests/vm/run.sh [--capture DIR] [SCENARIO-NAME ...]
#   --capture DIR   keep each scenario's guest output (tool captures, logs) under DIR/SUITE/NAME
# Env: HYRAID_VM_SUITES (the releases to run, default "bookworm trixie")
#      HYRAID_VM_CACHE is not used here: each release's image is in /tmp/hyraid-vm(-SUITE)
#      HYRAID_VM_PERF=full (the I/O scenario runs the whole fio matrix, the speed scenarios all
#      their rounds; default: short variants), and the benchmarks run too: a scenario whose
#      header has `# benchmark` runs only with HYRAID_VM_PERF=full or when named, and is
#      otherwise counted as skipped
#
# A scenario's guest is stopped after 900 s, or the `# timeout: SECONDS` of its header.
# A scenario whose header has `# tpm` boots with a TPM 2.0 (swtpm), the same one on every boot;
# one whose header has `# firmware: uefi` boots through UEFI (OVMF), its variable store kept
# from one boot to the next. A line `# boot N: from-disks [uefi] [only=NAME,...]` makes boot N
# start what the disks hold (their boot loader, through OVMF with `uefi`, else SeaBIOS; no image
# kernel and no root image) with only the named disks attached.
# A scenario whose header has `# host-driver: FILE` is driven from the host too: its guest boots
# with sshd on a forwarded loopback port (run-vm.sh --ssh-port) and a key made for the run, and
# tests/vm/host/FILE runs on the host beside it (env HYRAID_SSH_PORT, HYRAID_SSH_KEY,
# HYRAID_VM_CONFIG); when it is done the guest is told so over SSH and makes its own checks.
# Both halves' checks count and both must pass.
#
# Scenarios run side by side, HYRAID_VM_JOBS at a time (default: the host's cores, at most 4 and
# one per 2 GiB of available memory), each guest then with one vCPU; the longest start first
# (tests/vm/durations.tsv, seconds of the last run that passed: every run updates the lines of
# the scenarios it passed, and writes all of its own to ${TMPDIR:-/tmp}/hyraid-vm-durations.tsv). A scenario whose header has `# alone` (one that
# measures speed) runs after the others with nothing beside it and the default vCPUs.
#
# Prints one PASS/FAIL/SKIP line per scenario and release as each ends and a final "N passed, N
# failed, N skipped" line; exits non-zero on any failure. A scenario whose guest kernel crashed
# (run-vm.sh exit 126) is printed as CRASH, with the kernel's report, and one whose guest did not
# finish in time (exit 124) as TIMEOUT, with its last lines; either runs again from the start
# once, and the final line then says how many ran again and which. When QEMU cannot run here at all it
# says SKIPPED (not a pass) and exits 0.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CAPTURE=""
while [ $# -gt 0 ]; do
    case "$1" in
        --capture) CAPTURE=$(mkdir -p "$2" && cd "$2" && pwd); shift 2;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0;;
        *) break;;
    esac
done
ONLY=("$@")

. "$ROOT/tests/stages.sh"
# Run on its own (not from .ci/run), the suite prints its own table of stages at the end.
OWN_STAGES=0
if [ -z "${HYRAID_STAGES:-}" ]; then
    HYRAID_STAGES=$(mktemp "${TMPDIR:-/tmp}/hyraid-vm-stages.XXXXXX"); export HYRAID_STAGES; OWN_STAGES=1
fi
SUITE_T0=$(date +%s)
RES=""
on_exit() {
    [ -n "${IMG:-}" ] && { wait; rm -rf "$IMG"; }
    [ -n "$RES" ] && rm -rf "$RES"
    [ "$OWN_STAGES" = 1 ] && { stage_table $(( $(date +%s) - SUITE_T0 )); rm -f "$HYRAID_STAGES"; }
}
trap on_exit EXIT

skip() { echo "VM suite SKIPPED: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, image build)"
host_deps() { "$HERE/install-host-deps.sh" > /tmp/hyraid-vm-deps.log 2>&1; }
stage "vm: apt: qemu, debootstrap, swtpm" host_deps || { tail -5 /tmp/hyraid-vm-deps.log; skip "cannot install qemu-system-x86/debootstrap"; }
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not available"
accels=$(qemu-system-x86_64 -accel help 2>/dev/null || true)
grep -qx tcg <<<"$accels" || skip "this QEMU has no TCG accelerator"

# The scenarios to run on release $1, in order.
scenarios_for() {
    local script name
    for script in "$HERE"/scenarios/*.sh; do
        name=$(basename "$script" .sh)
        if [ ${#ONLY[@]} -gt 0 ] && ! [[ " ${ONLY[*]} " == *" $name "* ]]; then continue; fi
        if [ "$1" != bookworm ] && ! grep -qE "^# releases:.* $1( |\$)" "$script"; then continue; fi
        if grep -q '^# benchmark' "$script" && [ "${HYRAID_VM_PERF:-short}" != full ] && [ ${#ONLY[@]} = 0 ]; then
            echo "SKIP:$script"; continue
        fi
        echo "$script"
    done
}

# The guest images are built (or found up to date) in the background, beside the Rust builds
# below: debootstrap waits on the mirror and dpkg on the disk, while the release build's last
# link keeps one core. Each release's list of scenarios is known first: no image without one.
# (Each release's image is in /tmp/hyraid-vm(-SUITE), whatever the caller's environment says.)
unset HYRAID_VM_CACHE
IMG=$(mktemp -d "${TMPDIR:-/tmp}/hyraid-vm-images.XXXXXX")
for SUITE in ${HYRAID_VM_SUITES:-bookworm trixie}; do
    scenarios_for "$SUITE" > "$IMG/$SUITE.list"
    grep -qv '^SKIP:' "$IMG/$SUITE.list" || continue
    ( stage "vm: guest image $SUITE (beside the builds)" env HYRAID_VM_SUITE="$SUITE" "$HERE/build-image.sh" \
        > "$IMG/$SUITE.log" 2>&1; echo $? > "$IMG/$SUITE.rc" ) &
    echo $! > "$IMG/$SUITE.pid"
done

echo "== building hyraid (release)"
release_build() { (cd "$ROOT" && cargo build --release --locked --quiet); }
stage "vm: release build (thin LTO)" release_build || { echo "cargo build failed"; echo "0 passed, 1 failed"; exit 1; }
echo "== Debian package"
# cargo-deb is built after the release build, not beside it: beside it, both compile on the same
# two cores, and the release build took 470 s instead of 340-385 s (cargo-deb's 55 s, saved,
# cost more than they saved).
deb_build() { "$ROOT/contrib/deb/build.sh" > /tmp/hyraid-deb.out 2>/tmp/hyraid-deb.log; }
stage "vm: Debian package (cargo-deb)" deb_build && DEB=$(tail -1 /tmp/hyraid-deb.out) || { cat /tmp/hyraid-deb.log; echo "package build failed"; echo "0 passed, 1 failed"; exit 1; }
sed 's/^/   /' /tmp/hyraid-deb.log; echo "   $DEB"
echo "== lintian"
lintian_run() { "$ROOT/contrib/deb/lintian.sh" "$DEB" > /tmp/hyraid-lintian.log 2>&1; }
stage "vm: lintian" lintian_run || { sed 's/^/   /' /tmp/hyraid-lintian.log; echo "lintian failed"; echo "0 passed, 1 failed"; exit 1; }
sed 's/^/   /' /tmp/hyraid-lintian.log
# The budget of the scenarios' wall time on the project's 2-core machine, two at a time
# (docs/testing.md#the-vm-suites-budget); every run prints how much of it it used.
VM_BUDGET=${HYRAID_VM_BUDGET:-1800}
SUITES=${HYRAID_VM_SUITES:-bookworm trixie}
pass=0; fail=0; skipped=0
JOBS=${HYRAID_VM_JOBS:-}
if [ -z "$JOBS" ]; then
    JOBS=$(nproc); [ "$JOBS" -gt 4 ] && JOBS=4
    by_mem=$(awk '/^MemAvailable:/ { print int($2 / 2097152) }' /proc/meminfo)
    [ "${by_mem:-1}" -lt "$JOBS" ] && JOBS=${by_mem:-1}
    [ "$JOBS" -ge 1 ] || JOBS=1
fi
RES=$(mktemp -d "${TMPDIR:-/tmp}/hyraid-vm-results.XXXXXX")


# Run one scenario: run_scenario SUITE SCRIPT RESULT [run-vm.sh options]. Prints its PASS/FAIL
# line (and on failure what failed) and writes "pass|fail NAME[SUITE] SECONDS" to RESULT.
run_scenario() {
    local SUITE=$1 script=$2 result=$3 name W; shift 3
    local vm_opts=("$@")
    name=$(basename "$script" .sh)
    W=$(mktemp -d "${TMPDIR:-/tmp}/hyraid-scn.XXXXXX")
    disk_args=()
    for spec in $(sed -n 's/^# disks: //p' "$script"); do
        # name:kind:size[:bus[:qemu options, e.g. iops=200,bps=120M]]
        IFS=: read -r dname kind size bus opts <<<"$spec"
        truncate -s "$size" "$W/$dname.raw"
        disk_args+=(--disk "$dname:$kind:$size:${bus:-sata}:${opts:+$opts,}file=$W/$dname.raw")
    done
    for prep in $(sed -n 's/^# prep: //p' "$script"); do
        case "$prep" in
            *=ext4)
                d=${prep%=ext4}; mkdir -p "$W/ext4src"; echo hyraid-test-data > "$W/ext4src/precious.txt"
                mkfs.ext4 -q -F -d "$W/ext4src" "$W/$d.raw" >/dev/null;;
            *) echo "unknown prep $prep in $name"; exit 2;;
        esac
    done
    checksum=0; grep -q '^# host: checksum' "$script" && checksum=1
    [ $checksum = 1 ] && (cd "$W" && sha256sum ./*.raw > before.sha)
    files=(--file "$ROOT/target/release/hyraid" --file "$HERE/guest-lib.sh" --file "$ROOT/$DEB")
    for c in "$HERE"/configs/*.yaml; do files+=(--file "$c"); done
    driver=$(sed -n 's/^# host-driver: //p' "$script"); net=()
    if [ -n "$driver" ]; then
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        ssh-keygen -q -t ed25519 -N '' -C "hyraid-vm-$name" -f "$W/ssh-key"
        cp "$W/ssh-key.pub" "$W/authorized_keys"
        files+=(--file "$W/authorized_keys"); net=(--ssh-port "$port")
    fi
    # A TPM 2.0 (swtpm), the same one on every boot of the scenario.
    grep -q '^# tpm$' "$script" && vm_opts+=(--tpm "$W/tpm")
    # UEFI firmware (OVMF) instead of the direct kernel boot.
    fw=$(sed -n 's/^# firmware: *\([a-z]*\).*/\1/p' "$script" | head -1)
    [ -n "$fw" ] && vm_opts+=(--firmware "$fw")
    boots=$(sed -n 's/^# boots: //p' "$script"); boots=${boots:-1}
    T=$(date +%s)
    rc=0
    for b in $(seq 1 "$boots"); do
        args=("${disk_args[@]}")
        if [ "$b" -gt 1 ] && grep -q '^# disks2: ' "$script"; then
            # The machine after a disk swap: the listed disks, new files for new names.
            args=()
            for spec in $(sed -n 's/^# disks2: //p' "$script"); do
                IFS=: read -r dname kind size bus <<<"$spec"
                [ -f "$W/$dname.raw" ] || truncate -s "$size" "$W/$dname.raw"
                args+=(--disk "$dname:$kind:$size:${bus:-sata}:file=$W/$dname.raw")
            done
        fi
        # `# boot N: from-disks [uefi|bios] [only=NAME,...]`: boot N starts what the disks hold
        # (grub from their ESP or boot sector), through UEFI or SeaBIOS, with only the named disks.
        per=(); bootline=$(sed -n "s/^# boot $b: //p" "$script" | head -1)
        for w in $bootline; do
            case "$w" in
                from-disks) per+=(--from-disks);;
                uefi) per+=(--firmware uefi);;
                bios) ;;
                only=*)
                    keep=",${w#only=},"; kept=()
                    for ((k = 0; k < ${#args[@]}; k += 2)); do
                        dn=${args[k+1]%%:*}
                        case "$keep" in *",$dn,"*) kept+=("${args[k]}" "${args[k+1]}");; esac
                    done
                    args=("${kept[@]}");;
                *) echo "unknown word $w in # boot $b: of $name"; exit 2;;
            esac
        done
        if [ -n "$bootline" ]; then
            # The firmware of this boot is the line's (no word: SeaBIOS), not the header's.
            opts=(); for o in "${vm_opts[@]+"${vm_opts[@]}"}"; do opts+=("$o"); done
            vm_run_opts=()
            for ((k = 0; k < ${#opts[@]}; k++)); do
                if [ "${opts[k]}" = --firmware ]; then k=$((k + 1)); continue; fi
                vm_run_opts+=("${opts[k]}")
            done
        else
            vm_run_opts=("${vm_opts[@]+"${vm_opts[@]}"}")
        fi
        [ -n "$fw$bootline" ] && per+=(--efivars "$W/efivars.fd")
        overlay=(); [ "$boots" -gt 1 ] && overlay=(--root-overlay "$W/root.qcow2")
        echo "=== boot $b of $boots" >> "$W/log"
        limit=$(sed -n 's/^# timeout: *\([0-9]*\).*/\1/p' "$script" | head -1)
        vm=(env HYRAID_VM_SUITE="$SUITE" "$HERE/run-vm.sh" "${vm_run_opts[@]+"${vm_run_opts[@]}"}" "${per[@]+"${per[@]}"}" --quiet --timeout "${limit:-900}" --out "$W/out" --env "HYRAID_BOOT=$b" --env "HYRAID_VM_PERF=${HYRAID_VM_PERF:-short}" "${net[@]+"${net[@]}"}" "${overlay[@]+"${overlay[@]}"}" "${files[@]}" "${args[@]+"${args[@]}"}" "$script")
        if [ -z "$driver" ]; then
            "${vm[@]}" >> "$W/log" 2>&1
            rc=$?
        else
            # The VM in its own process group, so that it can be stopped as a whole.
            setsid "${vm[@]}" > "$W/guest.log" 2>&1 &
            vmpid=$!
            HYRAID_SSH_PORT=$port HYRAID_SSH_KEY=$W/ssh-key HYRAID_VM_CONFIG=$HERE/configs/pair.yaml \
                "$HERE/host/$driver" > "$W/host.log" 2>&1
            hrc=$?
            ssh -p "$port" -i "$W/ssh-key" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
                -o LogLevel=ERROR -o ConnectTimeout=5 ops@127.0.0.1 sudo -n touch /run/hyraid-host-done \
                || kill -- -"$vmpid" 2>/dev/null
            wait "$vmpid"; rc=$?
            cat "$W/host.log" "$W/guest.log" >> "$W/log"
            [ $hrc = 0 ] || { echo "host: $driver exited $hrc" >> "$W/log"; [ $rc != 0 ] || rc=$hrc; }
        fi
        [ $rc = 0 ] || break
    done
    if [ $checksum = 1 ] && [ $rc = 0 ]; then
        (cd "$W" && sha256sum ./*.raw > after.sha)
        if ! cmp -s "$W/before.sha" "$W/after.sha"; then
            echo "host: disk images changed:" >> "$W/log"; diff "$W/before.sha" "$W/after.sha" >> "$W/log"; rc=1
        else
            echo "ok - host: every disk image byte-identical ($(wc -l < "$W/after.sha") images)" >> "$W/log"
        fi
    fi
    secs=$(( $(date +%s) - T ))
    if { [ $rc = 126 ] || [ $rc = 124 ]; } && [ "${RERUN:-0}" = 0 ]; then
        # The guest's kernel crashed (run-vm.sh saw an Oops or a panic on the console), or the
        # guest did not finish within its limit: under TCG a stock kernel does either now and
        # then whatever runs in it (CI once saw 24-pvmove, 5 minutes beside another guest, stop
        # for 15 after its first apply). The scenario runs again from the start, once, and the
        # final line counts it; a second crash or timeout is a failure.
        if [ $rc = 126 ]; then
            echo "CRASH $name [$SUITE] (${secs}s): the guest's kernel crashed; the scenario runs again from the start, once"
            sed -n '/GUEST KERNEL CRASHED/,$p' "$W/log" | head -n 40 | sed 's/^/   /'
        else
            echo "TIMEOUT $name [$SUITE] (${secs}s): the guest did not finish in time; the scenario runs again from the start, once"
            echo "   --- last lines:"; tail -15 "$W/log" | sed 's/^/   /'
        fi
        echo "$name[$SUITE]" >> "$RES/rerun"
        [ -n "$CAPTURE" ] && { mkdir -p "$CAPTURE/$SUITE/$name.crashed"; cp -a "$W/out/." "$W/log" "$CAPTURE/$SUITE/$name.crashed/" 2>/dev/null; }
        rm -rf "$W"
        RERUN=1 run_scenario "$SUITE" "$script" "$result" "${vm_opts[@]+"${vm_opts[@]}"}"
        return
    fi
    # Every boot's and the host driver's checks.
    checks=$(awk '/^checks: [0-9]+, failed/ { n += $2 } END { if (NR) print n }' "$W/log")
    if [ $rc = 0 ]; then
        echo "PASS $name [$SUITE] (${secs}s, ${checks:-?} checks)"
        echo "pass $name[$SUITE] $secs" > "$result"
    else
        echo "FAIL $name [$SUITE] (${secs}s, exit $rc)"
        grep -m 20 -E '^(NOT OK|run-vm.sh|host:)' "$W/log"
        first=$(grep -m 1 -n '^NOT OK' "$W/log" | cut -d: -f1)
        if [ -n "$first" ]; then
            echo "   --- what led to the first failed check:"
            head -n "$first" "$W/log" | tail -n 30 | sed 's/^/   /'
        fi
        echo "   --- last lines of $name:"; tail -25 "$W/log" | sed 's/^/   /'
        echo "fail $name[$SUITE] $secs" > "$result"
    fi
    [ -n "$CAPTURE" ] && { mkdir -p "$CAPTURE/$SUITE/$name"; cp -a "$W/out/." "$W/log" "$CAPTURE/$SUITE/$name/" 2>/dev/null; }
    rm -rf "$W"
}

# Seconds a scenario took in a past run (the order of the pool: longest first), 120 if unknown.
past_secs() { awk -v k="$1" '$1 == k { print $2; f = 1; exit } END { if (!f) print 120 }' "$HERE/durations.tsv" 2>/dev/null || echo 120; }

# Every release's image first, then one list of (release, scenario).
pool=(); alone=()
for SUITE in $SUITES; do
    list=$(cat "$IMG/$SUITE.list" 2>/dev/null)
    [ -n "$list" ] || continue
    if [ -f "$IMG/$SUITE.pid" ]; then   # (none when every scenario of the release is skipped)
        echo "== guest image: $SUITE"
        T=$(date +%s)
        wait "$(cat "$IMG/$SUITE.pid")" 2>/dev/null
        cat "$IMG/$SUITE.log"
        [ "$(cat "$IMG/$SUITE.rc" 2>/dev/null)" = 0 ] || { echo "image build failed ($SUITE)"; fail=$((fail+1)); continue; }
        echo "image ready ($(( $(date +%s) - T ))s waited for it after the builds)"
    fi
    for script in $list; do
        case "$script" in
            SKIP:*) skipped=$((skipped+1)); echo "SKIP $(basename "${script#SKIP:}" .sh) [$SUITE] (a benchmark: HYRAID_VM_PERF=full runs it, or name it)";;
            *)
                name=$(basename "$script" .sh)
                # A scenario runs on Debian 13 too only for a tool or kernel behaviour that
                # differs there, and its header says which (docs/testing.md).
                if [ "$SUITE" != bookworm ] && ! grep -q '^# why both: ' "$script"; then
                    echo "FAIL $name [$SUITE]: its header runs it on $SUITE without a '# why both:' line"
                    fail=$((fail+1)); continue
                fi
                if ! grep -q "^$name\[$SUITE\] " "$HERE/durations.tsv"; then
                    echo "NEW $name [$SUITE]: no cost in tests/vm/durations.tsv yet; this run's, if it passes, goes there"
                fi
                if grep -q '^# alone' "$script"; then alone+=("$SUITE $script")
                else pool+=("$(past_secs "$name[$SUITE]") $SUITE $script"); fi;;
        esac
    done
done
mapfile -t pool < <(printf '%s\n' "${pool[@]+"${pool[@]}"}" | sed '/^$/d' | sort -k1,1nr -s | cut -d' ' -f2-)

# A job's output is printed whole when it ends, in the order jobs end.
n=0; running=0
flush() {
    local f
    for f in "$RES"/*.done; do
        [ -e "$f" ] || continue
        cat "${f%.done}.out"; rm -f "$f"
    done
}
start() { # SUITE SCRIPT [run-vm.sh options]
    n=$((n+1))
    local i=$n
    ( run_scenario "$1" "$2" "$RES/$i.result" "${@:3}" > "$RES/$i.out" 2>&1; touch "$RES/$i.done" ) &
    running=$((running+1))
}
smp=(); [ "$JOBS" -gt 1 ] && smp=(--smp 1)
echo "== ${#pool[@]} scenarios, $JOBS at a time${smp[*]:+ (one vCPU each)}; then ${#alone[@]} alone"
run_all() {
    local job SUITE script
    for job in "${pool[@]+"${pool[@]}"}"; do
        while [ "$running" -ge "$JOBS" ]; do wait -n; running=$((running-1)); flush; done
        read -r SUITE script <<<"$job"
        start "$SUITE" "$script" "${smp[@]+"${smp[@]}"}"
    done
    while [ "$running" -gt 0 ]; do wait -n; running=$((running-1)); flush; done
    for job in "${alone[@]+"${alone[@]}"}"; do
        read -r SUITE script <<<"$job"
        start "$SUITE" "$script"; wait -n; running=0; flush
    done
    wait; flush
}
SCN_T0=$(date +%s)
stage "vm: scenarios ($JOBS at a time)" run_all
SCN_WALL=$(( $(date +%s) - SCN_T0 ))

for r in "$RES"/*.result; do
    [ -e "$r" ] || continue
    read -r verdict key secs < "$r"
    case "$verdict" in pass) pass=$((pass+1));; *) fail=$((fail+1));; esac
    echo "$key $secs" >> "$RES/durations"
    [ "$verdict" = pass ] && echo "$key $secs" >> "$RES/passed"
done
# A scenario that started and wrote no result (its runner died) is a failure.
started=$n; [ "$(ls "$RES"/*.result 2>/dev/null | wc -l)" = "$started" ] || { echo "a scenario ended without a result"; fail=$((fail+1)); }
if [ -f "$RES/durations" ]; then
    sort -k2,2nr "$RES/durations" > "${TMPDIR:-/tmp}/hyraid-vm-durations.tsv"
    # The scenarios that ran update their lines of tests/vm/durations.tsv (a full run refreshes
    # it whole): the order of the next run, and what each scenario costs.
    [ -f "$RES/passed" ] && "$HERE/durations.sh" update "$HERE/durations.tsv" "$RES/passed"
    echo "== each scenario's time (seconds, longest first)"
    sort -k2,2nr "$RES/durations" | awk '{ printf "   %-40s %5d\n", $1, $2 }'
    sum=$(awk '{ s += $2 } END { print s + 0 }' "$RES/durations")
    echo "== VM suite: ${SCN_WALL}s of wall time for $n scenario runs, $JOBS at a time (the sum of their times: ${sum}s)"
    echo "   budget: ${VM_BUDGET}s of wall time for the scenarios; this run used $(( SCN_WALL * 100 / VM_BUDGET ))%$( [ "$SCN_WALL" -le "$VM_BUDGET" ] || echo ": OVER BUDGET, see docs/testing.md#the-vm-suites-budget")"
    echo "   the whole of tests/vm/run.sh (builds, images, scenarios): $(( $(date +%s) - SUITE_T0 ))s"
fi
rerun=""; [ -f "$RES/rerun" ] && rerun=", $(wc -l < "$RES/rerun") run again after a guest kernel crash or timeout: $(tr '\n' ' ' < "$RES/rerun" | sed 's/ $//')"
echo "$pass passed, $fail failed, $skipped skipped$rerun"
[ $fail = 0 ]
