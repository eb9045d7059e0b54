"""The ROCm relevance gate (seed step 2): full, partial or none, with its evidence.

Evidence comes from three places: markers in the title and body (after guards such as
"AMD Zen CPU" remove the ones that mislead), ROCm paths (marker-named, known, or AMD
tuning files), and shared files (the shared surface, or code whose changed lines carry
a ROCm marker). The level:

- full: a strong marker in the title, or ROCm files make up at least ``gate.full_share``
  of the changed files that count (tests and docs usually excluded);
- partial: any ROCm file, shared file or strong body marker short of that, e.g. a
  CUDA-motivated change to a shared kernel, or a generic refactor that also edits ROCm
  backends;
- none: nothing; weak markers (bare fp8, mxfp4 ...) never count on their own.

A shared file whose changed lines are all comments, docstrings or imports, or sit inside
blocks only another platform enters (``gate.platform_only_blocks``: ``is_cuda()``,
``has_flashinfer()``, FlashInfer/TRT-LLM/CUTLASS/DeepGEMM-only definitions, SM checks), is
demoted: it is listed in the evidence under ``demoted`` with the reason, and does not count.
"""

from .hunk_reach import changed_lines
from .hunk_reach import is_import
from .hunk_reach import reached_by

def scan_text(config, text):
    """Strong and weak marker hits in one text, with guarded markers set aside."""
    lowered = text.lower()
    guards = [guard for guard in config.guards if guard.regex.search(text, lowered)]
    suppressed_by = {}
    for guard in guards:
        for marker_id in guard.suppresses:
            suppressed_by.setdefault(marker_id, guard.id)
    hits = {"strong": [], "weak": [], "suppressed": []}
    for marker in config.text_markers:
        match = marker.regex.search(text, lowered)
        if not match:
            continue
        entry = {"marker": marker.id, "match": match.group(0)}
        if marker.id in suppressed_by:
            hits["suppressed"].append({**entry, "guard": suppressed_by[marker.id]})
        else:
            hits["weak" if marker.strength == "weak" else "strong"].append(entry)
    return hits


def clean_body(config, body):
    """The body without lines the gate ignores (commit trailers such as Signed-off-by)."""
    patterns = config.checks["text_ignore_lines"]
    return "\n".join(line for line in (body or "").splitlines() if not any(p.search(line) for p in patterns))


def classify_path(config, path):
    """('rocm' | 'shared' | None, reasons) for one changed path.

    A ROCm-named path wins; then a csrc source ROCm builds through hipify (``hipified_csrc``);
    then the shared surface (so a kernel both lists know is treated as shared, which it is);
    then known ROCm paths and AMD tuning files.
    """
    strong, weak, suppressed = [], [], set()
    for guard in config.guards:
        if guard.regex.search(path):
            suppressed |= guard.suppresses
    for marker in config.path_markers:
        if marker.id not in suppressed and marker.regex.search(path):
            (weak if marker.strength == "weak" else strong).append(f"path marker {marker.id}")
    if strong:
        return "rocm", strong
    hipified = config.hipified_list(path)
    if hipified and not config.known_paths.matching(path):
        return "shared", [f"ROCm builds it: hipified from {hipified} in CMakeLists.txt"]
    shared = [f"shared surface: {fact.why}" if fact.why else "shared surface"
              for fact in config.shared_surface.matching(path)]
    if shared:
        return "shared", shared[:1]
    known = [f"known ROCm path: {fact.why}" if fact.why else "known ROCm path"
             for fact in config.known_paths.matching(path)]
    if known:
        return "rocm", known[:1]
    if config.is_amd_tuning_config(path):
        return "rocm", ["AMD device tuning config"]
    return None, weak


CONTENT_LINES_SHOWN = 3


def content_evidence(config, diff):
    """One reason naming the strong markers (``is_rocm()``, ``rocm_aiter_ops``, fnuz ...) in a code file's changed lines.

    Comment-only lines do not count, and guards apply per line as they do for titles.
    Returns [] or a one-element list, like the other path reasons.
    """
    if not set(config.file_kinds(diff.path)) & set(config.checks["gate"]["content_kinds"]):
        return []
    literals = config.strong_marker_literals
    lines = [(number, text) for number, text in diff.added + diff.removed if not diff.is_comment(text)]
    if literals is not None:
        lines = [(number, text) for number, text in lines if any(literal in text.lower() for literal in literals)]
    numbers, words = [], []
    for number, text in lines:
        hits = scan_text(config, text)["strong"]
        if hits:
            numbers.append(str(number))
            words += [hit["match"] for hit in hits if hit["match"] not in words]
            if len(numbers) == CONTENT_LINES_SHOWN:
                break
    if not numbers:
        return []
    said = ", ".join(repr(word) for word in words[:3])
    if len(numbers) == 1:
        return [f"changed line {numbers[0]} mentions {said}"]
    return [f"changed lines {', '.join(numbers)} mention {said}"]


def exposed_files(config, diffs):
    """(ROCm files, shared files, demoted shared files) as {path, why}: a file's new path, then its old one, then its changed lines."""
    rocm_files, shared_files, demoted = [], [], []
    for diff in diffs:
        paths = [diff.path] + ([diff.old_path] if diff.old_path else [])
        verdict, reasons = None, []
        for path in paths:
            verdict, reasons = classify_path(config, path)
            if verdict:
                break
        if verdict is None:
            reasons = content_evidence(config, diff)
            verdict = "shared" if reasons else None
        demotion = no_rocm_reach(config, diff) if verdict == "shared" else None
        if verdict == "rocm":
            rocm_files.append({"path": diff.path, "why": reasons})
        elif demotion:
            demoted.append({"path": diff.path, "why": reasons + [demotion]})
        elif verdict == "shared":
            shared_files.append({"path": diff.path, "why": reasons})
    return rocm_files, shared_files, demoted


def no_rocm_reach(config, diff):
    """Why no changed line of a shared file reaches ROCm, or None when one does (or the file has no hunks)."""
    lines = changed_lines(diff)
    if not lines:
        return None
    markers = config.checks["gate"]["platform_only_blocks"]
    inert, branches = 0, {}
    for line in lines:
        if not line.text.strip() or diff.is_comment(line.text) or line.in_docstring or is_import(line):
            inert += 1
            continue
        reach = reached_by(line, markers)
        if reach is None:
            return None
        marker, header = reach
        branches.setdefault(marker.id, header)
    if not branches:
        return f"changed lines are only comments, docstrings or imports ({inert})"
    inside = "; ".join(f"{marker_id}: {header}" for marker_id, header in branches.items())
    return f"every changed line is a comment, docstring or import, or sits in a block ROCm never enters ({inside})"


def gate(config, pr, diffs):
    """The relevance verdict with its evidence, plus the exposed files."""
    title_hits = scan_text(config, pr.get("title") or "")
    body_hits = scan_text(config, clean_body(config, pr.get("body")))
    rocm_files, shared_files, demoted = exposed_files(config, diffs)
    counted = [diff.path for diff in diffs
               if not set(config.file_kinds(diff.path)) & set(config.checks["gate"]["share_excludes_kinds"])]
    if not counted:
        counted = [diff.path for diff in diffs]
    rocm_paths = {entry["path"] for entry in rocm_files}
    rocm_counted = sum(1 for path in counted if path in rocm_paths)
    share = rocm_counted / len(counted) if counted else 0.0
    threshold = config.checks["gate"]["full_share"]

    if title_hits["strong"]:
        level = "full"
        reason = "ROCm marker in the title: " + ", ".join(hit["match"] for hit in title_hits["strong"])
    elif rocm_files and share >= threshold:
        level = "full"
        reason = f"ROCm files are {rocm_counted} of {len(counted)} counted files (threshold {threshold:.0%})"
    elif rocm_files or shared_files or body_hits["strong"]:
        level = "partial"
        parts = []
        if rocm_files:
            parts.append(f"ROCm files are only {rocm_counted} of {len(counted)} counted files")
        if shared_files:
            parts.append(f"{len(shared_files)} shared file(s) that ROCm also runs")
        if body_hits["strong"]:
            parts.append("ROCm marker in the body only: " + ", ".join(hit["match"] for hit in body_hits["strong"]))
        reason = "; ".join(parts) + "; no ROCm marker in the title"
    else:
        level = "none"
        reason = "no ROCm marker in title, body or paths, and no shared ROCm file"
        if demoted:
            reason += f" ({len(demoted)} shared file(s) changed only where ROCm never runs)"
        if title_hits["weak"] or body_hits["weak"]:
            reason += " (weak markers alone do not count)"
    return {
        "level": level,
        "reason": reason,
        "evidence": {
            "title": title_hits,
            "body": body_hits,
            "rocm_share": {"rocm": rocm_counted, "counted": len(counted), "threshold": threshold},
            "demoted": demoted,
        },
    }, rocm_files, shared_files
