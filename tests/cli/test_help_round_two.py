"""CLI help, round two (issue 43, item 6): no `<list[str]>` type anywhere, `keys create --role` is a choice,
every option has help, `--sizes` has its choices wherever it takes one set, `--precision` defaults to the job spec's
precision on every command that takes one variant, and its choices are never wrapped over lines."""

from __future__ import annotations

import typing

import pytest
import typer.main
from typer.testing import CliRunner

from app.cli import cli
from app.db.models import ROLES
from app.service_cli import Role
from bench_tasks.spec import SIZE_SETS
from graph.contract import DEFAULT_PRECISION

runner = CliRunner()


def _commands(group: typing.Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if getattr(group, "commands", None):
        return [c for name, sub in group.commands.items() for c in _commands(sub, (*path, name))]
    return [path]


COMMANDS = _commands(typer.main.get_command(cli))


def _help(args: tuple[str, ...] | list[str]) -> str:
    out = runner.invoke(cli, [*args, "--help"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    return out.output


def _option_line(text: str, option: str) -> str:
    return next(line for line in text.splitlines() if f" {option} " in line or f" {option}," in line)


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_no_help_shows_a_python_list_type(args):
    assert "list[" not in _help(args)


def test_every_option_of_every_command_has_help():
    missing = []
    for args in COMMANDS:
        command = typer.main.get_command(cli)
        for name in args:
            command = command.commands[name]
        missing += [f"{' '.join(args)} {p.opts[0]}" for p in command.params if getattr(p, "param_type_name", "") == "option" and not p.help]
    assert missing == []


def test_keys_create_role_is_a_choice_of_the_roles():
    assert typing.get_args(Role) == ROLES
    assert "<admin|member|reviewer|viewer>" in _option_line(_help(["keys", "create"]), "--role")
    out = runner.invoke(cli, ["keys", "create", "--name", "x", "--role", "boss"])
    assert out.exit_code == 2 and "boss" in out.output and "reviewer" in out.output


def test_campaign_run_choose_flags_has_the_specs_help():
    assert "compiler role" in _option_line(_help(["campaign", "run"]), "--choose-flags")


@pytest.mark.parametrize("args", [["optimize"], ["bench", "eval"], ["campaign", "run"]])
def test_sizes_lists_its_choices(args):
    assert "<" + "|".join(SIZE_SETS) + ">" in _option_line(_help(args), "--sizes")


@pytest.mark.parametrize("args", [["optimize"], ["bench", "eval"], ["profile", "run"]])
def test_precision_defaults_to_the_specs_precision_everywhere(args):
    text = _help(args)
    at = text.index("--precision")
    assert f"[default: {DEFAULT_PRECISION}]" in text[at : at + 600].split(" --", 1)[0]
    assert "required" not in text[at : at + 300].split("\n", 1)[0]
