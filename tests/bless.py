#!/usr/bin/env python3
"""Regenerate tests/golden/pr-<N>.json: the full triage result of every real case.

Run it after changing the deriver (triage code, rocm-surface.yaml, the rule catalog):

    python3 tests/bless.py

then read `git diff tests/golden/`. That diff IS the review of the change: every gate
verdict, family, rule, tier, flag, reading-plan fraction and check that moved is in it.
Commit the golden files only when each change in it is intended. Needs ../shared (the
real cases and the mori snapshot); the tests compare against these files byte for byte.
"""

import json
import sys
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS_DIR))

from conftest import SHARED_DIR  # noqa: E402  (conftest puts scripts/ on sys.path)

GOLDEN_DIR = TESTS_DIR / "golden"
MORI_SNAPSHOT = SHARED_DIR / "upstream" / "mori-structure.json"


def golden_path(number):
    return GOLDEN_DIR / f"pr-{number}.json"


def render_golden(number):
    """The golden text for one case: its triage result as the CLI's --json prints it."""
    from triage_support import CATALOG, CONFIG
    from vllm_cases import build_pr_document

    from vllm_rocm_review.triage.triage import triage

    result = triage(build_pr_document(number), CONFIG, CATALOG, snapshot_path=MORI_SNAPSHOT)
    return json.dumps(result, ensure_ascii=False, indent=2) + "\n"


def main(argv=None):
    from vllm_cases import case_ids

    from vllm_rocm_review.core.atomic_io import write_atomic

    numbers = case_ids()
    if not numbers:
        print("error: ../shared/vllm-cases is absent; bless needs the shared real cases", file=sys.stderr)
        return 1
    changed = 0
    for number in numbers:
        text = render_golden(number)
        path = golden_path(number)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            write_atomic(path, text)
            changed += 1
    print(f"{changed} of {len(numbers)} golden files rewritten in tests/golden/; review them with git diff", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
