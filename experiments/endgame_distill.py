"""Can the network learn the endgame search by copying its moves?

    python experiments/endgame_distill.py                    # the figures of docs/experiments.md
    python experiments/endgame_distill.py --rounds 128 --deals 50 --epochs 1   # a quick look

1. **Data.** Self-play single rounds of the packaged 2p network: outside the endgame each seat
   samples the network's policy (half of those decisions are kept, as anchors); in the endgame
   (the last two deals) it plays the endgame search's best move, and every such decision with a
   choice is kept with the search's best move and the gap to its second best (points).
2. **Cloning.** A copy of the packaged network is trained toward the search's best move on the
   endgame decisions (cross-entropy) and toward the packaged network's own policy elsewhere (a KL
   anchor), ``--epochs`` passes; ``--min-gap`` keeps only the endgame decisions where the best
   move beats the second by at least that many points. Printed: agreement with the search on
   held-out endgame decisions (a tenth of the data), before and after.
3. **Play.** The network alone, duplicate single rounds (``--deals`` deals, two rounds each): the
   copy against the packaged network; the copy in the endgame only and outside it only; and the
   packaged network with the endgame search against it alone, the gain that is to be learnt.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from agents.evaluation.matches import duplicate_match  # noqa: E402
from agents.learning.config import SearchConfig  # noqa: E402
from agents.learning.policy import LearnedPolicy, load_learned  # noqa: E402
from bastra_env import Rules  # noqa: E402
from bastra_env.rules import TABLES  # noqa: E402
from bastra_env.vector import VectorEnv  # noqa: E402

BATCH = 64  # games a vector env plays at once


def logits(player: LearnedPolicy, obs: np.ndarray, mask: np.ndarray) -> torch.Tensor:
    """The player's network's logits ``[B, 208]`` on float32 observations and their masks."""
    return player._network(obs, mask)[0]


def collect(searcher: LearnedPolicy, rounds: int, seed: int) -> dict[str, np.ndarray]:
    """Self-play rounds: the endgame search's best move in the endgame (kept with its gap), the
    network's policy sampled elsewhere (half kept, best move -1)."""
    rules = Rules(**dict(TABLES["2p"], max_rounds=1))
    rows: dict[str, list[Any]] = {"obs": [], "mask": [], "best": [], "endgame": [], "gap": []}
    rng = np.random.default_rng(1)  # the sampling stream; the deals come from ``seed``
    started = time.perf_counter()
    for start in range(0, rounds, BATCH):
        env = VectorEnv(BATCH, rules=rules, reward="points", num_threads=1)
        state = env.reset(seed=seed + start // BATCH)
        live = np.ones(BATCH, bool)
        while live.any():
            games = np.flatnonzero(live)
            obs = np.ascontiguousarray(state["observation"][games], dtype=np.float32)
            mask = state["action_mask"][games].astype(bool)
            endgame = searcher._endgame_rows(obs)
            with torch.no_grad():
                probs = torch.softmax(logits(searcher, obs, mask), -1).numpy()
            acts = np.empty(len(games), np.int64)
            for k, g in enumerate(games):
                legal = np.flatnonzero(mask[k])
                if endgame[k] and len(legal) > 1:
                    values = searcher.move_values(
                        {
                            "observation": state["observation"][g],
                            "action_mask": state["action_mask"][g],
                        }
                    )
                    assert values is not None
                    order = sorted(values, key=lambda a: -values[a])
                    acts[k] = order[0]
                    rows["best"].append(order[0])
                    rows["gap"].append(values[order[0]] - values[order[1]])
                else:
                    p = probs[k].astype(np.float64) * mask[k]
                    acts[k] = rng.choice(len(p), p=p / p.sum())
                    if len(legal) < 2 or rng.random() >= 0.5:
                        continue
                    rows["best"].append(-1)
                    rows["gap"].append(0.0)
                rows["obs"].append(obs[k].astype(np.float16))
                rows["mask"].append(mask[k])
                rows["endgame"].append(bool(endgame[k]))
            state = env.step_some(games, acts)
            live[games] &= ~state["terminated"][games]
        kept = int(np.sum(rows["endgame"]))
        print(
            f"  {min(start + BATCH, rounds)} rounds: {kept} endgame decisions, "
            f"{len(rows['obs']) - kept} others, {time.perf_counter() - started:.0f} s",
            flush=True,
        )
    return {k: np.array(v) for k, v in rows.items()}


class Hybrid:
    """One player in the endgame, another elsewhere."""

    def __init__(
        self, endgame: LearnedPolicy, other: LearnedPolicy, probe: LearnedPolicy, name: str
    ) -> None:
        self.endgame, self.other, self.probe, self.name = endgame, other, probe, name

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        flat = np.ascontiguousarray(np.asarray(observations, dtype=np.float32))
        rows = self.probe._endgame_rows(flat)
        out = self.other.act_batch(observations, masks)
        if rows.any():
            out[rows] = self.endgame.act_batch(
                np.asarray(observations)[rows], np.asarray(masks)[rows]
            )
        return out

    def act(self, observation: dict[str, np.ndarray], env: object = None) -> int:
        return int(
            self.act_batch(
                np.asarray(observation["observation"])[None],
                np.asarray(observation["action_mask"])[None],
            )[0]
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5120, help="self-play rounds of data")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument(
        "--min-gap",
        type=float,
        default=0.0,
        help="clone only endgame decisions won by at least this many points",
    )
    parser.add_argument("--deals", type=int, default=1000, help="duplicate deals a match")
    parser.add_argument("--seed", type=int, default=10_000)
    parser.add_argument("--data", type=Path, help="an .npz of a previous run's data (skips step 1)")
    parser.add_argument("--save-data", type=Path, help="write the data here (.npz)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)

    searcher = load_learned(
        "bastra_2p", search=SearchConfig(objective="points"), name="network+endgame"
    )
    packaged = load_learned("bastra_2p", search=SearchConfig(endgame=False), name="packaged")
    if args.data:
        with np.load(args.data) as saved:
            data = {k: saved[k] for k in saved.files}
    else:
        print(f"1. data: {args.rounds} self-play rounds", flush=True)
        data = collect(searcher, args.rounds, args.seed)
        if args.save_data:
            np.savez(args.save_data, **data)
    obs, mask = data["obs"].astype(np.float32), data["mask"].astype(bool)
    best, endgame, gap = data["best"], data["endgame"].astype(bool), data["gap"]

    rng = np.random.default_rng(0)
    order = rng.permutation(len(obs))
    held, train = order[: len(order) // 10], order[len(order) // 10 :]
    train = train[~endgame[train] | (gap[train] >= args.min_gap)]
    with torch.no_grad():
        anchor = torch.cat(
            [
                torch.log_softmax(logits(packaged, obs[s : s + 4096], mask[s : s + 4096]), -1)
                for s in range(0, len(obs), 4096)
            ]
        )

    def agreement(player: LearnedPolicy, rows: np.ndarray) -> float:
        rows = rows[endgame[rows]]
        with torch.no_grad():
            chosen = logits(player, obs[rows], mask[rows]).argmax(-1).numpy()
        return float((chosen == best[rows]).mean())

    print(
        f"2. cloning: {int(endgame[train].sum())} endgame decisions (gap >= {args.min_gap}) of "
        f"{int(endgame.sum())}, {int((~endgame[train]).sum())} anchors; held-out agreement with "
        f"the search, packaged network: {agreement(packaged, held):.1%}",
        flush=True,
    )
    clone = copy.deepcopy(packaged)
    clone.name = "clone"
    model = clone.model.train()
    optimiser = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        shuffled = rng.permutation(train)
        for s in range(0, len(shuffled), 256):
            b = shuffled[s : s + 256]
            log_p = torch.log_softmax(logits(clone, obs[b], mask[b]), -1)
            rows_eg = torch.from_numpy(endgame[b])
            loss = torch.zeros(())
            if rows_eg.any():
                loss = loss + F.nll_loss(log_p[rows_eg], torch.from_numpy(best[b][endgame[b]]))
            if (~rows_eg).any():
                ref = anchor[torch.from_numpy(b)][~rows_eg]
                legal = torch.from_numpy(mask[b][~endgame[b]])
                loss = (
                    loss
                    + (ref.exp() * (ref - log_p[~rows_eg])).masked_fill(~legal, 0).sum(-1).mean()
                )
            optimiser.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            optimiser.step()
        model.eval()
        print(f"  epoch {epoch + 1}: held-out agreement {agreement(clone, held):.1%}", flush=True)
        model.train()
    model.eval()

    print(f"3. play: the network alone, {args.deals} duplicate deals, single rounds", flush=True)
    matches = [
        ("clone vs packaged", clone, packaged),
        (
            "clone in the endgame only vs packaged",
            Hybrid(clone, packaged, searcher, "clone-endgame"),
            packaged,
        ),
        (
            "clone outside the endgame only vs packaged",
            Hybrid(packaged, clone, searcher, "clone-outside"),
            packaged,
        ),
        ("packaged + endgame search vs packaged", searcher, packaged),
    ]
    for label, a, b in matches:
        started = time.perf_counter()
        result = duplicate_match(
            a,
            b,
            table="2p",
            deals=args.deals,
            mode="round",
            seed=777,
            names=("a", "b"),
            progress=False,
            num_threads=1,
        )
        print(
            f"  {label}: {result.win_rate:.1%} [{result.ci_low:.1%}, {result.ci_high:.1%}], "
            f"{result.point_diff:+.2f} a round ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
