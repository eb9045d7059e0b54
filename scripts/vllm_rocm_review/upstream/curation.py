"""What the curator last distilled: the source SHAs in the rule catalog's changelog.

The catalog's 更新日志 section ends with a table ``| Date | Sources | Change |`` whose Sources
cell lists ``name@sha8`` tokens. Its last row says which upstream versions the curated rules
reflect, so comparing it with the SHAs just fetched answers "is there anything to curate?".
"""

import re
from pathlib import Path

from ..core.catalog import parse_catalog
from ..core.catalog import table_rows

CHANGELOG_ANCHOR = "changelog"
SOURCE_TOKEN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)@([0-9a-fA-F]{7,40})")


def read_curated_shas(catalog_path):
    """``{source name: sha prefix}`` from the changelog's last row, or None when there is none."""
    try:
        text = Path(catalog_path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = parse_catalog(text, catalog_path).section_lines(CHANGELOG_ANCHOR)
    rows = table_rows(lines)[1:] if lines else []  # the first row is the header
    if not rows:
        return None
    sources_cell = rows[-1][1] if len(rows[-1]) > 1 else ""
    return {name: sha.lower() for name, sha in SOURCE_TOKEN.findall(sources_cell)}


def changed_since_curation(curated, current):
    """Source names whose current SHA differs from the curated one (new or gone count too)."""
    changed = []
    for name in sorted(set(curated) | set(current)):
        then, now = curated.get(name), current.get(name)
        if then is None or now is None or not now.lower().startswith(then):
            changed.append(name)
    return changed


def curation_line(curated, current, catalog_name):
    """One line: SHAs at the last curation, SHAs now, and which sources moved in between."""
    now_text = ", ".join(f"{name}@{sha[:8]}" for name, sha in sorted(current.items())) or "nothing fetched"
    if curated is None:
        return f"curated at: unknown (no changelog row in {catalog_name}); upstream now: {now_text}"
    then_text = ", ".join(f"{name}@{sha[:8]}" for name, sha in sorted(curated.items())) or "no sources named"
    changed = changed_since_curation(curated, current)
    return (
        f"curated at: {then_text}; upstream now: {now_text}; "
        f"changed since curation: {', '.join(changed) if changed else 'none'}"
    )
