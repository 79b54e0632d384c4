"""HTTP routes under /api/v1."""
