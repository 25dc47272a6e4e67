"""A setting that names an environment variable instead of holding its value: `env:NAME`.

How a key reaches a user's own service class (`--service-arg api_key=env:ANTHROPIC_API_KEY`):
the run's settings are stored, so they hold the variable's name, and the value is read when a
session opens. The store keeps such a reference as it is (it is no secret); anything else under
a secret's name is redacted.
"""

from __future__ import annotations

import os

ENV_PREFIX = "env:"


def is_env_ref(value: object) -> bool:
    return isinstance(value, str) and value.startswith(ENV_PREFIX) and len(value) > len(ENV_PREFIX)


def env_name(value: str) -> str:
    """The variable an `env:NAME` reference names."""
    return value[len(ENV_PREFIX):]


def resolve(value: str) -> str:
    """The value of the variable a reference names ("" when unset); other values as they are."""
    return os.environ.get(env_name(value), "") if is_env_ref(value) else value
