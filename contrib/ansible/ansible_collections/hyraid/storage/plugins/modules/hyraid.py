#!/usr/bin/python
# -*- coding: utf-8 -*-
# hyraid.storage.hyraid: converge a host's storage to its hyraid.yaml.
# Copyright (c) 2026 hyraid developers
# SPDX-License-Identifier: MIT OR Apache-2.0 (see LICENSE-MIT and LICENSE-APACHE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: hyraid
short_description: Converge hybrid SSD+HDD storage (md RAID1, LVM, dm-writecache) to a hyraid.yaml
description:
  - Runs C(hyraid plan) with JSON output on the managed host, then, unless in check mode,
    C(hyraid apply) on exactly that saved plan (apply refuses if the machine changed in between).
  - In check mode the plan is returned and C(changed) says whether it has steps; nothing runs.
  - In diff mode each object the plan touches gets its state before and after (hyraid runs the
    plan on a simulated copy of the observed machine and describes both); managed files
    (mdadm.conf, the udev rule) show their exact old and new content.
  - Steps that destroy data are refused unless O(allow_destroy=true); a plan with refusals fails
    the task with hyraid's reasons and fixes.
options:
  config:
    description: Path of the hyraid.yaml on the managed host.
    type: path
  content:
    description: The hyraid.yaml itself (e.g. from a template or lookup). Written to a private
      temporary file for the run.
    type: str
  allow_destroy:
    description: Allow steps that destroy data (wiping signatures, creating over a used disk).
    type: bool
    default: false
  sim:
    description: Work on a simulated machine loaded from this snapshot (C(hyraid observe -o FILE))
      instead of the real one; an apply writes the new state back to the snapshot. For testing
      playbooks and for CI.
    type: path
  binary:
    description: The hyraid executable (a name looked up in PATH, or a path).
    type: str
    default: hyraid
requirements:
  - hyraid on the managed host (the Debian package depends on mdadm, lvm2, hdparm and fdisk)
author:
  - hyraid developers
"""

EXAMPLES = r"""
- name: Storage as described in git
  hyraid.storage.hyraid:
    content: "{{ lookup('file', 'hosts/' + inventory_hostname + '.yaml') }}"

- name: Review what would change, with per-object diffs
  hyraid.storage.hyraid:
    config: /etc/hyraid/hyraid.yaml
  check_mode: true
  diff: true
"""

RETURN = r"""
plan:
  description: The plan as C(hyraid plan --format json) prints it; each step has a C(display)
    with its symbol, object, summary and exact command lines.
  returned: always
  type: dict
steps:
  description: One line per step run (apply) or planned (check mode), as C(symbol object: summary).
  returned: always
  type: list
  elements: str
stdout:
  description: hyraid apply's output (the plan, each step, the verification).
  returned: when applied
  type: str
"""

import json
import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule


def step_line(step):
    d = step.get("display", {})
    return "%s %s: %s" % (d.get("symbol", "?"), d.get("object", step.get("op")), d.get("summary", ""))


def object_diffs(plan):
    """Ansible diff entries, one per planned object: its state before and after, as hyraid
    describes them (`objects`: the plan run on a simulated copy of the machine); managed files
    with their exact content."""
    if plan.get("objects") is not None:
        return [{
            "before_header": "%s (on the machine)" % o["object"],
            "after_header": "%s (after the plan)" % o["object"],
            "before": o.get("before") or "",
            "after": o.get("after") or "",
        } for o in plan["objects"]]
    return step_diffs(plan)


def step_diffs(plan):
    """Without `objects` (hyraid could not preview the plan): the planned change per object."""
    by_object = {}
    order = []
    for s in plan.get("steps", []):
        d = s.get("display", {})
        obj = d.get("object", s.get("op"))
        if obj not in by_object:
            by_object[obj] = []
            order.append(obj)
        by_object[obj].append(s)
    out = []
    for obj in order:
        steps = by_object[obj]
        files = [s for s in steps if s.get("op") == "write_file"]
        if files:
            s = files[-1]
            out.append({
                "before_header": "%s (on the machine)" % s["path"],
                "after_header": "%s (planned)" % s["path"],
                "before": s.get("old") or "",
                "after": s.get("content", ""),
            })
            continue
        # Created by this plan when its first step creates it (later steps may change it).
        created = steps[0].get("display", {}).get("symbol") == "+"
        removed = all(s.get("display", {}).get("symbol") == "-" for s in steps)
        lines = ["%s %s" % (s["display"]["symbol"], s["display"]["summary"]) for s in steps]
        out.append({
            "before_header": "%s (on the machine)" % obj,
            "after_header": "%s (hyraid.yaml)" % obj,
            "before": "" if created else "%s: as observed\n" % obj,
            "after": "" if removed else "%s:\n%s\n" % (obj, "\n".join("  " + l for l in lines)),
        })
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            config=dict(type="path"),
            content=dict(type="str"),
            allow_destroy=dict(type="bool", default=False),
            sim=dict(type="path"),
            binary=dict(type="str", default="hyraid"),
        ),
        mutually_exclusive=[("config", "content")],
        required_one_of=[("config", "content")],
        supports_check_mode=True,
    )
    p = module.params
    binary = p["binary"]
    if os.path.sep not in binary:
        binary = module.get_bin_path(binary, required=True)
    elif not os.access(binary, os.X_OK):
        module.fail_json(msg="%s is not an executable hyraid" % binary)

    work = tempfile.mkdtemp(prefix="hyraid-ansible-")
    try:
        config = p["config"]
        if p["content"] is not None:
            config = os.path.join(work, "hyraid.yaml")
            with open(config, "w") as f:
                f.write(p["content"])
        elif not os.path.isfile(config):
            module.fail_json(msg="config %s does not exist on the managed host" % config)
        common = []
        if p["sim"]:
            common += ["--sim", p["sim"]]
        if p["allow_destroy"]:
            common += ["--allow-destroy"]

        plan_file = os.path.join(work, "plan.json")
        rc, out, err = module.run_command(
            [binary, "plan", config, "--format", "json", "-o", plan_file] + common)
        plan = None
        if rc in (0, 1):
            # `hyraid plan` exits 1 with a complete plan when it refuses a change.
            try:
                plan = json.loads(out)
            except ValueError:
                plan = None
        if plan is None or (rc != 0 and not plan.get("refused")):
            if p["content"] is not None:
                # Name the inline file as the user knows it, not by its temporary path.
                err, out = err.replace(config, "content"), out.replace(config, "content")
            module.fail_json(msg=(err or out).strip(), rc=rc, stderr=err, stdout=out)
        steps = plan.get("steps", [])
        result = dict(
            changed=bool(steps),
            plan=plan,
            steps=[step_line(s) for s in steps],
        )
        if module._diff:
            result["diff"] = object_diffs(plan)
        if plan.get("refused"):
            reasons = ["%s: %s (%s)" % (r["object"], r["reason"], r["fix"]) for r in plan["refused"]]
            module.fail_json(
                msg="hyraid refused %d change(s): %s" % (len(reasons), "; ".join(reasons)),
                **result)
        if module.check_mode or not steps:
            module.exit_json(**result)

        argv = [binary, "apply", plan_file, "--yes"] + common
        if p["sim"]:
            argv.append("--sim-write")
        rc, out, err = module.run_command(argv)
        result["stdout"] = out
        if rc != 0:
            module.fail_json(
                msg="hyraid apply failed (exit %d): %s" % (rc, (err or out).strip()),
                rc=rc, stderr=err, **result)
        module.exit_json(**result)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
