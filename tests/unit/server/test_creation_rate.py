"""`CreationRate`: tasks each principal may create within a sliding minute (UHP Security §5)."""

from __future__ import annotations

import pytest

from harnez.server.rates import CreationRate, RateExceeded


class Clock:
    """A clock the test moves: the window is about time, and waiting a minute is no test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_principal_past_its_minute_waits_until_its_oldest_task_leaves_the_window() -> None:
    clock = Clock()
    rate = CreationRate(3, clock)
    for at in (1000.0, 1010.0, 1030.0):
        clock.now = at
        rate.take("alice")
    clock.now = 1035.0
    with pytest.raises(RateExceeded) as refused:
        rate.take("alice")
    assert (refused.value.limit, refused.value.retry_after) == (3, 25)  # 1000 + 60 - 1035
    rate.take("bob")  # another principal has a minute of its own
    clock.now = 1060.0  # the first task left the window
    rate.take("alice")
    with pytest.raises(RateExceeded):
        rate.take("alice")


def test_a_place_given_back_is_free_again_and_no_limit_counts_nothing() -> None:
    clock = Clock()
    rate = CreationRate(1, clock)
    stamp = rate.take("alice")
    rate.give_back("alice", stamp)  # the task did not start
    rate.take("alice")
    with pytest.raises(RateExceeded) as refused:
        rate.take("alice")
    assert refused.value.retry_after == 60
    unlimited = CreationRate(0, clock)
    assert all(unlimited.take("alice") is None for _ in range(10_000))
