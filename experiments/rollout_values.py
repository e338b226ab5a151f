"""Experiment: the deals before the last learnt from the network's own rollouts in the true world.

    python experiments/rollout_values.py --config endgame_2p --run-dir runs/rollout_values \\
        init_from=runs/endgame_2p/final.pt endgame.rounds=60000 \\
        eval_opponents=heuristic,runs/endgame_2p/final.pt:network

``algorithm: endgame`` (``agents.training.endgame``) with another step 1: at a sampled decision
before the last deal (``--share`` of them), every legal move is played in the *true* state and the
round is finished by the starting network's greedy play on every seat, each seat seeing only its
own observation. The round's point difference for the mover is one sample of the move's value
under the network's own play, ``Q^pi(information, a)``, with the true posterior over the hidden
cards: unbiased, with no strategy fusion (no seat ever reads a hidden card), and the
expected-regret loss is linear in ``Q``, so the sample's noise averages out over the data. Every
other decision (the last deal's included) is a KL anchor to the starting network, whose last deal
(``endgame_2p``) is kept. Any Config field may follow as ``FIELD=VALUE``. The figures are in
``docs/experiments.md`` (Learning the endgame's values).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from agents.learning.network import PolicyValueNet  # noqa: E402
from agents.training import endgame as E  # noqa: E402
from agents.training.config import Config, parse_config  # noqa: E402
from bastra_env.layout import NUM_ACTIONS  # noqa: E402
from bastra_env.vector import VectorEnv  # noqa: E402


@torch.no_grad()
def rollout_values(
    model: PolicyValueNet,
    states: np.ndarray,
    movers: np.ndarray,
    actions: np.ndarray,
    config: Config,
    threads: int,
) -> np.ndarray:
    """The round's point difference for ``movers[i]`` after ``actions[i]`` in the vector env
    state ``states[i]``, every later play the network's greedy choice (a single round)."""
    env = VectorEnv(len(actions), rules=config.rules, reward="points", num_threads=threads,
                    copy=False)  # fmt: skip
    env.reset(seed=0)
    env.states[:] = states
    out = env.step(actions)
    value = np.zeros(len(actions))
    live = np.ones(len(actions), dtype=bool)
    ended = np.flatnonzero(out["terminated"])
    value[ended], live[ended] = out["rewards"][ended, movers[ended]], False
    while live.any():
        rows = np.flatnonzero(live)
        obs = np.ascontiguousarray(out["observation"][rows])
        mask = out["action_mask"][rows].astype(bool)
        out = env.step_some(rows, E.network_logits(model, obs, mask).argmax(-1).numpy())
        ended = rows[out["terminated"][rows]]
        value[ended], live[ended] = out["rewards"][ended, movers[ended]], False
    return value


def rollout_collector(share: float) -> E.Collector:
    """Step 1 of the experiment (module docs): the arrays ``agents.training.endgame.collect``
    gives, ``searched`` marking the rollout-valued decisions."""

    def collect(model: PolicyValueNet, config: Config, threads: int, bar: Any) -> dict:
        rng = np.random.default_rng([config.seed, 7])
        chunks: dict[str, list[np.ndarray]] = {"obs": [], "mask": [], "gaps": [], "searched": []}
        valued = 0
        for start in range(0, config.endgame.rounds, E.BATCH_GAMES):
            rows: dict[str, list[Any]] = {name: [] for name in chunks}
            pending: list[tuple[int, np.ndarray, int, np.ndarray]] = []
            games_here = min(E.BATCH_GAMES, config.endgame.rounds - start)
            env = VectorEnv(games_here, rules=config.rules, reward="points", num_threads=threads)
            state = env.reset(seed=config.seed * 1_000_003 + start)
            live = np.ones(games_here, dtype=bool)
            while live.any():
                games = np.flatnonzero(live)
                obs = np.ascontiguousarray(state["observation"][games], dtype=np.float32)
                mask = state["action_mask"][games].astype(bool)
                actions = E.sample_actions(model, obs, mask, rng)
                last_deal = E.endgame_rows(obs)
                for k in np.flatnonzero(mask.sum(1) > 1):
                    sampled = not last_deal[k] and rng.random() < share
                    if not sampled and rng.random() >= E.ANCHOR_SHARE:
                        continue
                    if sampled:
                        pending.append((len(rows["obs"]), env.states[games[k]].copy(),
                                        int(state["current_player"][games[k]]),
                                        np.flatnonzero(mask[k])))  # fmt: skip
                    rows["obs"].append(obs[k].astype(np.float16))
                    rows["mask"].append(mask[k])
                    rows["gaps"].append(np.zeros(NUM_ACTIONS, dtype=np.float16))
                    rows["searched"].append(sampled)
                state = env.step_some(games, actions)
                live[games] &= ~state["terminated"][games]
            if pending:
                legal = [p[3] for p in pending]
                q = rollout_values(
                    model,
                    np.concatenate([np.repeat(p[1][None], len(p[3]), 0) for p in pending]),
                    np.concatenate([np.full(len(p[3]), p[2]) for p in pending]),
                    np.concatenate(legal),
                    config,
                    threads,
                )
                at = 0
                for row, _, _, moves in pending:
                    v = q[at : at + len(moves)]
                    at += len(moves)
                    rows["gaps"][row][moves] = (v.max() - v).astype(np.float16)
            for name, kept in rows.items():
                chunks[name].append(np.array(kept))
            valued += len(pending)
            if bar is not None:
                bar.update(games_here)
                bar.set_postfix(valued=f"{valued:,}")
        return {name: np.concatenate(parts) for name, parts in chunks.items()}

    return collect


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--share",
        type=float,
        default=0.5,
        help="the share of decisions before the last deal valued by rollouts",
    )
    args, rest = parser.parse_known_args(argv)
    if not 0 < args.share <= 1:
        parser.error(f"--share must lie in (0, 1], got {args.share}")
    config, run_dir, resume = parse_config(rest)
    if config.num_players != 2 or config.algorithm != "endgame":
        parser.error("the experiment runs on a two-player endgame config (--config endgame_2p)")
    E.train_endgame(config, run_dir, resume, collector=rollout_collector(args.share))


if __name__ == "__main__":
    main()
