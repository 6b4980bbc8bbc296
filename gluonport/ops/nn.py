"""nn operators (being written)."""
