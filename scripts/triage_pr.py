#!/usr/bin/env python3
"""Triage a vLLM PR document for a ROCm review: relevance gate, rules, tiers, reading plan, checks.

Usage:
  python3 scripts/triage_pr.py PR_JSON                      # compact digest on stdout
  python3 scripts/triage_pr.py PR_JSON --json               # full result as JSON
  python3 scripts/triage_pr.py PR_JSON --expand             # the catalog text the reading plan names
  python3 scripts/triage_pr.py PR_JSON --scaffold outputs/pr-N-review.md [--force]

PR_JSON is what scripts/fetch_pr_data.py writes. Reads local files only (the PR document,
references/rocm-surface.yaml, references/vllm-rocm-review-rules.md and, when present,
references/upstream/mori-structure.json); never the network. Exit codes: 0 success;
1 unreadable or invalid input, an unusable surface file or rule catalog (missing, unreadable,
empty, or without a section the reading plan needs), or a scaffold that already exists;
2 usage error.
"""

import argparse
import json
import sys
from pathlib import Path

from vllm_rocm_review.core.atomic_io import write_atomic
from vllm_rocm_review.core.catalog import CatalogError
from vllm_rocm_review.core.catalog import load_catalog
from vllm_rocm_review.core.cli import FIX_SURFACE
from vllm_rocm_review.core.cli import InputError
from vllm_rocm_review.core.cli import fail
from vllm_rocm_review.core.cli import load_pr_document
from vllm_rocm_review.core.cli import say
from vllm_rocm_review.triage.digest import render_digest
from vllm_rocm_review.core.file_errors import describe_os_error
from vllm_rocm_review.triage.reading_plan import CATALOG_NAME
from vllm_rocm_review.triage.reading_plan import expand
from vllm_rocm_review.report.scaffold import render_scaffold
from vllm_rocm_review.core.surface import SurfaceError
from vllm_rocm_review.triage.triage import triage
from vllm_rocm_review.triage.config import TriageConfigError
from vllm_rocm_review.triage.config import load_triage_config


RESTORE_CATALOG = f"restore it with: git checkout {CATALOG_NAME}"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="triage_pr.py",
        description="Triage a vLLM PR document (from fetch_pr_data.py) for a ROCm review. Offline and deterministic.",
        epilog="Exit codes: 0 success; 1 bad input file, unusable references (surface file, or a rule catalog that is "
               "missing, empty or lacks a section the reading plan needs), or scaffold exists without --force; "
               "2 usage error.",
    )
    parser.add_argument("pr_json", metavar="PR_JSON", help="PR document written by scripts/fetch_pr_data.py")
    parser.add_argument("--json", action="store_true",
                        help="print the full result as JSON (keys: pr, relevance, relevance_evidence, rocm_files, "
                             "shared_files, pr_types, families, rules, judgment_rules, skipped_rules, tiers, flags, "
                             "reading_plan, checks)")
    parser.add_argument("--expand", action="store_true",
                        help="print the catalog sections of the reading plan (core discipline, derived rule bodies) "
                             "and the checklist; with --json, add them as reading_plan.text")
    parser.add_argument("--output", metavar="PATH", help="write the output to PATH (atomically) instead of stdout")
    parser.add_argument("--scaffold", metavar="REPORT_PATH",
                        help="write the report skeleton (exact header, five sections, TODO(agent) placeholders) to "
                             "REPORT_PATH and print its path; refuses to overwrite without --force")
    parser.add_argument("--force", action="store_true", help="with --scaffold, overwrite an existing report")
    args = parser.parse_args(argv)
    if args.scaffold and (args.json or args.expand or args.output):
        parser.error("--scaffold cannot be combined with --json, --expand or --output")
    if args.force and not args.scaffold:
        parser.error("--force only applies to --scaffold")
    return args


def run(args):
    document = load_pr_document(args.pr_json)
    try:
        config = load_triage_config()
    except (SurfaceError, TriageConfigError) as exc:
        raise InputError(f"{exc}; {FIX_SURFACE}") from None
    try:
        catalog = load_catalog()
    except CatalogError as exc:
        raise InputError(f"the rule catalog is unusable ({exc}); {RESTORE_CATALOG}") from None
    result = triage(document, config, catalog)
    missing = result["reading_plan"]["missing"]
    if missing:
        raise InputError(f"MISSING-RULE-TEXT: {CATALOG_NAME} has no section {', '.join(missing)}, which this PR's "
                         f"reading plan needs; {RESTORE_CATALOG}")

    if args.scaffold:
        target = Path(args.scaffold)
        if target.is_dir():
            raise InputError(f"--scaffold {target} is a directory; give the report's file path, "
                             f"e.g. outputs/pr-{result['pr']['number']}-review.md")
        if target.exists() and not args.force:
            raise InputError(f"{target} already exists; pass --force to overwrite it")
        write_atomic(target, render_scaffold(document, result))
        print(target)
        return

    if args.json:
        if args.expand:
            result["reading_plan"]["text"] = expand(catalog, result["reading_plan"])
        output = json.dumps(result, ensure_ascii=False, indent=2) + "\n"
    elif args.expand:
        plan = result["reading_plan"]
        head = (f"# Reading plan for PR #{result['pr']['number']}: {plan['depth']}, "
                f"{plan['lines']} of {plan['catalog_lines']} catalog lines ({plan['fraction']:.0%})")
        if plan["over_budget"]:
            head += f"; over the {plan['budget']:.0%} budget, kept as checklist lines: {', '.join(plan['over_budget'])}"
        output = head + "\n\n" + expand(catalog, plan)
    else:
        output = render_digest(result)

    if args.output:
        write_atomic(args.output, output)
        say(f"wrote {args.output}")
    else:
        sys.stdout.write(output)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        run(args)
    except InputError as exc:
        return fail(exc)
    except OSError as exc:
        return fail(f"{describe_os_error(exc)}; check the path and permissions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
