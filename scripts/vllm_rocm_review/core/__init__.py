"""Shared foundations: paths, atomic writes, CLI edges, the surface YAML, diffs, the catalog, the PR schema."""
