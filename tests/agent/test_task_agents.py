"""A task's agents: an ordinary session's missing link is read once, a child session always gets its own."""

from __future__ import annotations

from pathlib import Path

from harnez.agents.catalogues import AgentCatalogues
from harnez.agents.offer import TaskAgents
from harnez.settings import Settings
from harnez.store import Store
from harnez.store.delegations import DelegationLink, DelegationTable
from tests.agent.agents_support import reviewer


class CountedLinks:
    """The real store's delegations table, counting the reads of a session's link."""

    def __init__(self, table: DelegationTable) -> None:
        self.table = table
        self.reads = 0

    async def of_child(self, child_num: int) -> DelegationLink | None:
        self.reads += 1
        return await self.table.of_child(child_num)


class LinkReads:
    def __init__(self, store: Store) -> None:
        self.delegations = CountedLinks(store.delegations)


async def test_an_ordinary_session_is_read_once_and_a_child_session_every_time(
    db_path: Path, workspace: Path, tmp_path: Path
) -> None:
    reviewer(workspace)
    store = await Store.open(db_path)
    try:
        parent = await store.sessions.insert("parent", str(workspace), None)
        child = await store.delegations.open_child(
            parent, 1, "call-1", "reviewer", ["read"], child_id="child", model=None, title="reviewer: look"
        )
        links, unlinked = LinkReads(store), set[str]()
        catalogues, settings = AgentCatalogues({"HARNEZ_HOME": str(tmp_path / "home")}), Settings()
        for _ in range(2):
            agents = await TaskAgents.load(links, parent, settings, catalogues, unlinked)  # type: ignore[arg-type]
            assert agents.link is None and agents.catalogue.names == ["reviewer"]
        assert links.delegations.reads == 1 and unlinked == {"parent"}
        for _ in range(2):
            agents = await TaskAgents.load(links, child, settings, catalogues, unlinked)  # type: ignore[arg-type]
            assert agents.link is not None and agents.link.agent == "reviewer"
            assert agents.agent is not None and agents.grants_owner == "parent"
        assert links.delegations.reads == 3 and unlinked == {"parent"}
    finally:
        await store.close()
