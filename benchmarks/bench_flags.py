#!/usr/bin/env python3
"""Flags the context pack raises on the real merged PRs, and the share of them judged real.

    python3 benchmarks/bench_flags.py --clone PATH [--shared DIR] [--list]

For every case in ../shared/vllm-cases whose merge commit the clone holds, the pack is built
as tests/bless.py builds the context goldens (head = merge commit, base = its first parent,
pinned upstream offline). Prints flags per PR, then per code: how many fired, how many of
those benchmarks/flag-judgments.yaml judges real, and the judged precision. A flag with no
judgment counts as unjudged (its precision is over the judged flags only); --list prints every
flag with its verdict, so new flags can be read and judged.
"""

import argparse
import sys
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests")]
JUDGMENTS = Path(__file__).resolve().parent / "flag-judgments.yaml"

import conftest  # noqa: E402  (conftest knows where ../shared is)


def load_judgments(path=JUDGMENTS):
    """{(case, code, path, line): (verdict, reason)} from the judgments file."""
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return {(e["case"], e["code"], e["path"], e["line"]): (e["verdict"], e["reason"]) for e in entries}


def case_flags(clone):
    """[(case number, [flags])] for every case the clone holds, in case-file order."""
    from vllm_cases import case_ids
    from vllm_cases import checkout_document

    from vllm_rocm_review.context.pack import build_pack
    from vllm_rocm_review.context.pack import offline_upstream
    from vllm_rocm_review.core.surface import load_surface

    surface = load_surface()
    found = []
    for number in case_ids():
        document = checkout_document(number, clone)
        if document is None:
            print(f"case {number}: the clone lacks its merge commit; skipped", file=sys.stderr)
            continue
        pack = build_pack(document, None, surface["context_pack"], surface, offline_upstream(f"outputs/pr-{number}-upstream"))
        found.append((number, pack["flags"]))
    return found


def table(results, judgments):
    """The printed report: flags per PR, then fired / judged real / judged false / precision per code."""
    lines = [f"{'PR':>7}  flags  codes"]
    for number, flags in results:
        codes = Counter(f["code"] for f in flags)
        lines.append(f"{number:>7}  {len(flags):>5}  " + ", ".join(f"{c} {n}" for c, n in sorted(codes.items())))
    total = sum(len(flags) for _, flags in results)
    lines.append(f"{len(results)} PRs, {total} flags, {total / max(len(results), 1):.2f} flags per PR")
    lines += ["", f"{'code':<26} fired  real  false  unjudged  precision"]
    by_code = {}
    for number, flags in results:
        for f in flags:
            verdict = judgments.get((number, f["code"], f["path"], f["line"]), (None, None))[0]
            by_code.setdefault(f["code"], Counter())[verdict] += 1
    for code, counts in sorted(by_code.items()):
        judged = counts["real"] + counts["false"]
        precision = f"{100 * counts['real'] / judged:.0f}%" if judged else "—"
        lines.append(f"{code:<26} {sum(counts.values()):>5}  {counts['real']:>4}  {counts['false']:>5}  "
                     f"{counts[None]:>8}  {precision:>9}")
    return "\n".join(lines)


def listing(results, judgments):
    lines = []
    for number, flags in results:
        for f in flags:
            verdict, reason = judgments.get((number, f["code"], f["path"], f["line"]), ("UNJUDGED", ""))
            lines.append(f"{number} {f['code']} {f['path']}:{f['line']} [{verdict}] {f['message'][:160]}"
                         + (f"\n    why: {reason}" if reason else ""))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clone", required=True, help="a full vLLM clone holding the cases' merge commits (bare is fine)")
    parser.add_argument("--shared", help="the shared materials folder (default ../shared beside the skill)")
    parser.add_argument("--list", action="store_true", help="also print every flag with its verdict")
    args = parser.parse_args(argv)
    if args.shared:
        conftest.SHARED_DIR = Path(args.shared)
    if not (conftest.SHARED_DIR / "vllm-cases" / "cases.jsonl").exists():
        print(f"error: {conftest.SHARED_DIR}/vllm-cases/cases.jsonl is absent; pass --shared DIR", file=sys.stderr)
        return 1
    results = case_flags(args.clone)
    judgments = load_judgments()
    if args.list:
        print(listing(results, judgments) + "\n")
    print(table(results, judgments))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
