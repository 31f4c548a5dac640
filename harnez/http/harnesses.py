"""Discovery, harnesses (create, read, update, delete, skill files) and models with their availability."""

from __future__ import annotations

import base64
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from harnez import __version__
from harnez.http import DEFAULT_VERSION, VERSIONS
from harnez.http.payloads import json_body
from harnez.http.principals import principal
from harnez.server.harnesses import BASES, Harness, SkillFile
from harnez.server.uhp import MAX_UPLOAD_BYTES, HarnessHost

CAPABILITIES = {
    "streaming": True,
    "sessions": True,
    "cancellation": True,
    "files_input": True,
    "files_output": True,
    "session_listing": True,
    "harness_management": True,
    "session_sharing": True,
    "idempotency": True,
}


def _host(request: Request) -> HarnessHost:
    return request.app.state.host


async def discovery(request: Request) -> Response:
    """What this server is; served without a token and the same for everyone."""
    return JSONResponse(
        {
            "object": "uhp.discovery",
            "protocol": "uhp",
            "versions": list(VERSIONS),
            "default_version": DEFAULT_VERSION,
            "conformance_class": "full",
            "capabilities": CAPABILITIES,
            "implementation": {
                "name": "Harnez",
                "version": __version__,
                "max_upload_bytes": MAX_UPLOAD_BYTES,
            },
        }
    )


def skill_file_json(file: SkillFile) -> dict[str, Any]:
    """A skill file as the client sent it: `content` for text, `content_b64` for binary."""
    if file.binary:
        return {"path": file.path, "content_b64": base64.b64encode(file.content).decode()}
    return {"path": file.path, "content": file.content.decode("utf-8", "replace")}


def harness_json(harness: Harness) -> dict[str, Any]:
    """The Harness object (camelCase, as the schema has it)."""
    data = {
        "id": harness.id,
        "object": "harness",
        "name": harness.name,
        "base": harness.base,
        "baseLabel": BASES.get(harness.base, harness.base),
        "systemPrompt": harness.system_prompt,
        "mcpServers": list(harness.mcp_servers),
        "disabledTools": list(harness.disabled_tools),
        "skills": [
            {"name": s.name, "enabled": s.enabled, "files": [skill_file_json(f) for f in s.files]}
            for s in harness.skills
        ],
        "maxStep": harness.max_step,
        "timeoutSeconds": harness.timeout_seconds,
        "createdAt": harness.created_at,
    }
    if harness.default_model:
        data["defaultModel"] = harness.default_model
    if harness.builtin:
        data["harnez_default"] = True
    if harness.repairs:  # a configuration stored by an older version, repaired as it was read
        data["harnez_warnings"] = [{"code": "stored-config-repaired", "message": m} for m in harness.repairs]
    return data


async def list_harnesses(request: Request) -> Response:
    host = _host(request)
    await host.follow_settings()
    return JSONResponse(
        {
            "object": "list",
            "harnesses": [harness_json(h) for h in await host.harnesses.every(principal(request))],
        }
    )


async def create_harness(request: Request) -> Response:
    harness = await _host(request).harnesses.create(await json_body(request), principal(request))
    return JSONResponse(harness_json(harness))


async def harnesses(request: Request) -> Response:
    """One route per path, so that a 405 names every method the path allows."""
    return await (create_harness if request.method == "POST" else list_harnesses)(request)


async def harness(request: Request) -> Response:
    """GET one, PUT (replace the fields given), DELETE (its sessions and responses stay)."""
    host = _host(request)
    await host.follow_settings()
    catalog, harness_id, owner = host.harnesses, request.path_params["harness_id"], principal(request)
    if request.method == "PUT":
        return JSONResponse(harness_json(await catalog.update(harness_id, await json_body(request), owner)))
    if request.method == "DELETE":
        await catalog.delete(harness_id, owner)
        return JSONResponse({"id": harness_id, "object": "harness", "deleted": True})
    return JSONResponse(harness_json(await catalog.get(harness_id, owner=owner)))


async def skill_files(request: Request) -> Response:
    files = await _host(request).harnesses.skill_files(
        request.path_params["harness_id"], request.path_params["skill"], principal(request)
    )
    return JSONResponse(
        {
            "object": "list",
            "skill": request.path_params["skill"],
            "files": [skill_file_json(f) for f in files],
        }
    )


async def _model_rows(host: HarnessHost, default: str | None) -> list[dict[str, Any]]:
    choices = await host.server.model_choices()
    if default and default not in choices:
        choices.insert(0, default)
    return [
        {
            "id": ref,
            "label": ref,
            "backend": ref.partition("/")[0],
            "available": host.harnesses.availability(ref) is None,
            "default": ref == default,
        }
        for ref in choices
    ]


async def models(request: Request) -> Response:
    """Every model on offer, by provider (a `backend`), each with computed availability."""
    host = _host(request)
    await host.follow_settings()
    default = host.harnesses.settings.model
    backends: dict[str, dict[str, Any]] = {}
    for row in await _model_rows(host, default):
        backend = backends.setdefault(row["backend"], {"default": "", "models": []})
        backend["models"].append(row)
    for name, backend in backends.items():
        chosen = default if default and default.startswith(name + "/") else backend["models"][0]["id"]
        backend["default"] = chosen
    return JSONResponse({"object": "list", "backends": backends})


async def harness_models(request: Request) -> Response:
    """The models a harness can run: its default (also the authorized fallback) and the others on offer."""
    host = _host(request)
    await host.follow_settings()
    found = await host.harnesses.get(request.path_params["harness_id"], owner=principal(request))
    default = host.harnesses.default_model(found)
    data: dict[str, Any] = {"harness_id": found.id, "models": await _model_rows(host, default)}
    if default:
        data.update(backend=default.partition("/")[0], default=default, fallback=default)
    return JSONResponse(data)


routes = [
    Route("/v1/uhp", discovery, methods=["GET"]),
    Route("/v1/harnesses", harnesses, methods=["GET", "POST"]),
    Route("/v1/harnesses/{harness_id}", harness, methods=["GET", "PUT", "DELETE"]),
    Route("/v1/harnesses/{harness_id}/models", harness_models, methods=["GET"]),
    Route("/v1/harnesses/{harness_id}/skills/{skill}/files", skill_files, methods=["GET"]),
    Route("/v1/models", models, methods=["GET"]),
]
