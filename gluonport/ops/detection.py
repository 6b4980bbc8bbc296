"""detection operators (being written)."""
