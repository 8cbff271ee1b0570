#!/usr/bin/env python3
"""Write the package's debian/copyright (DEP-5) to stdout, from `cargo metadata` (no network).

hyraid's own paragraph comes first (Files: *), then one Files paragraph per licence of the
crates linked into the binary (the normal-dependency closure of hyraid for x86_64 Linux; dev- and
build-dependencies are not linked), naming each crate and its authors, then one License paragraph
per licence name with its text: Apache-2.0 points at /usr/share/common-licenses, MIT is hyraid's
own LICENSE-MIT, the others are read from a crate that carries them. A licence whose text no
crate carries stops the build instead of writing an incomplete file.

Usage: contrib/deb/copyright.py > target/assets/copyright (run from the crate's root).
"""
import json
import os
import re
import subprocess
import sys

OWN = "2026 The hyraid developers"
COMMON = {"Apache-2.0": "/usr/share/common-licenses/Apache-2.0"}
# Where a crate keeps the text of a licence (the first file found wins).
TEXT_FILES = {
    "BSD-2-Clause": ["LICENSE-BSD"],
    "BSD-3-Clause": ["LICENSE-BSD", "LICENSE-WHATWG", "LICENSE"],
    "BSL-1.0": ["LICENSE-BOOST", "LICENSE-BSL"],
    "CDLA-Permissive-2.0": ["LICENSE"],
    "ISC": ["LICENSE-ISC", "LICENSE-other-bits"],
    "MIT-0": ["LICENSE-MIT-0", "LICENSE"],
    "Unicode-3.0": ["LICENSE-UNICODE"],
    "Unlicense": ["UNLICENSE"],
    "Zlib": ["LICENSE-ZLIB", "LICENSE"],
}


def metadata():
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked",
         "--filter-platform", "x86_64-unknown-linux-gnu"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def linked(meta):
    """The packages of hyraid's normal-dependency closure, hyraid excluded."""
    pkgs = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    root = next(p["id"] for p in meta["packages"] if p["name"] == "hyraid")
    seen, todo = set(), [root]
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        for d in nodes[i]["deps"]:
            if any(k["kind"] is None for k in d["dep_kinds"]):
                todo.append(d["pkg"])
    seen.discard(root)
    return sorted((pkgs[i] for i in seen), key=lambda p: (p["name"], p["version"]))


def clauses(spdx):
    """An SPDX expression as AND-ed clauses of sorted OR alternatives ("MIT/Apache-2.0" is OR)."""
    spdx = spdx.replace("/", " OR ")
    out = []
    for clause in re.split(r"\s+AND\s+", spdx):
        alts = re.split(r"\s+OR\s+", clause.strip().strip("()"))
        out.append(tuple(sorted(a.strip() for a in alts)))
    return tuple(sorted(out))


def dep5(cl):
    """DEP-5 spelling: "or" inside a clause, ", and" between clauses with alternatives."""
    parts = [" or ".join(c) for c in cl]
    sep = ", and " if any(len(c) > 1 for c in cl) else " and "
    return sep.join(parts)


def text_of(name, users):
    if name == "MIT":
        with open("LICENSE-MIT") as f:
            return [line.rstrip() for line in f if not line.startswith("Copyright")]
    for p in users:
        d = os.path.dirname(p["manifest_path"])
        for f in TEXT_FILES.get(name, []):
            path = os.path.join(d, f)
            if os.path.isfile(path):
                with open(path, errors="replace") as fh:
                    return [line.rstrip() for line in fh]
    sys.exit(f"copyright.py: no crate carries the text of {name}")


def field(lines):
    """Continuation lines of a DEP-5 field: a run of blank lines becomes one " ."."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    out = []
    for line in lines:
        if line.strip() or (out and out[-1] != " ."):
            out.append(" " + line.strip() if line.strip() else " .")
    return "\n".join(out)


def main():
    pkgs = linked(metadata())
    groups = {}
    for p in pkgs:
        groups.setdefault(clauses(p["license"]), []).append(p)
    print("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    print("Upstream-Name: hyraid")
    print("Upstream-Contact: hyraid developers <hyraid@example.invalid>")
    print(f"Comment: hyraid links {len(pkgs)} Rust crates (from crates.io, statically); each is")
    print(" listed below under its licence as cargo-registry/NAME-VERSION.")
    print()
    print("Files: *")
    print(f"Copyright: {OWN}")
    print("License: Apache-2.0 or MIT")
    users = {}
    for cl, members in sorted(groups.items(), key=lambda g: dep5(g[0])):
        for c in cl:
            for name in c:
                users.setdefault(name, []).extend(members)
        print()
        print("Files:", field([f"cargo-registry/{p['name']}-{p['version']}/*" for p in members])[1:])
        owners = [f"{p['name']}: {', '.join(p['authors']) or 'the ' + p['name'] + ' authors'}"
                  for p in members]
        print("Copyright:", field(owners)[1:])
        print("License:", dep5(cl))
    users.setdefault("Apache-2.0", [])
    users.setdefault("MIT", [])
    for name in sorted(users):
        print()
        print(f"License: {name}")
        if name in COMMON:
            print(f" On Debian systems, the full text of the {name} licence is in")
            print(f" {COMMON[name]}.")
        else:
            print(field(text_of(name, users[name])))


if __name__ == "__main__":
    main()
