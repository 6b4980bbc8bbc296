"""pool operators (being written)."""
