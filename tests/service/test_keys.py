"""API keys: the admin API (`/api/v1/keys`), the CLI (`cudamaster keys create|list|revoke`), and the
403 an unknown key gets, which names the service's database and how to make a key there — with
the FAKE agent."""

from __future__ import annotations

import httpx
import pytest
from typer.testing import CliRunner, Result

from .conftest import make_key

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]
API = "/api/v1"


def key_id(key: str) -> str:
    return key.split("_")[1]


def test_admin_api_creates_lists_and_revokes_keys_with_fake_agent(db_url, server_factory):
    admin = {"X-API-Key": make_key(db_url, "root", role="admin", team="ops")}
    member = {"X-API-Key": make_key(db_url, "m", role="member", team="red")}
    viewer = {"X-API-Key": make_key(db_url, "v", role="viewer", team="red")}
    server = server_factory()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for who in (member, viewer):  # only an admin manages keys
            assert client.get(f"{API}/keys", headers=who).status_code == 403
            r = client.post(f"{API}/keys", json={"name": "sneaky", "role": "admin"}, headers=who)
            assert r.status_code == 403 and "admin" in r.json()["detail"]
            assert client.post(f"{API}/keys/{key_id(admin['X-API-Key'])}/revoke", headers=who).status_code == 403
        assert client.get(f"{API}/keys/me", headers=member).json() | {"created_at": None} == {
            "id": key_id(member["X-API-Key"]),
            "name": "m",
            "role": "member",
            "team": "red",
            "created_at": None,
            "revoked_at": None,
            "last_submit_at": None,
        }

        r = client.post(f"{API}/keys", json={"name": "new viewer", "role": "viewer", "team": "red"}, headers=admin)
        assert r.status_code == 201, r.text
        made = r.json()
        assert made["key"].startswith(f"cm_{made['id']}_") and made["role"] == "viewer" and made["team"] == "red"
        fresh = {"X-API-Key": made["key"]}
        assert client.get(f"{API}/keys/me", headers=fresh).json()["id"] == made["id"]
        r = client.get(f"{API}/jobs", headers=fresh)
        assert r.status_code == 200 and r.json()["items"] == []  # a new viewer of team red: none of red's jobs yet
        listed = client.get(f"{API}/keys", headers=admin).json()
        assert {k["id"] for k in listed} == {
            key_id(admin["X-API-Key"]),
            key_id(member["X-API-Key"]),
            key_id(viewer["X-API-Key"]),
            made["id"],
        }
        assert all(set(k) == {"id", "name", "role", "team", "created_at", "revoked_at", "last_submit_at"} for k in listed)

        for bad in ({"name": "x", "team": "Bad Team"}, {"name": "x", "role": "owner"}, {"name": ""}, {"name": "x", "extra": 1}):
            r = client.post(f"{API}/keys", json=bad, headers=admin)
            assert r.status_code == 422 and isinstance(r.json()["detail"], list), (bad, r.text)

        r = client.post(f"{API}/keys/{made['id']}/revoke", headers=admin)
        assert r.status_code == 200 and r.json()["revoked_at"]
        r = client.get(f"{API}/jobs", headers=fresh)
        assert r.status_code == 403 and "revoked" in r.json()["detail"]
        assert client.post(f"{API}/keys/000000000000/revoke", headers=admin).status_code == 404
        r = client.post(f"{API}/keys/{key_id(admin['X-API-Key'])}/revoke", headers=admin)
        assert r.status_code == 409 and "last active admin" in r.json()["detail"]
        # With a second admin, the first may go.
        second = client.post(f"{API}/keys", json={"name": "root2", "role": "admin", "team": "ops"}, headers=admin).json()
        r = client.post(f"{API}/keys/{key_id(admin['X-API-Key'])}/revoke", headers={"X-API-Key": second["key"]})
        assert r.status_code == 200 and r.json()["id"] == key_id(admin["X-API-Key"]) and r.json()["revoked_at"] is not None
        assert client.get(f"{API}/keys", headers=admin).status_code == 403


def cli(*args: str, env: dict[str, str] | None = None) -> Result:
    """`cudamaster ARGS` in this process (the same code as the installed command, without its start-up time)."""
    from app.cli import cli as command

    return CliRunner().invoke(command, list(args), env=env)


def test_keys_cli_roles_teams_list_revoke(tmp_path):
    url = f"sqlite:///{tmp_path / 'keys.db'}"
    first = cli("keys", "create", "--name", "ops", env={"CUDAMASTER_SERVICE__DATABASE_URL": url})
    assert first.exit_code == 0, first.output
    assert "role admin" in first.stdout and "first key" in first.stdout and str(tmp_path / "keys.db") in first.stdout
    second = cli("keys", "create", "--name", "alice", "--database-url", url)  # the flag and the variable reach one database
    assert second.exit_code == 0 and "role member" in second.stdout and "team default" in second.stdout
    third = cli("keys", "create", "--name", "bob", "--role", "viewer", "--team", "red", "--database-url", url)
    assert third.exit_code == 0 and "role viewer" in third.stdout and "team red" in third.stdout
    bob = key_id(third.stdout.strip().splitlines()[-1])

    listed = cli("keys", "list", "--database-url", url)
    assert listed.exit_code == 0 and "3 key(s)" in listed.stdout
    row = next(line for line in listed.stdout.splitlines() if line.startswith(bob))
    assert "role viewer" in row and "team red" in row and "active" in row
    assert cli("keys", "revoke", bob, "--database-url", url).exit_code == 0
    assert "revoked" in next(line for line in cli("keys", "list", "--database-url", url).stdout.splitlines() if line.startswith(bob))

    # --role is a choice of the roles (issue 43: they show in --help), so the CLI's usage error names them
    bad_role = cli("keys", "create", "--name", "x", "--role", "owner", "--database-url", url)
    assert bad_role.exit_code == 2 and "'owner' is not one of" in bad_role.stderr, bad_role.stderr
    assert all(f"'{role}'" in bad_role.stderr for role in ("admin", "member", "reviewer", "viewer")), bad_role.stderr
    bad_team = cli("keys", "create", "--name", "x", "--team", "Bad Team", "--database-url", url)
    assert bad_team.exit_code == 2 and bad_team.stderr.startswith("error: team 'Bad Team'"), bad_team.stderr
    assert all("Traceback" not in bad.stderr for bad in (bad_role, bad_team))
    gone = cli("keys", "revoke", "nope", "--database-url", url)
    assert gone.exit_code == 2 and "no key" in gone.stderr


def test_an_unknown_key_is_told_what_to_do_but_not_the_database_url_with_fake_agent(db_url, server_factory, tmp_path):
    # Issue 40: the 403 of an unknown key went to unauthenticated callers with the database's host, user and name.
    # It says how to make a key for this service's database, and names none of it (the start-up log does).
    served = db_url.replace("postgres@", "postgres:s3cret-pw@") if db_url.startswith("postgresql") else db_url
    make_key(served)
    elsewhere = make_key(f"sqlite:///{tmp_path / 'other.db'}", "made in the wrong database")
    server = server_factory(CUDAMASTER_SERVICE__DATABASE_URL=served)
    r = httpx.get(f"{server.url}{API}/jobs", headers={"X-API-Key": elsewhere}, timeout=30)
    detail = r.json()["detail"]
    assert r.status_code == 403 and "not recognised" in detail
    assert "cudamaster keys create" in detail and "--database-url" in detail and "CUDAMASTER_SERVICE__DATABASE_URL" in detail
    for secret in ("s3cret-pw", "127.0.0.1", "5432", "postgres", "sqlite", str(tmp_path), "service.db"):
        assert secret not in r.text, (secret, detail)
