"""contrib operators (being written)."""
