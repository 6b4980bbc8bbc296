"""init operators (being written)."""
