"""Whether the process that ran a task is still alive: gone, running, or ended but not yet collected."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from harnez.store.tasks import pid_alive


def test_a_running_process_is_alive_and_a_collected_one_is_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert pid_alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not pid_alive(child.pid)
    assert pid_alive(os.getpid()) and not pid_alive(None) and not pid_alive(0)


def test_a_killed_process_its_parent_has_not_collected_counts_as_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "Z" not in open(f"/proc/{child.pid}/stat").read().rpartition(")")[2][:3]:
            time.sleep(0.01)
        # The child is a zombie now (this process has not waited for it): its pid still exists.
        os.kill(child.pid, 0)
        assert not pid_alive(child.pid)
    finally:
        child.kill()
        child.wait()
