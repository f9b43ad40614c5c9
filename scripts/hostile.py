#!/usr/bin/env python
"""Run the hostile-input battery (tests/test_hostile.py and the property tests of
tests/test_properties.py) and print "N cases, N clean".

Each case runs hsw2v in a real process against crafted files, signals or options
and checks: one line `hsw2v: error: …` and a non-zero exit (or a correct result),
no old output lost, no temporary left behind.

    python scripts/hostile.py
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA",
         "tests/test_hostile.py", "tests/test_properties.py"],
        cwd=REPO, capture_output=True, text=True, check=False)
    cases = re.findall(r"^(PASSED|FAILED|ERROR) (tests/\S+)", result.stdout, flags=re.MULTILINE)
    clean = sum(status == "PASSED" for status, _ in cases)
    for status, name in cases:
        if status != "PASSED":
            print(f"not clean: {name}")
    print(f"{len(cases)} cases, {clean} clean")
    return 0 if cases and clean == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
