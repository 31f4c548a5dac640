"""A process that runs one agent task through a real server, to be killed mid-way by a test.

python -m tests.agent.task_process DATABASE WORKSPACE SETTINGS_JSON PROMPT
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from harnez.agent.work import AgentWork
from harnez.server import Server
from harnez.settings import Settings


async def main(database: Path, workspace: Path, settings_json: str, prompt: str) -> None:
    settings = Settings.model_validate_json(settings_json)
    server = await Server.open(database, settings, AgentWork(settings, approve="deny"))
    draft = server.create_session(workspace)
    await server.submit(draft.id, prompt)
    print(draft.id, flush=True)
    await server.wait(draft.id)
    await server.close()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]))
