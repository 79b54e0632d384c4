"""Alembic migrations of the service database (see app/db/migrate.py, or `alembic -c migrations/alembic.ini`)."""
