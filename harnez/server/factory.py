"""The server every front end runs: the agent as its work, model titles through the wires.

Front ends (the app, `harnez run`/`chat`, `harnez serve`, the listing commands) never build the
agent themselves: they ask for a server here, with the approval policy they can offer (`ask` when a
person answers prompts, `deny` or `allow` when nobody can).
"""

from __future__ import annotations

from pathlib import Path

from harnez.agent.approvals import Policy
from harnez.agent.work import AgentWork
from harnez.server.projects import remember_database
from harnez.server.server import Server
from harnez.settings import Settings
from harnez.titles.model import make_model_titler


async def open_agent_server(
    database: Path, settings: Settings, *, approve: Policy = "ask", remember: bool = True
) -> Server:
    """A server whose tasks run the agent (approvals by `approve`) and whose titles may use a model.

    With `remember`, its database joins the index of projects (listings across projects); a
    failure to write the index is one of the server's `notices`. Settings applied later
    (`Server.update_settings`, after the first-run setup) reach the agent and the model titler too.
    """
    work = AgentWork(settings, approve=approve)
    server = await Server.open(database, settings, work)
    if remember:
        notice = remember_database(server.database)
        if notice:
            server.add_notice(notice)
    server.set_model_titler(make_model_titler(settings, server.session_model))

    def follow(changed: Settings) -> None:
        work.settings = changed
        server.set_model_titler(make_model_titler(changed, server.session_model))

    server.watch_settings(follow)
    return server
