"""The baseline players' moves, pinned: a refactor must not change a single one.

The baselines (``random``, ``greedy``, ``heuristic``, the search players ``pimc:16``, ``pimc:64``,
``ismcts:100``, ``ismcts:400`` and ``pimc:16:infer``) are the yardsticks every learned player is
measured against, so their moves never change across versions: a rating from one version must
mean the same in the next. ``tests/data/baseline_moves.json`` holds, for a two-player table and a
four-player team table, a few hundred positions and the move each baseline makes in each.

The positions are stored as ``[env seed, decisions]``: the game ``raw_env(**table)`` reset with
``seed=env seed``, its seats playing a uniformly random legal action from
``numpy.random.default_rng(env seed)`` (``legal[rng.integers(len(legal))]``, ``legal`` the
nonzero entries of the action mask, one draw per decision), and the position the decisions-th
decision (0 first) of that game, seen by the seat to move (``env.observe(env.agent_selection)``).
They are taken every ``stride`` decisions through whole games (with a stride prime to the 48
plays of a round, so they fall in every deal, the endgame once the deck is empty included, and
every round), skipping those with a single legal action. A sha256 of their observations and
masks comes first: if it fails, the positions changed (the rules, the environment or the
observation's encoding), not the players' moves.

Each baseline is ``make_policy(spec, seed=POLICY_SEED)`` (a fresh one for each table), its
``act(observation)`` called on the table's positions in order. The order matters for ``random``
alone: ``RandomPolicy`` draws from its own generator, one draw a call; the others decide from the
observation (and their seed) alone.

Only the stable public API is used here (``agents.make_policy`` and ``bastra_env``), so the test
outlives a reshuffle of the modules behind them.

Regenerate the file only when a change of the rules (or of a baseline) is intended, and say so in
the changelog: ``PYTHONPATH=. python tests/test_baseline_moves.py --regenerate``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import bastra_env
from agents import make_policy

DATA = Path(__file__).resolve().parent / "data" / "baseline_moves.json"

SPECS = (
    "random",
    "greedy",
    "heuristic",
    "pimc:16",
    "pimc:64",
    "ismcts:100",
    "ismcts:400",
    "pimc:16:infer",
)
"""The baselines pinned, as ``make_policy`` takes them."""
POLICY_SEED = 0
"""Every baseline's ``make_policy(spec, seed=POLICY_SEED)``."""

TABLES = {
    "2p": {"env": {"num_players": 2}, "first_seed": 1000, "count": 300},
    "4p_teams": {"env": {"num_players": 4, "teams": True}, "first_seed": 2000, "count": 300},
}
"""Each table: its ``raw_env`` keywords, and where the regeneration starts (the first env seed)
and how many positions it takes."""
STRIDE = 37
"""The regeneration takes the decisions ``i`` of game ``seed`` with ``i % STRIDE == seed % STRIDE``
(and more than one legal action)."""


def random_move(observation: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    legal = np.flatnonzero(observation["action_mask"])
    return int(legal[rng.integers(legal.size)])


def replay(env_kwargs: dict, seed: int, decisions: list[int]) -> list[dict[str, np.ndarray]]:
    """The observations at ``decisions`` (increasing) of the random game of env seed ``seed``."""
    env = bastra_env.raw_env(**env_kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    wanted = set(decisions)
    found = []
    for i in range(max(decisions) + 1):
        if env.game.done:
            raise AssertionError(f"game {seed} ended before decision {i}: the positions changed")
        observation = env.observe(env.agent_selection)
        if i in wanted:
            found.append(observation)
        env.step(random_move(observation, rng))
    return found


def choose_positions(env_kwargs: dict, first_seed: int, count: int) -> list[list]:
    """``[[seed, [decisions]], ...]``: ``count`` positions by the rule of ``STRIDE``."""
    chosen: list[list] = []
    total, seed = 0, first_seed
    while total < count:
        env = bastra_env.raw_env(**env_kwargs)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        decisions, i = [], 0
        while not env.game.done and total < count:
            observation = env.observe(env.agent_selection)
            if i % STRIDE == seed % STRIDE and np.count_nonzero(observation["action_mask"]) > 1:
                decisions.append(i)
                total += 1
            env.step(random_move(observation, rng))
            i += 1
        if decisions:
            chosen.append([seed, decisions])
        seed += 1
    return chosen


def observations(env_kwargs: dict, positions: list[list]) -> list[dict[str, np.ndarray]]:
    return [o for seed, decisions in positions for o in replay(env_kwargs, seed, decisions)]


def fingerprint(found: list[dict[str, np.ndarray]]) -> str:
    """sha256 of every position's observation (float32) and action mask (int8), in order."""
    digest = hashlib.sha256()
    for observation in found:
        digest.update(np.ascontiguousarray(observation["observation"], dtype=np.float32).tobytes())
        digest.update(np.ascontiguousarray(observation["action_mask"], dtype=np.int8).tobytes())
    return digest.hexdigest()


def moves_of(spec: str, found: list[dict[str, np.ndarray]]) -> list[int]:
    """A fresh ``make_policy(spec, seed=POLICY_SEED)``'s move in each position, in order."""
    policy = make_policy(spec, seed=POLICY_SEED)
    return [int(policy.act(observation)) for observation in found]


@cache
def pinned() -> dict:
    return json.loads(DATA.read_text())


@cache
def table_positions(table: str) -> tuple[list[dict[str, np.ndarray]], str]:
    """The table's positions, regenerated from the file's seeds and decisions, and their sha."""
    entry = pinned()["tables"][table]
    found = observations(entry["env"], entry["positions"])
    return found, fingerprint(found)


def check_positions(table: str) -> list[dict[str, np.ndarray]]:
    entry = pinned()["tables"][table]
    found, sha = table_positions(table)
    if sha != entry["sha256"]:
        pytest.fail(
            f"positions changed: the {len(found)} positions of table {table!r} (env "
            f"{entry['env']}) no longer regenerate identically (sha256 {sha}, pinned "
            f"{entry['sha256']}): the rules, the environment or the observation encoding "
            "changed, not (yet) a baseline's moves",
            pytrace=False,
        )
    return found


@pytest.mark.parametrize("table", list(TABLES))
def test_positions_regenerate_identically(table):
    found = check_positions(table)
    assert len(found) == sum(len(d) for _, d in pinned()["tables"][table]["positions"])


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("table", list(TABLES))
def test_baseline_moves_are_unchanged(table, spec):
    found = check_positions(table)
    entry = pinned()["tables"][table]
    expected = entry["moves"][spec]
    got = moves_of(spec, found)
    where = [(seed, d) for seed, decisions in entry["positions"] for d in decisions]
    changed = [k for k, (a, b) in enumerate(zip(expected, got, strict=True)) if a != b]
    if changed:
        k = changed[0]
        pytest.fail(
            f"moves of {spec!r} changed at {len(changed)} of {len(found)} positions of table "
            f"{table!r} (the first: position {k}, env seed {where[k][0]}, decision "
            f"{where[k][1]}: was {expected[k]}, now {got[k]})",
            pytrace=False,
        )


def regenerate(path: Path = DATA) -> None:
    """Write ``path`` afresh: the positions by ``STRIDE``'s rule and every baseline's moves. Only
    for an intended change of the rules or of a baseline."""
    data: dict = {
        "about": "the baselines' moves, pinned by tests/test_baseline_moves.py (its docstring)",
        "policy_seed": POLICY_SEED,
        "stride": STRIDE,
        "tables": {},
    }
    for table, spec in TABLES.items():
        positions = choose_positions(spec["env"], spec["first_seed"], spec["count"])
        found = observations(spec["env"], positions)
        data["tables"][table] = {
            "env": spec["env"],
            "positions": positions,
            "sha256": fingerprint(found),
            "moves": {s: moves_of(s, found) for s in SPECS},
        }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(data))


def dumps(data: dict) -> str:
    """JSON with every list of numbers (a game's decisions, a spec's moves) on one line."""

    def flat(value: object, indent: int) -> str:
        pad, inner = " " * indent, " " * (indent + 1)
        if isinstance(value, dict):
            items = [f"{inner}{json.dumps(k)}: {flat(v, indent + 1)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + f"\n{pad}}}"
        if isinstance(value, list) and value and isinstance(value[0], list):
            return "[\n" + ",\n".join(inner + json.dumps(v) for v in value) + f"\n{pad}]"
        return json.dumps(value)

    return flat(data, 0) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit(f"usage: python {sys.argv[0]} --regenerate  (only for an intended rules change)")
    import torch

    torch.set_num_threads(1)
    regenerate()
    print(f"wrote {DATA}")
