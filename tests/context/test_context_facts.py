"""Undone fixes, platform twins and stale call sites, over a repository the test builds with dated commits.

History: an old commit, an old fix, a recent fix of a block the PR moves without it, a recent fix
of a block the PR moves with it, a recent feature commit; then the PR, which also changes a ROCm
platform method (its CUDA twin does a step it skips) and adds parameters to two functions.
"""

import os
import subprocess
import textwrap

import pytest

from git_pr import pr_document
from vllm_rocm_review.context.digest import render_digest
from vllm_rocm_review.context.pack import build_pack
from vllm_rocm_review.core.surface import load_surface

SURFACE = load_surface()

BLOCK = textwrap.dedent('''
    def pick_block_size(config):
        size = config.block_size
        layout = config.layout
        heads = config.num_heads
        if layout == "paged":
            size = size * 2
        return size, heads
    ''')
FIXED_BLOCK = BLOCK.replace('''    if layout == "paged":''', '''    if heads > 64:
        size = min(size, 32)
    if layout == "paged":''')
GUARD = textwrap.dedent('''
    def batch_rows(batch):
        rows = batch.rows
        cols = batch.cols
        total = rows * cols
        scaled = total // 4
        return scaled
    ''')
FIXED_GUARD = GUARD.replace('''    scaled = total // 4''', '''    if total == 0:
        return 0
    scaled = total // 4''')

CUDA = '''
    import torch

    from vllm.platforms.interface import Platform


    def _nvml_name(device_id):
        return str(device_id)


    def _warm_up(device):
        return device


    class CudaPlatform(Platform):
        @classmethod
        def check_and_update_config(cls, vllm_config):
            cache_config = vllm_config.cache_config
            if cache_config.block_size is None:
                cache_config.block_size = 16
            cls.update_block_size_for_backend(vllm_config)
            if torch.cuda.is_available():
                torch.cuda.synchronize()

        @classmethod
        def get_device_name(cls, device_id=0):
            return _nvml_name(device_id)

        @classmethod
        def set_device(cls, device, backend):
            _warm_up(device)
            torch.zeros(1, device=device)
            if backend == Backends.FLASH:
                return cls.pick_flash()
            torch.cuda.set_device(device)

        @classmethod
        def pick_flash(cls):
            return "flash"
    '''
ROCM = '''
    import torch

    from vllm.platforms.interface import Platform


    def _amdsmi_name(device_id):
        return str(device_id)


    class RocmPlatform(Platform):
        @classmethod
        def check_and_update_config(cls, vllm_config):
            cache_config = vllm_config.cache_config
            if cache_config.block_size is None:
                cache_config.block_size = 16
            cls.update_block_size_for_backend(vllm_config)

        @classmethod
        def get_device_name(cls, device_id=0):
            return _amdsmi_name(device_id)

        @classmethod
        def set_device(cls, device, backend):
            torch.cuda.set_device(device)
    '''

BASE_FILES = {
    "vllm/attn/old_home.py": "import os\n" + BLOCK + GUARD,
    "vllm/old_fix.py": '''
        def clamp(x):
            lower = x.lower_bound
            upper = x.upper_bound
            return max(lower, min(upper, x.value))
        ''',
    "vllm/knob.py": '''
        def knob(env):
            value = env.get("KNOB")
            return int(value or 0)
        ''',
    "vllm/platforms/cuda.py": CUDA,
    "vllm/platforms/rocm.py": ROCM,
    "vllm/ops/scale.py": '''
        def scale(x, factor=1.0):
            return x * factor


        def shift(x, offset=0):
            return x + offset


        def pad(x, width):
            return x
        ''',
    "vllm/ops/__init__.py": "",
    "vllm/i.py": '''
        from vllm.ops.scale import pad


        def run_i(x):
            return pad(x, 2)
        ''',
    "vllm/j.py": '''
        from vllm.ops.scale import pad


        def run_j(x):
            return pad(x, 2)
        ''',
    "vllm/a.py": '''
        from vllm.ops.scale import scale


        def run_a(x):
            return scale(x)
        ''',
    "vllm/b.py": '''
        from vllm.ops import scale


        def run_b(x):
            return scale.scale(x)
        ''',
    "vllm/c.py": '''
        from vllm.ops.scale import scale


        def run_c(x):
            return scale(x, 2.0, True)
        ''',
    "vllm/d.py": '''
        def scale(x):
            return x


        def run_d(x):
            return scale(x)
        ''',
    "vllm/e.py": '''
        def run_e(obj, x):
            return obj.scale(x)
        ''',
    "vllm/f.py": '''
        from vllm.ops.scale import scale as rescale


        def run_f(x):
            return rescale(x)
        ''',
    "vllm/h.py": '''
        from vllm.ops.scale import shift


        def run_h(x):
            return shift(x)
        ''',
    "tests/test_scale.py": '''
        from vllm.ops.scale import scale


        def test_scale():
            assert scale(1) == 1
        ''',
}

HEAD_FILES = {
    # The pre-fix block moves out without its fix; the fixed guard moves out with its fix.
    "vllm/attn/old_home.py": "import os\n",
    "vllm/attn/new_home.py": "import os\n" + BLOCK,
    "vllm/attn/guards.py": "import os\n" + FIXED_GUARD,
    # An old fix and a recent feature: their deleted lines are not recent fixes.
    "vllm/old_fix.py": '''
        def clamp(x):
            return x.value
        ''',
    "vllm/knob.py": '''
        def knob(env):
            return None
        ''',
    "vllm/platforms/rocm.py": ROCM.replace('''            cls.update_block_size_for_backend(vllm_config)
''', '''            if cache_config.cache_dtype is None:
                cache_config.cache_dtype = "auto"
''').replace("return _amdsmi_name(device_id)", "return _amdsmi_name(device_id or 0)").replace(
        "            torch.cuda.set_device(device)", "            torch.cuda.set_device(device or 0)"),
    "vllm/ops/scale.py": '''
        def scale(x, factor=1.0, clamp=False):
            return x * factor


        def shift(x, offset=0, wrap=False):
            return x + offset


        def pad(x, width, mode):
            return x
        ''',
    "vllm/j.py": '''
        from vllm.ops.scale import pad


        def run_j(x):
            return pad(x, 2, mode="edge")
        ''',
    "vllm/a.py": '''
        from vllm.ops.scale import scale


        def run_a(x):
            return scale(x, clamp=True)
        ''',
    "vllm/g.py": '''
        from vllm.ops.scale import shift


        def run_g(x):
            return shift(x, wrap=True)
        ''',
}

DAY = 86400
BASE_TIME = 1_750_000_000


def write(root, files):
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def commit(root, message, when):
    stamp = f"@{when} +0000"
    env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", message]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)
    return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """(root, base, head) of the history in the module docstring."""
    root = tmp_path_factory.mktemp("vllm-facts")
    subprocess.run(["git", "-C", str(root), "init", "-q"], check=True)
    write(root, BASE_FILES)
    old_clamp = BASE_FILES["vllm/old_fix.py"]
    write(root, {"vllm/old_fix.py": "def clamp(x):\n    return x.value\n"})
    commit(root, "initial", BASE_TIME - 400 * DAY)
    write(root, {"vllm/old_fix.py": old_clamp})
    commit(root, "[Bugfix] Clamp to the bounds", BASE_TIME - 300 * DAY)
    write(root, {"vllm/attn/old_home.py": "import os\n" + FIXED_BLOCK + GUARD})
    commit(root, "[Bugfix] Cap the block size for many heads (#101)", BASE_TIME - 30 * DAY)
    write(root, {"vllm/attn/old_home.py": "import os\n" + FIXED_BLOCK + FIXED_GUARD,
                 "vllm/knob.py": BASE_FILES["vllm/knob.py"].replace("return int(value or 0)", "return int(value or 1)")})
    commit(root, "Fix empty batches; add a knob default (#102)", BASE_TIME - 20 * DAY)
    write(root, {"vllm/knob.py": BASE_FILES["vllm/knob.py"].replace("return int(value or 0)",
                                                                      "scaled = int(value or 1) * 2\n    return scaled")})
    base = commit(root, "[Feature] Scale the knob (#103)", BASE_TIME)
    write(root, HEAD_FILES)
    head = commit(root, "Move the attention helpers", BASE_TIME + DAY)
    return root, base, head


@pytest.fixture(scope="module")
def pack(repo):
    root, base, head = repo
    return build_pack(pr_document(root, base, head, 8001), None, SURFACE["context_pack"], SURFACE)


def flags(pack, code):
    return [f for f in pack["flags"] if f["code"] == code]


def test_a_move_that_drops_a_recent_fix_is_flagged_and_one_that_keeps_it_is_not(pack):
    by_subject = {e["subject"]: e for e in pack["undone_fixes"]}
    dropped = by_subject["[Bugfix] Cap the block size for many heads (#101)"]
    assert dropped["path"] == "vllm/attn/old_home.py" and dropped["moved_to"] == "vllm/attn/new_home.py"
    assert [(line["text"], line["re_added"]) for line in dropped["lines"]] == [
        ("if heads > 64:", []), ("size = min(size, 32)", [])]
    kept = by_subject["Fix empty batches; add a knob default (#102)"]
    assert kept["path"] == "vllm/attn/old_home.py" and kept["moved_to"] == "vllm/attn/guards.py"
    assert {line["text"]: line["re_added"] for line in kept["lines"]} == {
        "if total == 0:": ["vllm/attn/guards.py"], "return 0": ["vllm/attn/guards.py"]}
    [found] = flags(pack, "FIX-UNDONE")
    assert (found["path"], found["line"]) == ("vllm/attn/old_home.py", 7)
    assert found["message"].startswith("the block moved to vllm/attn/new_home.py lacks 2 line(s) of fix ")
    assert "\"[Bugfix] Cap the block size for many heads (#101)\"" in found["message"]


def test_old_fixes_and_recent_non_fixes_are_not_reported(pack):
    paths = {e["path"] for e in pack["undone_fixes"]}
    assert "vllm/old_fix.py" not in paths  # the fix is 300 days older than the base
    subjects = {e["subject"] for e in pack["undone_fixes"]}
    assert "[Feature] Scale the knob (#103)" not in subjects


def test_recent_days_is_a_setting(repo):
    root, base, head = repo
    settings = {**SURFACE["context_pack"],
                "undone_fixes": {**SURFACE["context_pack"]["undone_fixes"], "recent_days": 400}}
    result = build_pack(pr_document(root, base, head, 8001), None, settings, SURFACE)
    assert "vllm/old_fix.py" in {e["path"] for e in result["undone_fixes"]}


def test_platform_twin_gap_the_pr_opens_is_flagged(pack):
    entry = next(e for e in pack["platform_twins"] if e["method"] == "check_and_update_config")
    assert entry["twin"] == "vllm/platforms/cuda.py:16"
    assert entry["removed_here_twin_keeps"] == ["`update_block_size_for_backend()`"]
    assert entry["added_here_twin_lacks"] == ["`if cache_config.cache_dtype is None`"]
    [found] = flags(pack, "PLATFORM-TWIN-GAP")
    assert (found["path"], found["line"]) == ("vllm/platforms/rocm.py", 12)
    # A step added to the reviewed platform (ROCm) alone is listed, not flagged.
    assert found["message"] == ("check_and_update_config: the PR removes `update_block_size_for_backend()` here "
                                "and the twin vllm/platforms/cuda.py:16 keeps it")


def test_twins_differing_in_vendor_names_dispatch_own_helpers_or_of_old_are_not_flagged(pack):
    by_method = {e["method"]: e for e in pack["platform_twins"]}
    assert [by_method["get_device_name"][key] for key in
            ("added_here_twin_lacks", "removed_here_twin_keeps", "standing_twin_only")] == [[], [], []]
    # set_device: the twin's dispatch branch and own helper are left out; its torch.zeros call predates the PR.
    assert by_method["set_device"]["standing_twin_only"] == ["`torch.zeros()`"]
    assert (by_method["set_device"]["added_here_twin_lacks"], by_method["set_device"]["removed_here_twin_keeps"]) == ([], [])
    assert len(flags(pack, "PLATFORM-TWIN-GAP")) == 1


def test_call_sites_of_a_swept_parameter_are_counted_and_listed(pack):
    entry = next(e for e in pack["stale_call_sites"] if e["function"] == "scale")
    assert (entry["parameter"], entry["change"]) == ("clamp", "added (default False)")
    # a.py (updated), b.py (module attribute), c.py (positional), f.py (alias); not d.py, e.py or the test
    assert (entry["call_sites"], entry["passing"], entry["updated"]) == (4, 2, 1)
    assert entry["stale_sites"] == ["vllm/b.py:5", "vllm/f.py:5"]


def test_a_required_parameter_a_call_omits_is_flagged_and_a_new_default_is_not(pack):
    entry = next(e for e in pack["stale_call_sites"] if e["function"] == "pad")
    assert (entry["change"], entry["call_sites"], entry["passing"], entry["stale_sites"]) == (
        "added (required)", 2, 1, ["vllm/i.py:5"])
    [found] = flags(pack, "CALL-SITE-STALE")
    assert (found["path"], found["line"]) == ("vllm/ops/scale.py", 9)
    assert found["message"] == ("pad: 1 of 2 call site(s) pass `mode` (added (required)); 1 outside the diff "
                                "omit it (now required), e.g. vllm/i.py:5")


def test_an_opt_in_parameter_only_new_code_passes_is_listed_not_flagged(pack):
    entry = next(e for e in pack["stale_call_sites"] if e["function"] == "shift")
    assert (entry["call_sites"], entry["passing"], entry["updated"], entry["stale_sites"]) == (2, 1, 0, ["vllm/h.py:5"])


def test_digest_renders_the_three_sections(pack):
    digest = render_digest(pack, "pr-8001-context.json")
    assert "## Undone fixes (recent fixes whose lines the PR deletes) (2)" in digest
    assert "## Platform twins (changed method against its twin) (3)" in digest
    assert "- scale `clamp` added (default False): 2 of 4 call site(s) pass it; 2 outside the diff do not" in digest
