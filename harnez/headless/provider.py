"""An ad-hoc provider from the run flags (`--base-url`, `--wire`, `--api-key-env`): a model endpoint for
one run with no settings file. It is never saved, and the key is only ever read from the variable named."""

from __future__ import annotations

from dataclasses import dataclass, fields

from pydantic import ValidationError

from harnez.errors import UsageError
from harnez.settings import ProviderSettings, Settings, WireName, parse_model_ref

FLAGS = {"base_url": "--base-url", "wire": "--wire", "api_key_env": "--api-key-env"}
"""Each provider key and the flag that sets it."""


@dataclass(frozen=True, slots=True)
class AdHocProvider:
    """The provider keys given as flags; each replaces the same key of a provider settings define."""

    base_url: str | None = None
    wire: WireName | None = None
    api_key_env: str | None = None

    @property
    def given(self) -> bool:
        """Whether any of the flags was given."""
        return any(getattr(self, f.name) is not None for f in fields(self))

    def provider_of(self, model: str | None) -> str:
        """The provider the flags define: the one the model reference names (checked as a reference)."""
        if not model:
            given = " and ".join(flag for key, flag in FLAGS.items() if getattr(self, key) is not None)
            raise UsageError(
                f"{given} define the provider of this run's model, but no model is named: pass --model "
                "<provider>/<model> (the provider part names it, e.g. --model local/qwen3:8b)."
            )
        return parse_model_ref(model).provider

    def apply(self, settings: Settings, provider: str) -> Settings:
        """`settings` with `provider` defined, or its keys replaced, by the flags given."""
        if not self.given:
            return settings
        known = settings.providers.get(provider)
        keys = known.model_dump() if known is not None else {}
        keys.update(
            {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        )
        missing = [flag for key, flag in FLAGS.items() if key != "api_key_env" and key not in keys]
        if missing:
            raise UsageError(
                f"No settings file defines the provider {provider!r}, so this run's flags define it and need "
                f"{' and '.join(missing)} too (--wire is openai-chat, openai-responses or anthropic-messages)."
            )
        try:
            entry = ProviderSettings.model_validate(keys)
        except ValidationError as exc:
            raise UsageError(_flag_problem(exc)) from None
        if self.base_url is not None:
            entry = entry.given_by_flag(FLAGS["base_url"])
        return settings.model_copy(update={"providers": {**settings.providers, provider: entry}})


def _flag_problem(exc: ValidationError) -> str:
    """The first problem as one line naming its flag; the value is never repeated (it may be a key)."""
    error = exc.errors()[0]
    key = str(error["loc"][0]) if error["loc"] else ""
    message = str(error["msg"]).rstrip(".")
    return f"{FLAGS.get(key, key)}: {message}."
