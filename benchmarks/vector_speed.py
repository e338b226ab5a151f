"""Random masked play with observations and masks: the vector env beside its anchors, one core.

    python benchmarks/vector_speed.py [--num-envs 1024] [--steps 300] [--repeats 5]

- ``vector``: ``bastra_env.vector.VectorEnv`` with ``num_envs`` games; each step writes every
  game's observation (1,125 floats) and action mask, and a uniformly random legal action is
  picked from each mask (compiled, ``vector.random_legal``). Steps/s counts plays (one per game
  per step).
- ``aec``: the PettingZoo AEC env (``bastra_env.env()``), the same loop as ``env_speed.py``.
- ``reference``: the plain Python rules of ``tests/reference.py`` (random full games, no
  observation): the engine as it was before the kernels.
- ``connect_four_v3``: PettingZoo's classic env (needs ``pettingzoo[classic]``).
- ``pgx connect_four`` / ``pgx leduc_holdem``: Pgx on the CPU with ``num_envs`` games a batch
  (``jax.jit(jax.vmap(step))``), when ``pip install pgx`` has been done; else skipped.

Every figure is the best of interleaved repeats measured in this run.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bastra_env  # noqa: E402
from bastra_env.vector import VectorEnv, random_legal  # noqa: E402
from benchmarks import pin_to_one_core  # noqa: E402
from benchmarks.engine_speed import python_games  # noqa: E402
from benchmarks.env_speed import run as aec_run  # noqa: E402
from tests import reference  # noqa: E402


def vector_runner(num_envs: int, steps: int, **rules) -> Callable[[], tuple[int, float]]:
    venv = VectorEnv(num_envs, seed=0, copy=False, **rules)
    state = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = np.zeros(num_envs, dtype=np.int64)
    masks = state["action_mask"].view(np.uint8)

    def run() -> tuple[int, float]:
        start = time.perf_counter()
        for _ in range(steps):
            random_legal(masks, rng.random(num_envs), actions)
            venv.step(actions)
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
    args = parser.parse_args()
    pin_to_one_core()
    b, steps = args.num_envs, args.steps
    runners: dict[str, Callable[[], tuple[int, float]]] = {
        "vector 2p": vector_runner(b, steps, num_players=2),
        "vector 4p teams": vector_runner(b, steps, num_players=4, teams=True),
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
    anchor_names = [n for n in ("connect_four_v3", "reference 2p") if n in best]
    header = "".join(f"  vs {n:>15}" for n in anchor_names)
    print(f"\n{'env':<20} {'steps/s':>12}{header}")
    for name, rate in best.items():
        ratios = "".join(f"  {rate / best[n]:>18.1f}x" for n in anchor_names)
        print(f"{name:<20} {rate:>12,.0f}{ratios}")
    print(f"(vector: {b} games a step, observations and masks written every step, one core)")


if __name__ == "__main__":
    main()
