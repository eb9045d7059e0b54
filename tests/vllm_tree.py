"""vLLM main's file tree (a git trees-API document in ../shared), parsed once per test session.

Callers must treat the document as read-only: every test module shares the same object.
"""

import functools
import json

from conftest import shared_path


@functools.cache
def vllm_main_tree():
    """The trees-API document ``{sha, tree: [{path, type, ...}]}``; skips when ../shared is absent."""
    return json.loads(shared_path("vllm-tree", "vllm-main-tree.json").read_text(encoding="utf-8"))


def vllm_main_paths(blobs_only=False):
    """Every path in the tree (folders too, unless ``blobs_only``), in tree order."""
    return [entry["path"] for entry in vllm_main_tree()["tree"] if not blobs_only or entry.get("type") == "blob"]
