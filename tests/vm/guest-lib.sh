# Sourced by every scenario inside the guest. Assertions read the kernel and the real tools,
# never hyraid's own report.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# hyraid from the guest's own disk: run from the 9p share (cache=none), every start read the
# binary across it, a third of a second of each call under TCG.
HY=/usr/local/lib/hyraid-vm/hyraid
mkdir -p "${HY%/*}" && cp /mnt/host/files/hyraid "$HY"
CFG=/mnt/host/files
OUT=/mnt/host/out
FAILS=0
CHECKS=0

# Seconds since the scenario started (the guest's uptime), on every `say` line and in the
# final line: where a scenario's time goes, in its own log.
HYRAID_T0=$(cut -d' ' -f1 /proc/uptime)
since() { awk -v a="$(cut -d' ' -f1 /proc/uptime)" -v b="$HYRAID_T0" 'BEGIN { printf "%.1f", a - b }'; }
say() { echo "--- [$(since)s] $*"; }
ok() { CHECKS=$((CHECKS+1)); echo "ok - $*"; }
bad() { CHECKS=$((CHECKS+1)); FAILS=$((FAILS+1)); echo "NOT OK - $*"; }
# check DESCRIPTION COMMAND...: the command's exit status decides.
check() { d=$1; shift; if "$@" >/dev/null 2>&1; then ok "$d"; else bad "$d (command: $*)"; fi; }
# expect DESCRIPTION ACTUAL WANTED
expect() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else bad "$1: got '$2', want '$3'"; fi; }
finish() { echo "checks: $CHECKS, failed: $FAILS (in $(since)s)"; [ "$FAILS" = 0 ]; exit $?; }
# The power is cut (a boot of a `# boots: N` scenario ends here): the exit code of this boot's
# checks goes to the host first (the 9p share is uncached), then the kernel powers off at once,
# with no sync and nothing unmounted; the next boot runs on the same disks.
power_loss() {
    echo "checks: $CHECKS, failed: $FAILS (then the power is cut)"
    [ "$FAILS" = 0 ]; echo $? > /mnt/host/out/rc
    echo o > /proc/sysrq-trigger; sleep 60
}

kname() { basename "$(readlink -f "/dev/disk/by-id/$1")"; }
md() { basename "$(readlink -f "/dev/md/$1")"; }
member_state() { cat "/sys/block/$(md "$1")/md/dev-$(kname "$2")/state"; }
is_wm() { member_state "$1" "$2" | tr , '\n' | grep -qx write_mostly; }
bitmap_chunk() { cat "/sys/block/$(md "$1")/md/bitmap/chunksize"; }
backlog() { cat "/sys/block/$(md "$1")/md/bitmap/backlog"; }
wcache() { hdparm -W "/dev/disk/by-id/$1" | sed -n 's/.*write-caching = *\([01]\).*/\1/p'; }
# A webhook receiver on 127.0.0.1:8099 (as the configs' `alerts.webhook` name it): each POST's
# body kept in /tmp/hook/NNN.json, its Authorization header in NNN.auth; `hooks` prints the bodies.
listen_hooks() {
    mkdir -p /tmp/hook
    cat > /tmp/listener.py <<'PY'
import http.server, itertools, sys
n = itertools.count()
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        i = next(n)
        open(f"/tmp/hook/{i:03}.json", "wb").write(body)
        open(f"/tmp/hook/{i:03}.auth", "w").write(self.headers.get("Authorization", ""))
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", 8099), H).serve_forever()
PY
    python3 /tmp/listener.py & LISTENER=$!
    sleep 1
}
hooks() { cat /tmp/hook/*.json 2>/dev/null; }
# Each key slot of a LUKS2 header as SLOT:KDF:ITERATIONS (luksDump's JSON; `-` for Argon2's).
kdfs() { cryptsetup luksDump --dump-json-metadata "$1" | python3 -c 'import json, sys
print(" ".join("%s:%s:%s" % (n, s["kdf"]["type"], s["kdf"].get("iterations", "-")) for n, s in sorted(json.load(sys.stdin)["keyslots"].items())))'; }
lvfield() { lvs --noheadings -o "$2" "$1" 2>/dev/null | tr -d ' '; }

# Run hyraid and keep its output; returns hyraid's exit code.
hy() { echo "\$ hyraid $*   [$(since)s]"; "$HY" "$@" > /tmp/hy.out 2>&1; r=$?; cat /tmp/hy.out; return $r; }
# Exit code of hyraid (output kept in /tmp/hy.out).
hy_rc() { "$HY" "$@" > /tmp/hy.out 2>&1; echo $?; }

# For a scenario that never waits for a resync: md's resyncs crawl (5 MB/s) from here on, where
# at full speed a fresh mirror's initial resync takes the one emulated CPU from what is tested.
# (A scenario that waits for one, or whose apply does, must not call it.)
resync_crawls() { echo 5000 > /proc/sys/dev/raid/speed_limit_max; }
wait_idle() { for a in "$@"; do mdadm --wait "/dev/md/$a" >/dev/null 2>&1; done; true; }

# Tear down everything hyraid may have built (used between crash iterations).
teardown() {
    vgchange -an >/dev/null 2>&1
    for vg in $(vgs --noheadings -o vg_name 2>/dev/null); do vgremove -ff -y "$vg" >/dev/null 2>&1; done
    for pv in $(pvs --noheadings -o pv_name 2>/dev/null); do pvremove -ff -y "$pv" >/dev/null 2>&1; done
    for m in /dev/md/*; do [ -e "$m" ] && mdadm --stop "$m" >/dev/null 2>&1; done
    for d in /dev/disk/by-id/ata-HYRAID_*; do
        case "$d" in *-part*) continue;; esac
        mdadm --zero-superblock "$d" >/dev/null 2>&1; wipefs -a -q "$d" >/dev/null 2>&1
    done
    udevadm settle
}
