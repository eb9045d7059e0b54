"""Check a review report against the report contract (SKILL.md step 8).

Usage: python3 scripts/check_report.py REPORT.md [--pr-json PR_JSON] [--vllm-tree PATH] [--lang zh|en] [--json]

Prints one violation per line on stdout, `REPORT.md:LINE: error|warning CODE: message — fix: …`,
and a count line on stderr. Exit 0 when there is no error (warnings allowed), 1 when there is
an error or a file cannot be read, 2 on usage errors.

Cited file paths are checked (UNKNOWN-PATH warnings) only when the report's subject is known:
with --pr-json against the PR's files plus the saved vLLM tree (when present), with --vllm-tree
against that tree (plus the PR's files when --pr-json is also given). Without either there is
no path check: a quick lint must not warn about files the PR itself adds.
"""

import argparse
import json
from pathlib import Path

from vllm_rocm_review.core.cli import InputError
from vllm_rocm_review.core.cli import fail
from vllm_rocm_review.core.cli import load_pr_document
from vllm_rocm_review.core.cli import read_input_text
from vllm_rocm_review.core.cli import say
from vllm_rocm_review.report.report_check import LEVEL_ERROR
from vllm_rocm_review.report.report_check import SAVE_VLLM_TREE
from vllm_rocm_review.report.report_check import check_report
from vllm_rocm_review.core.skill_paths import UPSTREAM_DIR
from vllm_rocm_review.core.skill_paths import bundle_relative
from vllm_rocm_review.upstream.tree_check import TREE_FILE_NAME
from vllm_rocm_review.upstream.tree_check import is_saved_tree

DEFAULT_VLLM_TREE = UPSTREAM_DIR / TREE_FILE_NAME
SAVED_AS = f"{SAVE_VLLM_TREE} saves it as {bundle_relative(DEFAULT_VLLM_TREE)}"
MAX_PRINTED = 30


def build_parser():
    parser = argparse.ArgumentParser(
        prog="check_report.py",
        description="Check a vLLM ROCm PR review report against the report contract (SKILL.md step 8).",
        epilog="Exit codes: 0 no errors (warnings allowed); 1 errors found or unreadable input; 2 usage error.",
    )
    parser.add_argument("report", type=file_path, help="the report to check, e.g. outputs/pr-12345-review.md")
    parser.add_argument("--pr-json", type=file_path,
                        help="the PR document from fetch_pr_data.py: header fields must equal its metadata, "
                             "and cited paths must be in its files or in the vLLM tree")
    parser.add_argument("--lang", choices=("zh", "en"), default="zh",
                        help="language of the prose (default zh; en when the user asked for English)")
    parser.add_argument("--vllm-tree", type=file_path, default=None, metavar="PATH",
                        help=f"vLLM path list saved by `{SAVE_VLLM_TREE}`: cited paths must be in it "
                             "or in the PR's files. Also works without --pr-json (files the PR adds then "
                             "draw warnings). Default: with --pr-json, "
                             f"{bundle_relative(DEFAULT_VLLM_TREE)} when present; with neither option, "
                             "cited paths are not checked")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object on stdout")
    return parser


def file_path(value):
    """argparse type: a non-empty path (an unset shell variable must not become '.')."""
    if not value.strip():
        raise argparse.ArgumentTypeError("empty path; pass a file")
    return Path(value)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        text = read_input_text(args.report, "report", "check the path")
        pr_document = load_pr_document(args.pr_json) if args.pr_json else None
        vllm_paths = load_vllm_paths(args.vllm_tree) if pr_document is not None or args.vllm_tree else None
    except InputError as exc:
        return fail(exc)
    violations = check_report(text, pr_document=pr_document, lang=args.lang, vllm_paths=vllm_paths)
    errors = sum(1 for item in violations if item.level == LEVEL_ERROR)
    warnings = len(violations) - errors
    name = str(args.report)
    if args.json:
        print(json.dumps({"report": name, "ok": errors == 0, "errors": errors, "warnings": warnings,
                          "violations": [item.to_dict() for item in violations]}, ensure_ascii=False, indent=2))
    else:
        for item in violations[:MAX_PRINTED]:
            print(item.render(name))
        if len(violations) > MAX_PRINTED:
            say(f"note: {len(violations) - MAX_PRINTED} more not shown; fix these and re-run, or pass --json")
    verdict = "fails" if errors else "passes"
    say(f"{name} {verdict}: {errors} error(s), {warnings} warning(s)")
    return 1 if errors else 0


def load_vllm_paths(path):
    """The saved vLLM path list, or None when the default file is absent (paths then come from the PR only)."""
    if path is None:
        if not DEFAULT_VLLM_TREE.exists():
            return None
        path = DEFAULT_VLLM_TREE
    text = read_input_text(path, "vLLM tree", SAVED_AS)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"vLLM tree {path} is not JSON ({error.msg} at line {error.lineno}); {SAVED_AS}") from None
    if not is_saved_tree(data):
        raise InputError(f"vLLM tree {path} has no 'paths' list of strings; {SAVED_AS}")
    return data["paths"]


if __name__ == "__main__":
    raise SystemExit(main())
