"""Bounds on what a request may carry: names by strict patterns, integers within the database's
columns, and no NUL character anywhere (PostgreSQL text cannot hold one, and no name or kernel
needs one) nor a lone surrogate (JSON's "\\ud800": it has no UTF-8, so no file, column or answer can
hold it). Request bodies derive from `RequestBody`; routes bound their query and path parameters with
the constants here."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, WithJsonSchema, model_validator

INT32_MAX = 2**31 - 1  # attempts.id, job_events.id: INTEGER columns
MAX_OFFSET = INT32_MAX  # more rows than any page could reach

# A benchmark task name (a folder of bench_tasks/tasks), or a stored custom task's or PyTorch reference's id.
BUILTIN_TASK_PATTERN = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"
CUSTOM_TASK_PATTERN = r"^ct_[0-9a-f]{16}$"
PYTORCH_TASK_PATTERN = r"^pt_[0-9a-f]{16}$"
TASK_PATTERN = r"^(?:[A-Za-z][A-Za-z0-9_]{0,63}|ct_[0-9a-f]{16})$"
# An LLM model name as endpoints spell them: gpt-4o, openai/gpt-oss-120b, claude-3-5-sonnet@20240620.
MODEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,127}$"
TEAM_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,63}$"
JOB_ID_PATTERN = r"^job_[0-9a-f]{16}$"
KEY_ID_PATTERN = r"^[0-9a-f]{12}$"
SUITE_ID_PATTERN = r"^su_[0-9a-f]{16}$"


def is_custom_task_id(name: str) -> bool:
    return re.fullmatch(CUSTOM_TASK_PATTERN, name) is not None


def is_pytorch_task_id(name: str) -> bool:
    return re.fullmatch(PYTORCH_TASK_PATTERN, name) is not None


def is_stored_task_id(name: str) -> bool:
    """A task the service stores (app/stored_tasks.py): a custom task (`ct_…`) or a PyTorch reference (`pt_…`)."""
    return is_custom_task_id(name) or is_pytorch_task_id(name)


def check_task_name(name: str) -> str:
    """A built-in task name or a stored task's id; anything else (a path, `../x`, `./x`) is refused with the known names."""
    from bench_tasks.spec import task_names, unknown_task

    if is_stored_task_id(name):
        return name
    if re.fullmatch(BUILTIN_TASK_PATTERN, name) is None or name not in task_names():
        raise ValueError(
            f"{unknown_task(name)} (or give the id of a custom task or PyTorch reference your key created: ct_ or pt_ and 16 hex digits)"
        )
    return name


def _task_name_schema() -> dict[str, Any]:
    from bench_tasks.spec import task_names

    return {
        "anyOf": [
            {"type": "string", "enum": task_names(), "description": "a benchmark task (GET /api/v1/tasks)"},
            {"type": "string", "pattern": CUSTOM_TASK_PATTERN, "description": "a custom task your key created"},
            {"type": "string", "pattern": PYTORCH_TASK_PATTERN, "description": "a PyTorch reference your key submitted"},
        ],
        "examples": ["vector_add"],
    }


TaskName = Annotated[str, AfterValidator(check_task_name), WithJsonSchema(_task_name_schema())]


# What no stored text may hold: a NUL (PostgreSQL text cannot), a lone surrogate (JSON's "\\ud800": no UTF-8 for it).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _unstorable_path(value: Any, path: str) -> tuple[str, str] | None:
    """The path of the first string (or key) holding a NUL or a lone surrogate, and that character; or None."""
    if isinstance(value, str):
        char = _UNSTORABLE.search(value)
        return (path, char.group()) if char else None
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and _UNSTORABLE.search(k):
                return _unstorable_path(k, f"{path}.{k!a}" if path else ascii(k))
            found = _unstorable_path(v, f"{path}.{k}" if path else str(k))
            if found:
                return found
    if isinstance(value, list | tuple):
        for i, v in enumerate(value):
            found = _unstorable_path(v, f"{path}[{i}]")
            if found:
                return found
    return None


class RequestBody(BaseModel):
    """A request body: refuses a NUL character or a lone surrogate in any string or key, naming where it is."""

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        found = _unstorable_path(data, "")
        if found is None:
            return data
        where, char = found
        if char == "\x00":
            raise ValueError(f"{where or 'the body'} contains a NUL character (\\u0000); remove it")
        raise ValueError(f"{where or 'the body'} contains a lone surrogate ({ascii(char)[1:-1]}), which is no character: send UTF-8 text")


# -- names people read (keys, campaigns) ---------------------------------------------------------------
MAX_NAME_CHARS = 128
# Characters that reorder or hide what a name shows (display spoofing): the bidirectional embeddings, overrides,
# isolates and marks, and the invisible spaces; with every control character (CR, LF, tab, ...) and the line and
# paragraph separators. Zero-width (non-)joiners stay allowed: some scripts and emoji need them.
_SPOOFING = frozenset("\u061c\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff")


def _refused(c: str) -> bool:
    return c in _SPOOFING or unicodedata.category(c) in ("Cc", "Zl", "Zp")


def check_name(value: str) -> str:
    """A name shown to people: not blank, and no control or bidirectional-override character (ValueError naming
    the first one and where it is)."""
    if not value.strip():
        raise ValueError("the name is blank: give at least one visible character")
    for i, c in enumerate(value):
        if _refused(c):
            what = unicodedata.name(c, "a control character")
            raise ValueError(
                f"character {i + 1} of the name is U+{ord(c):04X} ({what}): names may not hold control, line-break or "
                "bidirectional-override characters (they can hide or reorder what the name shows); remove it"
            )
    return value


# One rule for every name people read: key names, campaign names (an empty campaign name means none).
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS), AfterValidator(check_name)]
OptionalName = Annotated[str, Field(max_length=MAX_NAME_CHARS), AfterValidator(lambda v: v and check_name(v))]
