#!/usr/bin/env python
"""Run the hostile-input battery (tests/test_hostile.py, the property tests of
tests/test_properties.py, and the hostile cases that live beside their subject:
bounded counting, Dask clusters that fail, install hints) and print "N cases, N clean".

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
CASES = [
    "tests/test_hostile.py",
    "tests/test_properties.py",
    "tests/test_corpus.py::test_count_memory_bounds_the_resident_set",
    "tests/test_distributed.py::test_a_scheduler_without_workers_is_one_line",
    "tests/test_distributed.py::test_losing_the_last_worker_ends_the_run_with_one_line",
    "tests/test_distributed.py::test_ctrl_c_ends_a_dask_run_at_once",
    "tests/test_distributed.py::test_a_local_cluster_leaves_nothing_in_tmpdir",
    "tests/test_distributed.py::test_dask_errors_are_one_line",
    "tests/test_distributed.py::test_the_default_round_length_follows_the_corpus",
    "tests/test_packaging.py::test_every_install_hint_installs_what_it_names",
]


def main() -> int:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", *CASES],
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
