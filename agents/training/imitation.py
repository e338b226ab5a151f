"""A warm start before self-play: behaviour cloning of a built-in player."""

from __future__ import annotations

import time

import numpy as np
import torch
from tqdm import tqdm

import bastra_env
from agents.learning.features import action_inputs
from agents.learning.network import PolicyValueNet
from agents.registry import make_policy
from agents.training.config import Config


def imitate(
    model: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    config: Config,
    device: torch.device,
    rng: np.random.Generator,
) -> dict[str, float]:
    """Behaviour cloning of ``ppo.imitation_teacher`` playing every seat: cross-entropy on its
    moves, and its seat's scaled round reward as the value target."""
    started = time.perf_counter()
    section = config.section
    teacher = make_policy(section.imitation_teacher, seed=config.seed)
    env = bastra_env.raw_env(rules=config.rules, reward="points")
    obs: list[np.ndarray] = []
    ids: list[np.ndarray] = []
    feats: list[np.ndarray] = []
    moves: list[int] = []
    targets: list[float] = []
    bar = tqdm(total=section.imitation_samples, desc="imitation data", unit="move", leave=False)
    while len(moves) < section.imitation_samples:
        env.reset(seed=int(rng.integers(2**62)))
        seat_rows: dict[str, list[int]] = {a: [] for a in env.possible_agents}
        returns = dict.fromkeys(env.possible_agents, 0.0)
        game = env.game
        assert game is not None  # reset deals it
        while not game.done:
            agent = env.agent_selection
            seen = env.observe(agent)
            action_ids, features = action_inputs(seen["observation"], seen["action_mask"])
            move = teacher.act(seen, env=env)
            seat_rows[agent].append(len(moves))
            obs.append(seen["observation"])
            ids.append(action_ids)
            feats.append(features)
            moves.append(move)
            targets.append(0.0)
            env.step(move)
            for a in env.possible_agents:
                returns[a] += env.rewards[a]
        for a, rows in seat_rows.items():
            for row in rows:
                targets[row] = returns[a] * section.reward_scale
        bar.update(48)
    bar.close()
    data = {
        "obs": torch.from_numpy(np.stack(obs)).to(device),
        "ids": torch.from_numpy(np.stack(ids)).to(device),
        "feats": torch.from_numpy(np.stack(feats)).to(device),
        "moves": torch.tensor(moves, device=device),
        "targets": torch.tensor(targets, dtype=torch.float32, device=device),
    }
    size = len(moves)
    for _ in tqdm(range(section.imitation_epochs), desc="imitation epochs", leave=False):
        order = torch.randperm(size)
        for start in range(0, size, section.minibatch_size):
            mb = order[start : start + section.minibatch_size]
            logits, values = model(data["obs"][mb], data["ids"][mb], data["feats"][mb])
            loss = torch.nn.functional.cross_entropy(logits, data["moves"][mb])
            loss = loss + section.vf_coef * 0.5 * (values - data["targets"][mb]).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), section.max_grad_norm)
            optimizer.step()
    with torch.no_grad():
        hits = 0
        for start in range(0, size, 4096):
            logits, _ = model(
                data["obs"][start : start + 4096],
                data["ids"][start : start + 4096],
                data["feats"][start : start + 4096],
            )
            hits += int((logits.argmax(-1) == data["moves"][start : start + 4096]).sum())
    return {"samples": size, "accuracy": hits / size, "seconds": time.perf_counter() - started}
