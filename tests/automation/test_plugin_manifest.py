"""The Claude Code plugin manifests install this repository root as the skill.

Claude Code reads ``.claude-plugin/plugin.json`` (the plugin) and ``.claude-plugin/marketplace.json``
(the catalog ``/plugin marketplace add`` reads). The plugin's ``skills`` paths are resolved from the
plugin root; a path that holds a ``SKILL.md`` itself is loaded as that skill, so ``"./"`` keeps the
repository root the skill directory for both install routes.
"""

import json
import re
import yaml

from conftest import ROOT

PLUGIN_DIR = ROOT / ".claude-plugin"
KEBAB = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
# Top-level plugin.json keys in Claude Code's plugin manifest schema.
PLUGIN_KEYS = {"name", "version", "description", "author", "homepage", "repository", "license", "keywords",
               "commands", "agents", "skills", "hooks", "mcpServers", "outputStyles", "lspServers"}
MARKETPLACE_KEYS = {"$schema", "name", "owner", "metadata", "plugins", "version", "description"}
# Marketplace names Claude Code reserves for Anthropic.
RESERVED_MARKETPLACES = {"claude-code-marketplace", "claude-code-plugins", "claude-plugins-official",
                         "anthropic-marketplace", "anthropic-plugins", "agent-skills", "life-sciences"}


def load(name):
    return json.loads((PLUGIN_DIR / name).read_text(encoding="utf-8"))


def skill_front_matter(directory):
    text = (directory / "SKILL.md").read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n", text, re.DOTALL)
    assert match, f"{directory}/SKILL.md has no front matter"
    return yaml.safe_load(match.group(1))


def skill_dirs(plugin_root, paths):
    """The skill directories Claude Code finds under the manifest's ``skills`` paths."""
    found = []
    for entry in [paths] if isinstance(paths, str) else paths:
        assert entry.startswith("./"), f"plugin paths must be relative and start with ./, got {entry!r}"
        directory = (plugin_root / entry).resolve()
        assert directory.is_dir(), f"skills path {entry!r} is not a directory"
        if (directory / "SKILL.md").is_file():
            found.append(directory)
        else:
            found += sorted(child for child in directory.iterdir() if (child / "SKILL.md").is_file())
    return found


def test_plugin_manifest_keys_and_name():
    plugin = load("plugin.json")
    assert set(plugin) <= PLUGIN_KEYS, f"unknown plugin.json keys: {set(plugin) - PLUGIN_KEYS}"
    assert KEBAB.fullmatch(plugin["name"])
    assert plugin["name"] == skill_front_matter(ROOT)["name"]
    assert 0 < len(plugin["description"]) <= 1024


def test_plugin_version_is_the_package_version():
    version = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.MULTILINE)
    assert load("plugin.json")["version"] == version.group(1)


def test_skills_path_finds_exactly_this_skill_at_the_root():
    plugin = load("plugin.json")
    found = skill_dirs(ROOT, plugin["skills"])
    assert found == [ROOT.resolve()]
    assert skill_front_matter(found[0])["name"] == plugin["name"]


def test_marketplace_lists_the_plugin_at_the_root():
    marketplace = load("marketplace.json")
    assert set(marketplace) <= MARKETPLACE_KEYS
    assert KEBAB.fullmatch(marketplace["name"]) and marketplace["name"] not in RESERVED_MARKETPLACES
    assert marketplace["owner"]["name"]
    entries = marketplace["plugins"]
    assert [entry["name"] for entry in entries] == [load("plugin.json")["name"]]
    source = entries[0]["source"]
    assert source == "./"
    assert (ROOT / source / ".claude-plugin" / "plugin.json").is_file()
