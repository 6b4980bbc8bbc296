"""output operators (being written)."""
