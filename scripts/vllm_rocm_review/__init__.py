"""Shared code for the vllm-rocm-pr-review skill scripts."""
