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
version_added: 0.1.0
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
    description: The hyraid executable (a name looked up in E(PATH), or a path).
    type: str
    default: hyraid
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Runs C(hyraid plan) only, which reads the machine and changes nothing.
  diff_mode:
    support: full
    details: Each object the plan touches, before and after; managed files with their exact content.
  platform:
    platforms: linux
notes:
  - Needs root on the managed host for the real machine (O(sim) does not); use C(become).
  - Exactly one of O(config) and O(content) is required.
  - The module applies the plan it made and nothing else; if the machine changed between the plan
    and the apply, C(hyraid apply) refuses and the task fails with what changed. Run it again.
  - An apply that was interrupted (a lost connection, a reboot) is completed by running the task
    again; hyraid plans from the machine as it then is.
  - hyraid's errors (a bad hyraid.yaml names the line and field; with O(content) the file is called
    C(content)) and its refusals fail the task with hyraid's message.
seealso:
  - module: community.general.lvg
    description: Volume groups by hand, outside a hyraid.yaml.
  - module: community.general.lvol
    description: Logical volumes by hand, outside a hyraid.yaml.
requirements:
  - hyraid on the managed host (the Debian package depends on mdadm, lvm2, hdparm and fdisk)
author:
  - hyraid developers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Storage as described in git
  become: true
  hyraid.storage.hyraid:
    content: "{{ lookup('file', 'hosts/' + inventory_hostname + '.yaml') }}"

- name: Review what would change, with per-object diffs
  become: true
  hyraid.storage.hyraid:
    config: /etc/hyraid/hyraid.yaml
  check_mode: true
  diff: true

- name: Try a playbook on a snapshot of the machine (hyraid observe -o snapshot.json)
  hyraid.storage.hyraid:
    config: /etc/hyraid/hyraid.yaml
    sim: /var/tmp/snapshot.json
"""

RETURN = r"""
plan:
  description:
    - The plan as C(hyraid plan --format json) prints it, with C(refused) (each with C(object),
      C(reason) and C(fix)), C(steps), C(foreign), C(notes) and, when hyraid could preview the
      plan, C(objects) (each touched object before and after).
    - Each step has a C(display) with its C(symbol) (C(+), C(~) or C(-)), C(object), C(summary) and
      exact C(commands).
  returned: when hyraid made a plan (also when it refused a change)
  type: dict
  sample:
    format: 1
    host: microserver8
    refused: []
    steps:
      - op: set_write_cache
        display:
          symbol: "~"
          object: disk hdd0
          summary: drive write cache on
          commands: [hdparm -W1 /dev/disk/by-id/ata-ST1000LM048-2E7172_WDE00001]
steps:
  description: "One line per step run (apply) or planned (check mode), as C(SYMBOL OBJECT: SUMMARY)."
  returned: when hyraid made a plan
  type: list
  elements: str
  sample:
    - "~ disk hdd0: drive write cache on"
    - "+ mirror data0: create RAID1 of ssd0, hdd0 (write-mostly); bitmap chunk 64.00 MiB; write-behind 0"
diff:
  description:
    - Diff mode, one entry per object the plan touches, with C(before_header), C(after_header),
      C(before) and C(after) (a managed file's exact old and new content).
    - Ansible shows it as the task's diff; registered, it is a list.
  returned: in diff mode, when hyraid made a plan
  type: list
  elements: dict
  sample:
    - before_header: disk hdd0 (on the machine)
      after_header: disk hdd0 (after the plan)
      before: "disk hdd0: /dev/sdc, 931.51 GiB, rotational\n  drive write cache: off\n  partition table: none\n  content: none\n"
      after: "disk hdd0: /dev/sdc, 931.51 GiB, rotational\n  drive write cache: on\n  partition table: none\n  used by: mirror data0 (md127)\n"
stdout:
  description: The output of C(hyraid apply) (the plan, each step, the verification), or of
    C(hyraid plan) when it failed.
  returned: when applied, or when hyraid failed
  type: str
stderr:
  description: hyraid's error output.
  returned: when hyraid failed (an error in the hyraid.yaml, a failed apply)
  type: str
rc:
  description: hyraid's exit status.
  returned: when hyraid failed
  type: int
  sample: 1
"""

import json
import os

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

    config = p["config"]
    if p["content"] is not None:
        # module.tmpdir is private to this run (0700) and removed when the module exits; so is
        # the saved plan below.
        config = os.path.join(module.tmpdir, "hyraid.yaml")
        with open(config, "w") as f:
            f.write(p["content"])
    elif not os.path.isfile(config):
        module.fail_json(msg="config %s does not exist on the managed host" % config)
    common = []
    if p["sim"]:
        common += ["--sim", p["sim"]]
    if p["allow_destroy"]:
        common += ["--allow-destroy"]

    plan_file = os.path.join(module.tmpdir, "plan.json")
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


if __name__ == "__main__":
    main()
