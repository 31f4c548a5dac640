"""One database per project wherever Harnez starts in it, listings across projects, and `--session-dir`
on every command that touches the database — as real `harnez` processes over the scripted model."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from harnez.testing.scripted_model import ScriptedModel
from tests.e2e.helpers import HARNEZ, SECRET, json_lines


class Machine:
    """A person's machine: global settings at the scripted model, any folder a project."""

    def __init__(self, home: Path, model: ScriptedModel) -> None:
        self.home, self.model = home, model
        settings = {
            "providers": {
                "chat": {
                    "wire": "openai-chat",
                    "base_url": model.base_url("openai-chat"),
                    "api_key_env": "HARNEZ_TEST_KEY",
                }
            },
            "model": "chat/scripted-model",
        }
        (home / "settings.json").write_text(json.dumps(settings))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("HARNEZ_")}
        self.env.update(HARNEZ_TEST_KEY=SECRET, HARNEZ_HOME=str(home), PYTHONUNBUFFERED="1")

    def harnez(self, where: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(HARNEZ), *args], cwd=where, env=self.env, capture_output=True, text=True, timeout=60
        )

    def ask(self, where: Path, prompt: str, answer: str, *args: str) -> str:
        """`harnez run PROMPT` in a folder; the id of the session it ran in."""
        self.model.add({"reply": [{"text": answer}], "usage": {"input": 10, "output": 3}})
        done = self.harnez(where, "run", "--json", *args, prompt)
        assert done.returncode == 0, done.stderr
        return json_lines(done.stdout)[0]["session"]

    @property
    def index(self) -> list[str]:
        data = json.loads((self.home / "state" / "databases.json").read_text())
        return [row["path"] for row in data["databases"]]


@pytest.fixture
def machine(isolated_home: Path, scripted_model: ScriptedModel) -> Machine:
    return Machine(isolated_home, scripted_model)


def _listed(done: subprocess.CompletedProcess[str]) -> list[dict]:
    assert done.returncode == 0, done.stderr
    return json_lines(done.stdout)


def test_every_folder_of_a_git_project_shares_the_root_database(machine: Machine, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    at_root = machine.ask(repo, "hello from the root", "Hi, root.")
    in_src = machine.ask(repo / "src" / "deep", "hello from deep down", "Hi, deep.")
    assert (repo / ".harnez" / "harnez.sqlite").exists()
    assert not (repo / "src" / ".harnez").exists() and not (repo / "src" / "deep" / ".harnez").exists()

    here = _listed(machine.harnez(repo / "src" / "deep", "sessions", "--json"))
    assert [s["id"] for s in here] == [in_src] and here[0]["workspace"] == str(repo / "src" / "deep")
    every = _listed(machine.harnez(repo / "src" / "deep", "sessions", "--all", "--json"))
    assert [s["id"] for s in every] == [in_src, at_root]
    shown = machine.harnez(repo / "src" / "deep", "sessions", "show", at_root[:8])
    assert shown.returncode == 0 and "Hi, root." in shown.stdout
    again = machine.ask(repo / "src" / "deep", "and again", "Again.", "--resume", "latest")
    assert again == in_src
    assert machine.index == [str(repo / ".harnez" / "harnez.sqlite")]


def test_sessions_all_lists_every_project_newest_first_and_finds_one_elsewhere(
    machine: Machine, tmp_path: Path
) -> None:
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    alpha.mkdir()
    beta.mkdir()
    first = machine.ask(alpha, "plan the zebra enclosure", "Zebras need room.")
    second = machine.ask(beta, "write the release notes", "Notes written.")
    third = machine.ask(alpha, "count the giraffes", "Three giraffes.")

    every = _listed(machine.harnez(alpha, "sessions", "--all", "--json"))
    assert [s["id"] for s in every] == [third, second, first]
    assert [Path(s["project"]).name for s in every] == ["alpha", "beta", "alpha"]
    text = machine.harnez(alpha, "sessions", "--all")
    assert text.returncode == 0 and "beta: " in text.stdout.splitlines()[1]
    found = _listed(machine.harnez(alpha, "sessions", "--all", "--search", "release", "--json"))
    assert [s["id"] for s in found] == [second] and "[release]" in found[0]["snippet"]
    assert [s["id"] for s in _listed(machine.harnez(alpha, "sessions", "--json"))] == [third, first]

    shown = machine.harnez(alpha, "sessions", "show", second[:10])
    assert shown.returncode == 0 and "Notes written." in shown.stdout and str(beta) in shown.stdout
    events = machine.harnez(alpha, "events", "--session", second)
    assert events.returncode == 0 and json_lines(events.stdout)[0]["session"] == second
    assert not (alpha / ".harnez" / "uhp-workspaces").exists()


def test_a_project_that_vanished_leaves_the_listing_and_the_index_quietly(
    machine: Machine, tmp_path: Path
) -> None:
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    alpha.mkdir()
    beta.mkdir()
    kept = machine.ask(alpha, "keep me", "Kept.")
    machine.ask(beta, "lose me", "Lost.")
    assert len(machine.index) == 2
    (beta / ".harnez" / "harnez.sqlite").unlink()
    listing = machine.harnez(tmp_path, "sessions", "--all", "--json")
    assert [s["id"] for s in _listed(listing)] == [kept] and listing.stderr == ""
    assert machine.index == [str(alpha / ".harnez" / "harnez.sqlite")]


def test_listing_across_projects_creates_no_database_where_it_runs(machine: Machine, tmp_path: Path) -> None:
    alpha, nowhere = tmp_path / "alpha", tmp_path / "nowhere"
    alpha.mkdir()
    nowhere.mkdir()
    only = machine.ask(alpha, "a chat", "An answer.")
    assert [s["id"] for s in _listed(machine.harnez(nowhere, "sessions", "--all", "--json"))] == [only]
    empty = machine.harnez(nowhere, "sessions")
    assert empty.returncode == 0 and "No sessions yet" in empty.stderr
    assert not (nowhere / ".harnez").exists()


def test_session_dir_selects_the_same_store_for_every_command(machine: Machine, tmp_path: Path) -> None:
    work, store = tmp_path / "work", tmp_path / "store"
    work.mkdir()
    session = machine.ask(work, "remember this", "Remembered.", "--session-dir", str(store))
    assert (store / "harnez.sqlite").exists() and not (work / ".harnez").exists()

    for args in (
        ("sessions", "--session-dir", str(store), "--json"),
        ("--session-dir", str(store), "sessions", "--json"),
    ):
        assert [s["id"] for s in _listed(machine.harnez(work, *args))] == [session], args
    shown = machine.harnez(work, "sessions", "show", session[:8], "--session-dir", str(store))
    assert shown.returncode == 0 and "Remembered." in shown.stdout
    events = machine.harnez(work, "events", "--session", session, "--session-dir", str(store))
    assert events.returncode == 0 and "finished" in [e["kind"] for e in json_lines(events.stdout)]

    other = tmp_path / "other-store"
    missing = machine.harnez(work, "sessions", "show", session[:8], "--session-dir", str(other))
    assert missing.returncode == 2 and f"no database at {other / 'harnez.sqlite'}" in missing.stderr
    assert not other.exists(), "a store named for reading is never created"
    (tmp_path / "empty-home").mkdir()
    imported = machine.harnez(
        work, "import", "--home", str(tmp_path / "empty-home"), "--session-dir", str(other)
    )
    assert imported.returncode == 0, imported.stderr
    assert (other / "harnez.sqlite").exists() and not (work / ".harnez").exists()
