"""The vector env: lockstep with the AEC env, autoreset, determinism, bad input, Gymnasium face."""

import gymnasium
import numpy as np
import pytest

import bastra_env
from bastra_env.cards import card_name
from bastra_env.layout import NUM_ACTIONS, OBSERVATION_SIZE
from bastra_env.vector import GymVectorEnv, RandomBatchPolicy, VectorEnv, game_seed

TABLES = [
    dict(num_players=2),
    dict(num_players=3, reward="points"),
    dict(num_players=4, reward="points"),
    dict(num_players=4, teams=True),
    dict(num_players=4, teams=True, reward="points", capture="auto"),
    dict(num_players=2, last_play_bastra=False, target_score=30, tie_break="draw"),
    dict(num_players=2, max_rounds=1, bastra_points=20, most_cards_points=4),
]


def random_decks(count, seed):
    rng = np.random.default_rng(seed)
    return [[card_name(int(c)) for c in rng.permutation(52)] for _ in range(count)]


@pytest.mark.parametrize("kw", TABLES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_vector_env_plays_exactly_like_the_aec_env(kw):
    kw = dict(kw)
    reward = kw.pop("reward", "win")
    size, seed = 4, 11
    decks = random_decks(size, seed)
    venv = VectorEnv(size, rules=bastra_env.Rules(**kw), reward=reward)
    state = venv.reset(seed=seed, options={"decks": decks})
    aecs = [bastra_env.raw_env(reward=reward, **kw) for _ in range(size)]
    for i, env in enumerate(aecs):
        env.reset(seed=game_seed(seed, i, 0), options={"deck": decks[i]})
    games = [0] * size
    rng = np.random.default_rng(seed)
    for _ in range(700):
        actions = np.zeros(size, dtype=np.int64)
        for i, env in enumerate(aecs):
            seen = env.observe(env.agent_selection)
            assert np.array_equal(seen["observation"], state["observation"][i])
            assert np.array_equal(seen["action_mask"].astype(bool), state["action_mask"][i])
            assert env.agent_name_mapping[env.agent_selection] == state["current_player"][i]
            actions[i] = rng.choice(np.flatnonzero(seen["action_mask"]))
        state = venv.step(actions)
        for i, env in enumerate(aecs):
            env.step(int(actions[i]))
            paid = np.array([env.rewards[a] for a in env.possible_agents], dtype=np.float32)
            assert np.array_equal(paid, state["rewards"][i])
            over = all(env.terminations.values())
            assert over == state["terminated"][i]
            assert not state["truncated"][i]
            if over:
                side = env.rules.side_of
                assert state["final_scores"].shape[1] == env.rules.num_players
                assert [env.game.scores[side(seat)] for seat in range(env.rules.num_players)] == (
                    state["final_scores"][i].tolist()
                )
                assert (env.game.winner if env.game.winner is not None else -1) == state["winner"][
                    i
                ]
                games[i] += 1
                env.reset(seed=game_seed(seed, i, games[i]))
                assert state["game_seed"][i] == game_seed(seed, i, games[i])
    if kw.get("max_rounds") or kw.get("target_score"):
        assert sum(games) > 0


def test_same_seed_same_games_and_autoreset_is_reproducible():
    def run(seed):
        venv = VectorEnv(16, num_players=2, seed=seed, reward="points", max_rounds=1)
        state = venv.reset(seed=seed)
        policy = RandomBatchPolicy(seed)
        trace = []
        for _ in range(200):
            actions = policy.act_batch(state["observation"], state["action_mask"])
            state = venv.step(actions)
            trace.append((actions, state["rewards"].copy(), state["observation"].sum(1)))
        return trace

    one, two, other = run(3), run(3), run(4)
    for (a1, r1, o1), (a2, r2, o2) in zip(one, two, strict=True):
        assert np.array_equal(a1, a2) and np.array_equal(r1, r2) and np.array_equal(o1, o2)
    assert any(not np.array_equal(x[2], y[2]) for x, y in zip(one, other, strict=True))


def test_the_step_that_ends_a_game_already_shows_the_next_game():
    venv = VectorEnv(8, num_players=2, max_rounds=1, reward="points")
    state = venv.reset(seed=5)
    policy = RandomBatchPolicy(0)
    for play in range(1, 49):
        state = venv.step(policy.act_batch(state["observation"], state["action_mask"]))
        assert state["terminated"].all() == (play == 48)
    # one round per game: every game ended on play 48; each slot now shows a fresh deal
    assert (state["current_player"] == 0).all()
    hand = state["observation"][:, :52].sum(1)
    assert (hand == 4).all()
    assert (state["rewards"].sum(1) == 0).all()  # point differences, two sides
    assert (state["game_seed"] == [game_seed(5, i, 1) for i in range(8)]).all()


def test_an_illegal_action_ends_only_its_game():
    venv = VectorEnv(4, num_players=4, teams=True)
    state = venv.reset(seed=1)
    before = venv.states.copy()
    actions = np.array([np.flatnonzero(m)[0] for m in state["action_mask"]])
    bad = int(np.flatnonzero(~state["action_mask"][2])[0])
    actions[2] = bad
    state = venv.step(actions)
    assert state["illegal"].tolist() == [False, False, True, False]
    assert state["terminated"].tolist() == [False, False, True, False]
    # seat 0 offended: its side (seats 0 and 2) gets -1, the other side 0
    assert state["rewards"][2].tolist() == [-1.0, 0.0, -1.0, 0.0]
    assert (state["rewards"][[0, 1, 3]] == 0).all()
    for i in (0, 1, 3):  # the others played their move as usual
        assert venv.states[i][bastra_env.compiled_rules.PLAYS] == 1
    assert venv.states[2][bastra_env.compiled_rules.PLAYS] == 0 and not np.array_equal(
        venv.states[2], before[2]
    )


@pytest.mark.parametrize(
    "actions, message",
    [
        (np.zeros(3, dtype=np.int64), "shape"),
        (np.zeros((4, 1), dtype=np.int64), "shape"),
        (np.zeros(4, dtype=np.float32), "integer"),
        (np.array([0, 1, 2, NUM_ACTIONS]), "range"),
        (np.array([0, -1, 2, 3]), "range"),
    ],
)
def test_bad_actions_raise_and_change_nothing(actions, message):
    venv = VectorEnv(4, num_players=2)
    venv.reset(seed=0)
    before = venv.states.copy()
    with pytest.raises(ValueError, match=message):
        venv.step(actions)
    assert np.array_equal(venv.states, before)


def test_bad_construction_and_decks_are_refused():
    with pytest.raises(ValueError):
        VectorEnv(0)
    with pytest.raises(TypeError, match="unknown Rules field"):
        VectorEnv(2, colour="red")
    with pytest.raises(ValueError, match="teams"):
        VectorEnv(2, num_players=2, teams=True)
    venv = VectorEnv(2)
    with pytest.raises(ValueError, match="one deck per game"):
        venv.reset(seed=0, options={"decks": random_decks(1, 0)})
    decks = random_decks(2, 0)
    decks[1] = decks[1][:51]
    with pytest.raises(ValueError, match=r"decks'\]\[1\].*52 cards"):
        venv.reset(seed=0, options={"decks": decks})
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros(2, dtype=np.int64))


def test_state_arrays_have_the_documented_shapes_and_copies_are_independent():
    venv = VectorEnv(3, num_players=3)
    state = venv.reset(seed=2)
    assert state["observation"].shape == (3, OBSERVATION_SIZE)
    assert state["observation"].dtype == np.float32
    assert state["action_mask"].shape == (3, NUM_ACTIONS) and state["action_mask"].dtype == bool
    assert state["rewards"].shape == (3, 3) and state["rewards"].dtype == np.float32
    kept = state["observation"].copy()
    venv.step(np.array([np.flatnonzero(m)[0] for m in state["action_mask"]]))
    assert np.array_equal(state["observation"], kept)  # copy=True: the caller's arrays stay


def test_gymnasium_vector_face_plays_one_seat_against_batched_opponents():
    env = gymnasium.make_vec(
        "Bastra-v0", num_envs=8, num_players=4, teams=True, seat=None, reward="points", max_rounds=1
    )
    assert isinstance(env, GymVectorEnv)
    obs, infos = env.reset(seed=0)
    assert obs.shape == (8, OBSERVATION_SIZE)
    policy = RandomBatchPolicy(0)
    finished = 0
    for _ in range(60):
        masks = env.action_masks()
        assert masks.any(1).all()  # the learner is to move in every game
        assert np.array_equal(masks, infos["action_mask"])
        actions = policy.act_batch(obs, masks)
        obs, reward, terminated, truncated, infos = env.step(actions)
        assert not truncated.any()
        assert (reward[~terminated] == 0).all()  # single rounds: paid only at the end
        finished += int(terminated.sum())
    assert finished >= 8  # 12 learner moves a round: every slot finished at least one game
    with pytest.raises(ValueError):
        env.step(np.zeros(3, dtype=np.int64))


def test_gymnasium_vector_face_ends_a_game_on_an_illegal_learner_action():
    env = GymVectorEnv(2, num_players=2, opponents=RandomBatchPolicy(1))
    obs, infos = env.reset(seed=3)
    actions = np.array([np.flatnonzero(m)[0] for m in infos["action_mask"]])
    actions[1] = int(np.flatnonzero(~infos["action_mask"][1])[0])
    obs, reward, terminated, _, infos = env.step(actions)
    assert terminated.tolist() == [False, True] and reward[1] == -1.0
    assert infos["illegal"].tolist() == [False, True]


def test_game_seeds_option_puts_one_game_in_several_slots():
    venv = VectorEnv(4, num_players=2)
    state = venv.reset(seed=0, options={"game_seeds": [9, 9, 10, 9]})
    obs = state["observation"]
    assert np.array_equal(obs[0], obs[1]) and np.array_equal(obs[0], obs[3])
    assert not np.array_equal(obs[0], obs[2])
    aec = bastra_env.raw_env(num_players=2)
    aec.reset(seed=9)
    assert np.array_equal(aec.observe("player_0")["observation"], obs[0])
    assert state["game_seed"].tolist() == [9, 9, 10, 9]
    with pytest.raises(ValueError, match="game_seeds"):
        venv.reset(options={"game_seeds": [1, 2]})


@pytest.mark.parametrize(
    "kw", TABLES[:5], ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items())
)
def test_any_number_of_threads_plays_the_same_games_bit_for_bit(kw, monkeypatch):
    """1, 2 and 3 threads: every array of every step equal, through autoresets, illegal actions,
    partial steps and a reset from given decks (shares of 5 games, so each thread has work)."""
    import bastra_env.vector as vector

    monkeypatch.setattr(vector, "ROWS_PER_THREAD", 5)
    num = 37
    kw = dict(kw, max_rounds=1)  # one-round games: many autoresets in 400 steps
    envs = [VectorEnv(num, seed=11, num_threads=t, **kw) for t in (1, 2, 3)]
    states = [venv.reset(seed=11) for venv in envs]
    rng = np.random.default_rng(0)
    ended = 0
    for step in range(400):
        if step == 200:
            decks = random_decks(num, 5)
            states = [venv.reset(seed=12, options={"decks": decks}) for venv in envs]
        masks = states[0]["action_mask"]
        picks = [venv.sample_legal(np.random.default_rng(step)) for venv in envs]
        assert all(np.array_equal(picks[0], p) for p in picks[1:])
        assert masks[np.arange(num), picks[0]].all()  # a legal action in every game
        actions = (
            picks[0]
            if step % 2
            else np.array([rng.choice(np.flatnonzero(m)) for m in masks], dtype=np.int64)
        )
        if step % 50 == 7:
            actions[3] = int(np.flatnonzero(~masks[3])[0])  # illegal: ends game 3
        if step % 3 == 2:
            rows = np.sort(rng.choice(num, size=20, replace=False))
            states = [venv.step_some(rows, actions[rows]) for venv in envs]
        else:
            states = [venv.step(actions) for venv in envs]
        for other in states[1:]:
            for name, array in states[0].items():
                assert np.array_equal(array, other[name]), (step, name)
        for venv in envs[1:]:
            assert np.array_equal(envs[0].states, venv.states)
        ended += int(states[0]["terminated"].sum())
    assert ended > 3 * num  # autoresets happened, in every share


def test_num_threads_defaults_to_the_cores_this_process_may_use_and_is_checked():
    import os

    assert VectorEnv(2).num_threads == len(os.sched_getaffinity(0))
    assert VectorEnv(2, num_threads=3).num_threads == 3
    with pytest.raises(ValueError, match="num_threads must be a positive int"):
        VectorEnv(2, num_threads=0)
    with pytest.raises(TypeError, match="num_threads must be a positive int"):
        VectorEnv(2, num_threads=1.5)
    venv = GymVectorEnv(4, num_threads=2)
    assert venv.venv.num_threads == 2
    venv.close()


def _play_threaded(steps, out=None):
    venv = VectorEnv(256, seed=4, num_threads=2, copy=False)
    venv.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(steps):
        state = venv.step(venv.sample_legal(rng))
    digest = [state["observation"].sum(dtype=np.float64), int(venv.states.sum())]
    if out is not None:
        out.send(digest)
    return digest


def test_a_process_forked_after_threaded_steps_still_steps_threaded_envs():
    """GNU OpenMP's threads do not survive fork: a forked child must still step (on one thread,
    the same games) rather than hang or be killed."""
    import multiprocessing

    expected = _play_threaded(60)  # the parent launches the parallel kernels first
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe()
    process = context.Process(target=_play_threaded, args=(60, child))
    process.start()
    process.join(timeout=60)
    assert process.exitcode == 0, f"the forked child exited with {process.exitcode}"
    assert parent.recv() == expected


def test_threaded_envs_stepped_from_several_python_threads_at_once():
    from concurrent.futures import ThreadPoolExecutor

    expected = _play_threaded(40)
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(_play_threaded, [40] * 3))
    assert results == [expected] * 3


def test_every_field_of_the_state_is_documented():
    """Each array ``reset``/``step`` returns is in the module docstring's table and the docs
    page's, with the shape it has."""
    import re
    from pathlib import Path

    import bastra_env.vector as vector_module

    page = (Path(__file__).resolve().parents[1] / "docs" / "env-vector.md").read_text()
    venv = VectorEnv(3, num_players=4, teams=True, seed=0, num_threads=1)
    state = venv.reset()
    for name, array in state.items():
        assert f"``{name}``" in vector_module.__doc__, name
        row = re.search(rf"^\| `{name}` \| \w+ `\[([^\]]*)\]`", page, re.M)
        assert row, f"{name} is missing from docs/env-vector.md's table"
        assert len(row.group(1).split(",")) == array.ndim, name
    assert state["final_scores"].shape == (3, 4)


@pytest.mark.parametrize(
    "kernel",
    [
        "from bastra_env.vector import VectorEnv\nVectorEnv(96, num_threads=1).reset(seed=0)",
        "from agents.evaluation.matches import duplicate_match\n"
        "duplicate_match('greedy', 'random', deals=2, mode='round', num_threads=1,\n"
        "                variance_reduction=True)",
    ],
    ids=["vector-env", "luck-walk"],
)
def test_parallel_kernels_keep_the_openmp_thread_count_torch_was_given(tmp_path, kernel):
    """numba's OpenMP layer, starting at the first parallel kernel (the vector env's step, the
    variance reduction's walk of the games), would set the process's OpenMP thread count to
    every core; torch runs on it, so a trainer's ``torch.set_num_threads(1)`` would silently
    become every core (and crawl beside other work). A fresh process each, as the layer starts
    once."""
    import subprocess
    import sys

    script = tmp_path / "threads.py"
    script.write_text(
        "import torch\n"
        "torch.set_num_threads(1)\n"
        "import agents\n"
        "assert torch.get_num_threads() == 1\n"
        f"{kernel}\n"
        "print(torch.get_num_threads())\n"
    )
    found = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           check=True)  # fmt: skip
    assert found.stdout.split()[-1] == "1"
