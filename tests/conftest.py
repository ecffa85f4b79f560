import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

# project mode's on-disk summary cache (flake8_xla/project/cache.py): never the user's own
# folder during the tests, and one the subprocesses (flake8, the CLI) inherit
_CACHE = tempfile.mkdtemp(prefix="flake8-xla-test-cache-")
os.environ["FLAKE8_XLA_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, True)


@pytest.fixture
def fresh_project_cache(tmp_path_factory, monkeypatch):
    """Project mode's caches (summaries, reach, callers) cleared before and after the test,
    and an empty on-disk cache folder of its own: a test's project files never meet another
    test's answers."""
    from flake8_xla import project

    monkeypatch.setenv("FLAKE8_XLA_CACHE_DIR", str(tmp_path_factory.mktemp("summary-cache")))
    project.clear_cache()
    yield
    project.clear_cache()
