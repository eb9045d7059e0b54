#!/usr/bin/env python3
"""Triage a vLLM PR document for a ROCm review: relevance gate, rules, tiers, reading plan, checks.

Usage:
  python3 scripts/triage_pr.py PR_JSON                      # compact digest on stdout
  python3 scripts/triage_pr.py PR_JSON --json               # full result as JSON
  python3 scripts/triage_pr.py PR_JSON --expand             # the catalog text the reading plan names
  python3 scripts/triage_pr.py PR_JSON --lenses 2           # cap a deep review's lenses at 2 (0: none)
  python3 scripts/triage_pr.py PR_JSON --scaffold outputs/pr-N-review.md [--force]
      [--findings outputs/pr-N-findings.json]               # section 3 from merged lens findings
  python3 scripts/triage_pr.py PR_JSON --since OLD_SHA [--repo CLONE]  # re-review: focus on changes since OLD_SHA
  python3 scripts/triage_pr.py PR_JSON --context outputs/pr-N-context.json   # with the pack's flags

PR_JSON is what scripts/fetch_pr_data.py writes. Reads local files only (the PR document,
references/rocm-surface.yaml, references/vllm-rocm-review-rules.md, references/review-lenses.yaml
and .md, when present references/upstream/mori-structure.json, and the --context pack) and, with
--since, the git clone that fetch_pr_data.py --checkout recorded; never the network. Exit codes:
0 success; 1 unreadable or invalid input, an unusable surface file, rule catalog (missing,
unreadable, empty, or without a section the reading plan needs) or lens file, a --context file
that is not this PR's pack, a findings file that is not a merge_findings.py output for this PR,
or a scaffold that already exists;
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
from vllm_rocm_review.core.cli import load_pr_document
from vllm_rocm_review.core.cli import run_cli
from vllm_rocm_review.core.cli import say
from vllm_rocm_review.triage.digest import render_digest
from vllm_rocm_review.core.lenses import LensError
from vllm_rocm_review.core.lenses import load_lenses
from vllm_rocm_review.triage.reading_plan import CATALOG_NAME
from vllm_rocm_review.triage.reading_plan import expand
from vllm_rocm_review.report.findings import FindingsError
from vllm_rocm_review.report.findings import load_json
from vllm_rocm_review.report.findings import merged_document_problems
from vllm_rocm_review.report.scaffold import render_scaffold
from vllm_rocm_review.core.surface import SurfaceError
from vllm_rocm_review.triage import incremental
from vllm_rocm_review.triage.triage import triage
from vllm_rocm_review.triage.config import TriageConfigError
from vllm_rocm_review.triage.config import load_triage_config
from vllm_rocm_review.triage.context_flags import ContextPackError
from vllm_rocm_review.triage.context_flags import load_context_pack


RESTORE_CATALOG = f"restore it with: git checkout {CATALOG_NAME}"
REMERGE = "re-create it with scripts/merge_findings.py"
RESTORE_LENSES = "restore them with: git checkout references/review-lenses.yaml references/review-lenses.md"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="triage_pr.py",
        description="Triage a vLLM PR document (from fetch_pr_data.py) for a ROCm review. Offline and deterministic.",
        epilog="Exit codes: 0 success; 1 bad input file, unusable references (surface file, or a rule catalog that is "
               "missing, empty or lacks a section the reading plan needs) or lens files, a bad --findings file, a --context file that is not "
               "this PR's pack, "
               "scaffold exists without --force, or --since without a usable clone or with a head the clone does "
               "not hold; "
               "2 usage error.",
    )
    parser.add_argument("pr_json", metavar="PR_JSON", help="PR document written by scripts/fetch_pr_data.py")
    parser.add_argument("--json", action="store_true",
                        help="print the full result as JSON (keys: pr, relevance, relevance_evidence, rocm_files, "
                             "shared_files, pr_types, families, rules, judgment_rules, skipped_rules, tiers, flags, "
                             "reading_plan, checks, lenses; checks.context with --context; with --since also since)")
    parser.add_argument("--expand", action="store_true",
                        help="print the catalog sections of the reading plan (core discipline, derived rule bodies) "
                             "and the checklist; with --json, add them as reading_plan.text")
    parser.add_argument("--output", metavar="PATH", help="write the output to PATH (atomically) instead of stdout")
    parser.add_argument("--scaffold", metavar="REPORT_PATH",
                        help="write the report skeleton (exact header, five sections, TODO(agent) placeholders) to "
                             "REPORT_PATH and print its path; refuses to overwrite without --force")
    parser.add_argument("--force", action="store_true", help="with --scaffold, overwrite an existing report")
    parser.add_argument("--since", metavar="OLD_SHA", type=commit_sha,
                        help="re-review: the head the previous report reviewed (its marker's head=). Adds a "
                             "'## Since <sha7>' digest section with the PR files and hunks changed since, limits "
                             "the reading plan to the rules those changes bring, and adds a line on the previous "
                             "review to the scaffold. Needs the clone of fetch_pr_data.py --checkout")
    parser.add_argument("--repo", metavar="CLONE",
                        help="with --since, the git clone holding both heads (default: meta.checkout.path)")
    parser.add_argument("--lenses", metavar="N", type=_count,
                        help="run at most N review lenses in a deep review (0: none; default: the lens file's "
                             "max_lenses); quick reviews never run lenses")
    parser.add_argument("--findings", metavar="FINDINGS_JSON",
                        help="with --scaffold, render section 3 from merged findings (scripts/merge_findings.py)")
    parser.add_argument("--context", metavar="PACK_JSON",
                        help="the context pack of this PR (outputs/pr-N-context.json from scripts/context_pack.py); "
                             "its flags become the mechanical check 'context'")
    args = parser.parse_args(argv)
    if args.repo and not args.since:
        parser.error("--repo only applies to --since")
    if args.scaffold and (args.json or args.expand or args.output):
        parser.error("--scaffold cannot be combined with --json, --expand or --output")
    if args.force and not args.scaffold:
        parser.error("--force only applies to --scaffold")
    if args.findings is not None and not args.scaffold:
        parser.error("--findings only applies to --scaffold")
    return args


def commit_sha(value):
    """argparse type: 7 to 40 hex digits."""
    if not incremental.SHA_PREFIX.fullmatch(value.strip()):
        raise argparse.ArgumentTypeError(f"{value!r} is not a commit SHA (7-40 hex digits); pass the marker's head=")
    return value.strip().lower()


def _count(text):
    """A non-negative integer option value."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of lenses (0 or more), got {text!r}")
    return value


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
    pack = None
    if args.context:
        try:
            pack = load_context_pack(args.context, document["pr"]["number"])
        except ContextPackError as exc:
            raise InputError(str(exc)) from None
    try:
        lenses = load_lenses()
    except LensError as exc:
        raise InputError(f"the review lenses are unusable ({exc}); {RESTORE_LENSES}") from None
    result = triage(document, config, catalog, lenses=lenses, lens_cap=args.lenses, context_pack=pack)
    if args.since:
        try:
            since, diffs = incremental.changes_since(incremental.clone_for(document, args.repo), args.since, document)
        except incremental.SinceError as exc:
            raise InputError(exc) from None
        result["since"] = since
        result["reading_plan"] = incremental.focused_plan(config, catalog, document, result, diffs)
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
        merged = _merged_findings(args.findings, result["pr"]["number"]) if args.findings else {}
        write_atomic(target, render_scaffold(document, result, merged.get("findings"),
                                             merged.get("merge_candidates", [])))
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


def _merged_findings(path, number):
    """The merged findings file about PR ``number`` (a dict); InputError saying what is wrong."""
    try:
        data = load_json(path, "merged findings file")
    except FindingsError as error:
        raise InputError(f"{error.problems[0]}; {REMERGE}") from None
    problems = merged_document_problems(path, data)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise InputError(f"{problems[0]}{more}; {REMERGE}")
    if data["pr"] != number:
        raise InputError(f"{path} is about PR #{data['pr']}, not #{number}; pass this PR's findings file")
    return data


def main(argv=None) -> int:
    return run_cli(run, parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
