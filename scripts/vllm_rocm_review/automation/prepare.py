"""One call that prepares a review: fetch, context pack, triage and the review brief.

It runs the same layers as fetch_pr_data.py, context_pack.py and triage_pr.py, in process, and
writes their files where those scripts put them (outputs/pr-N.json, pr-N-context.md/.json,
pr-N-triage.txt), then outputs/pr-N-brief.md. Everything is computed before anything is written,
so a failure at any stage leaves the files of an earlier run untouched and consistent; only the
downloads that are caches anyway (--sources files, pinned upstream code) may remain.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from ..context.digest import render_digest as render_pack_digest
from ..context.git_reader import GitReadError
from ..context.pack import PackError
from ..context.code_map import CodeMap
from ..context.pack import build_pack
from ..core.atomic_io import write_atomic
from ..core.catalog import CatalogError
from ..core.catalog import load_catalog
from ..core.cli import FIX_SURFACE
from ..core.cli import InputError
from ..core.cli import output_path_problem
from ..core.json_layout import dump_json
from ..core.lenses import LensError
from ..core.lenses import load_lenses
from ..core.pr_schema import validate_pr_document
from ..core.skill_paths import EXAMPLE_REPORT
from ..core.skill_paths import LENSES_TEXT
from ..core.skill_paths import bundle_relative
from ..core.surface import SurfaceError
from ..core.surface import load_surface
from ..github import code_context
from ..github.client import GitHubError
from ..github.client import default_cache_dir
from ..github.pr_data import fetch_failure
from ..github.pr_data import fetch_pr_document
from ..github.pr_data import record_usage
from ..triage import incremental
from ..triage.config import TriageConfigError
from ..triage.config import load_triage_config
from ..triage.digest import render_digest as render_triage_digest
from ..triage.reading_plan import CATALOG_NAME
from ..triage.triage import triage
from .brief import render_brief
from .version_skew import version_skew

RESTORE = "restore it with git checkout"


@dataclass
class Options:
    """What prepare_review.py was asked for; ``repo`` (a clone) and ``sources`` exclude each other."""
    repo: str = None
    sources: bool = False
    since: str = None
    lang: str = "zh"
    output_dir: str = "outputs"


class References:
    """The bundle's references, loaded before any request so a broken file costs no rate limit."""

    def __init__(self):
        try:
            self.surface = load_surface()
            self.config = load_triage_config()
        except (SurfaceError, TriageConfigError) as exc:
            raise InputError(f"{exc}; {FIX_SURFACE}") from None
        try:
            self.catalog = load_catalog()
        except CatalogError as exc:
            raise InputError(f"the rule catalog is unusable ({exc}); {RESTORE} {CATALOG_NAME}") from None
        try:
            self.lenses = load_lenses()
            self.lenses_text = Path(LENSES_TEXT).read_text(encoding="utf-8")
        except (LensError, OSError) as exc:
            raise InputError(f"the review lenses are unusable ({exc}); {RESTORE} references/review-lenses.*") from None


def output_paths(number, output_dir):
    """Every file the review of PR ``number`` reads or writes, as the brief names them."""
    root = Path(output_dir)

    def at(suffix):
        return (root / f"pr-{number}{suffix}").as_posix()

    return {"pr_json": at(".json"), "pack_md": at("-context.md"), "pack_json": at("-context.json"),
            "code_map": at("-code.md"),
            "triage": at("-triage.txt"), "brief": at("-brief.md"), "review": at("-review.md"),
            "validated": at("-validated.json"), "findings": at("-findings.json"), "sources_dir": at("-src"),
            "upstream_dir": at("-upstream"), "example": bundle_relative(EXAMPLE_REPORT)}


def path_problem(paths):
    """Why the output directory cannot take the files, found before any request; None when it can."""
    return output_path_problem(paths["pr_json"], option="--output-dir", example="outputs")


def fetch(client, ref, options, paths, token_source):
    """The PR document with CI and its code context; InputError when GitHub or --repo fails."""
    try:
        document = fetch_pr_document(client, ref, include_ci=True)
        code_context.add_code_context(client, ref, document, checkout=options.repo,
                                      sources=paths["sources_dir"] if options.sources else None)
    except GitHubError as error:
        raise InputError(f"{fetch_failure(error, token_source)}; nothing written") from None
    if options.repo is not None and "checkout" not in document["meta"]:
        warning = next((w for w in document["meta"].get("warnings", []) if w.startswith("--checkout")), "--checkout failed")
        raise InputError(f"{warning}; nothing written: pass a vLLM clone git can fetch into, or use --sources")
    record_usage(document, client)
    problems = validate_pr_document(document, strict=True)
    if problems:
        raise InputError(f"internal error, the document breaks its schema: {problems[0]}")
    return document


def build_context(document, references, client, paths):
    """The context pack (JSON-shaped, as triage_pr.py --context reads it), its digest and the code map."""
    upstream = {"client": client, "cache_dir": default_cache_dir() / "upstream",
                "save_root": Path(paths["upstream_dir"]), "offline": False}
    settings = references.surface["context_pack"]
    code_map = CodeMap(paths["code_map"], settings["code_map"]["max_lines"]) if settings["code_map"]["max_lines"] else None
    try:
        pack = build_pack(document, None, settings, references.surface, upstream, code_map)
    except PackError as exc:
        raise InputError(f"context pack: {exc}; no review file written") from None
    except GitReadError as exc:
        raise InputError(f"context pack: {exc}; pass --repo a vLLM clone that holds the PR's commits") from None
    data = json.dumps(pack, ensure_ascii=False, indent=1) + "\n"
    return json.loads(data), data, render_pack_digest(pack, Path(paths["pack_json"]).name), code_map


def run_triage(document, references, pack, options):
    """The triage result, with the pack's flags and, for a re-review, the changes since ``options.since``."""
    result = triage(document, references.config, references.catalog, lenses=references.lenses, context_pack=pack)
    if options.since:
        try:
            since, diffs = incremental.changes_since(incremental.clone_for(document), options.since, document)
        except incremental.SinceError as exc:
            raise InputError(f"{exc}; no review file written") from None
        result["since"] = since
        result["reading_plan"] = incremental.focused_plan(references.config, references.catalog, document, result, diffs)
    missing = result["reading_plan"]["missing"]
    if missing:
        raise InputError(f"MISSING-RULE-TEXT: {CATALOG_NAME} has no section {', '.join(missing)}, which this PR's "
                         f"reading plan needs; {RESTORE} {CATALOG_NAME}")
    return result


def plan_anchors(result):
    """The catalog sections the review may open: the plan's sections and its checklist rules."""
    plan = result["reading_plan"]
    return [section["anchor"] for section in plan["sections"]] + [item["anchor"] for item in plan["checklist"]]


def prepare(client, ref, options, token_source, references, progress):
    """Fetch, pack, triage and brief; write them all and return ``(paths, PR document, brief text)``."""
    paths = output_paths(ref.number, options.output_dir)
    progress(f"fetching {ref.repo}#{ref.number}" + (f" into {options.repo}" if options.repo else
                                                     f" with sources into {paths['sources_dir']}"))
    document = fetch(client, ref, options, paths, token_source)
    progress("building the context pack")
    pack, pack_data, pack_digest, code_map = build_context(document, references, client, paths)
    progress("triage")
    result = run_triage(document, references, pack, options)
    max_days = references.config.checks["version_skew"]["max_days"]
    skew = version_skew(references.catalog, max_days, document, plan_anchors(result)) if max_days else None
    brief_paths = {**paths, "sources": paths["sources_dir"] if "sources" in document["meta"] else None,
                   "code_map": paths["code_map"] if code_map is not None else None,
                   "upstream": paths["upstream_dir"] if Path(paths["upstream_dir"]).is_dir() else None}
    kinds = {entry["filename"]: references.config.file_kinds(entry["filename"]) for entry in document["files"]}
    brief = render_brief(document, result, pack, brief_paths, references.lenses_text, skew, kinds, options.lang)
    write_atomic(paths["pr_json"], dump_json(document))
    if code_map is not None:
        write_atomic(paths["code_map"], code_map.text)
    write_atomic(paths["pack_json"], pack_data)
    write_atomic(paths["pack_md"], pack_digest)
    write_atomic(paths["triage"], render_triage_digest(result))
    write_atomic(paths["brief"], brief)
    return paths, document, brief
