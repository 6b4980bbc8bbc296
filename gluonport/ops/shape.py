"""shape operators (being written)."""
