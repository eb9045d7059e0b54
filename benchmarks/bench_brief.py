#!/usr/bin/env python3
"""Size and content of the review brief on the real merged ROCm PRs in ../shared/vllm-cases.

    python3 benchmarks/bench_brief.py --clone PATH [--lang zh|en]

For each case, the PR document is built the way fetch_pr_data.py --checkout records one (the
clone must hold the case's merge commit), the context pack is built offline (pins read, no
upstream fetch), triage runs with it, and the brief is rendered as prepare_review.py renders it.
Prints one row per case (brief lines, review depth, catalog lines in the plan, version skew
against the catalog's recorded commit and how many catalog passages it asks to re-check, whether
the plan reads the mori appendix, which form of the red gate the brief gives) and a summary.
"""

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests")]

from vllm_cases import case_ids  # noqa: E402
from vllm_cases import checkout_document  # noqa: E402
from vllm_rocm_review.automation.brief import render_brief  # noqa: E402
from vllm_rocm_review.automation.prepare import References  # noqa: E402
from vllm_rocm_review.automation.prepare import output_paths  # noqa: E402
from vllm_rocm_review.automation.prepare import plan_anchors  # noqa: E402
from vllm_rocm_review.automation.version_skew import version_skew  # noqa: E402
from vllm_rocm_review.context.pack import build_pack  # noqa: E402
from vllm_rocm_review.context.pack import offline_upstream  # noqa: E402
from vllm_rocm_review.triage.triage import triage  # noqa: E402


def brief_row(number, clone, references, lang, scratch):
    document = checkout_document(number, clone)
    pack = build_pack(document, None, references.surface["context_pack"], references.surface,
                      offline_upstream(Path(scratch) / f"pr-{number}-upstream"))
    pack = json.loads(json.dumps(pack))
    result = triage(document, references.config, references.catalog, lenses=references.lenses, context_pack=pack)
    skew = version_skew(references.catalog, references.config.checks["version_skew"]["max_days"], document,
                        plan_anchors(result))
    kinds = {entry["filename"]: references.config.file_kinds(entry["filename"]) for entry in document["files"]}
    paths = {**output_paths(number, "outputs"), "sources": None, "upstream": None}
    brief = render_brief(document, result, pack, paths, references.lenses_text, skew, kinds, lang)
    plan = result["reading_plan"]
    build_gate = "gate (CI, build or packaging" in brief or "门槛（CI/构建/打包" in brief
    return {"pr": number, "lines": len(brief.splitlines()), "depth": plan["depth"], "plan_lines": plan["lines"],
            "skew": f"{skew['state']} {skew['days']:+d}d" if skew["days"] is not None else skew["state"],
            "recheck": len(skew["recheck"]), "mori_appendix": any(s["anchor"] == "mori-appendix" for s in plan["sections"]),
            "build_gate": build_gate}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clone", required=True, help="a full vLLM clone holding the cases' merge commits")
    parser.add_argument("--lang", choices=("zh", "en"), default="zh")
    args = parser.parse_args(argv)
    references = References()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for number in case_ids():
            rows.append(brief_row(number, args.clone, references, args.lang, scratch))
    print(f"{'PR':>6} {'lines':>5} {'depth':>5} {'plan':>4} {'skew':>12} {'recheck':>7} {'mori':>5} {'build gate':>10}")
    for row in rows:
        print(f"{row['pr']:>6} {row['lines']:>5} {row['depth']:>5} {row['plan_lines']:>4} {row['skew']:>12} "
              f"{row['recheck']:>7} {str(row['mori_appendix']):>5} {str(row['build_gate']):>10}")
    lines = [row["lines"] for row in rows]
    print(f"{len(rows)} cases: brief lines median {statistics.median(lines):g}, max {max(lines)}; "
          f"mori appendix in {sum(row['mori_appendix'] for row in rows)}; "
          f"build form of the red gate in {sum(row['build_gate'] for row in rows)}; "
          f"skew beyond the limit in {sum(row['skew'].startswith(('older', 'newer')) for row in rows)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
