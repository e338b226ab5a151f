"""Reading the other hand better: a network as the model of the other seat's plays, or of its hand.

    python experiments/hand_inference.py generate --rounds 4000 --out runs/hand_inference/data
    python experiments/hand_inference.py train --epochs 2 --data runs/hand_inference/data \\
        --out runs/hand_inference/model.pt
    python experiments/hand_inference.py quality --positions 2000 --temperatures 1.0 0.5 0.25 \\
        --json docs/hand_inference_quality.json
    python experiments/hand_inference.py rate --lines network-inference:bastra_2p:infer \\
        bastra_2p:infer --deals 300 --json docs/hand_inference_rate.json

Before the last deal a 2p player's edge is what it knows of the other hand: PIMC whose worlds hold
the true hand wins almost every game against ``pimc:64:infer`` (``experiments/oracle_ceiling.py``).
The shipped inference (``agents.search.positions.inferred_worlds``) weighs uniform deals of the
unseen cards by the likelihood of this deal's plays under the heuristic player. Two other
readings are measured here:

- the **network's likelihood** (``network-inference:``): the same weighing with the packaged 2p
  network's policy (its softmax at a temperature, 2% uniform) as the model of the other seat
  (``network_log_likelihood``, compiled with the variance-reduced walk's network kernel);
- a **hand network** (``learned-inference:``, ``HandNet``): the observation -> each unseen card's
  probability of being in the other hand, learnt from the true hands, the worlds drawn from it.

Subcommands:

- ``generate``: single 2p rounds of ``PAIRS`` (seeds ``--seed`` on, a pair per seed in turn),
  every decision before the last deal kept with the other hand: a ``.npz`` per 50 rounds.
- ``train``: the hand network; the binary cross-entropy over the unseen cards (the other hand's
  against the deck's), a tenth of the shards held out.
- ``quality``: on held-out decisions, the true hand's share of each inference's 64 worlds (and of
  the hand network's probabilities) as a multiple of the uniform share, by the other seat's player.
- ``rate``: full games against ``pimc:64:infer`` on duplicate deals (``oracle_ceiling.run_line``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))

from numba import njit  # noqa: E402

import bastra_env  # noqa: E402
from agents import LearnedPolicy, PIMCPolicy, make_policy  # noqa: E402
from agents.evaluation.luck import _policy_scores, pack_policies, policy_arrays  # noqa: E402
from agents.evaluation.matches import duplicate_match, play_game  # noqa: E402
from agents.learning.features import MAX_LEGAL  # noqa: E402
from agents.search import world_kernels as S  # noqa: E402
from agents.search.endgame_kernels import POINTS_ONLY  # noqa: E402
from agents.search.positions import decision_seed, inferred_worlds, legal_moves, position_of  # noqa: E402
from bastra_env import compiled_rules as K  # noqa: E402
from bastra_env.cards import parse_card  # noqa: E402
from bastra_env.layout import NUM_ACTIONS, OBSERVATION_SIZE, OFFSETS  # noqa: E402

PAIRS = (
    ("pimc:64:infer", "pimc:64:infer"),
    ("bastra_2p", "pimc:64:infer"),
    ("bastra_2p:infer", "heuristic"),
    ("bastra_2p", "bastra_2p:infer"),
    ("heuristic", "bastra_2p:network"),
)
"""The seats of the generated rounds, one pair a seed in turn (the seats as listed)."""
NUM_CARDS = 52


def _mask(names: list[str]) -> int:
    mask = 0
    for name in names:
        mask |= 1 << parse_card(name)
    return mask


class _Recorder:
    """A seat's player that keeps, at each of its decisions before the last deal, its
    observation and the other seat's true hand."""

    def __init__(self, player: Any, kind: int, rows: list[Any]) -> None:
        self.player, self.kind, self.rows = player, kind, rows

    def act(self, observation: Any, env: Any = None) -> int:
        snap = env.snapshot()
        seats = list(snap["hands"])
        other = snap["hands"][seats[1 - seats.index(snap["current"])]]
        if snap["deck"] and other:
            self.rows.append((np.asarray(observation["observation"], dtype=np.float16),
                              _mask(other), self.kind))  # fmt: skip
        return int(self.player.act(observation, env=env))


def _generate(job: tuple[list[int], str]) -> int:
    seeds, out = job
    torch.set_num_threads(1)
    env = bastra_env.env(max_rounds=1)
    names = sorted({name for pair in PAIRS for name in pair})
    players = {name: make_policy(name, seed=7) for name in names}
    rows: list[Any] = []
    for seed in seeds:
        first, second = PAIRS[seed % len(PAIRS)]
        # the row's kind is the *other* seat's player, whose hand it labels
        seats = [_Recorder(players[first], names.index(second), rows),
                 _Recorder(players[second], names.index(first), rows)]  # fmt: skip
        play_game(env, seats, seed)
    np.savez_compressed(
        out,
        observation=np.stack([r[0] for r in rows]),
        hand=np.array([r[1] for r in rows], dtype=np.int64),
        kind=np.array([r[2] for r in rows], dtype=np.int8),
        seed=np.array(seeds, dtype=np.int64),
        kinds=np.array(names),
    )
    return len(rows)


def generate(args: argparse.Namespace) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    seeds = list(range(args.seed, args.seed + args.rounds))
    chunk = 50
    jobs = [(seeds[i : i + chunk], str(args.out / f"shard{args.seed + i:07d}.npz"))
            for i in range(0, len(seeds), chunk)]  # fmt: skip
    start = time.perf_counter()
    total = 0
    with mp.get_context("spawn").Pool(args.workers) as pool:
        for done, n in enumerate(pool.imap_unordered(_generate, jobs), 1):
            total += n
            print(f"{done}/{len(jobs)} shards, {total} decisions, "
                  f"{time.perf_counter() - start:.0f} s", flush=True)  # fmt: skip


def load(data: Path) -> dict[str, np.ndarray]:
    shards = sorted(data.glob("shard*.npz"))
    if not shards:
        raise SystemExit(f"no shard*.npz in {data}")
    parts = [np.load(p) for p in shards]
    out = {k: np.concatenate([p[k] for p in parts]) for k in ("observation", "hand", "kind")}
    out["kinds"] = parts[0]["kinds"]
    out["shard"] = np.concatenate([np.full(len(p["hand"]), i) for i, p in enumerate(parts)])
    return out


def bits(hands: np.ndarray) -> np.ndarray:
    """int64 card masks ``[N]`` -> float32 ``[N, 52]``."""
    return ((hands[:, None] >> np.arange(NUM_CARDS)) & 1).astype(np.float32)


class HandNet(nn.Module):
    """The observation -> a logit per card of being in the other hand (only unseen cards count)."""

    def __init__(self, hidden: int = 512) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(OBSERVATION_SIZE, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, NUM_CARDS),
        )  # fmt: skip

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.body(obs)


UNSEEN = OFFSETS["unseen"]


def _loss(model: HandNet, obs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    unseen = obs[:, UNSEEN]
    losses = nn.functional.binary_cross_entropy_with_logits(model(obs), target, reduction="none")
    return (losses * unseen).sum() / unseen.sum()


def split(data: dict[str, np.ndarray], seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (train, held out): a tenth of the shards held out."""
    shards = np.unique(data["shard"])
    rng = np.random.default_rng(seed)
    held = set(rng.choice(shards, size=max(1, len(shards) // 10), replace=False).tolist())
    out = np.array([r in held for r in data["shard"]])
    return np.flatnonzero(~out), np.flatnonzero(out)


def train(args: argparse.Namespace) -> None:
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    data = load(args.data)
    learn, held = split(data)
    obs = torch.from_numpy(data["observation"].astype(np.float32))
    target = torch.from_numpy(bits(data["hand"]))
    model = HandNet(args.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    print(f"{len(learn)} decisions to learn from, {len(held)} held out")
    start = time.perf_counter()
    for epoch in range(args.epochs):
        order = torch.from_numpy(np.random.default_rng(args.seed + epoch).permutation(learn))
        model.train()
        for i in range(0, len(order), args.batch):
            idx = order[i : i + args.batch]
            loss = _loss(model, obs[idx], target[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            h = torch.from_numpy(held)
            held_loss = float(_loss(model, obs[h], target[h]))
            train_loss = float(_loss(model, obs[learn[: len(held)]], target[learn[: len(held)]]))
        print(f"epoch {epoch + 1}: loss learnt {train_loss:.4f}, held out {held_loss:.4f}, "
              f"{time.perf_counter() - start:.0f} s", flush=True)  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"hidden": args.hidden, "state": model.state_dict()}, args.out)


def load_model(path: Path) -> HandNet:
    saved = torch.load(path, weights_only=True)
    model = HandNet(saved["hidden"])
    model.load_state_dict(saved["state"])
    return model.eval()


def sample_worlds(
    position: np.ndarray,
    cards: np.ndarray,
    sizes: np.ndarray,
    logits: np.ndarray,
    count: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``count`` determinizations whose other hand is drawn from the model (the unseen cards'
    log-odds plus Gumbel noise, the top ``sizes[1]``: a draw without replacement in proportion to
    the odds), the rest of the unseen cards shuffled into the deck."""
    size = int(sizes[1])
    pos = int(position[K.DECK_POS])
    worlds = np.repeat(position[None], count, axis=0)
    keys = logits[cards][None] + rng.gumbel(size=(count, len(cards)))
    order = np.argsort(-keys, axis=1)
    for w in range(count):
        hand = cards[order[w, :size]]
        rest = cards[order[w, size:]].copy()
        rng.shuffle(rest)
        worlds[w, K.HANDS + 1] = int(np.bitwise_or.reduce(np.left_shift(1, hand)))
        worlds[w, K.DECK + pos : K.DECK + pos + len(rest)] = rest
    return worlds


def quality(args: argparse.Namespace) -> None:
    """The true hand's share as a multiple of uniform: the model's probabilities, its worlds,
    the shipped inference's worlds (64 each), on up to ``--positions`` held-out decisions."""
    data = load(args.data)
    _, held = split(data)
    rng = np.random.default_rng(0)
    held = rng.choice(held, size=min(args.positions, len(held)), replace=False)
    model = load_model(args.model)
    obs = data["observation"][held].astype(np.float32)
    with torch.no_grad():
        logits = model(torch.from_numpy(obs)).numpy()
    rows: dict[str, list[float]] = {
        "model probability": [],
        "model worlds": [],
        "shipped inference worlds": [],
        "the true hand": [],
    }
    packed = opponent_network()
    for t in args.temperatures:
        rows[f"network inference worlds, T={t}"] = []
    informed = []
    for i, row in enumerate(held):
        position, rules, cards, sizes = position_of(obs[i])
        hand = int(data["hand"][row])
        size = int(sizes[1])
        uniform = size / len(cards)
        truth = np.array([(hand >> int(c)) & 1 for c in cards], dtype=bool)
        p = 1 / (1 + np.exp(-logits[i][cards]))
        p = p * size / p.sum()
        rows["model probability"].append(float(p[truth].mean()) / uniform)
        rows["the true hand"].append(1 / uniform)
        mine = sample_worlds(position, cards, sizes, logits[i], 64, rng)
        stream = decision_seed(0, obs[i], uniform=args.stream == "uniform")
        shipped = inferred_worlds(position, rules, cards, sizes, 64, stream.copy())
        found = [("model worlds", mine), ("shipped inference worlds", shipped)]
        for t in args.temperatures:
            found.append(
                (
                    f"network inference worlds, T={t}",
                    network_worlds(position, rules, cards, sizes, 64, stream.copy(), packed, t),
                )
            )
        for name, worlds in found:
            held_cards = np.mean([bin(int(w) & hand).count("1") for w in worlds[:, K.HANDS + 1]])
            rows[name].append(held_cards / size / uniform)
        informed.append(bool(obs[i][OFFSETS["deal_played"]].max() > 0))
    informed_arr = np.array(informed)
    kinds = data["kinds"]
    kind_of = data["kind"][held]
    out: dict[str, Any] = {"positions": len(held), "stream": args.stream,
                           "after_plays": int(informed_arr.sum()), "decisions": len(data["hand"]),
                           "temperatures": args.temperatures, "by_player": {}}  # fmt: skip
    for k, name in enumerate(kinds):
        pick = informed_arr & (kind_of == k)
        out["by_player"][str(name)] = {
            "positions": int(pick.sum()),
            **{key: float(np.array(values)[pick].mean()) for key, values in rows.items()},
        }
    for name, values in rows.items():
        v = np.array(values)
        out[name] = {
            "all": float(v.mean()),
            "all_se": float(v.std(ddof=1) / np.sqrt(len(v))),
            "after_plays": float(v[informed_arr].mean()),
        }
        d = v - np.array(rows["shipped inference worlds"])
        out[name]["minus_shipped"] = float(d.mean())
        out[name]["minus_shipped_half_width"] = float(1.96 * d.std(ddof=1) / np.sqrt(len(d)))
        half, diff_half = (1.96 * x.std(ddof=1) / np.sqrt(len(x)) for x in (v, d))
        print(f"{name}: {v.mean():.3f} ± {half:.3f} x uniform (after this deal's first play: "
              f"{v[informed_arr].mean():.3f}); minus the shipped inference's {d.mean():+.3f} ± "
              f"{diff_half:.3f}")  # fmt: skip
    for name, row in out["by_player"].items():
        print(
            f"  the other seat {name} ({row['positions']} positions after its first play): "
            + ", ".join(f"{key} {row[key]:.3f}" for key in rows)
        )
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


# ------------------------------------------------------- the network as the opponent model
@njit(cache=True)
def network_log_likelihood(
    world: np.ndarray,
    position: np.ndarray,
    rules: np.ndarray,
    flat: np.ndarray,
    meta: np.ndarray,
    temperature: float,
    eps: float,
    state: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    work: np.ndarray,
    actions: np.ndarray,
    scores: np.ndarray,
) -> float:
    """``world_kernels.deal_log_likelihood`` with the policy network ``flat, meta`` as the model
    of the other seat (its softmax at ``temperature``, ``eps`` of a uniform choice mixed in)."""
    n = rules[K.R_PLAYERS]
    made = position[K.PLAYS] % (K.HAND_SIZE * n)
    if made == 0:
        return 0.0
    first = (position[K.CURRENT] - made) % n
    state[:] = world
    total = 0.0
    for k in range(made - 1, -1, -1):
        count, chosen = S.rewind_play(state, rules, k, first, obs, mask, work)
        if count == 0:
            continue
        if chosen < 0:
            total += np.log(eps / count)
            continue
        target = state[K.MOVE_ACTIONS + chosen]
        _policy_scores(
            obs.reshape((1, obs.shape[0])),
            mask.reshape((1, mask.shape[0])),
            flat,
            meta,
            0,
            actions,
            scores,
        )
        top = -1e300
        for row in range(MAX_LEGAL):
            if actions[0, row] >= 0 and actions[0, row] < mask.shape[0]:
                top = max(top, scores[row] / temperature)
        z = 0.0
        p = 0.0
        for row in range(MAX_LEGAL):
            if actions[0, row] >= 0 and actions[0, row] < mask.shape[0]:
                e = np.exp(scores[row] / temperature - top)
                z += e
                if actions[0, row] == target:
                    p = e
        total += np.log((1.0 - eps) * p / z + eps / count)
    return total


@njit(cache=True)
def network_inferred_worlds(
    position: np.ndarray,
    rules: np.ndarray,
    cards: np.ndarray,
    sizes: np.ndarray,
    candidates: int,
    rng: np.ndarray,
    flat: np.ndarray,
    meta: np.ndarray,
    temperature: float,
    eps: float,
    out: np.ndarray,
) -> None:
    """``world_kernels.inferred_worlds`` with ``network_log_likelihood``."""
    worlds = np.empty((candidates, position.shape[0]), dtype=np.int64)
    logp = np.empty(candidates)
    state = np.empty_like(position)
    obs = np.empty(OBSERVATION_SIZE, dtype=np.float32)
    mask = np.empty(NUM_ACTIONS, dtype=np.int8)
    work = np.empty(S.WORK_SIZE, dtype=np.int64)
    actions = np.empty((1, MAX_LEGAL), dtype=np.int64)
    scores = np.empty(MAX_LEGAL, dtype=np.float32)
    for c in range(candidates):
        S.determinize(position, cards, sizes, rng, worlds[c])
        logp[c] = network_log_likelihood(
            worlds[c],
            position,
            rules,
            flat,
            meta,
            temperature,
            eps,
            state,
            obs,
            mask,
            work,
            actions,
            scores,
        )
    S.resample_worlds(worlds, logp, rng, out)


def opponent_network(name: str = "bastra_2p:network") -> tuple[np.ndarray, np.ndarray]:
    """The packed arrays of a packaged network, as the opponent model."""
    player = make_policy(name)
    arrays = policy_arrays(player.model)
    assert arrays is not None
    return pack_policies([arrays])


def network_worlds(
    position: np.ndarray,
    rules: np.ndarray,
    cards: np.ndarray,
    sizes: np.ndarray,
    count: int,
    rng: np.ndarray,
    packed: tuple[np.ndarray, np.ndarray],
    temperature: float = 1.0,
    eps: float = 0.02,
) -> np.ndarray:
    out = np.empty((count, position.shape[0]), dtype=np.int64)
    network_inferred_worlds(
        position,
        rules,
        cards,
        sizes,
        8 * count,
        rng,
        packed[0],
        packed[1],
        float(temperature),
        float(eps),
        out,
    )
    return out


class UniformStreamPIMC(PIMCPolicy):
    """PIMC whose worlds come from splitmix64's output (``decision_seed(..., uniform=True)``)
    instead of the stream the players keep."""

    def decision_stream(self, obs: np.ndarray) -> np.ndarray:
        return decision_seed(self.seed, obs, uniform=True)


class WorldsPIMC(PIMCPolicy):
    """PIMC (the opponent model in the rollouts, as ``:infer``) on worlds drawn another way:
    from the hand model (``hand_model``), or by the likelihood of the deal's plays under the
    policy network ``packed`` at ``temperature`` (``network_worlds``)."""

    def __init__(self, budget: int, seed: int, hand_model: HandNet | None = None,
                 packed: tuple[np.ndarray, np.ndarray] | None = None, temperature: float = 0.5,
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__(budget, seed=seed, infer=True, **kwargs)
        self.hand_model, self.packed, self.temperature = hand_model, packed, temperature

    def action_values(
        self, observation: Any, rollout_model_weight: float | None = None
    ) -> dict[int, float]:
        obs = np.asarray(observation["observation"], dtype=np.float32)
        position, rules, cards, sizes = position_of(obs)
        actions = legal_moves(position, rules)
        n = len(actions)
        share = self.rollout_model_weight if rollout_model_weight is None else rollout_model_weight
        rng = self.decision_stream(obs)
        if self.hand_model is not None:
            with torch.no_grad():
                logits = self.hand_model(torch.from_numpy(obs)[None])[0].numpy()
            worlds = sample_worlds(position, cards, sizes, logits, self.budget,
                                   np.random.default_rng(int(rng[0])))  # fmt: skip
        else:
            assert self.packed is not None
            worlds = network_worlds(position, rules, cards, sizes, self.budget, rng, self.packed,
                                    self.temperature)  # fmt: skip
        modelled, plain = np.zeros(n), np.zeros(n)
        self.value_worlds(position, rules, worlds, share, POINTS_ONLY, modelled, plain)
        values = (share * modelled + (1 - share) * plain) / self.budget
        return dict(zip(actions.tolist(), values.tolist(), strict=True))


def rate_line(line: str, seed: int, model_path: Path | None = None) -> Any:
    """``learned-inference:X`` (worlds from the hand model at ``model_path``) or
    ``network-inference:X`` (the packaged 2p network as the opponent model) for X ``pimc:64`` or
    ``bastra_2p:infer``; any other name as ``make_policy`` makes it."""
    kind, _, base = line.partition(":")
    if kind == "uniform-stream":  # the player's PIMC worlds from splitmix64's output
        player = make_policy(base, seed=seed)
        if not isinstance(player, LearnedPolicy) or player.pimc is None:
            raise ValueError(f"{base} runs no PIMC on inferred worlds")
        old = player.pimc
        player.pimc = UniformStreamPIMC(old.budget, seed=old.seed, endgame=old.endgame,
                                        infer=True, opponent_model=old.opponent_model)  # fmt: skip
        return player
    if kind not in ("learned-inference", "network-inference"):
        return make_policy(line, seed=seed)
    how: dict[str, Any] = (
        {"hand_model": load_model(model_path)}
        if kind == "learned-inference" and model_path
        else {"packed": opponent_network()}
    )
    if base == "pimc:64":
        return WorldsPIMC(64, seed=seed, **how)
    player = make_policy(base, seed=seed)
    if not isinstance(player, LearnedPolicy) or player.pimc is None:
        raise ValueError(f"{base} runs no PIMC on inferred worlds")
    old = player.pimc
    new = WorldsPIMC(old.budget, seed=old.seed, opponent_model=old.opponent_model, **how)
    new.endgame = old.endgame
    player.pimc = new
    return player


def rate(args: argparse.Namespace) -> None:
    import oracle_ceiling as oc

    for line in args.lines:
        factory = ("hand_inference", "rate_line", (args.model,))
        row = oc.run_line(line, args.deals, args.seed, args.workers, factory)
        print(f"{line} vs {oc.OPPONENT}: {row['games']} games, won {row['win_rate']:.1%} "
              f"[{row['win_ci'][0]:.1%}, {row['win_ci'][1]:.1%}], "
              f"{row['points']:+.2f} ± {row['points_half_width']:.2f} points a game, "
              f"{row['seconds']:.0f} s", flush=True)  # fmt: skip
        if args.json:
            results = json.loads(args.json.read_text()) if args.json.exists() else {}
            results.setdefault("lines", {})[line] = row
            args.json.write_text(json.dumps(results, indent=1) + "\n")


def _paired_line(job: tuple[str, str, int, int, str, Path | None]) -> dict[str, Any]:
    line, mode, deals, seed, opponent, model_path = job
    torch.set_num_threads(1)
    result = duplicate_match(rate_line(line, 0, model_path), opponent, deals=deals, mode=mode,
                             seed=seed, names=(line, opponent), num_threads=1,
                             variance_reduction=True)  # fmt: skip
    assert result.deal_values is not None and result.raw_deal_values is not None
    return {
        "player": line, "opponent": opponent, "mode": mode, "games": result.games,
        "win_rate": result.win_rate, "ci_low": result.ci_low, "ci_high": result.ci_high,
        "point_diff": result.point_diff, "point_diff_ci": result.point_diff_ci,
        "raw_point_diff": result.raw_point_diff, "raw_point_diff_ci": result.raw_point_diff_ci,
        "deal_values": result.deal_values.tolist(),
        "raw_deal_values": result.raw_deal_values.tolist(),
    }  # fmt: skip


def paired(args: argparse.Namespace) -> None:
    """Two lines against the same opponent on the same duplicate deals, variance-reduced, one
    process a line; the first line minus the second, deal by deal."""
    jobs = [(line, args.mode, args.deals, args.seed, args.opponent, args.model)
            for line in args.lines]  # fmt: skip
    start = time.perf_counter()
    with mp.get_context("spawn").Pool(len(jobs)) as pool:
        rows = pool.map(_paired_line, jobs)
    out: dict[str, Any] = {"seed": args.seed, "deals": args.deals, "mode": args.mode,
                           "seconds": time.perf_counter() - start, "lines": rows}  # fmt: skip
    for row in rows:
        print(f"{row['player']} vs {row['opponent']}: {row['games']} {args.mode}s, "
              f"{row['point_diff']:+.2f} ± {row['point_diff_ci']:.2f} reduced, plain "
              f"{row['raw_point_diff']:+.2f} ± {row['raw_point_diff_ci']:.2f}, won "
              f"{row['win_rate']:.1%}")  # fmt: skip
    for key in ("deal_values", "raw_deal_values"):
        diff = np.array(rows[0][key]) - np.array(rows[1][key])
        half = 1.96 * diff.std(ddof=1) / np.sqrt(len(diff))
        out[f"difference_{key}"] = [float(diff.mean()), float(half)]
        print(f"{rows[0]['player']} minus {rows[1]['player']}, {key}: "
              f"{diff.mean():+.2f} ± {half:.2f} points")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--rounds", type=int, default=2000)
    g.add_argument("--seed", type=int, default=100_000)
    g.add_argument("--workers", type=int, default=max(1, mp.cpu_count()))
    g.add_argument("--out", type=Path, default=Path("runs/hand_inference/data"))
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, default=Path("runs/hand_inference/data"))
    t.add_argument("--out", type=Path, default=Path("runs/hand_inference/model.pt"))
    t.add_argument("--hidden", type=int, default=512)
    t.add_argument("--epochs", type=int, default=10)
    t.add_argument("--batch", type=int, default=256)
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--threads", type=int, default=2)
    q = sub.add_parser("quality")
    q.add_argument("--data", type=Path, default=Path("runs/hand_inference/data"))
    q.add_argument("--model", type=Path, default=Path("runs/hand_inference/model.pt"))
    q.add_argument("--positions", type=int, default=2000)
    q.add_argument("--json", type=Path)
    q.add_argument("--temperatures", type=float, nargs="*", default=[1.0])
    q.add_argument(
        "--stream", choices=["uniform", "yardstick"], default="uniform",
        help="the random stream the inferences draw their candidate worlds from "
        "(decision_seed's uniform; the yardsticks' stream is not uniform)",
    )  # fmt: skip
    r = sub.add_parser("rate")
    r.add_argument("--model", type=Path, default=Path("runs/hand_inference/model.pt"))
    r.add_argument(
        "--lines", nargs="+", default=["network-inference:bastra_2p:infer", "bastra_2p:infer"]
    )
    r.add_argument("--deals", type=int, default=300)
    r.add_argument("--seed", type=int, default=3326)
    r.add_argument("--workers", type=int, default=max(1, mp.cpu_count()))
    r.add_argument("--json", type=Path)
    pr = sub.add_parser("paired")
    pr.add_argument("--lines", nargs=2, default=["uniform-stream:bastra_2p:infer",
                                                 "bastra_2p:infer"])  # fmt: skip
    pr.add_argument("--opponent", default="pimc:64:infer")
    pr.add_argument("--mode", choices=["round", "game"], default="round")
    pr.add_argument("--deals", type=int, default=600)
    pr.add_argument("--seed", type=int, default=5000)
    pr.add_argument("--model", type=Path)
    pr.add_argument("--json", type=Path)
    args = parser.parse_args()
    {"paired": paired, "generate": generate, "train": train, "quality": quality, "rate": rate}[
        args.command
    ](args)


if __name__ == "__main__":
    main()
