"""Random masked play with observations and masks: the vector env on 1, 2, ... threads beside its
anchors.

    python benchmarks/vector_speed.py [--num-envs 1024] [--steps 300] [--repeats 5] [--threads 1 2]
                                      [--json docs/vector_speed.json]

- ``vector``: ``bastra_env.vector.VectorEnv`` with ``num_envs`` games on ``--threads`` threads
  (default: 1, 2, 4, ... up to the cores this process may use); each step writes every game's
  observation (1,125 floats) and action mask, and a uniformly random legal action is picked from
  each mask (compiled, ``vector.random_legal``, on the env's threads: ``VectorEnv.sample_legal``).
  Steps/s counts plays (one per game per step).
- ``aec``: the PettingZoo AEC env (``bastra_env.env()``), the same loop as ``env_speed.py``.
- ``reference``: the plain Python rules of ``tests/reference.py`` (random full games, no
  observation): the engine as it was before the kernels.
- ``connect_four_v3``: PettingZoo's classic env (needs ``pettingzoo[classic]``).
- ``pgx connect_four`` / ``pgx leduc_holdem``: Pgx on the CPU with ``num_envs`` games a batch
  (``jax.jit(jax.vmap(step))``, XLA's default threads), when ``pip install pgx`` has been done;
  else skipped.

The Python anchors run on one thread, as they are. Every figure is the best of interleaved repeats
measured in this run. ``--json PATH`` writes them too: ``docs/vector_speed.json`` is the file the
README and the speed page quote (``docs/figures.py``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bastra_env  # noqa: E402
from bastra_env.vector import VectorEnv, available_cores  # noqa: E402
from benchmarks.engine_speed import python_games  # noqa: E402
from benchmarks.env_speed import run as aec_run  # noqa: E402
from tests import reference  # noqa: E402


def vector_runner(
    num_envs: int, steps: int, threads: int, **rules
) -> Callable[[], tuple[int, float]]:
    venv = VectorEnv(num_envs, seed=0, copy=False, num_threads=threads, **rules)
    venv.reset(seed=0)
    rng = np.random.default_rng(0)

    def run() -> tuple[int, float]:
        start = time.perf_counter()
        for _ in range(steps):
            venv.step(venv.sample_legal(rng))
        return steps * num_envs, time.perf_counter() - start

    return run


def aec_runner(make: Callable[[], object], steps: int) -> Callable[[], tuple[int, float]]:
    def run() -> tuple[int, float]:
        done, _games, seconds = aec_run(make, steps)
        return done, seconds

    return run


def reference_runner(games: int) -> Callable[[], tuple[int, float]]:
    def run() -> tuple[int, float]:
        start = time.perf_counter()
        plays, _ = python_games(reference.Game, bastra_env.Rules(), games)
        return plays, time.perf_counter() - start

    return run


def pgx_runner(name: str, num_envs: int, steps: int) -> Callable[[], tuple[int, float]] | None:
    try:
        import jax
        import jax.numpy as jnp
        import pgx
    except ImportError:
        return None
    from pgx.experimental import auto_reset

    env = pgx.make(name)
    init = jax.jit(jax.vmap(env.init))
    step = jax.jit(jax.vmap(auto_reset(env.step, env.init)))  # Pgx's own autoreset

    @jax.jit
    def act(key, mask):
        logits = jnp.where(mask, 0.0, -jnp.inf)
        return jax.random.categorical(key, logits, axis=-1)

    key = jax.random.PRNGKey(0)
    key, sub = jax.random.split(key)
    state = init(jax.random.split(sub, num_envs))

    def run() -> tuple[int, float]:
        nonlocal state, key
        start = time.perf_counter()
        for _ in range(steps):
            key, k1, k2 = jax.random.split(key, 3)
            action = act(k1, state.legal_action_mask)
            state = step(state, action, jax.random.split(k2, num_envs))
        jax.block_until_ready(state.observation)
        return steps * num_envs, time.perf_counter() - start

    run()  # compile
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=300, help="vector steps per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    cores = available_cores()
    doubling = [t for t in (1, 2, 4, 8, 16, 32, 64) if t < cores] + [cores]
    parser.add_argument(
        "--threads",
        type=int,
        nargs="+",
        default=sorted(set(doubling)),
        help="vector env threads to measure (default: 1, 2, 4, ... the cores)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    b, steps = args.num_envs, args.steps
    runners: dict[str, Callable[[], tuple[int, float]]] = {}
    tables = (("2p", dict(num_players=2)), ("4p teams", dict(num_players=4, teams=True)))
    for table, rules in tables:
        for t in args.threads:
            name = f"vector {table}, {t} thread{'s' * (t > 1)}"
            runners[name] = vector_runner(b, steps, t, **rules)
    runners |= {
        "aec 2p": aec_runner(lambda: bastra_env.env(num_players=2), 20_000),
        "reference 2p": reference_runner(40),
    }
    try:
        from pettingzoo.classic import connect_four_v3

        runners["connect_four_v3"] = aec_runner(connect_four_v3.env, 20_000)
    except ImportError as error:
        print(f"(connect_four_v3 unavailable: {error}; pip install 'pettingzoo[classic]')")
    for name in ("connect_four", "leduc_holdem"):
        found = pgx_runner(name, b, max(steps // 3, 20))
        if found is None:
            print(f"(pgx {name} skipped: pip install pgx)")
        else:
            runners[f"pgx {name}"] = found
    for run in runners.values():
        run()  # warm up
    best: dict[str, float] = dict.fromkeys(runners, 0.0)
    for _ in range(args.repeats):  # interleaved, so a noisy moment hits every runner alike
        for name, run in runners.items():
            plays, seconds = run()
            best[name] = max(best[name], plays / seconds)
    anchor_names = [n for n in ("connect_four_v3", "pgx connect_four") if n in best]
    header = f"  {'vs 1 thread':>12}" + "".join(f"  {'vs ' + n:>22}" for n in anchor_names)
    print(f"\n{'env':<26} {'steps/s':>12}{header}")
    for name, rate in best.items():
        one = name.split(",")[0] + ", 1 thread"  # the same table's one-thread row
        scaling = f"{rate / best[one]:>11.2f}x" if name.startswith("vector") and one in best else ""
        ratios = "".join(f"  {rate / best[n]:>21.2f}x" for n in anchor_names)
        print(f"{name:<26} {rate:>12,.0f}  {scaling:>12}{ratios}")
    print(f"(vector: {b} games a step, observations and masks written every step; "
          f"{cores} cores this process may use)")  # fmt: skip
    if args.json:
        measured = {
            "command": "python benchmarks/vector_speed.py",
            "date": str(datetime.date.today()),
            "cores": cores,
            "num_envs": b,
            "steps_per_s": best,
        }
        args.json.write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json} (python docs/figures.py puts it on the pages that quote it)")


if __name__ == "__main__":
    main()
