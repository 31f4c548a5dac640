"""The in-process TUI benchmarks still reach what they wait for, on small data: a benchmark whose
condition no longer holds hangs until its limit, and its figure silently stops being measured
(`bench_tui_resume.py` waited for the hidden spare answer block's Markdown for a day, while the
resume it measures had regressed past its target). Figures are not checked here, only that a run ends."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harnez.tui.widgets.transcript import Transcript

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_import_floor as import_floor  # scripts of benchmarks/, put on the path above
import bench_tui_answer as answer
import bench_tui_lib as tui
import bench_tui_long_session as long_session
import bench_tui_resume as resume
import generate_data
from textual.screen import Screen


async def test_the_resume_benchmark_sees_a_stored_session_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(generate_data, "DATA", tmp_path)
    monkeypatch.setattr(Transcript, "load_batch", Transcript.load_batch)  # restored after the wrap
    source, (small, big) = tui.sessions_db((10, 400))
    tui.note_loaded_batches()
    home = tui.make_home(source)
    try:
        for session in (small, big):
            seconds = await resume.frame_time(source, session, home.workspace)
            assert 0 < seconds < 60
    finally:
        tui.remove_home(home)


async def test_the_long_session_benchmark_runs_its_prompts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Screen, "_refresh_layout", Screen._refresh_layout)  # restored after the wrap
    model, url = answer.start_model(tmp_path)
    home = tui.Home(tmp_path, tmp_path / "harnez.sqlite")
    home.home.mkdir()
    home.workspace.mkdir()
    answer.point_at(home, url)
    for name, value in home.env().items():
        monkeypatch.setenv(name, value)
    try:
        results = await long_session.child(url, tmp_path, 3)
    finally:
        model.kill()
        model.wait()
    assert len(results) == 3
    assert all(result["painted"] > 0 for result in results)


def test_the_import_floor_benchmark_imports_every_group() -> None:
    """Its modules still exist under those names: a renamed one would fail the run, not shrink the floor."""
    home = tui.make_home()
    try:
        figures = import_floor.floor(home)
    finally:
        tui.remove_home(home)
    assert set(figures) == set(import_floor.GROUPS)
    assert all(seconds > 0 for seconds in figures.values())
