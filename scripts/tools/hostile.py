#!/usr/bin/env python
"""Run the hostile-input battery (tests/test_hostile.py, the property tests of
tests/test_properties.py, and the hostile cases that live beside their subject:
bounded counting, Dask clusters that fail, install hints) and print "N cases, N clean".

Each case runs hsw2v in a real process against crafted files, signals or options
and checks: one line `hsw2v: error: …` and a non-zero exit (or a correct result),
no old output lost, no temporary left behind.

    python scripts/tools/hostile.py
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CASES = [
    "tests/test_hostile.py",
    "tests/test_properties.py",
    "tests/counting/test_counter.py::test_count_memory_bounds_the_resident_set",
    "tests/distributed/test_driver.py::test_a_scheduler_without_workers_is_one_line",
    "tests/distributed/test_driver.py::test_losing_the_last_worker_ends_the_run_with_one_line",
    "tests/distributed/test_driver.py::test_ctrl_c_ends_a_dask_run_at_once",
    "tests/distributed/test_driver.py::test_a_local_cluster_leaves_nothing_in_tmpdir",
    "tests/distributed/test_driver.py::test_dask_errors_are_one_line",
    "tests/distributed/test_driver.py::test_the_default_round_length_follows_the_corpus",
    "tests/test_packaging.py::test_every_install_hint_installs_what_it_names",
    # round four: the cases that live beside their subject
    "tests/test_api.py",
    "tests/trees/test_wordnet.py::test_a_damaged_database_is_one_line_never_a_smaller_tree",
    "tests/trees/test_wordnet.py::test_a_corpus_wordnet_barely_covers_is_refused",
    "tests/trees/test_wordnet.py::test_a_fifo_in_the_database_is_one_line_not_a_hang",
    "tests/counting/test_vocab.py::test_a_vocabulary_file_round_trips_every_space_like_character",
    "tests/model/test_word2vec_format.py::test_a_damaged_entry_is_read_past_and_written_again",
    "tests/training/test_lbl.py::test_one_step_is_the_gradient_step_by_central_differences",
    "tests/test_cli.py::test_json_output_is_strict_json_and_score_does_not_overflow",
    "tests/test_cli.py::test_a_kinds_setting_is_refused_with_another_kind_as_its_flag_is_spelt",
    "tests/test_cli.py::test_a_refused_connection_is_not_a_missing_file",
    "tests/test_cli.py::test_predict_says_what_skipgram_scores_are",
    "tests/text/test_sentences.py::test_a_token_the_reader_cannot_read_is_named",
    "tests/text/test_sentences.py::test_an_endless_generator_ends_at_a_bound_the_user_sets",
    "tests/model/test_reading.py::test_settings_whose_dim_is_not_the_vectors_width_are_refused",
    "tests/model/test_model.py::test_lookups_as_gensim_users_write_them",
    "tests/system/test_ahead.py::test_without_a_writable_cache_one_warning_and_a_working_run",
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
