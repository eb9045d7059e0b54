"""A clean GitHub environment for tests: no ambient token or API URL, a stub `gh`, a private cache."""

import os
import stat

GITHUB_ENV_VARS = ("GH_TOKEN", "GITHUB_TOKEN", "GITHUB_API_URL", "XDG_CACHE_HOME", "VLLM_ROCM_REVIEW_CACHE",
                   "VLLM_ROCM_REVIEW_GIT_URL")


def fake_gh(bin_dir, script):
    """An executable ``gh`` in ``bin_dir`` that runs the shell ``script``."""
    path = bin_dir / "gh"
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def clear_github_env(monkeypatch):
    for name in GITHUB_ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def isolate_github_env(monkeypatch, tmp_path):
    """No token from the environment, a `gh` that fails first on PATH, and a cache under ``tmp_path``."""
    clear_github_env(monkeypatch)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_gh(bin_dir, "exit 1")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("VLLM_ROCM_REVIEW_CACHE", str(tmp_path / "cache"))
    return tmp_path
