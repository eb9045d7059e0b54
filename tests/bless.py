#!/usr/bin/env python3
"""Regenerate tests/golden/pr-<N>.json: the full triage result of every real case.

Run it after changing the deriver (triage code, rocm-surface.yaml, the rule catalog):

    python3 tests/bless.py

then read `git diff tests/golden/`. That diff IS the review of the change: every gate
verdict, family, rule, tier, flag, reading-plan fraction and check that moved is in it.
Commit the golden files only when each change in it is intended. Needs ../shared (the
real cases and the mori snapshot); the tests compare against these files byte for byte.
With VLLM_ROCM_REVIEW_TEST_CLONE set to a full vLLM clone it also rewrites the context-pack
digests in tests/golden/context/.
"""

import json
import os
import sys
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS_DIR))

from conftest import SHARED_DIR  # noqa: E402  (conftest puts scripts/ on sys.path)

GOLDEN_DIR = TESTS_DIR / "golden"
MORI_SNAPSHOT = SHARED_DIR / "upstream" / "mori-structure.json"


def golden_path(number):
    return GOLDEN_DIR / f"pr-{number}.json"


# Context-pack digests of three real cases; they need a full vLLM clone holding the merge commits.
CONTEXT_CASES = (43660, 33443, 39125)
CLONE_ENV = "VLLM_ROCM_REVIEW_TEST_CLONE"


def context_golden_path(number):
    return GOLDEN_DIR / "context" / f"pr-{number}-context.md"


def render_context_golden(number, clone):
    """The case's context-pack digest, or None when ``clone`` lacks its commits."""
    from vllm_cases import checkout_document

    from vllm_rocm_review.context.digest import render_digest
    from vllm_rocm_review.context.pack import build_pack
    from vllm_rocm_review.core.surface import load_surface

    document = checkout_document(number, clone)
    if document is None:
        return None
    surface = load_surface()
    return render_digest(build_pack(document, None, surface["context_pack"], surface), f"pr-{number}-context.json")


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
    clone = os.environ.get(CLONE_ENV)
    if not clone:
        print(f"context digests not rewritten: set {CLONE_ENV} to a full vLLM clone", file=sys.stderr)
        return 0
    changed = 0
    for number in CONTEXT_CASES:
        text = render_context_golden(number, clone)
        if text is None:
            print(f"context digest of {number} not rewritten: {clone} lacks its merge commit", file=sys.stderr)
            continue
        path = context_golden_path(number)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            write_atomic(path, text)
            changed += 1
    print(f"{changed} of {len(CONTEXT_CASES)} context digests rewritten in tests/golden/context/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
