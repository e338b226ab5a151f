"""How many threads training runs on, set once for torch, numba and BLAS together.

``threads: auto`` (every shipped config) takes the cores this process may use
(``os.sched_getaffinity``), at most ``AUTO_CAP``, and fewer where other work already keeps
those cores busy: oversubscribed, torch's intra-op threads spin while they wait for a core, and
two threads on one free core train several times slower than one. How busy the cores are is
read over ``SAMPLE_SECONDS`` from ``/proc/stat`` (elsewhere, from the load average).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import torch

from bastra_env.vector import available_cores

AUTO_CAP = 4
"""The most threads ``auto`` takes. The network is small: two threads train 1.32 times as fast
as one on the project's 2-core machine (``benchmarks/train_speed.py``, 2p: 25,429 against 19,213
env steps/s), so about half the work runs in parallel; by Amdahl's law four threads would give
about 1.57 times and eight 1.74: past four, cores serve another run better (not measured on
more than two cores)."""
SAMPLE_SECONDS = 0.25
"""How long ``auto`` watches the cores before it chooses."""


@dataclass(frozen=True)
class ThreadChoice:
    """What ``threads`` resolved to: the count, the cores it may use and how many were busy;
    ``note`` is the line training prints when it took fewer than it would on an idle machine."""

    threads: int
    cores: int
    busy: int
    note: str | None = None


def busy_cores(seconds: float = SAMPLE_SECONDS) -> int:
    """How many cores' worth of other work keeps this process's cores busy, watched for
    ``seconds`` (the busy shares of those cores added up, rounded)."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    before = _cpu_times(cores)
    if before is None:
        try:
            load = os.getloadavg()[0]
        except OSError:
            return 0
        return min(len(cores) or available_cores(), int(load + 0.5))
    time.sleep(seconds)
    after = _cpu_times(cores)
    if after is None:
        return 0
    used = 0.0
    for (idle0, total0), (idle1, total1) in zip(before, after, strict=True):
        if total1 > total0:
            used += 1 - (idle1 - idle0) / (total1 - total0)
    return int(used + 0.5)


def _cpu_times(cores: list[int]) -> list[tuple[int, int]] | None:
    """(idle, total) jiffies of each of ``cores`` from ``/proc/stat``; None where unreadable."""
    try:
        with open("/proc/stat") as stat:
            lines = stat.read().splitlines()
    except OSError:
        return None
    times: dict[int, tuple[int, int]] = {}
    for line in lines:
        name, *fields = line.split()
        if name.startswith("cpu") and name[3:].isdigit() and len(fields) >= 5:
            values = [int(v) for v in fields[:8]]
            times[int(name[3:])] = (values[3] + values[4], sum(values))  # idle + iowait
    if not cores or any(c not in times for c in cores):
        return None
    return [times[c] for c in cores]


def choose_threads(setting: int | str, busy: int | None = None) -> ThreadChoice:
    """``threads`` resolved: a count is taken as given; ``"auto"`` is the cores this process may
    use, at most ``AUTO_CAP``, less those other work keeps busy (``busy``: measured here when
    None), and at least 1."""
    cores = available_cores()
    if setting != "auto":
        return ThreadChoice(int(setting), cores, 0)
    wanted = min(cores, AUTO_CAP)
    taken = busy_cores() if busy is None else busy
    threads = max(1, min(wanted, cores - taken))
    note = None
    if threads < wanted:
        note = (
            f"threads: auto uses {threads} of the {cores} cores this process may use: other "
            f"work keeps {taken} busy (--threads N sets a count)"
        )
    return ThreadChoice(threads, cores, taken, note)


def apply_threads(threads: int) -> None:
    """Run torch's intra-op pool, numba's parallel kernels and BLAS on ``threads`` threads."""
    torch.set_num_threads(threads)
    try:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    except (ImportError, ValueError):
        pass
    from threadpoolctl import threadpool_limits

    threadpool_limits(threads)


__all__ = [
    "AUTO_CAP",
    "ThreadChoice",
    "apply_threads",
    "busy_cores",
    "choose_threads",
]
