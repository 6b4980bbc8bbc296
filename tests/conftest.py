"""Shared pytest configuration."""

import os
import sys

# Tests import helpers as `tests.ops._check`; make the repo root importable without install.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
