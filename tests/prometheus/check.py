"""Reads every textfile hyraid wrote with prometheus_client's own text parser (the format
node_exporter's textfile collector reads) and checks what each case must show."""
import pathlib
import sys

from prometheus_client.parser import text_string_to_metric_families

EXPECT = {
    # file: [(metric, labels that must match, value), ...]
    "converged": [("hyraid_drift", {}, 0), ("hyraid_plan_steps", {}, 0)],
    "degraded": [("hyraid_md_degraded", {"array": "data0"}, 1), ("hyraid_status_exit_code", {}, 2)],
    "drifted": [("hyraid_drift", {}, 1), ("hyraid_md_write_mostly_lost", {"array": "data0"}, 1)],
    "resyncing": [("hyraid_md_sync_ratio", {"array": "data0", "action": "resync"}, None)],
}


def main(d):
    files = sorted(pathlib.Path(d).glob("*.prom"))
    names = {f.stem for f in files}
    missing = set(EXPECT) - names
    if missing:
        sys.exit(f"no textfile for {sorted(missing)} in {d}: run `cargo test --test it status_prometheus::` first")
    for f in files:
        text = f.read_text()
        fams = list(text_string_to_metric_families(text))
        samples = {}
        for fam in fams:
            if fam.type != "gauge" or not fam.documentation:
                sys.exit(f"{f}: {fam.name} is {fam.type!r} with help {fam.documentation!r}")
            for s in fam.samples:
                samples.setdefault(s.name, []).append(s)
        for metric, labels, want in EXPECT.get(f.stem, []):
            hits = [s for s in samples.get(metric, []) if labels.items() <= s.labels.items()]
            if not hits:
                sys.exit(f"{f}: no {metric} with {labels}")
            if want is not None and any(s.value != want for s in hits):
                sys.exit(f"{f}: {metric}{labels} = {[s.value for s in hits]}, want {want}")
        print(f"ok - {f.name}: {len(fams)} families, {sum(len(v) for v in samples.values())} samples parsed")


main(sys.argv[1])
