"""cudamaster's settings: the one tree (`tree`) and its sections (`service`, `agent`, `harness`, `profiling`, `ray`).

The bottom layer: it imports none of the project's packages, and every layer imports it (the layers are checked by
import-linter, pyproject's [tool.importlinter]). Settings are read at the edges (the CLI, the service's start-up, a
Ray worker) through the accessors here and passed down; deeper code takes a section as an argument.
"""

from .agent import ROLES, AgentSettings, Price, ResolvedRole, RetrySettings, RoleSettings, RolesSettings, TargetGpu
from .harness import HarnessSettings
from .profiling import ProfilingSettings
from .ray import RaySettings
from .service import ServiceSettings
from .tree import (
    Settings,
    SettingsInvalid,
    get_harness_settings,
    get_profiling_settings,
    get_ray_settings,
    load_settings,
    reset_settings,
)

__all__ = [
    "ROLES",
    "AgentSettings",
    "HarnessSettings",
    "Price",
    "ProfilingSettings",
    "RaySettings",
    "ResolvedRole",
    "RetrySettings",
    "RoleSettings",
    "RolesSettings",
    "ServiceSettings",
    "Settings",
    "SettingsInvalid",
    "TargetGpu",
    "get_harness_settings",
    "get_profiling_settings",
    "get_ray_settings",
    "load_settings",
    "reset_settings",
]
