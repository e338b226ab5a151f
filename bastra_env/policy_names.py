"""Opponents by name for the single-agent envs: ``gymnasium.make("Bastra-v0",
opponents="heuristic")``.

The environments know no players (they sit below them), so a name is handed to the packages
that declare players under the entry-point group ``bastra_env.policies``: each entry is a callable
``(name, seed=None) -> policy``. The ``agents`` package declares ``agents.registry:make_policy``,
which takes every name it does elsewhere (``random``, ``greedy``, ``heuristic``, ``pimc:64``,
``bastra_2p``, ``bastra_2p:network``, a checkpoint path).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.metadata import entry_points
from typing import Any

GROUP = "bastra_env.policies"
"""The entry-point group a package declares its players' names in."""


def policy_by_name(name: str, seed: int | None = None) -> Any:
    """The policy named ``name`` by the first package of :data:`GROUP` that knows it; a
    ``ValueError`` that says what is wrong when none does (the last package's message, which
    names the known players), or when no package declares players."""
    resolvers = sorted(entry_points(group=GROUP), key=lambda e: e.name)
    if not resolvers:
        raise ValueError(
            f"opponents={name!r}: a policy by name needs a package that declares players "
            f"(entry-point group {GROUP!r}); install bastra-rl with its agents package, or pass "
            "a policy object"
        )
    problem = ""
    for entry in resolvers:
        try:
            return entry.load()(name, seed=seed)
        except ValueError as error:
            problem = str(error)
    raise ValueError(f"opponents={name!r}: {problem}")


def named_opponents(opponents: Any) -> Any:
    """``opponents`` with every policy given by name replaced by the policy (one policy, a list
    of them or a ``{seat: policy}`` mapping, as the single-agent envs take them). ``"random"``
    becomes ``None``, the env's own random player, seeded by its ``reset``; other names are built
    once, with seed 0, so the same env seed gives the same games."""

    def one(policy: Any) -> Any:
        if not isinstance(policy, str):
            return policy
        return None if policy == "random" else policy_by_name(policy, seed=0)

    if isinstance(opponents, Mapping):
        return {seat: one(policy) for seat, policy in opponents.items()}
    if isinstance(opponents, Sequence) and not isinstance(opponents, str):
        return [one(policy) for policy in opponents]
    return one(opponents)


__all__ = ["GROUP", "named_opponents", "policy_by_name"]
