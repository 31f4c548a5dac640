"""What front ends may ask about models and providers, without reaching into the agent or the wires.

The first-run setup finds what it can offer (hosted providers whose key variable is set, local
OpenAI-compatible servers answering on the usual ports); the `/model` picker asks which thinking
levels a model takes; headless commands check a model before opening anything.
"""

from __future__ import annotations

from harnez.settings import Settings
from harnez.wires.catalogue import known_spec
from harnez.wires.discovery import (
    DEFAULT_PORTS,
    HOSTED_PROVIDERS,
    HostedProvider,
    LocalServer,
    detect_keys,
    probe_local_servers,
)

__all__ = [
    "DEFAULT_PORTS",
    "HOSTED_PROVIDERS",
    "HostedProvider",
    "LocalServer",
    "check_model",
    "detect_keys",
    "probe_local_servers",
    "thinking_levels",
]


def check_model(settings: Settings, model: str | None) -> None:
    """Raise ModelConfigError (or SettingsError) unless `model` — or the settings' default when None —
    names a configured provider whose key variable is set."""
    from harnez.agent.work import AgentWork  # the agent's own check; imported only when asked

    AgentWork(settings).resolve(model)


def thinking_levels(model_id: str) -> tuple[str, ...]:
    """The thinking levels above `off` the catalogue knows for a model id (empty: none, or unknown)."""
    spec = known_spec(model_id)
    return spec.thinking_levels if spec is not None else ()
