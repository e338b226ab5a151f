"""Learning the endgame search (``algorithm: endgame``): the network alone learns what the exact
endgame search knows, from its value of every legal move in the true world.

    bastra train --config endgame_smoke --run-dir runs/endgame   # every part, in seconds
    bastra train --config endgame_2p --run-dir runs/endgame_2p init_from=runs/2p/final.pt
    bastra train --resume runs/endgame_2p/checkpoint_000003.pt   # continue exactly

1. **Data.** ``endgame.rounds`` single rounds of self-play by the starting network (``init_from``),
   in shards of ``BATCH_GAMES`` rounds played here or on ``endgame.ray_workers`` Ray actors (the
   same data either way: each shard has its own seeds; a killed actor's shard is played again),
   each seat sampling its policy. Once the deck is empty (2p: the whole last deal; the team game:
   the last three cards, as the endgame search plays it) every decision with a choice keeps the
   value of every legal move in the *true* world (``agents.search.endgame.world_values``: the
   other hands as they are), as round points. In 2p that is the exact value; in the team game
   the true hands are a draw from what the seat's observation leaves possible, so over the data
   a move's value is its perfect-information Monte Carlo value, with the true posterior and no
   sampling error in the mean. There the searched best move is played ``SOLVER_SHARE`` of the
   time, so the data holds the positions a better endgame player reaches too.
   ``ANCHOR_SHARE`` of the other decisions are kept as anchors. (The last-but-one 2p deal's
   values in the true world, learnt as well, measured no better: ``docs/experiments.md``.)
2. **Learning.** ``endgame.epochs`` passes over nine tenths of the data: on searched decisions the
   policy's *expected regret*, ``sum_a pi(a) (max_b Q(b) - Q(a))`` in round points (the points
   its choice gives away in expectation), on anchors the KL divergence from the starting policy,
   which keeps the play outside the endgame. The learning rate decays linearly to 0. (Cross-entropy
   toward a softmax of the values, expert iteration's target, hardly moved the network here:
   ``docs/experiments.md``.)
3. **Figures.** After each pass, the held-out tenth: the mean points a decision the network's
   choice gives away against the best move (``regret``) and how often its choice is a best move
   (``metrics.csv``, the progress bar); at the end the network alone against ``eval_opponents``
   (``eval.csv``), ``curves.png``, ``summary.json``.

``final.pt`` is an ordinary checkpoint (``load_policy`` plays it with the table's search). A
checkpoint after each pass holds the network, the optimizer and the streams; a resumed run plays
the same data again (its seed fixes it) and continues exactly.
"""

from __future__ import annotations

import copy
import csv
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from agents.learning.features import action_inputs_batch
from agents.learning.network import (
    PolicyValueNet,
    build_model,
    cpu_state_dict,
    read_checkpoint,
    save_checkpoint,
)
from agents.search.endgame import world_values
from agents.training import ppo
from agents.training.config import Config
from bastra_env import compiled_rules as K
from bastra_env.cards import iter_cards
from bastra_env.compiled_rules import PLAYS_PER_ROUND
from bastra_env.layout import DECK_LEFT_SCALE, NUM_ACTIONS, OBSERVATION_SIZE, OFFSETS
from bastra_env.vector import VectorEnv

SOLVER_SHARE = 0.5
"""Once the deck is empty, the share of self-play decisions that play the searched best move
(the rest sample the network)."""
ANCHOR_SHARE = 0.1
"""The share of decisions outside the endgame kept as anchors (the KL term)."""
HELD_OUT = 10
"""One decision in this many is held out for the regret figures."""
BATCH_GAMES = 256
"""Self-play rounds stepped together."""
ENDGAME_METRICS = ["epoch", "searched", "anchors", "collect_s", "samples", "learn_s",
                   "samples_per_s", "regret_loss", "anchor_kl", "held_out_regret",
                   "held_out_best"]  # fmt: skip
"""The columns of the run's ``metrics.csv``: one row before learning (epoch 0), one a pass."""
_DECK_LEFT = OFFSETS["deck_left"].start
Collector = Callable[[PolicyValueNet, Config, int, Any], dict[str, np.ndarray]]
"""Step 1's signature: (starting network, config, threads, progress bar or None) -> the data."""


def endgame_rows(observations: np.ndarray) -> np.ndarray:
    """``bool[B]``: the rows whose deck is empty (the last deal; in the team game
    ``world_values`` then decides by the hand's size)."""
    return np.rint(observations[:, _DECK_LEFT] * DECK_LEFT_SCALE) == 0


def shard_count(config: Config, size: int = BATCH_GAMES) -> int:
    """Step 1's shards: ``size`` rounds each, the last one the rest."""
    return -(-config.endgame.rounds // size)


def collect(
    model: PolicyValueNet, config: Config, threads: int, bar: Any = None
) -> dict[str, np.ndarray]:
    """The self-play data of step 1 (module docs): ``obs`` (float16), ``mask``, ``gaps``
    (float16 ``[N, 208]``: each legal move's points below the best, 0 elsewhere and on anchors)
    and ``searched`` (bool), shard after shard in their order, played here on ``threads`` or on
    ``endgame.ray_workers`` Ray actors (``agents.integrations.ray_selfplay``): the same config
    gives the same data either way."""
    size = BATCH_GAMES
    shards = list(range(shard_count(config, size)))
    found = 0

    def advance(index: int, result: dict[str, Any]) -> None:
        nonlocal found
        found += int(result["searched"].sum())
        if bar is not None:
            bar.update(int(result["rounds"]))
            bar.set_postfix(searched=f"{found:,}")

    if config.endgame.ray_workers:
        from agents.integrations.ray_selfplay import RaySelfPlay

        runner = RaySelfPlay(config.endgame.ray_workers)
        try:
            shared = shard_inputs(model, config, size)
            results = runner.run(play_remote_shard, shared, shards, on_result=advance)
        finally:
            runner.close()
    else:
        results = []
        for index in shards:
            results.append(play_shard(model, config, index, threads, size))
            advance(index, results[-1])
    if not any(len(r["obs"]) for r in results):
        raise ValueError("the self-play rounds gave no decision to learn from: more endgame.rounds")
    return {name: np.concatenate([r[name] for r in results]) for name in SHARD_FIELDS}


SHARD_FIELDS = ("obs", "mask", "gaps", "searched")
"""The arrays a shard gives (``collect``'s data, in shard order)."""


ShardInputs = tuple[dict[str, Any], dict[str, Any], Config, int]
"""What every shard on an actor needs: the network's config, its weights, the run's config and
the shards' size (``shard_inputs``)."""


def shard_inputs(model: PolicyValueNet, config: Config, size: int = BATCH_GAMES) -> ShardInputs:
    """``play_remote_shard``'s ``shared``, sent once for every shard."""
    return asdict(model.config), cpu_state_dict(model), config, size


def play_remote_shard(shared: ShardInputs, index: int) -> dict[str, np.ndarray]:
    """``play_shard`` on a Ray actor (one thread), from ``shard_inputs``."""
    network, weights, config, size = shared
    model = build_model({"network": network, "model": weights})
    return play_shard(model.eval(), config, index, 1, size)


def play_shard(
    model: PolicyValueNet, config: Config, index: int, threads: int, size: int = BATCH_GAMES
) -> dict[str, np.ndarray]:
    """Shard ``index`` of step 1: its ``size`` rounds from their seeds, with a random
    stream of its own, so a shard is the same wherever it is played. ``SHARD_FIELDS`` and
    ``rounds``."""
    rules = config.rules
    seats = rules.num_players
    rng = np.random.default_rng([config.seed, 7, index])
    start = index * size
    rows: dict[str, list[Any]] = {name: [] for name in SHARD_FIELDS}
    games_here = min(size, config.endgame.rounds - start)
    env = VectorEnv(games_here, rules=rules, reward="points", num_threads=threads)
    state = env.reset(seed=config.seed * 1_000_003 + start)
    live = np.ones(games_here, dtype=bool)
    while live.any():
        games = np.flatnonzero(live)
        obs = np.ascontiguousarray(state["observation"][games], dtype=np.float32)
        mask = state["action_mask"][games].astype(bool)
        actions = sample_actions(model, obs, mask, rng)
        near_end = endgame_rows(obs)
        for k in np.flatnonzero(mask.sum(1) > 1):
            gaps = np.zeros(NUM_ACTIONS, dtype=np.float16)  # points: small integers
            values = None
            if near_end[k]:
                values = world_values(
                    {"observation": state["observation"][games[k]],
                     "action_mask": state["action_mask"][games[k]]},
                    *true_world(env.states[games[k]], seats),
                )  # fmt: skip
            if values is not None:
                best = max(values.values())
                for action, value in values.items():
                    gaps[action] = best - value
                if rng.random() < SOLVER_SHARE:
                    actions[k] = min(values, key=lambda a: (-values[a], a))
            elif rng.random() >= ANCHOR_SHARE:
                continue
            rows["obs"].append(obs[k].astype(np.float16))
            rows["mask"].append(mask[k])
            rows["gaps"].append(gaps)
            rows["searched"].append(values is not None)
        state = env.step_some(games, actions)
        live[games] &= ~state["terminated"][games]
    return {
        "obs": np.array(rows["obs"], dtype=np.float16).reshape(-1, OBSERVATION_SIZE),
        "mask": np.array(rows["mask"], dtype=bool).reshape(-1, NUM_ACTIONS),
        "gaps": np.array(rows["gaps"], dtype=np.float16).reshape(-1, NUM_ACTIONS),
        "searched": np.array(rows["searched"], dtype=bool),
        "rounds": np.int64(games_here),
    }


@torch.no_grad()
def sample_actions(
    model: PolicyValueNet, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """The self-play moves: each row's action drawn from the network's policy with one
    ``rng.random()`` draw (its greedy choice where a rounding draws past the last legal one)."""
    logits = network_logits(model, obs, mask).cpu()
    probs = torch.softmax(logits.double(), -1).numpy()
    drawn = (probs.cumsum(1) < rng.random(len(obs))[:, None]).sum(1)
    drawn = drawn.clip(max=NUM_ACTIONS - 1)  # a rounding past the last legal action
    greedy = logits.argmax(-1).numpy()
    return np.where(mask[np.arange(len(obs)), drawn], drawn, greedy)


def true_world(state: np.ndarray, seats: int) -> tuple[list[list[int]], list[int]]:
    """The hidden cards of the seat to move in a vector env's state row: the other seats' hands
    in turn order after it, and the deck's rest (``world_values``' arguments)."""
    me = int(state[K.CURRENT])
    hands = [list(iter_cards(int(state[K.HANDS + (me + i) % seats]))) for i in range(1, seats)]
    deck = state[K.DECK + state[K.DECK_POS] : K.DECK + state[K.DECK_LEN]].tolist()
    return hands, deck


def network_logits(model: PolicyValueNet, obs: np.ndarray, mask: np.ndarray) -> torch.Tensor:
    """The network's logits ``[B, 208]`` on float32 observations and their masks."""
    actions, features = action_inputs_batch(obs, mask)
    device = next(model.parameters()).device
    logits, _ = model(torch.from_numpy(obs).to(device), torch.from_numpy(actions).to(device),
                      torch.from_numpy(features).to(device))  # fmt: skip
    return logits


@torch.no_grad()
def held_out_regret(
    model: PolicyValueNet, data: dict[str, np.ndarray], rows: np.ndarray
) -> tuple[float, float]:
    """(mean points a searched decision the network's greedy choice gives away against the best
    move, the share of decisions where its choice is a best move) over ``rows``."""
    rows = rows[data["searched"][rows]]
    if len(rows) == 0:
        return 0.0, 1.0
    model.eval()
    lost = []
    for start in range(0, len(rows), 4096):
        part = rows[start : start + 4096]
        obs = data["obs"][part].astype(np.float32)
        chosen = network_logits(model, obs, data["mask"][part]).argmax(-1).cpu().numpy()
        lost.append(data["gaps"][part, chosen].astype(np.float32))
    gaps = np.concatenate(lost)
    return float(gaps.mean()), float((gaps < 1e-6).mean())


@torch.no_grad()
def anchor_log_probs(model: PolicyValueNet, data: dict[str, np.ndarray]) -> np.ndarray:
    """The starting policy's log-probabilities ``[N, 208]`` on the anchor rows, in their order
    (``data["anchor_row"]`` maps a row of the data to its row here)."""
    rows = np.flatnonzero(~data["searched"])
    out = np.zeros((len(rows), data["mask"].shape[1]), dtype=np.float32)
    model.eval()
    for start in range(0, len(rows), 4096):
        part = rows[start : start + 4096]
        logits = network_logits(model, data["obs"][part].astype(np.float32), data["mask"][part])
        out[start : start + len(part)] = torch.log_softmax(logits, -1).masked_fill(
            ~torch.from_numpy(data["mask"][part]).to(logits.device), 0.0).cpu().numpy()  # fmt: skip
    data["anchor_row"] = np.cumsum(~data["searched"]) - 1
    return out


def learn_epoch(
    model: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    data: dict[str, np.ndarray],
    anchors: np.ndarray,
    train: np.ndarray,
    config: Config,
    generator: torch.Generator,
    step: int,
    steps: int,
) -> tuple[dict[str, float], int]:
    """One pass of step 2 (module docs) over ``train`` in shuffled minibatches, the learning
    rate decaying linearly over ``steps``; the mean losses, and the step count after it."""
    model.train()
    device = next(model.parameters()).device
    totals = {"regret_loss": 0.0, "anchor_kl": 0.0}
    batches = 0
    order = train[torch.randperm(len(train), generator=generator).numpy()]
    for start in range(0, len(order), config.endgame.minibatch_size):
        mb = order[start : start + config.endgame.minibatch_size]
        for group in optimizer.param_groups:
            group["lr"] = config.endgame.learning_rate * max(0.0, 1.0 - step / steps)
        mask = torch.from_numpy(data["mask"][mb]).to(device)
        log_p = torch.log_softmax(
            network_logits(model, data["obs"][mb].astype(np.float32), data["mask"][mb]), -1
        ).masked_fill(~mask, 0.0)
        searched = torch.from_numpy(data["searched"][mb]).to(device)
        loss = torch.zeros((), device=device)
        if searched.any():
            gaps = torch.from_numpy(data["gaps"][mb].astype(np.float32)).to(device)[searched]
            regret = (log_p[searched].exp() * gaps).sum(-1).mean()
            loss = loss + regret
            totals["regret_loss"] += float(regret.detach())
        if (~searched).any():
            anchored = data["anchor_row"][mb[~data["searched"][mb]]]
            ref = torch.from_numpy(anchors[anchored]).to(device)
            legal = mask[~searched]
            kl = (ref.exp() * (ref - log_p[~searched])).masked_fill(~legal, 0.0).sum(-1).mean()
            loss = loss + kl
            totals["anchor_kl"] += float(kl.detach())
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.endgame.max_grad_norm)
        optimizer.step()
        step += 1
        batches += 1
    model.eval()
    return {k: v / max(batches, 1) for k, v in totals.items()}, step


def train_endgame(
    config: Config, run_dir: Path, resume: str | None = None, collector: Collector | None = None
) -> dict[str, Any]:
    """Run the endgame learning of the module docs into ``run_dir``; the run's summary.
    ``collector``: what step 1 collects (``collect`` by default; an experiment may value other
    decisions, with the same arrays: ``experiments/rollout_values.py``)."""
    device = ppo.seed_everything(config)
    payload = read_checkpoint(resume) if resume else None
    if payload is not None and "endgame_epoch" not in payload:
        raise ValueError("the checkpoint to resume is not an endgame run's (no epoch)")
    threads = ppo.set_up_threads(config, payload.get("threads", 0) if payload else 0)
    writer = ppo.open_run_dir(run_dir, config)
    model, optimizer = ppo.build_learner(config, device)
    start_model = copy.deepcopy(model).eval()  # the anchor and the data's player
    generator = torch.Generator().manual_seed(config.seed)
    epoch, step, seconds = 0, 0, 0.0
    if payload is not None:
        model.load_state_dict(payload["model"])
        start_model.load_state_dict(payload["start_model"])
        optimizer.load_state_dict(payload["optimizer"])
        generator.set_state(payload["generator"])
        torch.set_rng_state(payload["torch_rng"])
        epoch, step, seconds = (payload["endgame_epoch"], payload["endgame_step"],
                                payload["train_seconds"])  # fmt: skip
    ppo.start_logs(run_dir, resumed=payload is not None)
    metrics_path = run_dir / "metrics.csv"
    with metrics_path.open(newline="") as f:
        header = next(csv.reader(f), [])
    if header != ENDGAME_METRICS:  # a fresh run, or a resume into a new folder
        with metrics_path.open("w", newline="") as f:
            csv.writer(f).writerow(ENDGAME_METRICS)

    started = time.perf_counter()
    with tqdm(total=config.endgame.rounds, unit="round", desc="self-play",
              dynamic_ncols=True) as bar:  # fmt: skip
        data = (collector or collect)(start_model, config, threads, bar)
    collect_s = time.perf_counter() - started
    split = np.random.default_rng([config.seed, 11]).permutation(len(data["obs"]))
    held, train = split[: len(split) // HELD_OUT], split[len(split) // HELD_OUT :]
    anchors = anchor_log_probs(start_model, data)
    searched, kept = int(data["searched"].sum()), len(data["obs"])
    plays = config.endgame.rounds * PLAYS_PER_ROUND
    steps = config.endgame.epochs * -(-len(train) // config.endgame.minibatch_size)
    if payload is None:
        regret, best = held_out_regret(model, data, held)
        log_row(metrics_path, writer, [0, searched, kept - searched, collect_s, 0, 0.0, 0.0,
                                       0.0, 0.0, regret, best])  # fmt: skip
    with tqdm(total=config.endgame.epochs, initial=epoch, unit="pass", desc="learning",
              dynamic_ncols=True) as bar:  # fmt: skip
        while epoch < config.endgame.epochs:
            clock = time.perf_counter()
            losses, step = learn_epoch(model, optimizer, data, anchors, train, config,
                                       generator, step, steps)  # fmt: skip
            learn_s = time.perf_counter() - clock
            epoch += 1
            regret, best = held_out_regret(model, data, held)
            log_row(metrics_path, writer, [epoch, searched, kept - searched, collect_s,
                                           len(train), learn_s, len(train) / learn_s,
                                           losses["regret_loss"], losses["anchor_kl"], regret,
                                           best])  # fmt: skip
            seconds += learn_s
            bar.update(1)
            bar.set_postfix(regret=f"{regret:.3f}", best=f"{best:.1%}")
            save_endgame_checkpoint(run_dir / f"checkpoint_{epoch:06d}.pt", model, start_model,
                                    optimizer, config, epoch, step, seconds + collect_s,
                                    generator, threads)  # fmt: skip
    seconds += collect_s
    save_endgame_checkpoint(run_dir / "final.pt", model, start_model, optimizer, config, epoch,
                            step, seconds, generator, threads)  # fmt: skip
    progress = ppo.Progress(update=epoch, env_steps=plays, samples=epoch * len(train),
                            train_seconds=seconds, threads=threads)  # fmt: skip
    final = ppo.evaluate_learner(model, config, run_dir, writer, progress, threads)
    writer.close()
    summary = ppo.summarise(run_dir, config, progress, final)
    print(f"endgame: {searched:,} searched decisions, held-out regret {regret:.3f} points a "
          f"decision ({best:.1%} best moves)")  # fmt: skip
    return summary


def log_row(path: Path, writer: Any, values: list[Any]) -> None:
    with path.open("a", newline="") as f:
        csv.writer(f).writerow([f"{v:.6g}" if isinstance(v, float) else v for v in values])
    row = dict(zip(ENDGAME_METRICS, values, strict=True))
    for key in ("held_out_regret", "held_out_best", "regret_loss", "anchor_kl"):
        writer.add_scalar(f"endgame/{key}", row[key], row["epoch"])


def save_endgame_checkpoint(
    path: Path,
    model: PolicyValueNet,
    start_model: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    config: Config,
    epoch: int,
    step: int,
    seconds: float,
    generator: torch.Generator,
    threads: int,
) -> None:
    """The network (what ``load_policy`` plays) and what a resumed run needs."""
    save_checkpoint(
        path,
        model,
        start_model=start_model.state_dict(),
        config=config.to_dict(),
        rules=config.rules.to_dict(),
        optimizer=optimizer.state_dict(),
        endgame_epoch=epoch,
        endgame_step=step,
        train_seconds=seconds,
        threads=threads,
        generator=generator.get_state(),
        torch_rng=torch.get_rng_state(),
    )
