"""Who is asking: the principals `harnez serve` knows (a name per bearer token), and the request's.

A token is never given on the command line (any local user can read a process's arguments): the
options name environment variables that hold them. The principal of a request is its name, a small
value on the request's state (`principal(request)`): what objects are owned by and limits key on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from starlette.requests import Request

from harnez.errors import UsageError
from harnez.server.uhp import DEFAULT_PRINCIPAL

PRINCIPAL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A principal's name: it is stored as the owner of what the principal makes, so a plain word."""


def principal(request: Request) -> str:
    """The name of the principal the request authenticated as (`default` on a server without tokens)."""
    return request.state.principal


def read_principals(token_env: str, specs: Sequence[str], environ: Mapping[str, str]) -> dict[str, str]:
    """Name → token of every principal: `default` from `token_env` when that variable is set, and one
    per `--principal NAME=VARIABLE`. Empty: the server runs without tokens.

    Bad configuration is a UsageError saying what to do: a spec that is not NAME=VARIABLE, a name that
    is not a plain word, a variable that is not set, a name or a token given twice.
    """
    principals: dict[str, str] = {}
    default = _token_in(token_env, environ)
    if default:
        principals[DEFAULT_PRINCIPAL] = default
    for spec in specs:
        name, equals, variable = spec.partition("=")
        if not equals or not variable:
            raise UsageError(
                f"--principal {spec!r} names no variable; write --principal NAME=VARIABLE, the token "
                "exported in VARIABLE (never on the command line)."
            )
        if not PRINCIPAL_NAME.match(name):
            raise UsageError(
                f"--principal {spec!r}: the name {name!r} is not a plain word; use letters, digits, "
                "'.', '_' or '-' (at most 64, starting with a letter or digit)."
            )
        token = _token_in(variable, environ)
        if not token:
            raise UsageError(
                f"--principal {spec!r}: the variable {variable} is not set; export {name}'s token in "
                "it, or drop the option."
            )
        if name in principals:
            given = f"--token-env {token_env}" if name == DEFAULT_PRINCIPAL else "another --principal"
            raise UsageError(
                f"--principal {spec!r}: the principal {name!r} is already given by {given}; give "
                "each principal once."
            )
        if token in principals.values():
            raise UsageError(
                f"--principal {spec!r}: its token is another principal's too, so a request could not "
                "tell them apart; give each principal a token of its own."
            )
        principals[name] = token
    return principals


def _token_in(variable: str, environ: Mapping[str, str]) -> str | None:
    """The token a variable holds, without the white space around it (None when unset or empty).

    A token kept with white space around it (a CI secret pasted with its line break, a carriage return
    from a file written on Windows) was compared whole, and no client sends that: every request was
    401, and nothing said why. White space only, or a character no header carries, is refused rather
    than read as "no token" (which would serve openly on loopback).
    """
    value = environ.get(variable)
    if not value:
        return None
    token = value.strip()
    if not token:
        raise UsageError(
            f"{variable} holds only white space, which is no token: export the token in it, or unset it "
            "to serve without one (on loopback only)."
        )
    if not (token.isascii() and token.isprintable()):
        raise UsageError(
            f"The token in {variable} holds a control character or a letter outside ASCII, which no "
            f"Authorization header carries: export the token itself in {variable}."
        )
    return token
