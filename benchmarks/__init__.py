"""Benchmarks: each script prints its figures beside its anchors, measured in the same run."""

import os


def pin_to_one_core() -> None:
    """Run this process (all its threads: numba, torch, JAX) on one core, where the OS allows."""
    if hasattr(os, "sched_setaffinity"):
        allowed = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {allowed[0]})
        os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
