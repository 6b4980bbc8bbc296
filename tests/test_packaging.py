"""The wheel's package list must cover every package directory (pyproject lists them)."""

import os

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_package_directory_is_listed():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    found = set()
    for dirpath, _, files in os.walk(os.path.join(ROOT, "gluonport")):
        if "__init__.py" in files and "__pycache__" not in dirpath:
            rel = os.path.relpath(dirpath, ROOT).replace(os.sep, ".")
            found.add(rel)
    missing = found - listed
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"
    assert "gluonport_cli" in listed and "gluonport.schemas" in listed


def test_cli_is_not_a_top_level_cli_module():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        cfg = tomllib.load(f)
    assert "cli" not in cfg["tool"]["setuptools"]["packages"]
    assert cfg["project"]["scripts"]["gluonport"] == "gluonport_cli.main:main"
