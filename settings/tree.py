"""The one settings tree: `load_settings()` reads every CUDAMASTER_* variable (and `.env`) into sections.

    CUDAMASTER_SERVICE__DATABASE_URL=postgresql+psycopg://user@host/db   the service's jobs and keys
    CUDAMASTER_CHECKPOINT_URL=postgresql://user@host/db                 LangGraph checkpoints (service and CLI)
    CUDAMASTER_AGENT__MODEL=o4-mini  CUDAMASTER_AGENT__ROLES__CODER__MODEL=deepseek-reasoner
    CUDAMASTER_HARNESS__NVCC_ARCH=sm_90  CUDAMASTER_HARNESS__SANDBOX_BWRAP=/usr/bin/bwrap
    CUDAMASTER_PROFILING__NCU=/usr/local/cuda/bin/ncu
    CUDAMASTER_RAY__ADDRESS=HEAD:6379                                   GPU work on a Ray cluster (gpu/ray)

The sections are plain models beside this module (settings.service, settings.agent, settings.harness,
settings.profiling, settings.ray); code gets its section through the accessors below, at the edges (CLI, service
start-up, workers), and passes it down.
A CUDAMASTER_* variable that names no setting (a misspelling, or a flat name from before the tree)
is refused with the closest valid name. The settings package is the bottom layer: it imports none of the project's
other packages, and every layer may import it (pyproject's import-linter contracts).
"""

from __future__ import annotations

import difflib
import os
import typing
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from .agent import AgentSettings
from .harness import HarnessSettings
from .profiling import ProfilingSettings
from .ray import RaySettings
from .service import ServiceSettings

PREFIX = "CUDAMASTER_"
DELIMITER = "__"
ENV_FILE = ".env"

# CUDAMASTER_* variables that are not settings: read directly by their one user.
NOT_SETTINGS = frozenset(
    {
        "CUDAMASTER_GIT_COMMIT",  # bench_tasks.provenance: the commit of a tree without .git (the device copy)
        "CUDAMASTER_SANDBOX_CANARY",  # bench_tasks.harness.sandbox_check: a marker it plants to prove the sandbox hides it
        "CUDAMASTER_TEST_POSTGRES",  # tests: the PostgreSQL server the tests use
        "CUDAMASTER_FUZZ_SEED",  # tests: the OpenAPI fuzzing seed
        "CUDAMASTER_CLIENT_URL",  # `cudamaster campaign run|status`: the service to talk to
        "CUDAMASTER_CLIENT_KEY",  # `cudamaster campaign run|status`: the API key to talk to it with
        "CUDAMASTER_TEST_RAY_GPUS",  # tests: GPUs the test Ray cluster declares ("detect": the machine's own)
        "CUDAMASTER_TEST_FORKSERVER",  # tests: 0 starts the test servers as `python -m uvicorn`, not forked
    }
)


class SettingsInvalid(ValueError):
    """A setting that cannot be used: unknown name, or a value of the wrong kind. The message is one line."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=PREFIX, env_nested_delimiter=DELIMITER, env_file=ENV_FILE, extra="ignore"
    )  # unknown names: check_names

    service: ServiceSettings = Field(default_factory=ServiceSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    harness: HarnessSettings = Field(default_factory=HarnessSettings)
    profiling: ProfilingSettings = Field(default_factory=ProfilingSettings)
    ray: RaySettings = Field(default_factory=RaySettings)
    checkpoint_url: str | None = Field(
        None,
        description="LangGraph checkpoint store of every job, used by the service and by `cudamaster optimize|resume`: "
        "sqlite:///PATH or postgresql://...; default: the service's database when that is PostgreSQL, "
        "else SQLite at <agent.state_dir>/checkpoints.db",
    )

    def checkpoint_store(self) -> str:
        """The checkpoint URL the service and the CLI both use."""
        if self.checkpoint_url:
            return self.checkpoint_url
        if self.service.database_url.startswith(("postgresql", "postgres:")):
            return self.service.database_url
        return f"sqlite:///{self.agent.state_dir / 'checkpoints.db'}"


# -- names -----------------------------------------------------------------------------------------
def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The BaseModel class of a field's annotation (Optional[...] unwrapped), or None."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _is_mapping(annotation: Any) -> bool:
    return typing.get_origin(annotation) is dict


def setting_names(model: type[BaseModel] = Settings, prefix: str = PREFIX) -> list[str]:
    """Every variable name the tree accepts (a dict field is named once: its keys are free)."""
    names: list[str] = []
    for field, info in model.model_fields.items():
        name = f"{prefix}{field.upper()}"
        names.append(name)
        sub = _model_of(info.annotation)
        if sub is not None:
            names += setting_names(sub, name + DELIMITER)
    return names


def _is_setting(name: str) -> bool:
    """Whether a CUDAMASTER_ variable (upper case) names a setting: each __ step must name a field."""
    model: type[BaseModel] | None = Settings
    parts = name.removeprefix(PREFIX).split(DELIMITER)
    for i, part in enumerate(parts):
        if model is None:
            return False
        fields = {f.upper(): info for f, info in model.model_fields.items()}
        if part not in fields:
            return False
        annotation = fields[part].annotation
        if _is_mapping(annotation):
            return True  # CUDAMASTER_AGENT__PRICES__MY_MODEL__INPUT: the key is the user's
        model = _model_of(annotation)
        if model is None and i < len(parts) - 1:
            return False
    return True


def closest_setting(name: str) -> str | None:
    """The valid name a wrong one most likely meant: the same field in a section, else the nearest spelling."""
    valid = setting_names()
    tail = name.upper().removeprefix(PREFIX)
    same_field = [v for v in valid if v.endswith(DELIMITER + tail) or v == PREFIX + tail]
    if same_field:  # a field of two sections (max_source_bytes): name both
        shortest = min(map(len, same_field))
        return " or ".join(v for v in same_field if len(v) == shortest)
    matches = difflib.get_close_matches(name.upper(), valid, n=1, cutoff=0.6)
    return matches[0] if matches else None


def unknown_settings(environ: dict[str, str]) -> list[str]:
    names = [k.upper() for k in environ if k.upper().startswith(PREFIX)]
    return sorted(n for n in names if n not in NOT_SETTINGS and not _is_setting(n))


def _env_file_values(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    return {k: v or "" for k, v in dotenv_values(path).items()}


def check_names(environ: dict[str, str] | None = None, env_file: Path = Path(ENV_FILE)) -> None:
    """Refuse CUDAMASTER_* variables (in the environment or .env) that name no setting."""
    environ = dict(os.environ) if environ is None else environ
    for where, values in (("environment", environ), (str(env_file), _env_file_values(env_file))):
        unknown = unknown_settings(values)
        if unknown:
            name = unknown[0]
            hint = closest_setting(name)
            also = f" (and {len(unknown) - 1} more unknown: {', '.join(unknown[1:])})" if len(unknown) > 1 else ""
            did_you = f"; did you mean {hint}?" if hint else "; see settings/tree.py for the settings tree"
            raise SettingsInvalid(
                f"unknown setting {name} in the {where}{did_you}{also}"
                if where == "environment"
                else f"unknown setting {name} in {where}{did_you}{also}"
            )


def _one_line(exc: ValidationError) -> str:
    parts = []
    for e in exc.errors():
        loc = DELIMITER.join(str(p).upper() for p in e["loc"])
        parts.append(f"{PREFIX}{loc}: {e['msg']}")
    return "invalid setting " + "; ".join(parts)


# -- loading ---------------------------------------------------------------------------------------
def _environment_key() -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.upper().startswith(PREFIX)))


@cache
def _load(_key: tuple[tuple[str, str], ...]) -> Settings:
    check_names()
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingsInvalid(_one_line(exc)) from None


def load_settings() -> Settings:
    """The settings tree of this process: cached per set of CUDAMASTER_* variables (`reset_settings()` rereads .env)."""
    return _load(_environment_key())


def reset_settings() -> None:
    _load.cache_clear()


# -- one section, for the code that owns it -------------------------------------------------------
def get_harness_settings(**overrides: Any) -> HarnessSettings:
    """This process's harness settings: the `harness` section of the tree (cached there), with `overrides` over it (validated)."""
    harness = load_settings().harness
    return HarnessSettings.model_validate(harness.model_dump() | overrides) if overrides else harness


def get_profiling_settings(**overrides: Any) -> ProfilingSettings:
    """This process's profiling settings: the `profiling` section of the tree (cached there), with `overrides` over it (validated)."""
    profiling = load_settings().profiling
    return ProfilingSettings.model_validate(profiling.model_dump() | overrides) if overrides else profiling


def get_ray_settings() -> RaySettings:
    """This process's `ray` section (the tree, cached there)."""
    return load_settings().ray
