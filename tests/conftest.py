import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def fresh_project_cache():
    """Project mode's caches (summaries, reach, callers) cleared before and after the test:
    a test's project files never meet another test's answers."""
    from flake8_xla import project

    project.clear_cache()
    yield
    project.clear_cache()
