#!/usr/bin/env python3
"""The end of scripts/test.sh's output: what passed, what failed, and every reason a test
was skipped with how many tests it skipped, read from CTest's JUnit report.

    scripts/test_summary.py JUNIT_XML

A GoogleTest entry reports each skipped test with its message ("FILE:LINE: Skipped", then
the message); a check of ours prints "SKIPPED: reason"; anything else is named by CTest's
own reason (e.g. SKIP_RETURN_CODE=77).  Exits 0 (the summary is information; CTest's own
exit status says whether the run passed).
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET

GTEST_SKIP = re.compile(r"^\S+:\d+: Skipped$")


def skip_reasons(output):
    """The reasons a test entry's output gives for its skips, one per skipped test."""
    lines = output.splitlines()
    reasons = []
    for i, line in enumerate(lines):
        if GTEST_SKIP.match(line):
            message = []
            for following in lines[i + 1:]:  # up to the test's result, or the next skip
                if not following.strip() or following.startswith("[") or \
                        GTEST_SKIP.match(following):
                    break
                message.append(following.strip())
            reasons.append(" ".join(message) or "(no message)")
        elif line.startswith("SKIPPED:"):
            reasons.append(line[len("SKIPPED:"):].strip())
    return reasons


def summarize(root):
    """(passed, failed entries, {reason: [entry names, one per skipped test]})."""
    passed, failed = 0, []
    skipped = collections.defaultdict(list)
    for case in root.iter("testcase"):
        name = case.get("name")
        out = case.findtext("system-out") or ""
        status = case.get("status")
        reasons = skip_reasons(out)
        if case.find("skipped") is not None:
            if not reasons:
                reasons = [case.find("skipped").get("message") or "(no reason given)"]
        elif status == "fail" or case.find("failure") is not None:
            failed.append(name)
        else:
            passed += 1
        for reason in reasons:
            skipped[reason].append(name)
    return passed, failed, skipped


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/test_summary.py JUNIT_XML")
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"test summary: cannot read {sys.argv[1]}: {e}")
        return 0
    passed, failed, skipped = summarize(root)
    print(f"Summary: {passed} CTest entries passed, {len(failed)} failed"
          + (": " + ", ".join(failed) if failed else ""))
    if skipped:
        print("Skipped, by reason (tests skipped, and the CTest entry):")
    for reason, names in sorted(skipped.items(), key=lambda item: -len(item[1])):
        entries = sorted(set(names))
        where = entries[0] if len(entries) == 1 else f"{entries[0]} and {len(entries) - 1} more"
        print(f"  {len(names):5d}  {reason}  ({where})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
