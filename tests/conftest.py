"""The tests' fixtures: small corpora written to tmp_path, an HTTP server on
127.0.0.1, the tests' own vectors cache and Hypothesis profile. Helpers that tests
import live in :mod:`tests.helpers`."""
from __future__ import annotations

import os
import tempfile

import pytest

os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY",
                      os.path.join(tempfile.gettempdir(), "hsw2v-tests-hypothesis"))
from hypothesis import settings  # noqa: E402 (after its storage directory is set)

from tests.helpers import planted_corpus  # noqa: E402

settings.register_profile("hsw2v", derandomize=True, database=None)
settings.register_profile("explore", database=None)
settings.load_profile(os.environ.get("HSW2V_HYPOTHESIS_PROFILE", "hsw2v"))
"""Property tests draw the same examples on every run (CI must not pass or fail by
chance) and write no example database into the checkout; HSW2V_HYPOTHESIS_PROFILE=explore
draws fresh examples."""


@pytest.fixture(autouse=True, scope="session")
def _own_vectors_cache(tmp_path_factory):
    """The tests' vectors cache (hsw2v.model.vectors_cache), in and out of process:
    never the user's."""
    os.environ["HSW2V_CACHE_DIR"] = str(tmp_path_factory.mktemp("vectors-cache"))


@pytest.fixture
def planted(tmp_path):
    text, names = planted_corpus()
    path = tmp_path / "planted.txt"
    path.write_text(text)
    return str(path), names


@pytest.fixture
def small_corpus(tmp_path):
    text, _ = planted_corpus(groups=3, size=5, sentences=200, seed=1)
    path = tmp_path / "small.txt"
    path.write_text(text)
    return str(path)


@pytest.fixture
def http_server(tmp_path):
    """Files of a directory served over HTTP on 127.0.0.1 (a real server, in a thread)."""
    import functools
    import http.server
    import threading

    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
