"""Persistence: SQLAlchemy models, engine and session helpers, Alembic migration entry points."""
