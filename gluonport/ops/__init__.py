"""The operator registry and its op families. See README.md in this folder."""

from .registry import OpDef, all_ops, canonical_name, find, get, register

__all__ = ["OpDef", "all_ops", "canonical_name", "find", "get", "register"]
