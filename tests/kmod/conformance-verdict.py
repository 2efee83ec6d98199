#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The per-test verdict of o2g-conformance-vm.sh: reads run-conformance's
results file and the expected-failure list, prints one line per test and a
summary; exits 1 if a test failed (or was not run) that the list does not
expect to fail.

    conformance-verdict.py LABEL RESULTS.json XFAIL-LIST

XFAIL-LIST: one test a line, "<test id> | <why it fails>", the id as
run-conformance writes it (tests/conformance/README.md); # starts a comment
line.
"""

import json
import re
import sys

# Lines of a failed test's output that say why, most telling first: the
# provider's own refusal, then any error.
REASON_PATTERNS = [r"FI_HASHI_RECV=kernel", r"o2g", r"hashi.*error|error.*hashi",
                   r"[Ee]rror|[Aa]bort|[Ff]ail|killed|signal"]


def read_xfail(path):
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            if "|" not in s:
                sys.exit("%s:%d: expected '<test id> | <reason>'" % (path, n))
            tid, why = (p.strip() for p in s.split("|", 1))
            out[" ".join(tid.split())] = why
    return out


def reason(r):
    if r["status"] == "timeout":
        return "timed out (limit %s s)" % r.get("timelimit", "?")
    if r["status"] == "build-fail":
        return "did not build"
    lines = [l.strip() for l in r.get("output", []) if l.strip()]
    for pat in REASON_PATTERNS:
        for l in lines:
            if re.search(pat, l):
                return l[:300]
    return (lines[0][:300] if lines else "no output")


def main(label, results_path, xfail_path):
    with open(results_path) as f:
        doc = json.load(f)
    xfail = read_xfail(xfail_path)
    counts = {"pass": 0, "fail": 0, "xfail": 0, "xpass": 0, "skip": 0, "not-run": 0}
    for t in doc["tests"]:
        tid, st = t["id"], t["status"]
        secs = ("%6.1f s" % t["seconds"]) if t.get("seconds") is not None else "      -"
        if st == "pass":
            word, why = ("XPASS", "expected to fail (%s): take it off %s" % (xfail[tid], xfail_path)) \
                if tid in xfail else ("PASS", "")
            counts["xpass" if tid in xfail else "pass"] += 1
        elif st == "skip":
            word, why = "SKIP", t.get("reason", "")
            counts["skip"] += 1
        elif st == "not-run":
            word, why = "NOT-RUN", t.get("reason", "")
            counts["not-run"] += 1
        elif tid in xfail:
            word, why = "XFAIL", "%s; expected: %s" % (reason(t), xfail[tid])
            counts["xfail"] += 1
        else:
            word, why = "FAIL", reason(t)
            counts["fail"] += 1
        print("%s: %-7s %s  %s%s" % (label, word, secs, tid, (": " + why) if why else ""))
    total = len(doc["tests"])
    print("%s: pt2pt with FI_HASHI_RECV=kernel: %d passed, %d failed, %d expected failures, "
          "%d unexpected passes, %d skipped, %d not run, of %d tests (run-conformance: %.0f s)"
          % (label, counts["pass"], counts["fail"], counts["xfail"], counts["xpass"],
             counts["skip"], counts["not-run"], total, doc.get("seconds_total", 0)))
    return 1 if counts["fail"] or counts["not-run"] else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
