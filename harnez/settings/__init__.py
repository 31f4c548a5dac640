"""Typed settings: global and project `settings.json`, deep-merged per key, with HARNEZ_* overrides.

The package's parts, each re-exported here (`from harnez.settings import Settings`):

    model.py        the typed sections and `Settings` (pydantic models)
    references.py   model references `<provider>/<model>[:<thinking>]` and title sources
    loading.py      `load_settings` and `save_global_settings`: the files, the merge with the
                    provenance of every key, the HARNEZ_* variables, atomic writes
    messages.py     how a problem is worded: the file or variable, the key path, what is wrong
"""

from harnez.settings.loading import MAX_NESTING, load_settings, reload_settings, save_global_settings
from harnez.settings.messages import TITLE_SOURCE_FORMS
from harnez.settings.model import (
    BASE_URL_IN_SETTINGS,
    ENV_NESTED_DELIMITER,
    ENV_PREFIX,
    HOOK_NAMES,
    MAX_PRICE,
    MAX_TOKENS,
    Decision,
    HookCommand,
    HookName,
    HookSettings,
    ModelInfo,
    PathRules,
    PermissionSettings,
    ProviderSettings,
    Rate,
    RetrySettings,
    SessionSettings,
    Settings,
    ShellRules,
    TitleSettings,
    WireName,
    program_name_problem,
)
from harnez.settings.references import (
    KEYWORDS_SOURCE_TEXT,
    KEYWORDS_TITLE_SOURCE,
    THINKING_LEVELS,
    ModelRef,
    ThinkingLevel,
    TitleSource,
    parse_model_ref,
    parse_title_source,
)

__all__ = [
    "BASE_URL_IN_SETTINGS",
    "ENV_NESTED_DELIMITER",
    "ENV_PREFIX",
    "HOOK_NAMES",
    "KEYWORDS_SOURCE_TEXT",
    "KEYWORDS_TITLE_SOURCE",
    "MAX_NESTING",
    "MAX_PRICE",
    "MAX_TOKENS",
    "THINKING_LEVELS",
    "TITLE_SOURCE_FORMS",
    "Decision",
    "HookCommand",
    "HookName",
    "HookSettings",
    "ModelInfo",
    "ModelRef",
    "PathRules",
    "PermissionSettings",
    "ProviderSettings",
    "Rate",
    "RetrySettings",
    "SessionSettings",
    "Settings",
    "ShellRules",
    "ThinkingLevel",
    "TitleSettings",
    "TitleSource",
    "WireName",
    "load_settings",
    "parse_model_ref",
    "parse_title_source",
    "program_name_problem",
    "reload_settings",
    "save_global_settings",
]
