"""Searched self-play on Ray actors, one machine's cores or a cluster: the endgame learning's
data (``agents.training.endgame``, ``endgame.ray_workers: N``).

    runner = RaySelfPlay(workers=2)               # ray.init() here, or RAY_ADDRESS's cluster
    shards = runner.run(play, shared, seeds)      # play(shared, seed) for every seed, on actors
    runner.close()

``play`` is a module-level function (Ray sends it by name), ``shared`` what every shard needs
(the network's weights, the config), sent once per call (``ray.put``); the results come back in
the order of ``seeds``. A shard is a fixed seed, so the data does not depend on how many actors
play it, nor on which: an actor that dies (its process killed, its node lost) has its shard
played again by a fresh actor, and every shard's result is taken exactly once, so the call ends
with the data it would have had, none lost and none twice.

Ray is optional (``pip install -e ".[ray]"``); ``init_ray`` (``agents.integrations.ray_cluster``)
connects to ``RAY_ADDRESS`` with the cluster's token authentication and ships the project as the
RLlib integration does.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Sequence
from typing import Any

from agents.integrations.ray_cluster import init_ray

Shard = Callable[[Any, int], dict[str, Any]]
"""What an actor plays: ``play(shared, seed) -> result``, a module-level function."""

RAY_MISSING = (
    'self-play on Ray actors needs Ray: pip install -e ".[ray]" (or the "rllib" extra), or set '
    "endgame.ray_workers: 0 to play the shards in this process"
)


def require_ray() -> Any:
    """The ``ray`` module, or ``ImportError`` saying what to install."""
    try:
        import ray
    except ImportError:
        raise ImportError(RAY_MISSING) from None
    return ray


class SelfPlayActor:
    """One Ray actor: plays shards on one CPU thread (torch and numba set to one)."""

    def __init__(self) -> None:
        import torch

        torch.set_num_threads(1)
        try:
            import numba

            numba.set_num_threads(1)
        except (ImportError, ValueError):
            pass

    def play(self, play: Shard, shared: Any, seed: int) -> dict[str, Any]:
        """``play(shared, seed)``'s result, with ``worker_pid``: the process that played it."""
        return {**play(shared, seed), "worker_pid": os.getpid()}

    def where(self) -> dict[str, Any]:
        """This actor's process id and Ray node id (tests check placement and kill it)."""
        import ray

        return {"pid": os.getpid(), "node_id": ray.get_runtime_context().get_node_id()}


class RaySelfPlay:
    """``workers`` self-play actors (one CPU each; module docs). ``runtime_env``: for a cluster
    (default: ``cluster_runtime_env()`` where ``RAY_ADDRESS`` is set). ``resources``: custom Ray
    resources each actor needs (to place them on chosen nodes)."""

    def __init__(
        self,
        workers: int,
        runtime_env: dict[str, Any] | None = None,
        resources: dict[str, float] | None = None,
    ) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive int, got {workers!r}")
        ray = require_ray()
        self.ray = ray
        self.started = init_ray(runtime_env)
        options: dict[str, Any] = {"num_cpus": 1, "max_restarts": 0}
        if resources:
            options["resources"] = dict(resources)
        self._actor_class = ray.remote(**options)(SelfPlayActor)
        self.actors = [self._actor_class.remote() for _ in range(workers)]
        self.replaced = 0
        """Actors that died and were replaced (their shards played again elsewhere)."""

    def run(
        self,
        play: Shard,
        shared: Any,
        seeds: Sequence[int],
        on_result: Callable[[int, dict[str, Any]], None] | None = None,
    ) -> list[dict[str, Any]]:
        """``play(shared, seed)`` for every seed, on the actors (each takes the next shard when
        it finishes one); the results in the order of ``seeds``. ``on_result(i, result)`` is
        called as shard ``i`` comes back (a progress bar)."""
        ray = self.ray
        died = (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError)
        shared = ray.put(shared)
        queue = collections.deque(range(len(seeds)))
        results: list[dict[str, Any] | None] = [None] * len(seeds)
        pending: dict[Any, tuple[int, Any]] = {}
        idle = list(self.actors)
        while queue or pending:
            while queue and idle:
                actor, index = idle.pop(0), queue.popleft()
                pending[actor.play.remote(play, shared, int(seeds[index]))] = (index, actor)
            (ready,), _ = ray.wait(list(pending), num_returns=1)
            index, actor = pending.pop(ready)
            try:
                result = ray.get(ready)
            except died:  # the shard again, first, on a fresh actor
                queue.appendleft(index)
                self.actors.remove(actor)
                fresh = self._actor_class.remote()
                self.actors.append(fresh)
                idle.append(fresh)
                self.replaced += 1
                continue
            results[index] = result
            idle.append(actor)
            if on_result is not None:
                on_result(index, result)
        return [r for r in results if r is not None]

    def where(self) -> list[dict[str, Any]]:
        """Each actor's process id and node id."""
        return list(self.ray.get([actor.where.remote() for actor in self.actors]))

    def close(self) -> None:
        """Stop the actors, and Ray where this runner started it."""
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []
        if self.started:
            self.ray.shutdown()
