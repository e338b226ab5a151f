"""Train the full-state value function of variance-reduced evaluation
(``agents.learning.state_value``) on games between a mix of players.

    python -m agents.training.state_value --config configs/value/state_value_2p.yaml \\
        --out agents/pretrained/state_value_2p.pt

Each game's two sides are drawn from ``players`` (and ``sampling_players``, models that sample
their moves), so the value function learns what positions are worth over a range of play rather
than for one pair. The games are walked again (``agents.evaluation.luck.collect_views``) and
the position before every deal (where the evaluator's value function uses the network) becomes a
training row, labelled with its round's points (side 0 minus side 1) and the game's result for
side 0. Held-out games measure the fit: the share of the round points' variance explained and
the win head's Brier score.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from tqdm import tqdm

from agents.evaluation.luck import OUTCOME_WIN, collect_views
from agents.evaluation.matches import MoveTrace, play_games
from agents.learning.config import SearchConfig
from agents.learning.state_value import (
    ROUND_SCALE,
    V_HANDS,
    StateValue,
    StateValueNet,
    dense_features,
    feature_count,
)
from agents.registry import load_policy, make_policy
from bastra_env import Rules
from bastra_env.compiled_rules import rules_array
from bastra_env.rules import TABLES
from bastra_env.vector import start_threading_layer


@dataclass(frozen=True)
class ValueConfig:
    """How the value function is trained (a YAML file of these fields)."""

    table: str = "2p"
    """The table whose games it learns (``TABLES``: ``2p`` or ``4p_teams``)."""
    games: int = 3000
    """Full games played for the data (a tenth of them held out)."""
    players: tuple[str, ...] = ("random", "greedy", "heuristic", "bastra_2p:network")
    """Policies (``make_policy`` names) a side is drawn from."""
    sampling_players: tuple[str, ...] = ("bastra_2p",)
    """Models whose network samples its moves, drawn like ``players``."""
    hidden: tuple[int, int] = (128, 64)
    """The network's two hidden layers."""
    epochs: int = 8
    """Passes over the training rows."""
    batch_size: int = 1024
    """Rows per optimiser step."""
    learning_rate: float = 0.001
    """Adam's step size (halved for each of the last three epochs)."""
    seed: int = 0
    """Seeds the players drawn, the games and the network's start."""

    def __post_init__(self) -> None:
        if self.table not in TABLES:
            raise ValueError(f"table must be one of {list(TABLES)}, got {self.table!r}")
        for name in ("games", "epochs", "batch_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if self.games < 10:
            raise ValueError(f"games must be at least 10 (a tenth is held out), got {self.games}")
        if len(self.hidden) != 2 or any(not isinstance(h, int) or h < 1 for h in self.hidden):
            raise ValueError(f"hidden must be two positive ints, got {self.hidden!r}")
        if not isinstance(self.learning_rate, (int, float)) or self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate!r}")
        if not self.players and not self.sampling_players:
            raise ValueError("give at least one player or sampling player")

    @classmethod
    def from_yaml(cls, path: str | Path) -> ValueConfig:
        try:
            raw = yaml.safe_load(Path(path).read_text())
        except OSError as error:
            raise ValueError(f"--config {path}: cannot read it ({error})") from None
        except yaml.YAMLError as error:
            raise ValueError(f"--config {path}: not valid YAML ({error})") from None
        if not isinstance(raw, dict):
            raise ValueError(f"--config {path}: a mapping of ValueConfig fields expected")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ValueError(f"--config {path}: unknown fields {unknown}; known: {sorted(known)}")
        for name in ("players", "sampling_players", "hidden"):
            if name in raw:
                if not isinstance(raw[name], list):
                    raise ValueError(f"--config {path}: {name} must be a list")
                raw[name] = tuple(raw[name])
        return cls(**raw)


def _draw_players(config: ValueConfig) -> list[Any]:
    pool: list[Any] = [make_policy(spec, seed=config.seed + k)
                       for k, spec in enumerate(config.players)]  # fmt: skip
    pool += [load_policy(spec, SearchConfig(endgame=False), sample=True, seed=config.seed + 100 + k)
             for k, spec in enumerate(config.sampling_players)]  # fmt: skip
    return pool


def make_data(config: ValueConfig, progress: bool = True) -> dict[str, np.ndarray]:
    """Play and walk ``config.games`` games: features ``float32[rows, F]``, round points and
    game results ``float32[rows]``, and each row's game."""
    rules = Rules(**TABLES[config.table])
    rng = np.random.default_rng(config.seed)
    pool = _draw_players(config)
    sides = rng.integers(len(pool), size=(config.games, 2))
    seeds = 1_000_000 + config.seed * 100_000 + np.arange(config.games)
    seat_policies = [[pool[sides[g, rules.side_of(s)]] for s in range(rules.num_players)]
                     for g in range(config.games)]  # fmt: skip
    chunks: list[dict[str, np.ndarray]] = []
    bar = tqdm(total=config.games, desc="games", unit="game", disable=not progress)
    step = 250
    for start in range(0, config.games, step):
        stop = min(start + step, config.games)
        trace = MoveTrace.empty(stop - start)
        play_games(rules, seat_policies[start:stop], seeds[start:stop].tolist(), trace=trace)
        starts = np.zeros(stop - start + 1, dtype=np.int64)
        starts[1:] = np.cumsum([len(a) for a in trace.actions])
        flat = np.concatenate([np.asarray(a, dtype=np.int64) for a in trace.actions])
        start_threading_layer()
        views, rounds, kept, points, figures = collect_views(
            rules_array(rules), seeds[start:stop].astype(np.int64), starts, flat, 4096
        )
        for g in range(stop - start):
            # the positions the evaluator values with the network: before each deal
            rows = np.flatnonzero((views[g, : kept[g], V_HANDS : V_HANDS + 4] == 0).all(axis=1))
            chunks.append({
                "views": views[g, rows],
                "round_points": points[g, rounds[g, rows]].astype(np.float32),
                "win": np.full(len(rows), figures[g, OUTCOME_WIN], dtype=np.float32),
                "game": np.full(len(rows), start + g, dtype=np.int64),
            })  # fmt: skip
        bar.update(stop - start)
    bar.close()
    data = {key: np.concatenate([c[key] for c in chunks]) for key in chunks[0]}
    features = np.empty((len(data["views"]), feature_count(rules.num_players)), dtype=np.float32)
    dense_features(data["views"], rules.num_players, rules.target_score, features)
    return {"features": features, "round_points": data["round_points"], "win": data["win"],
            "game": data["game"]}  # fmt: skip


def fit(config: ValueConfig, data: dict[str, np.ndarray], progress: bool = True
        ) -> tuple[StateValueNet, dict[str, float]]:  # fmt: skip
    """Train on the games outside the held-out tenth; returns the network and its held-out
    figures."""
    torch.manual_seed(config.seed)
    held = data["game"] % 10 == 9
    x = torch.from_numpy(data["features"])
    y_points = torch.from_numpy(data["round_points"] / ROUND_SCALE)
    y_win = torch.from_numpy(data["win"])
    train = torch.from_numpy(np.flatnonzero(~held))
    test = torch.from_numpy(np.flatnonzero(held))
    net = StateValueNet(TABLES[config.table].get("num_players", 2), config.hidden)
    optimiser = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    generator = torch.Generator().manual_seed(config.seed)
    bar = tqdm(range(config.epochs), desc="epochs", unit="epoch", disable=not progress)
    metrics: dict[str, float] = {}
    for epoch in bar:
        if epoch >= config.epochs - 3:
            for group in optimiser.param_groups:
                group["lr"] = config.learning_rate * 0.5 ** (epoch - config.epochs + 4)
        net.train()
        order = train[torch.randperm(len(train), generator=generator)]
        for k in range(0, len(order), config.batch_size):
            rows = order[k : k + config.batch_size]
            out = net(x[rows])
            loss = torch.nn.functional.mse_loss(out[:, 0], y_points[rows])
            loss = loss + torch.nn.functional.binary_cross_entropy_with_logits(
                out[:, 1], y_win[rows]
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        metrics = evaluate_fit(net, x[test], y_points[test], y_win[test])
        bar.set_postfix(explained=f"{metrics['round_points_explained']:.3f}",
                        brier=f"{metrics['win_brier']:.4f}")  # fmt: skip
    return net, metrics


@torch.no_grad()
def evaluate_fit(net: StateValueNet, x: torch.Tensor, y_points: torch.Tensor,
                 y_win: torch.Tensor) -> dict[str, float]:  # fmt: skip
    net.eval()
    out = torch.cat([net(x[k : k + 65536]) for k in range(0, len(x), 65536)])
    residual = float(((out[:, 0] - y_points) ** 2).mean())
    spread = float(y_points.var())
    brier = float(((torch.sigmoid(out[:, 1]) - y_win) ** 2).mean())
    return {
        "rows": float(len(x)),
        "round_points_explained": 1 - residual / spread,
        "round_points_rmse": ROUND_SCALE * residual**0.5,
        "win_brier": brier,
        "win_brier_constant": float(((y_win.mean() - y_win) ** 2).mean()),
    }


def train_state_value(config: ValueConfig, out: str | Path, progress: bool = True
                      ) -> dict[str, Any]:  # fmt: skip
    """Make the data, fit the network, write it to ``out``; returns the summary it prints."""
    torch.set_num_threads(max(1, torch.get_num_threads()))
    began = time.perf_counter()
    data = make_data(config, progress)
    made = time.perf_counter()
    net, metrics = fit(config, data, progress)
    summary = {
        "config": asdict(config),
        "train_rows": int((data["game"] % 10 != 9).sum()),
        "held_out": metrics,
        "data_seconds": round(made - began, 1),
        "fit_seconds": round(time.perf_counter() - made, 1),
    }
    StateValue.from_network(net, config.table, summary).save(out)
    return summary


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="a YAML file of ValueConfig fields")
    parser.add_argument("--out", required=True, help="where to write the value function (.pt)")
    parser.add_argument("--games", type=int, help="override the config's games")
    args = parser.parse_args(argv)
    try:
        config = ValueConfig.from_yaml(args.config)
        if args.games is not None:
            config = ValueConfig(**{**asdict(config), "games": args.games})
    except (ValueError, TypeError) as error:
        parser.error(str(error))
    summary = train_state_value(config, args.out)
    print(json.dumps(summary["held_out"], indent=2))
    print(f"wrote {args.out} ({summary['train_rows']} training rows, data "
          f"{summary['data_seconds']} s, fit {summary['fit_seconds']} s)")  # fmt: skip
    return summary


if __name__ == "__main__":
    main()
