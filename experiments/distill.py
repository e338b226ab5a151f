"""Distilling the teacher into the 2p network: the shipped network with PIMC on inferred worlds
before the endgame (``bastra_2p:infer``, the teacher table's strongest expert) plays single
rounds against itself; the packaged network learns its moves and values; the student's network
alone is rated against the packaged one and the yardsticks.

    python experiments/distill.py generate --shards 1400 --ray-workers 2   # resumable
    python experiments/distill.py train [--epochs 12] [--loss regret]  # the student
    python experiments/distill.py rate [--deals 300]        # full games, variance-reduced
    python experiments/distill.py consistency [--games 64] [--worlds 256]  # the teacher's noise
    python experiments/distill.py curve                     # held out, by the data's size

``generate`` plays shards of 16 single rounds (``agents.experimental.expert.play_shard``: the
expert is the table's ``:infer`` player at 64 worlds, or ``--worlds``, its values in round points;
the move played is drawn from ``softmax(value / 0.5 points)``, the target is that distribution,
one-hot where one move is legal) and writes each shard to ``--data`` as it finishes; shards already
there are kept, so the data grows across runs and each shard's seed fixes its games (a folder holds
one teacher's worlds: ``teacher.json``). ``train`` holds out every 20th shard, fine-tunes the
packaged network on the rest (the target's cross-entropy plus the round's scaled point difference
as the value target) and records every epoch's held-out figures, among them the round points the
network's favourite move gives up by the teacher's values, before the endgame and in it.
``consistency`` measures how much of that a second teacher on independent worlds gives up too (the
teacher's own noise). ``rate`` plays the student's network alone against the packaged network
alone, the student as shipped (its network with the endgame search) against the packaged model as
shipped, and the student's network alone against the heuristic and ``pimc:64`` (seed 2026, one
thread; the packaged network's lines on the same deals are in ``docs/candidate_2p.json``), and
writes the figures with the data's and training's to ``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.experimental.expert import (  # noqa: E402
    SHARD_FIELDS,
    ExpertConfig,
    Weights,
    play_expert_shard,
    shard_seed,
    softmax_target,
)
from agents.learning.features import PAD_ACTION, action_inputs_batch  # noqa: E402
from agents.learning.network import (  # noqa: E402
    PolicyValueNet,
    build_model,
    read_checkpoint,
    save_checkpoint,
)
from agents.learning.policy import endgame_rows, pretrained_path  # noqa: E402
from bastra_env import Rules  # noqa: E402

PACKAGED = "bastra_2p"
SEED = 4242
GAMES = 16
HOLD_OUT = 20
"""Every ``HOLD_OUT``-th shard is held out of training."""
TEMPERATURE = 0.5
"""The teacher's move temperature, in round points."""
SMALLEST_SHARE = 6e-8
"""The smallest share the targets (float16) hold: a move below it counts as that far below."""
RUN = ROOT / "runs" / "distill_2p"
TRAIN_DEFAULTS: dict[str, Any] = {"epochs": 12, "lr": 1e-4, "batch": 512, "vf_coef": 0.5}
"""``train``'s settings unless told otherwise (the command line's defaults, and ``curve``'s)."""
LOSSES = ("cross-entropy", "regret")
"""The policy's term of ``train``'s loss."""


def packaged_model() -> PolicyValueNet:
    model = build_model(read_checkpoint(pretrained_path(PACKAGED)))
    model.eval()
    return model


def expert(worlds: int = 64) -> ExpertConfig:
    rules = Rules(num_players=2, max_rounds=1)
    return ExpertConfig(rules=rules.to_dict(), worlds=worlds, temperature=TEMPERATURE,
                        network_weight=0.3, games=GAMES)  # fmt: skip


def generate(data: Path, shards: int, ray_workers: int, worlds: int = 64) -> None:
    """Shards ``0..shards-1`` not yet in ``data``, each written as it comes back: in this
    process, or on ``ray_workers`` Ray actors (``RaySelfPlay``, one core each; an actor that dies
    has its shard played again). A shard's seed fixes its games, wherever it is played."""
    data.mkdir(parents=True, exist_ok=True)
    teacher = data / "teacher.json"  # a folder holds one teacher's shards
    if teacher.exists():
        held = json.loads(teacher.read_text())["worlds"]
    else:  # shards written before teacher.json was are the 64-world teacher's
        held = 64 if any(data.glob("shard_?????.npz")) else worlds
    if held != worlds:
        raise SystemExit(f"{data} holds shards of a teacher on {held} worlds, not {worlds}")
    teacher.write_text(json.dumps({"worlds": worlds}) + "\n")
    for stale in data.glob("shard_*.tmp.npz"):  # a write cut off by a stop
        stale.unlink()
    torch.set_num_threads(1)
    shared = (Weights.of(packaged_model()), expert(worlds))
    todo = [s for s in range(shards) if not (data / f"shard_{s:05d}.npz").exists()]
    totals = {"decisions": 0, "seconds": 0.0}
    bar = tqdm(total=len(todo), desc="teacher shards", unit="shard")

    def write(index: int, out: dict[str, Any]) -> None:
        s = todo[index]
        tmp = data / f"shard_{s:05d}.tmp.npz"
        np.savez_compressed(tmp, seconds=out["seconds"], **{n: out[n] for n in SHARD_FIELDS})
        tmp.replace(data / f"shard_{s:05d}.npz")
        totals["decisions"] += out["searched_decisions"]
        totals["seconds"] += out["seconds"]
        bar.update()
        bar.set_postfix(ms_a_search=f"{1000 * totals['seconds'] / max(totals['decisions'], 1):.1f}",
                        decisions=f"{totals['decisions']:,}")  # fmt: skip

    seeds = [shard_seed(SEED, 0, s) for s in todo]
    if ray_workers:
        from agents.integrations.ray_selfplay import RaySelfPlay

        runner = RaySelfPlay(ray_workers)
        try:
            runner.run(play_expert_shard, shared, seeds, on_result=write)
        finally:
            runner.close()
    else:
        for index, seed in enumerate(seeds):
            write(index, play_expert_shard(shared, seed))
    bar.close()


def load(data: Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, Any]]:
    paths = sorted(data.glob("shard_?????.npz"))
    if not paths:
        raise SystemExit(f"no shards in {data}: run generate first")
    parts: dict[bool, list[Any]] = {True: [], False: []}
    seconds = 0.0
    for path in paths:
        with np.load(path) as shard:
            parts[int(path.stem.split("_")[1]) % HOLD_OUT == 0].append(
                {name: shard[name] for name in SHARD_FIELDS}
            )
            seconds += float(shard["seconds"])

    def join(shards: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        return {name: np.concatenate([s[name] for s in shards]) for name in SHARD_FIELDS}

    train, held = join(parts[False]), join(parts[True])
    facts = {"shards": len(paths), "train_decisions": len(train["value"]),
             "held_out_decisions": len(held["value"]), "teacher_seconds": seconds}  # fmt: skip
    return train, held, facts


def batch_loss(
    model: PolicyValueNet, data: dict[str, np.ndarray], rows: np.ndarray
) -> tuple[torch.Tensor, ...]:
    """The policy's cross-entropy to the target, the value loss, the entropy of the target,
    whether the policy's favourite is the target's, the round points the favourite gives up by
    the teacher's values, and the policy's expected regret (the points its draw gives up by
    them, ``sum_a pi(a) (max_b Q(b) - Q(a))``), on searched decisions (``rows``)."""
    obs = torch.from_numpy(data["obs"][rows].astype(np.float32))
    actions, features = action_inputs_batch(obs.numpy(), data["mask"][rows])
    actions_t = torch.from_numpy(actions)
    pad = torch.zeros(len(rows), 1)
    full = torch.cat([torch.from_numpy(data["target"][rows].astype(np.float32)), pad], dim=1)
    assert full.shape[1] - 1 == PAD_ACTION
    target = full.gather(1, actions_t)
    logits, values = model.slot_logits(obs, actions_t, torch.from_numpy(features))
    log_probs = logits.log_softmax(-1)
    cross = -(target * log_probs).sum(-1)
    entropy = -(target * target.clamp_min(1e-12).log()).sum(-1)
    value_loss = 0.5 * (values - torch.from_numpy(data["value"][rows])).pow(2)
    favourite = log_probs.argmax(-1, keepdim=True)
    agree = (favourite.squeeze(-1) == target.argmax(-1)).float()
    # the teacher's shares are softmax(value / T): T * log(best share / the favourite's share)
    # is how many round points (by the teacher's values) the policy's favourite gives up
    shares = target.clamp_min(SMALLEST_SHARE)
    gaps = TEMPERATURE * (shares.max(-1, keepdim=True).values.log() - shares.log())
    lost = gaps.gather(1, favourite).squeeze(-1)
    # a move whose share is below float16's range counts as SMALLEST_SHARE (a gap of at most
    # 8.3 points)
    regret = (log_probs.exp() * gaps.masked_fill(actions_t == PAD_ACTION, 0.0)).sum(-1)
    return cross, value_loss, entropy, agree, lost, regret


def in_endgame(obs: np.ndarray) -> np.ndarray:
    """``bool[N]``: the rows where the teacher (and the shipped player) plays the endgame search
    (its last two deals); before them the teacher is PIMC on inferred worlds."""
    return endgame_rows(obs.astype(np.float32), expert().search())


@torch.no_grad()
def decision_figures(
    model: PolicyValueNet, data: dict[str, np.ndarray], rows: np.ndarray
) -> list[np.ndarray]:
    """``batch_loss``'s six figures at each decision of ``rows``, in their order."""
    parts: list[list[np.ndarray]] = [[] for _ in range(6)]
    for start in range(0, len(rows), 4096):
        for k, part in enumerate(batch_loss(model, data, rows[start : start + 4096])):
            parts[k].append(part.numpy())
    return [np.concatenate(p) for p in parts]


def held_out(model: PolicyValueNet, held: dict[str, np.ndarray]) -> dict[str, float]:
    """The figures of ``batch_loss`` over the held-out searched decisions, and the points given
    up split into the decisions before the endgame and in it."""
    rows = np.flatnonzero(held["searched"])
    cross, value, entropy, agree, lost, regret = decision_figures(model, held, rows)
    endgame = in_endgame(held["obs"][rows])
    return {"cross_entropy": float(cross.mean()), "kl": float((cross - entropy).mean()),
            "value_loss": float(value.mean()), "agreement": float(agree.mean()),
            "points_lost": float(lost.mean()), "expected_regret": float(regret.mean()),
            "points_lost_before_endgame": float(lost[~endgame].mean()),
            "points_lost_endgame": float(lost[endgame].mean())}  # fmt: skip


def train(
    data: Path, out: Path, epochs: int, lr: float, batch: int, vf_coef: float, loss_name: str,
    fraction: float = 1.0,
) -> None:  # fmt: skip
    """Fine-tune the packaged network on the shards' searched decisions, by the cross-entropy to
    the teacher's distribution or by the expected regret under its values (``loss_name``, the
    policy's term of the loss); every epoch's held-out figures in the checkpoint's ``distill``
    metadata, the last epoch's weights written to ``out``. ``fraction``: learn from that share
    of the training decisions only (drawn with the run's seed); the held-out ones are the same."""
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    train_data, held, facts = load(data)
    print(f"{facts['train_decisions']:,} decisions to learn from, {facts['held_out_decisions']:,} "
          f"held out ({facts['shards']} shards, {facts['teacher_seconds']:.0f} s of teacher "
          f"play)")  # fmt: skip
    model = packaged_model()
    history = [{"epoch": 0, **held_out(model, held)}]
    print(history[-1])
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    rows = np.flatnonzero(train_data["searched"])
    if fraction < 1.0:
        rows = np.sort(rng.choice(rows, round(fraction * len(rows)), replace=False))
    settings: dict[str, Any] = {"lr": lr, "batch": batch, "vf_coef": vf_coef,
                "epochs": epochs, "loss": loss_name, "fraction": fraction,
                "decisions_learnt": len(rows)}  # fmt: skip
    started = time.perf_counter()
    for epoch in range(1, epochs + 1):
        model.train()
        order = rng.permutation(rows)
        bar = tqdm(range(0, len(order), batch), desc=f"epoch {epoch}", unit="batch", leave=False)
        for start in bar:
            cross, value, _, agree, _, regret = batch_loss(
                model, train_data, order[start : start + batch]
            )
            policy_term = cross if loss_name == "cross-entropy" else regret
            loss = policy_term.mean() + vf_coef * value.mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            bar.set_postfix(ce=f"{cross.mean().item():.3f}", regret=f"{regret.mean().item():.3f}",
                            agree=f"{agree.mean().item():.3f}")  # fmt: skip
        model.eval()
        history.append({"epoch": epoch, **held_out(model, held)})
        print(history[-1], flush=True)
    settings["train_seconds"] = time.perf_counter() - started
    fitted = np.sort(np.random.default_rng(SEED + 3).choice(rows, min(30_000, len(rows)),
                                                            replace=False))  # fmt: skip
    settings["learnt"] = held_out(model, {name: v[fitted] for name, v in train_data.items()})
    save_checkpoint(out, model, distill={"history": history, **settings, **facts})
    last = history[-1]
    print(
        f"wrote {out}: held-out points given up a decision {history[0]['points_lost']:.4f} -> "
        f"{last['points_lost']:.4f} (before the endgame "
        f"{history[0]['points_lost_before_endgame']:.4f} -> "
        f"{last['points_lost_before_endgame']:.4f})"
    )


def shown(path: Path) -> str:
    """``path`` as a command shows it: from the repository's root where it is inside it."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def given_up_before_endgame(model: PolicyValueNet, held: dict[str, np.ndarray]) -> np.ndarray:
    """The points the model's favourite move gives up by the teacher's values at each held-out
    decision before the endgame (``batch_loss``'s fifth figure), in the data's order."""
    rows = np.flatnonzero(held["searched"])
    return decision_figures(model, held, rows[~in_endgame(held["obs"][rows])])[4]


def curve(data: Path, fractions: list[float], loss_name: str, out: Path) -> None:
    """The student trained on shares of the data (``train``'s defaults otherwise): held out, and
    on 30,000 of the decisions it learnt from, the points its favourite move gives up by the
    teacher's values, before the endgame and in it, and its gain over the packaged network held
    out before the endgame with a 95% interval (paired by decision); how the figures move with
    the data's size. A point whose checkpoint is in ``runs/distill_2p`` is read back."""
    study: dict[str, Any] = {"loss": loss_name, "points": [], "command": (
        f"python experiments/distill.py curve --loss {loss_name} --fractions "
        f"{' '.join(f'{f:g}' for f in fractions)} --json {shown(out)}")}  # fmt: skip
    _, held, facts = load(data)
    start = given_up_before_endgame(packaged_model(), held)
    for fraction in fractions:
        path = RUN / f"curve_{loss_name}_{fraction:g}.pt"
        settings = {**TRAIN_DEFAULTS, "loss": loss_name, "fraction": fraction}
        found = None
        if path.exists():  # a point already trained is read back, if it is this point
            payload = torch.load(path, map_location="cpu", weights_only=False)
            found = payload["distill"]
            if any(found.get(k) != v for k, v in settings.items()) or (
                found["train_decisions"] != facts["train_decisions"]
            ):
                found = None
        if found is None:
            train(data, path, **TRAIN_DEFAULTS, loss_name=loss_name, fraction=fraction)
            payload = torch.load(path, map_location="cpu", weights_only=False)
            found = payload["distill"]
        gain = start - given_up_before_endgame(build_model(payload).eval(), held)
        half = 1.96 * gain.std(ddof=1) / np.sqrt(len(gain))
        study["start"] = found["history"][0]
        study["points"].append({"fraction": fraction, "decisions": found["decisions_learnt"],
                                "held_out": found["history"][-1], "learnt": found["learnt"],
                                "gain_before_endgame": float(gain.mean()),
                                "gain_before_endgame_ci": float(half),
                                "seconds": found["train_seconds"]})  # fmt: skip
        out.write_text(json.dumps(study, indent=1) + "\n")
    print(f"wrote {out}")


def rate_student(student: Path, deals: int, out: Path) -> None:
    from experiments.dmc_vs_ppo import rate

    torch.set_num_threads(1)
    payload = torch.load(student, map_location="cpu", weights_only=False)
    study: dict[str, Any] = {
        "student": shown(student),
        "deals": deals,
        "seed": 2026,
        "distill": payload["distill"],
        "lines": [],
        "command": (f"python experiments/distill.py rate --student {shown(student)} "
                    f"--deals {deals} --json {shown(out)}"),
    }
    plan = [(f"{student}:network", f"{PACKAGED}:network", ("student:network", "bastra_2p:network")),
            (str(student), PACKAGED, ("student", "bastra_2p"))]  # fmt: skip
    for yardstick in ("heuristic", "pimc:64"):
        plan.append((f"{student}:network", yardstick, ("student:network", yardstick)))
    for a, b, names in plan:
        study["lines"].append(rate(a, b, names, deals))
        out.write_text(json.dumps(study, indent=1) + "\n")
    print(f"wrote {out}")


def consistency(games: int, out: Path, worlds: int = 64) -> None:
    """How much of the teacher's disagreement with the network is the teacher's own noise:
    single rounds played by the teacher (moves drawn as in ``generate``, seed ``SEED + 1``,
    games not in the data); at every decision with a choice a second teacher on independent
    worlds (another seed) and the packaged network alone choose too. Each choice is scored by
    the first teacher's values (the round points it gives up against the first teacher's best),
    so the second teacher and the network are measured by the same noisy yardstick; split into
    decisions before the endgame (PIMC on inferred worlds) and in it (the endgame searches)."""
    from agents.learning.policy import LearnedPolicy
    from bastra_env.vector import VectorEnv

    torch.set_num_threads(1)
    config = expert(worlds)
    model = packaged_model()
    first, second = (LearnedPolicy(model, config.search(), seed=s, name=f"teacher {s}")
                     for s in (SEED + 1, SEED + 2))  # fmt: skip
    network = LearnedPolicy(model, name="network")
    rules = Rules.from_dict(dict(config.rules))
    env = VectorEnv(games, rules=rules, reward="points", num_threads=1)
    state = env.reset(seed=SEED + 1)
    rng = np.random.default_rng(SEED + 1)
    rows: list[tuple[bool, bool, bool, float, float]] = []
    live = np.ones(games, dtype=bool)
    bar = tqdm(desc="decisions", unit="decision")
    while live.any():
        live_games = np.flatnonzero(live)
        actions = np.empty(len(live_games), dtype=np.int64)
        for k, g in enumerate(live_games):
            view = {"observation": state["observation"][g], "action_mask": state["action_mask"][g]}
            values = first.move_values(view)
            if values is None:  # one legal move
                actions[k] = int(np.flatnonzero(view["action_mask"])[0])
                continue
            again = second.move_values(view)
            assert again is not None
            probs, _ = network.explain_batch(view["observation"][None], view["action_mask"][None])
            mine = int(np.argmax(probs[0]))
            best = max(values, key=values.__getitem__)
            theirs = max(again, key=again.__getitem__)
            endgame = bool(in_endgame(view["observation"][None])[0])
            rows.append((endgame, theirs == best, mine == best, values[best] - values[theirs],
                         values[best] - values[mine]))  # fmt: skip
            target = softmax_target(values, TEMPERATURE)
            choices = list(target)
            shares = np.array([target[a] for a in choices])
            actions[k] = choices[int(rng.choice(len(choices), p=shares / shares.sum()))]
            bar.update()
        state = env.step_some(live_games, actions)
        live[live_games[state["terminated"][live_games]]] = False
    bar.close()
    table = np.array(rows, dtype=np.float64)
    command = f"python experiments/distill.py consistency --games {games}" + (
        f" --worlds {worlds}" if worlds != 64 else "")
    study: dict[str, Any] = {"games": games, "seed": SEED + 1, "worlds": config.worlds,
                             "command": command, "phases": {}}  # fmt: skip
    for phase, pick in (("before the endgame", table[:, 0] == 0), ("the endgame", table[:, 0] == 1),
                        ("every decision", np.ones(len(table), dtype=bool))):  # fmt: skip
        part = table[pick]
        n = len(part)
        entry: dict[str, Any] = {"decisions": n}
        for name, agree, lost in (("second teacher", 1, 3), ("network", 2, 4)):
            half_width = 1.96 * part[:, lost].std(ddof=1) / np.sqrt(n)
            entry[name] = {"agreement": float(part[:, agree].mean()),
                           "points_lost": float(part[:, lost].mean()),
                           "points_lost_ci": float(half_width)}  # fmt: skip
        study["phases"][phase] = entry
        print(phase, json.dumps(entry), flush=True)
    out.write_text(json.dumps(study, indent=1) + "\n")
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate")
    gen.add_argument("--shards", type=int, required=True, help="shards 0..N-1 (16 rounds each)")
    gen.add_argument("--data", type=Path, default=RUN / "data")
    gen.add_argument("--worlds", type=int, default=64, help="the teacher's worlds")
    gen.add_argument("--ray-workers", type=int, default=0,
                     help="Ray actors, one core each (0: this process)")  # fmt: skip
    learn = commands.add_parser("train")
    learn.add_argument("--data", type=Path, default=RUN / "data")
    learn.add_argument("--out", type=Path, default=RUN / "student.pt")
    learn.add_argument("--epochs", type=int, default=TRAIN_DEFAULTS["epochs"])
    learn.add_argument("--lr", type=float, default=TRAIN_DEFAULTS["lr"])
    learn.add_argument("--batch", type=int, default=TRAIN_DEFAULTS["batch"])
    learn.add_argument("--vf-coef", type=float, default=TRAIN_DEFAULTS["vf_coef"])
    learn.add_argument("--loss", choices=LOSSES, default="cross-entropy",
                       help="the policy's term: cross-entropy to the teacher's distribution, "
                       "or the expected regret under its values (measured no better: "
                       "docs/experiments.md, 'Distilling the teacher')")  # fmt: skip
    grow = commands.add_parser("curve")
    grow.add_argument("--data", type=Path, default=RUN / "data")
    grow.add_argument("--fractions", type=float, nargs="+", default=[0.125, 0.25, 0.5, 1.0])
    grow.add_argument("--loss", choices=LOSSES, default="regret")
    grow.add_argument("--json", type=Path, default=ROOT / "docs" / "distill_data_curve.json")
    noise = commands.add_parser("consistency")
    noise.add_argument("--games", type=int, default=64)
    noise.add_argument("--worlds", type=int, default=64, help="each teacher's worlds")
    noise.add_argument("--json", type=Path, default=ROOT / "docs" / "distill_teacher_noise.json")
    rate = commands.add_parser("rate")
    rate.add_argument("--student", type=Path, default=RUN / "student.pt")
    rate.add_argument("--deals", type=int, default=300)
    rate.add_argument("--json", type=Path, default=ROOT / "docs" / "distill_2p.json")
    args = parser.parse_args()
    if args.command == "generate":
        generate(args.data, args.shards, args.ray_workers, args.worlds)
    elif args.command == "train":
        train(args.data, args.out, args.epochs, args.lr, args.batch, args.vf_coef, args.loss)
    elif args.command == "curve":
        if any(not 0.0 < f <= 1.0 for f in args.fractions):
            parser.error(f"--fractions are shares of the data in (0, 1], got {args.fractions}")
        curve(args.data, args.fractions, args.loss, args.json)
    elif args.command == "consistency":
        consistency(args.games, args.json, args.worlds)
    else:
        rate_student(args.student.resolve(), args.deals, args.json)


if __name__ == "__main__":
    main()
