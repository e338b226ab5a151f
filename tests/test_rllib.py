"""agents.integrations.rllib: RLlib (new API stack) self-play on a tiny budget, checkpoints, the
league."""

import pytest

pytest.importorskip("ray.rllib")

import numpy as np
import torch
from ray.rllib.core.columns import Columns

import bastra_env
from agents import RandomPolicy, load_policy
from agents.integrations.rllib import (
    CHECKPOINT_MODULE_DIR,
    MAIN,
    MASKED_LOGIT,
    BastraMultiAgentEnv,
    LeagueMapping,
    RLlibPolicy,
    load_rllib_policy,
    module_spec,
    train_rllib,
)
from bastra_env.layout import OBSERVATION_SIZE

# RLlib re-registers its env id each time an Algorithm is built.
pytestmark = pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env")

TINY = {
    "iterations": 2,
    "num_env_runners": 0,
    "envs_per_runner": 2,
    "snapshot_every": 1,
    "pool_size": 1,
    "train_batch_size": 96,
    "minibatch_size": 48,
    "num_epochs": 1,
    "hidden": (16,),
    "seed": 0,
    "verbose": False,
}
"""Two updates of 96 plays (two single-round 2p games); a snapshot after each."""


@pytest.fixture(scope="module")
def local_ray():
    import ray

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module", params=["2p", "4p_teams"])
def tiny_run(request, local_ray, tmp_path_factory):
    checkpoint_dir = tmp_path_factory.mktemp(f"rllib_{request.param}")
    return request.param, train_rllib(table=request.param, checkpoint_dir=checkpoint_dir, **TINY)


def num_players(table):
    return 2 if table == "2p" else 4


def legal_play_check(policy, table, decisions=300, seed=0):
    """The policy acts on ``decisions`` states of random games; returns how many it saw."""
    teams = table == "4p_teams"
    env = bastra_env.env(num_players=num_players(table), teams=teams, max_rounds=1)
    mover = RandomPolicy(seed)
    seen, game = 0, 0
    while seen < decisions:
        env.reset(seed=seed + game)
        game += 1
        for _agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            action = policy.act(observation)
            assert observation["action_mask"][action] == 1, (table, game, action)
            seen += 1
            env.step(mover.act(observation) if seen % 2 else action)
    return seen


def test_training_writes_checkpoint_and_snapshot_pool(tiny_run):
    table, run = tiny_run
    assert run.iterations == 2 and len(run.history) == 2
    assert run.env_steps >= 2 * TINY["train_batch_size"]
    assert run.snapshot_pool == ["main_v1"]
    modules = run.checkpoint_dir / CHECKPOINT_MODULE_DIR
    assert (modules / MAIN).is_dir() and (modules / "main_v1").is_dir()
    # The pool (one slot) was refilled after the last update: the frozen copy equals main.
    main = load_rllib_policy(run.checkpoint_dir).module.get_state()
    frozen = load_rllib_policy(run.checkpoint_dir, module_id="main_v1").module.get_state()
    assert main.keys() == frozen.keys()
    assert all(np.array_equal(main[k], frozen[k]) for k in main)


def test_loaded_policy_is_always_legal(tiny_run):
    table, run = tiny_run
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        policy = load_policy(run.checkpoint_dir)
        assert isinstance(policy, RLlibPolicy)
        assert legal_play_check(policy, table) >= 300
        sampler = load_policy(run.checkpoint_dir, sample=True, seed=3)
        assert legal_play_check(sampler, table, decisions=100, seed=7) >= 100
    finally:
        torch.set_num_threads(threads)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="table must be one of"):
        train_rllib(table="3p", iterations=1)
    with pytest.raises(ValueError, match="iterations must be an integer >= 1"):
        train_rllib(table="2p", iterations=0)
    with pytest.raises(ValueError, match="num_env_runners"):
        train_rllib(table="2p", iterations=1, num_env_runners=-1)
    with pytest.raises(ValueError, match="minibatch_size"):
        train_rllib(iterations=1, train_batch_size=64, minibatch_size=128)
    with pytest.raises(ValueError, match="unknown env_config"):
        BastraMultiAgentEnv({"table": "2p", "colour": "red"})
    with pytest.raises(ValueError, match="no RLlib checkpoint"):
        load_rllib_policy(bastra_env.__path__[0])


class FakeEpisode:
    def __init__(self, id_):
        self.id_ = id_


@pytest.mark.parametrize("players", [2, 4])
def test_league_mapping_puts_main_on_one_whole_side(players):
    mapping = LeagueMapping(("main_v1", "main_v2"), self_play_prob=0.3, seed=1)
    opponents = set()
    for k in range(200):
        episode = FakeEpisode(f"episode-{k}")
        modules = [mapping(f"player_{s}", episode) for s in range(players)]
        assert modules == [mapping(f"player_{s}", episode) for s in range(players)]  # stable
        sides = [set(modules[s::2]) for s in (0, 1)]
        assert all(len(side) == 1 for side in sides)  # partners play the same module
        assert MAIN in sides[0] | sides[1]
        opponents |= sides[0] | sides[1]
    assert opponents == {MAIN, "main_v1", "main_v2"}
    assert {LeagueMapping((), seed=1)(f"player_{s}", FakeEpisode("x")) for s in range(4)} == {MAIN}


def test_masked_module_is_finite_and_legal():
    module = module_spec(hidden=(8,)).build()
    observation = torch.rand(3, OBSERVATION_SIZE)
    mask = torch.zeros(3, 208, dtype=torch.int8)
    mask[0, [5, 9]] = 1
    mask[1, 100] = 1  # row 2: no legal action at all (a terminal observation)
    batch = {Columns.OBS: {"observation": observation, "action_mask": mask}}
    logits = module.forward_train(batch)[Columns.ACTION_DIST_INPUTS]
    assert torch.isfinite(logits).all()
    assert (logits[mask == 0] == MASKED_LOGIT).all()
    distribution = module.get_train_action_dist_cls().from_logits(logits)
    assert torch.isfinite(distribution.entropy()).all()
    assert torch.isfinite(distribution.logp(torch.tensor([5, 100, 0]))).all()
    assert set(distribution.sample().tolist()[:2]) <= {5, 9, 100}
    assert torch.isfinite(module.compute_values(batch)).all()


def test_rllib_and_train_py_checkpoints_meet_in_one_tournament(tiny_run, tmp_path):
    from agents.evaluation.ratings import round_robin
    from agents.learning.network import NetworkConfig, PolicyValueNet, save_checkpoint

    table, run = tiny_run
    ours = tmp_path / "train_py.pt"
    save_checkpoint(ours, PolicyValueNet(NetworkConfig(hidden=(16,))))
    specs = [str(run.checkpoint_dir), str(ours), "random"]
    results, ratings = round_robin(specs, table=table, deals=2, mode="round")
    assert len(results) == 3 and set(ratings) == set(specs)
    assert all(r.games == 4 for r in results)


def test_checkpoints_of_0_2_0_find_the_masked_module_by_its_old_path():
    """RLlib pickles a checkpoint's module class by its path; 0.2.0's was ``agents.rllib``."""
    import pickle

    import agents.integrations.rllib as rllib

    assert pickle.loads(b"cagents.rllib\nMaskedPPOTorchModule\n.") is rllib.MaskedPPOTorchModule
