"""Prints what a ctest run did, tier by tier (a tier is a ctest label), and fails a run that skipped a test.

    ctest_summary.py BUILD_DIR JUNIT_XML [--allow-skip LABEL]...

JUNIT_XML is the run's `ctest --output-junit` file; the labels come from `ctest --show-only=json-v1` in
BUILD_DIR. A test counts as skipped when ctest says so (SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION, or "not
run" for a missing fixture) and also when it passed while GoogleTest printed "[  SKIPPED ]" in it (a
GTEST_SKIP ctest would count as a pass). With MYRIAD_NO_SKIP=1 in the environment (scripts/test sets it) any
skipped test outside the --allow-skip labels fails the run: exit 1, naming each. Exit 1 also when a test
failed or the file lists none."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET


def labels_by_test(build_dir):
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build_dir, check=True, capture_output=True, text=True)
    labels = {}
    for test in json.loads(out.stdout)["tests"]:
        names = []
        for prop in test.get("properties", []):
            if prop["name"] == "LABELS":
                names = prop["value"]
        labels[test["name"]] = names or ["(no label)"]
    return labels


def outcome(case):
    status = case.get("status", "")
    if case.find("skipped") is not None or status in ("notrun", "disabled"):
        return "skipped"
    if case.find("failure") is not None or status == "fail":
        return "failed"
    out = case.findtext("system-out") or ""
    if "[  SKIPPED ]" in out:
        return "skipped"
    return "passed"


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    build_dir, junit = argv[1], argv[2]
    allowed = {argv[i + 1] for i, a in enumerate(argv) if a == "--allow-skip" and i + 1 < len(argv)}
    labels = labels_by_test(build_dir)
    cases = ET.parse(junit).getroot().iter("testcase")
    tiers = {}
    skipped = []
    failed = []
    for case in cases:
        name = case.get("name")
        result = outcome(case)
        for label in labels.get(name, ["(no label)"]):
            counts = tiers.setdefault(label, {"passed": 0, "failed": 0, "skipped": 0, "seconds": 0.0})
            counts[result] += 1
            counts["seconds"] += float(case.get("time", "0") or 0)
        if result == "skipped":
            skipped.append((name, labels.get(name, [])))
        elif result == "failed":
            failed.append(name)
    print(f"{'tier':<10} {'tests':>6} {'passed':>7} {'failed':>7} {'skipped':>8} {'seconds':>8}")
    for label in sorted(tiers):
        c = tiers[label]
        total = c["passed"] + c["failed"] + c["skipped"]
        print(f"{label:<10} {total:>6} {c['passed']:>7} {c['failed']:>7} {c['skipped']:>8} {c['seconds']:>8.0f}")
    rc = 0
    if not tiers:
        print("ctest_summary: the run lists no test", file=sys.stderr)
        rc = 1
    for name in failed:
        print(f"ctest_summary: FAILED {name}", file=sys.stderr)
        rc = 1
    strict = os.environ.get("MYRIAD_NO_SKIP") == "1"
    for name, names in skipped:
        if strict and not (set(names) & allowed):
            print(f"ctest_summary: SKIPPED {name} ({', '.join(names)}): a skip fails this run (MYRIAD_NO_SKIP=1)",
                  file=sys.stderr)
            rc = 1
        else:
            why = "allowed here" if set(names) & allowed else "MYRIAD_NO_SKIP is not 1"
            print(f"ctest_summary: skipped {name} ({', '.join(names)}; {why})")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
