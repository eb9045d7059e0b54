#!/usr/bin/env python3
"""Merge a deep review's lens findings (and the validator's decisions) into one findings file.

Usage:
  python3 scripts/merge_findings.py outputs/pr-N-lens-*.json [--validated outputs/pr-N-validated.json]
      --output outputs/pr-N-findings.json

Each lens file is {"pr": N, "lens": NAME, "findings": [...]}; the validator's file is
{"pr": N, "decisions": [{"lens", "index", "action": keep|downgrade|drop|merge|keep_apart, "severity",
"evidence", "reason", "same_as" (merge), "apart_from" (keep_apart, or with keep|downgrade|merge):
{"lens", "index"} or a list}]}
and must decide every 🔴/⚠️ candidate (complete example: references/review-lenses.md#lens-common).
Candidates become one finding only when the validator merges them, or when they cite the same
location and are near-duplicates (test and threshold: references/review-lenses.yaml, merge); the
finding keeps the most severe one's text and evidence, every location, every lens. Candidates of
one type citing one file within a few lines are listed as merge_candidates for the validator.
The output runs 🔴 → ⚠️ → 📝 and lists dropped candidates with the validator's reason.
Exit codes: 0 success; 1 a file is unreadable or breaks the schema (one line per error); 2 usage error.
"""

import argparse
import json
import sys

from vllm_rocm_review.core.atomic_io import write_atomic
from vllm_rocm_review.core.cli import fail
from vllm_rocm_review.core.cli import output_path_problem
from vllm_rocm_review.core.cli import say
from vllm_rocm_review.core.file_errors import describe_os_error
from vllm_rocm_review.core.lenses import LensError
from vllm_rocm_review.report.findings import FindingsError
from vllm_rocm_review.report.findings import load_json
from vllm_rocm_review.report.findings import merge

FIX = "correct the file (see README, scripts/merge_findings.py) and re-run"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="merge_findings.py",
        description="Merge lens findings files (outputs/pr-N-lens-<lens>.json) and the validator's decisions into "
                    "outputs/pr-N-findings.json: duplicates joined, nearby candidates proposed, severity-sorted, "
                    "drops recorded.",
        epilog="Exit codes: 0 success; 1 unreadable file or schema errors (one stderr line each); 2 usage error.",
    )
    parser.add_argument("lens_files", metavar="LENS_JSON", nargs="+", help="lens findings files, one per lens")
    parser.add_argument("--validated", metavar="VALIDATOR_JSON",
                        help="the validator's decisions: keep, downgrade, drop, merge or keep_apart for every 🔴/⚠️ "
                             "candidate, and merge or keep_apart for each merge candidate")
    parser.add_argument("--output", metavar="PATH",
                        help="write the merged findings here (atomically) instead of stdout, "
                             "e.g. outputs/pr-N-findings.json")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.output:
        problem = output_path_problem(args.output, example="outputs/pr-12345-findings.json")
        if problem:
            return fail(problem)
    try:
        documents = [(path, load_json(path, "lens file")) for path in args.lens_files]
        validator = (args.validated, load_json(args.validated, "validator file")) if args.validated else None
        merged = merge(documents, validator)
    except FindingsError as error:
        for problem in error.problems:
            fail(f"{problem}; {FIX}")
        return 1
    except LensError as error:
        return fail(f"{error}; restore the lens files from the bundle")
    text = json.dumps(merged, ensure_ascii=False, indent=2) + "\n"
    if args.output:
        try:
            write_atomic(args.output, text)
        except OSError as error:
            return fail(f"{describe_os_error(error)}; check the path and permissions")
    else:
        sys.stdout.write(text)
    candidates = sum(len(data["findings"]) for _, data in documents)
    proposals = len(merged["merge_candidates"])
    say(f"{candidates} candidate(s) from {len(merged['lenses'])} lens(es) -> {len(merged['findings'])} finding(s), "
        f"{len(merged['dropped'])} dropped" + (f"; wrote {args.output}" if args.output else "")
        + (f"; {proposals} merge candidate(s) kept apart until the validator decides (merge or keep_apart)"
           if proposals else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
