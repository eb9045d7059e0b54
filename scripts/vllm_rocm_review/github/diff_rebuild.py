"""Rebuild a unified diff from GitHub's per-file patches.

GitHub refuses the diff media type for large PRs (406 ``too_large`` above 300 files, 20,000
lines or 1 MB), but the files endpoint still returns each file's hunks (``patch``) without the
git header. Adding the header back gives a diff that the usual parsers split the same way.
GitHub does not report file modes, so added and removed files are written as mode 100644.
"""

DEFAULT_MODE = "100644"


def rebuild_unified_diff(files):
    """A ``git diff``-style text for GitHub file entries (filename, status, patch, previous_filename)."""
    return "".join(_file_section(entry) for entry in files)


def _file_section(entry):
    new = entry["filename"]
    old = entry.get("previous_filename") or new
    status = entry.get("status")
    patch = entry.get("patch")
    lines = [f"diff --git a/{old} b/{new}"]
    if status == "added":
        lines.append(f"new file mode {DEFAULT_MODE}")
    elif status == "removed":
        lines.append(f"deleted file mode {DEFAULT_MODE}")
    elif status in ("renamed", "copied") and old != new:
        verb = "rename" if status == "renamed" else "copy"
        lines += [f"{verb} from {old}", f"{verb} to {new}"]
    if patch:
        lines.append("--- /dev/null" if status == "added" else f"--- a/{old}")
        lines.append("+++ /dev/null" if status == "removed" else f"+++ b/{new}")
        lines.append(patch.rstrip("\n"))
    return "\n".join(lines) + "\n"
