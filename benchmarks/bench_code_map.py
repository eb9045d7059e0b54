#!/usr/bin/env python3
"""Size and time of the code map for the largest real cases of ../shared/vllm-cases on a full vLLM clone.

    python3 benchmarks/bench_code_map.py --clone PATH [--shared DIR] [--cases N] [--max-lines N]

Takes the --cases (default 5) cases with the most changed lines (cases.jsonl and
more-cases.jsonl), builds each one's PR document with meta.checkout in the clone (head = the
merge commit, base = its first parent), then the pack with its code map the way
scripts/context_pack.py does (offline: no upstream definitions). Prints one row per case:
changed lines, the map's lines and bytes, definitions, hunk runs and twin blocks kept, blocks
cut (and their lines), and the seconds of the whole pack plus map, then of the map alone.
"""

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests")]

import conftest  # noqa: E402
from vllm_cases import checkout_document  # noqa: E402
from vllm_cases import load_cases  # noqa: E402
from vllm_rocm_review.context.code_map import CodeMap  # noqa: E402
from vllm_rocm_review.context.pack import build_pack  # noqa: E402
from vllm_rocm_review.context.pack import offline_upstream  # noqa: E402
from vllm_rocm_review.core.surface import load_surface  # noqa: E402


class TimedCodeMap(CodeMap):
    """The product's CodeMap, timing its own build."""

    def build(self, ws, pack):
        start = time.perf_counter()
        summary = super().build(ws, pack)
        self.seconds = time.perf_counter() - start
        return summary


def changed_lines(case):
    return sum(f.get("additions", 0) + f.get("deletions", 0) for f in case["files"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clone", required=True, help="a full vLLM clone holding the cases' merge commits")
    parser.add_argument("--shared", help="the shared materials holding vllm-cases/ (default: ../shared beside the skill)")
    parser.add_argument("--cases", type=int, default=5, help="how many of the largest cases (default 5)")
    parser.add_argument("--max-lines", type=int, help="the map's cap (default: context_pack.code_map.max_lines)")
    args = parser.parse_args(argv)
    if args.shared:
        conftest.SHARED_DIR = Path(args.shared)
    surface = load_surface()
    cap = args.max_lines or surface["context_pack"]["code_map"]["max_lines"]
    cases = sorted(load_cases(), key=lambda case: -changed_lines(case))[:args.cases]
    print(f"code map cap {cap} lines; offline (no upstream definitions)")
    print(f"{'PR':>6} {'changed':>8} {'files':>5} {'lines':>6} {'bytes':>8} {'defs':>5} {'hunks':>5} {'twins':>5} "
          f"{'cut':>4} {'cut lines':>9} {'pack+map s':>10} {'map s':>6}")
    for case in cases:
        number = case["pr_number"]
        document = checkout_document(number, args.clone)
        if document is None:
            print(f"{number:>6} not in the clone")
            continue
        code_map = TimedCodeMap(f"outputs/pr-{number}-code.md", cap)
        start = time.perf_counter()
        pack = build_pack(document, None, surface["context_pack"], surface,
                          offline_upstream(f"outputs/pr-{number}-upstream"), code_map)
        seconds = time.perf_counter() - start
        summary = pack["code_map"]
        print(f"{number:>6} {changed_lines(case):>8} {len(case['files']):>5} {summary['lines']:>6} "
              f"{len(code_map.text.encode()):>8} {summary['definitions']:>5} {summary['hunks']:>5} {summary['twins']:>5} "
              f"{len(summary['cut']):>4} {sum(c['lines'] for c in summary['cut']):>9} {seconds:>10.2f} "
              f"{code_map.seconds:>6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
