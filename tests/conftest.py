"""Test-wide paths: the skill bundle, its scripts, and the workplace's ../shared materials."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS_DIR = ROOT / "scripts"
SHARED_DIR = ROOT.parent / "shared"

# The CLIs live in scripts/ as plain files; tests import them to call main(argv).
if str(SCRIPTS_DIR) not in sys.path:
    sys.path.insert(0, str(SCRIPTS_DIR))
TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))


def shared_path(*parts):
    """Return a path under ../shared, or skip the test when the workplace materials are absent."""
    path = SHARED_DIR.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"../shared/{'/'.join(parts)} is absent: this real-data test runs only beside the shared materials")
    return path
