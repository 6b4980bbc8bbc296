"""indexing operators (being written)."""
