"""The context pack: cross-file facts around a PR's diff, read from a local clone (or its sources)."""
