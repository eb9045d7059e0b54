"""Cross-file facts a reviewer gathers by hand, gathered once from a vLLM clone and pinned upstream code."""
