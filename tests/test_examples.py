"""The framework examples under examples/ run and learn (each skipped if its extra is missing)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_sb3_maskable_ppo_learns_to_beat_random_and_never_plays_illegal():
    pytest.importorskip("sb3_contrib")
    example = load_example("sb3_maskable_ppo")
    model = example.train(timesteps=10_000, seed=0)
    results = example.evaluate(model, deals=200)
    assert results["illegal"] == 0
    # the same 200 deals: a random legal player wins about half; the trained model clearly more
    assert results["model"] >= results["random"] + 0.08, results


def test_sb3_predict_without_mask_is_the_mistake_the_example_avoids():
    pytest.importorskip("sb3_contrib")
    example = load_example("sb3_maskable_ppo")
    model = example.train(timesteps=1_024, seed=0)
    env = example.make_env()
    observation, _ = env.reset(seed=0)
    mask = env.action_masks()
    for _ in range(20):
        action, _ = model.predict(observation, action_masks=mask, deterministic=False)
        assert mask[int(action)]
