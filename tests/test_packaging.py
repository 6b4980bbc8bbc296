"""The wheel's package list must cover every package directory (pyproject lists them)."""

import os

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomli, its origin (the test extra installs it there)
    tomllib = pytest.importorskip("tomli")

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


def test_sample_models_ship_as_package_data():
    """`gluonport quickstart` runs the installed samples from any folder: every file it needs is
    package data of gluonport.sample_models."""
    import fnmatch

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        tool = tomllib.load(f)["tool"]["setuptools"]
    assert "gluonport.sample_models" in tool["packages"]
    assert tool["package-dir"]["gluonport.sample_models"] == "sample_models"
    globs = tool["package-data"]["gluonport.sample_models"]
    for name in ("lenet_bn", "mlp"):
        for suffix in ("-symbol.json", "-0000.params", "-input.npy", "-output.npy"):
            file = name + suffix
            assert os.path.isfile(os.path.join(ROOT, "sample_models", file)), file
            assert any(fnmatch.fnmatch(file, g) for g in globs), file


def test_docs_point_inside_the_repository():
    """A clone has no ../shared: the formats description lives in the repository."""
    assert os.path.isfile(os.path.join(ROOT, "gluonport", "formats", "FORMATS.md"))
    for doc in ("README.md", os.path.join("gluonport", "formats", "README.md")):
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            text = f.read()
        assert "../shared" not in text and "shared/FORMATS" not in text, doc
        assert "FORMATS.md" in text, doc
