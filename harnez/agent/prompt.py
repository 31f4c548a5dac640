"""The system prompt, rebuilt on every run: instructions, environment, tools, project files, skills.

The environment section is the one part probed from outside (git); `Environments` keeps a session's
for its later tasks."""

from __future__ import annotations

import asyncio
import datetime
import platform
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnez import paths

HARNESS_INSTRUCTION = """\
You are Harnez, a coding agent working in the user's workspace through tools.
- Read before you change: use read, list, glob and grep to learn the code, then edit or write.
- Prefer edit for changes to existing files; copy old_string exactly from a fresh read.
- Run commands with shell (tests, builds, git); keep them non-interactive.
- Paths are relative to the workspace. Touching anything outside it needs the user's approval.
- A denied or failed call comes back as an error result: adapt, do not repeat it blindly.
- When the task is done, answer briefly: what changed and how it was checked."""

INSTRUCTION_FILES = ("AGENTS.md", "HARNEZ.md")
FALLBACK_INSTRUCTION_FILES = ("CLAUDE.md",)
"""Read only when none of INSTRUCTION_FILES exists."""
FILE_LIMIT = 20_000
"""Characters of one project instruction file included; the rest is left out with a note."""
GIT_TIMEOUT = 2.0
SNAPSHOT = "(as of this session's start or resume; run `git status` for now)"
"""How the prompt marks the status as a snapshot (`Environments`)."""
STATUS_LINES = 20


@dataclass(frozen=True, slots=True)
class Skill:
    """A folder with a SKILL.md: offered by name and description, read on demand."""

    name: str
    description: str
    path: Path


async def build_system_prompt(
    workspace: Path,
    tools: Sequence[Mapping[str, Any]],
    *,
    env: Mapping[str, str] | None = None,
    today: datetime.date | None = None,
    skills: list[Skill] | None = None,
    environment: Awaitable[str] | None = None,
) -> str:
    """The full system text for one run (with `skills`, when the caller found them already, and
    `environment`, when it started the environment's probe already); nothing of it is stored as history."""
    if environment is None:
        environment = environment_section(workspace, today)
    sections = [HARNESS_INSTRUCTION, await environment, tools_section(tools)]
    project = project_section(workspace)
    if project:
        sections.append(project)
    offered = skills_section(find_skills(workspace, env) if skills is None else skills)
    if offered:
        sections.append(offered)
    return "\n\n".join(sections)


async def environment_section(workspace: Path, today: datetime.date | None = None) -> str:
    """Workspace, OS, date, and the git branch and status: one `git status` process per task."""
    lines = [
        "# Environment",
        f"Workspace: {workspace}",
        f"OS: {platform.system()} {platform.release()}",
        f"Date: {(today or datetime.date.today()).isoformat()}",
    ]
    out = await _git(workspace, "status", "--short", "--branch")
    if out is None:
        lines.append("Git: not a git repository")
        return "\n".join(lines)
    status = out.splitlines()
    header = status.pop(0) if status and status[0].startswith("## ") else "## "
    lines.append(f"Git branch: {branch_of(header) or '(detached HEAD)'}")
    if not status:
        lines.append(f"Git status: clean {SNAPSHOT}")
    else:
        more = len(status) - STATUS_LINES
        shown = status[:STATUS_LINES] + ([f"… {more} more"] if more > 0 else [])
        lines.append(f"Git status (short) {SNAPSHOT}:\n" + "\n".join(shown))
    return "\n".join(lines)


class Environments:
    """Each session's environment section, probed at its first task of the day in this process and
    given again to its later tasks.

    The system prompt then stays the same from one task to the next, so a provider's prompt cache
    keeps serving the conversation's prefix (a `git status` line that changed with every edit made
    the whole prefix new), and a later prompt spawns no `git` before its request. The status is
    the one seen when the session (re)started, as the prompt says; the model runs `git status`
    for a current one. A new day takes a new snapshot (the date is in it).
    """

    KEPT = 256
    """Sessions whose snapshot is kept; the least recently used one goes first."""

    def __init__(
        self,
        probe: Callable[[Path, datetime.date], Awaitable[str]] | None = None,
        today: Callable[[], datetime.date] = datetime.date.today,
    ) -> None:
        self._probe = probe or environment_section
        self._today = today
        self._kept: dict[str, tuple[datetime.date, str]] = {}

    def section(self, session_id: str, workspace: Path) -> asyncio.Future[str]:
        """The session's environment section: the kept one, or a probe started now (kept once it
        succeeds; a cancelled or failed probe is tried again by the next task)."""
        day = self._today()
        kept = self._kept.pop(session_id, None)
        if kept is not None and kept[0] == day:
            self._kept[session_id] = kept
            ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            ready.set_result(kept[1])
            return ready
        probing = asyncio.ensure_future(self._probe(workspace, day))
        probing.add_done_callback(lambda done: self._keep(session_id, day, done))
        return probing

    def _keep(self, session_id: str, day: datetime.date, done: asyncio.Future[str]) -> None:
        if done.cancelled() or done.exception() is not None:
            return
        self._kept[session_id] = (day, done.result())
        while len(self._kept) > self.KEPT:
            del self._kept[next(iter(self._kept))]


def branch_of(header: str) -> str:
    """The branch named by the first line of `git status --branch` ("" for a detached HEAD).

    `## main...origin/main [ahead 1]`, `## main`, `## No commits yet on main`, `## HEAD (no branch)`.
    """
    head = header.removeprefix("## ")
    for unborn in ("No commits yet on ", "Initial commit on "):
        if head.startswith(unborn):
            return head.removeprefix(unborn)
    if head.startswith("HEAD (no branch)"):
        return ""
    return head.split("...", 1)[0].split(" [", 1)[0]


async def _git(workspace: Path, *args: str) -> str | None:
    """Output of a quick git command, or None when git is missing, fails or is too slow."""
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=workspace,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:
        return None  # no git on this machine: the prompt says "not a git repository"
    try:
        out, _ = await asyncio.wait_for(process.communicate(), GIT_TIMEOUT)
    except TimeoutError:
        process.kill()
        await process.wait()
        return None
    return out.decode("utf-8", "replace") if process.returncode == 0 else None


def tools_section(tools: Sequence[Mapping[str, Any]]) -> str:
    lines = ["# Tools", "You can call these tools:"]
    lines += [f"- {tool['name']}: {tool['description']}" for tool in tools]
    return "\n".join(lines)


def project_section(workspace: Path) -> str | None:
    """AGENTS.md and HARNEZ.md of the workspace; CLAUDE.md only when neither exists."""
    found = [workspace / name for name in INSTRUCTION_FILES if (workspace / name).is_file()]
    if not found:
        found = [workspace / name for name in FALLBACK_INSTRUCTION_FILES if (workspace / name).is_file()]
    if not found:
        return None
    parts = ["# Project instructions"]
    for path in found:
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text) > FILE_LIMIT:
            text = text[:FILE_LIMIT] + f"\n[… {path.name} goes on; read it with the read tool]"
        parts.append(f"## {path.name}\n{text.strip()}")
    return "\n\n".join(parts)


def find_skills(
    workspace: Path, env: Mapping[str, str] | None = None, harness: Path | None = None
) -> list[Skill]:
    """The task's harness skills (`harness`: the folder its UHP harness's skills were written to, when
    it has one), then the workspace's, then global ones, each not shadowed by an earlier skill of the
    same name. A task without a harness never sees a harness's skills, whatever ran before it."""
    skills: dict[str, Skill] = {}
    roots = (harness, paths.project_skills_dir(workspace), paths.global_skills_dir(env))
    for root in roots:
        if root is None or not root.is_dir():
            continue
        for folder in sorted(root.iterdir()):
            manifest = folder / "SKILL.md"
            if manifest.is_file():
                skill = read_skill(manifest)
                skills.setdefault(skill.name, skill)
    return list(skills.values())


def read_skill(manifest: Path) -> Skill:
    """Name and description from a SKILL.md's frontmatter (the folder name when unnamed)."""
    fields = frontmatter(manifest.read_text(encoding="utf-8", errors="replace"))
    name = fields.get("name") or manifest.parent.name
    return Skill(name, fields.get("description") or "(no description given)", manifest)


def frontmatter(text: str) -> dict[str, str]:
    """`key: value` lines between a leading `---` and the next `---`."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            break
        key, colon, value = line.partition(":")
        if colon and key.strip():
            fields[key.strip()] = value.strip().strip("\"'")
    return fields


def skills_section(skills: list[Skill]) -> str | None:
    if not skills:
        return None
    lines = ["# Skills", "Read a skill's SKILL.md with the read tool when the task calls for it:"]
    lines += [f"- {skill.name}: {skill.description} ({skill.path})" for skill in skills]
    return "\n".join(lines)
