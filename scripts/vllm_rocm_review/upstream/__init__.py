"""Refreshing upstream references and checking vLLM tree drift."""
