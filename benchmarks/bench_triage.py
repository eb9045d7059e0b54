#!/usr/bin/env python3
"""Time and peak memory of triage on a synthetic 3,000-file PR with 20,000 diff lines.

    python3 benchmarks/bench_triage.py [--files N] [--lines N] [--repeat N]

The PR is generated deterministically: ROCm, shared and generic paths, Python and CUDA
sources, tests and docs, with code lines that trigger most diff families and checks, so
every stage (parse, gate, families, detectors, checks, reading plan, digest) does real
work. Prints the median wall time of the triage call, of the whole CLI path (JSON load,
validation, triage, digest), peak Python memory (tracemalloc) of one run, and the
process's peak RSS.
"""

import argparse
import json
import random
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from vllm_rocm_review.core.catalog import load_catalog  # noqa: E402
from vllm_rocm_review.triage.digest import render_digest  # noqa: E402
from vllm_rocm_review.core.pr_schema import validate_pr_document  # noqa: E402
from vllm_rocm_review.triage.triage import triage  # noqa: E402
from vllm_rocm_review.triage.config import load_triage_config  # noqa: E402

DIRECTORIES = [
    "vllm/v1/attention/backends", "vllm/v1/attention/ops", "vllm/model_executor/layers/fused_moe",
    "vllm/model_executor/layers/quantization", "vllm/distributed/device_communicators", "vllm/entrypoints/openai",
    "vllm/platforms", "vllm/compilation/passes/fusion", "csrc/quantization", "csrc/attention", "tests/kernels",
    "tests/v1/attention", "docs/features",
]
NAMES = ["rocm_attn", "rocm_aiter_fa", "triton_attn", "flash_attn", "fused_moe", "fp8", "all2all", "serving",
         "interface", "matcher_utils", "utils", "layernorm", "test_rocm_attn", "usage"]
PY_LINES = [
    "    out = torch.empty(num_tokens, hidden, dtype=torch.bfloat16, device=x.device)",
    "    if current_platform.is_rocm() and kv_cache_dtype == 'fp8':",
    "    scale = getattr(layer, 'k_scale', None)",
    "    n = int(seq_lens.max().item())",
    "    assert block_size % 16 == 0",
    "    query = query.contiguous()",
    "    fast = envs.VLLM_ROCM_USE_AITER_MHA",
    "    FP8_MAX = 448.0",
    "    offs = pid * stride_m + tl.arange(0, BLOCK)",
    "    q = tl.load(q_ptr + offs, mask=offs < n)",
    "    result = rocm_aiter_ops.fused_moe(hidden_states, w1, w2, topk_weights, topk_ids)",
    "    logger.debug('dispatching %d tokens to %s', num_tokens, backend)",
    "    return self.impl.forward(layer, query, key, value, kv_cache, attn_metadata, output)",
    "    x = x.view(-1, self.num_heads, self.head_size)",
    "    use_fast_path: bool = False,",
    "    # TODO: tune for gfx950",
]
CU_LINES = [
    "  const int lane = threadIdx.x & (WARP_SIZE - 1);",
    "  float v = __shfl_xor_sync(0xffffffff, acc, 16);",
    "  int64_t offset = token_idx * hidden_stride + head * head_size;",
    "  TORCH_CHECK(input.is_contiguous(), \"input must be contiguous\");",
    "  out[i] = static_cast<scalar_t>(v * scale);",
]


def synthetic_document(files, lines, seed=0):
    """A PR document with ``files`` changed files and ``lines`` added+removed lines."""
    rng = random.Random(seed)
    per_file = [lines // files + (1 if index < lines % files else 0) for index in range(files)]
    chunks, entries = [], []
    for index, count in enumerate(per_file):
        folder = DIRECTORIES[index % len(DIRECTORIES)]
        suffix = ".cu" if folder.startswith("csrc") else ".md" if folder.startswith("docs") else ".py"
        path = f"{folder}/{NAMES[index % len(NAMES)]}_{index}{suffix}"
        pool = CU_LINES if suffix == ".cu" else PY_LINES
        removed = [rng.choice(pool) for _ in range(count // 3)]
        added = [rng.choice(pool) + f"  # {index}" * (rng.random() < 0.5) for _ in range(count - len(removed))]
        hunk = [f"@@ -1,{len(removed) + 2} +1,{len(added) + 2} @@ def forward(self):", " def forward(self):", "     pass"]
        hunk += [f"-{line}" for line in removed] + [f"+{line}" for line in added]
        chunks.append(f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n" + "\n".join(hunk) + "\n")
        entries.append({"filename": path, "status": "modified", "additions": len(added), "deletions": len(removed),
                        "patch": "\n".join(hunk)})
    body = "Decode is 1.4x faster on MI300X.\n\n| batch | tok/s |\n|---|---|\n| 64 | 5120 |\n"
    return {
        "pr": {"number": 99999, "title": "[ROCm][Perf] Synthetic refactor across the tree", "body": body,
               "author": "bench", "state": "open", "draft": False, "labels": [], "created_at": "2026-08-01T00:00:00Z",
               "updated_at": "2026-08-01T00:00:00Z", "merged_at": None,
               "additions": sum(e["additions"] for e in entries), "deletions": sum(e["deletions"] for e in entries),
               "changed_files": files, "commits": 1, "head": {"ref": "bench", "sha": "a" * 40, "repo": None},
               "base": {"ref": "main", "sha": "b" * 40}, "html_url": "https://github.com/vllm-project/vllm/pull/99999"},
        "diff": "".join(chunks), "files": entries, "issue_comments": [], "review_comments": [], "reviews": [],
        "linked_issues": [],
        "meta": {"fetched_at": "2026-08-01T00:00:00Z", "api_url": "https://api.github.com", "repo": "vllm-project/vllm",
                 "number": 99999, "requests": 0, "rate_limit": {"remaining": None, "reset": None}, "diff_source": "api",
                 "files_without_patch": [], "files_truncated": False, "pages_capped": []},
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    document = synthetic_document(args.files, args.lines)
    text = json.dumps(document)
    config, catalog = load_triage_config(), load_catalog()
    diff_lines = sum(entry["additions"] + entry["deletions"] for entry in document["files"])

    triage_times, cli_times = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = triage(document, config, catalog)
        triage_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        loaded = json.loads(text)
        assert not validate_pr_document(loaded)
        render_digest(triage(loaded, config, catalog))
        cli_times.append(time.perf_counter() - start)

    tracemalloc.start()
    render_digest(triage(json.loads(text), config, catalog))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    print(f"synthetic PR: {len(document['files'])} files, {diff_lines} diff lines, {len(text) / 1e6:.1f} MB of JSON")
    print(f"result: relevance {result['relevance']}, {len(result['families'])} families, {len(result['rules'])} rules")
    print(f"triage():             median {statistics.median(triage_times):.3f} s over {args.repeat} runs "
          f"(min {min(triage_times):.3f} s)")
    print(f"load+validate+triage+digest: median {statistics.median(cli_times):.3f} s")
    print(f"peak Python memory (tracemalloc, one full run): {peak / 1e6:.1f} MB")
    # ru_maxrss is KiB on Linux (bytes on macOS): the whole process, interpreter included.
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB (Linux units)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
