"""`serve` against a PostgreSQL database whose role lacks the rights to create the service's tables (issue 40, fault
5): the error says the role was refused and what to grant, not "pass --database-url ... to a database that exists"."""

from __future__ import annotations

import uuid

import psycopg
import pytest
import typer

from app.service_cli import open_database
from tests.support.workers import postgres_url

from .conftest import PG_BASE, _postgres_up


def test_a_role_without_rights_is_told_what_to_grant(capsys):
    if why := _postgres_up():
        pytest.skip(why)
    plain = postgres_url(PG_BASE).replace("+psycopg", "")
    role, schema = "r_" + uuid.uuid4().hex[:10], "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{role}" LOGIN')
        conn.execute(f'CREATE SCHEMA "{schema}"')  # owned by the admin: the role may use it, not create tables there
        conn.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO "{role}"')
    url = postgres_url(PG_BASE).replace("postgres@", f"{role}@", 1) + f"?options=-csearch_path%3D{schema}"
    try:
        with pytest.raises(typer.Exit):
            open_database(url)
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
            conn.execute(f'DROP OWNED BY "{role}"')
            conn.execute(f'DROP ROLE "{role}"')
    err = capsys.readouterr().err
    assert "refused its role" in err and "GRANT" in err, err
    assert "a database that exists" not in err
