"""The README's multi-node RLlib steps on a real two-node Ray cluster, token authentication on.

Both nodes run on this machine and use only 127.0.0.1:

- a token file like the one ``ray get-auth-token --generate`` writes (64 hex digits, mode 600),
  given to every process through ``RAY_AUTH_MODE=token`` and ``RAY_AUTH_TOKEN_PATH`` (not
  ``~/.ray/auth_token``, which belongs to whoever runs the tests);
- the head: ``ray start --head --block --node-ip-address 127.0.0.1 --num-cpus 0 ...`` with
  ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``: without it, Ray on Linux replaces 127.0.0.1 by the
  machine's network address, and its servers then listen on every interface;
- the worker node: Ray's node API (``ray._private.node.Node``, which ``ray start`` runs) with one
  CPU and the resource ``BASTRA_NODE``: ``ray start --address`` cannot start a loopback-only node
  (it rewrites 127.0.0.1 or, with that variable, refuses to add a node). The head has no CPU, so
  the env runners (one CPU each) can only run here;
- the driver: ``examples/rllib_selfplay.py`` as a subprocess with ``RAY_ADDRESS`` set, as a user
  runs it; the test then loads its checkpoint with ``agents.load_policy`` and plays moves.

The nodes run in their own process groups and are stopped through them (never with ``ray stop``,
which would stop every Ray instance of this user on the machine).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the multi-node test needs ray: pip install -e .[rllib]")
pytest.importorskip("ray.rllib", reason="the multi-node test needs RLlib: pip install -e .[rllib]")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="the nodes run in POSIX process groups"),
]

ROOT = Path(__file__).resolve().parent.parent
LOOPBACK = "127.0.0.1"
BASTRA_NODE = "bastra_env_runner_node"
"""The custom resource only the worker node has."""
AUTH_VARIABLES = ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")

WORKER_NODE = """
import json, signal, sys, threading
from ray._private.authentication.authentication_token_setup import ensure_token_if_auth_enabled
from ray._private.node import Node
from ray._private.parameter import RayParams

ensure_token_if_auth_enabled(None, create_token_if_missing=False)  # what `ray start` checks
node = Node(RayParams(**json.loads(sys.argv[1])), head=False, shutdown_at_exit=False,
            spawn_reaper=True)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
print(json.dumps({"node_id": node.node_id}), flush=True)
while not stop.wait(0.2):
    pass
node.kill_all_processes(check_alive=False, allow_graceful=True)
"""

QUERY = """
import json, ray
from ray._private import state
ray.init(log_to_driver=False)  # RAY_ADDRESS
nodes = [{"id": n["NodeID"], "ip": n["NodeManagerAddress"], "resources": n["Resources"]}
         for n in ray.nodes() if n["Alive"]]
actors = [{"class": a["ActorClassName"], "node": a["Address"]["NodeID"],
           "ip": a["Address"]["IPAddress"]} for a in state.actors().values()]
print("QUERY " + json.dumps({"nodes": nodes, "actors": actors}), flush=True)
"""

CONNECT = "import ray; ray.init(log_to_driver=False); print('CONNECTED', flush=True)"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in AUTH_VARIABLES}
    env.update(OMP_NUM_THREADS="1", RAY_USAGE_STATS_ENABLED="0", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def wait_for(predicate, what: str, processes, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        for process, log in processes:
            if process.poll() is not None:
                raise AssertionError(f"{what}: exited {process.returncode}:\n{log.read_text()}")
        time.sleep(0.3)
    raise AssertionError(f"{what}: not ready after {timeout:.0f} s")


def stop_group(process: subprocess.Popen, grace: float = 30.0) -> None:
    """SIGTERM to the node's launcher (it stops its node), then SIGKILL to its process group."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(grace)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # whatever the node left behind
    if process.poll() is None:
        process.wait(10)


class Cluster:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.token_path = root / "auth_token"
        self.token_path.write_text(secrets.token_hex(32))  # as `ray get-auth-token --generate`
        self.token_path.chmod(0o600)
        self.port = free_port()
        self.address = f"{LOOPBACK}:{self.port}"
        self.processes: list[tuple[subprocess.Popen, Path]] = []
        self.worker_node_id = ""

    def env(self, **extra: str) -> dict[str, str]:
        """An authorised process of this cluster's (node or driver)."""
        return base_env(
            RAY_AUTH_MODE="token",
            RAY_AUTH_TOKEN_PATH=str(self.token_path),
            RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",  # keep 127.0.0.1 (see the module docstring)
            **extra,
        )

    def launch(self, command: list[str], name: str) -> tuple[subprocess.Popen, Path]:
        log = self.root / f"{name}.log"
        with log.open("w") as out:
            process = subprocess.Popen(
                command, env=self.env(), cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped by stop_group
            )  # fmt: skip
        self.processes.append((process, log))
        return process, log

    def start(self) -> None:
        head = [
            sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block",
            "--node-ip-address", LOOPBACK, "--port", str(self.port), "--num-cpus", "0",
            "--ray-client-server-port", str(free_port()), "--include-dashboard", "false",
            "--dashboard-agent-listen-port", "0", "--temp-dir", str(self.root / "head"),
            "--disable-usage-stats",
        ]  # fmt: skip
        _, head_log = self.launch(head, "head")
        wait_for(lambda: "Ray runtime started" in head_log.read_text(), "head", self.processes)
        node = {
            "gcs_address": self.address,
            "node_ip_address": LOOPBACK,
            "num_cpus": 1,
            "num_gpus": 0,
            "resources": {BASTRA_NODE: 1},
            "temp_dir": str(self.root / "worker"),
            "node_manager_port": 0,
            "dashboard_agent_listen_port": 0,
        }
        _, worker_log = self.launch([sys.executable, "-c", WORKER_NODE, json.dumps(node)], "worker")

        def worker_id():
            lines = [ln for ln in worker_log.read_text().splitlines() if ln.startswith('{"node')]
            return json.loads(lines[0])["node_id"] if lines else ""

        self.worker_node_id = wait_for(worker_id, "worker node", self.processes)

    def stop(self) -> None:
        for process, _ in reversed(self.processes):
            stop_group(process)

    def run(self, code_or_args: list[str], env: dict[str, str] | None = None, timeout=240):
        return subprocess.run(
            [sys.executable, *code_or_args], env=env or self.env(RAY_ADDRESS=self.address),
            cwd=ROOT, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip

    def query(self) -> dict:
        result = self.run(["-c", QUERY])
        lines = [ln for ln in result.stdout.splitlines() if ln.startswith("QUERY ")]
        assert result.returncode == 0 and lines, result.stdout + result.stderr
        return json.loads(lines[0][len("QUERY ") :])

    def sockets(self) -> list[tuple[str, str, str]]:
        """(process name, local address, remote address) of every inet socket of the nodes."""
        import psutil  # ray ships it (ray/thirdparty_files)

        groups = {process.pid for process, _ in self.processes}
        found = []
        for proc in psutil.process_iter(["name"]):
            try:
                if os.getpgid(proc.pid) not in groups:
                    continue
                connections = getattr(proc, "net_connections", None) or proc.connections
                for conn in connections(kind="inet"):  # psutil < 6: connections
                    remote = conn.raddr.ip if conn.raddr else ""
                    found.append((proc.info["name"], conn.laddr.ip, remote))
            except (psutil.Error, ProcessLookupError):
                continue
        return found


@pytest.fixture(scope="module")
def cluster():
    # A short root: Ray's unix sockets live under it (at most 107 characters).
    root = Path(tempfile.mkdtemp(prefix="bastra-ray-", dir="/tmp"))
    cluster = Cluster(root)
    try:
        cluster.start()
        wait_for(lambda: len(cluster.query()["nodes"]) == 2, "two nodes", cluster.processes, 60)
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def is_loopback(ip: str) -> bool:
    return ip in ("", LOOPBACK, f"::ffff:{LOOPBACK}")


def assert_only_loopback_sockets(cluster: Cluster) -> None:
    sockets = cluster.sockets()
    names = {name for name, _, _ in sockets}
    assert {"gcs_server", "raylet"} <= names, sockets  # the check sees the nodes' servers
    outside = [s for s in sockets if not (is_loopback(s[1]) and is_loopback(s[2]))]
    assert not outside, f"sockets on another interface than {LOOPBACK}: {outside}"


def test_every_node_uses_only_127_0_0_1(cluster):
    state = cluster.query()
    assert len(state["nodes"]) == 2
    assert {node["ip"] for node in state["nodes"]} == {LOOPBACK}
    (worker,) = [node for node in state["nodes"] if BASTRA_NODE in node["resources"]]
    assert worker["id"] == cluster.worker_node_id and worker["resources"]["CPU"] == 1
    (head,) = [node for node in state["nodes"] if node["id"] != worker["id"]]
    assert "CPU" not in head["resources"]
    assert_only_loopback_sockets(cluster)


@pytest.mark.parametrize("driver", ["no token", "wrong token"])
def test_a_driver_without_the_token_is_refused(cluster, driver):
    home = cluster.root / "empty-home"  # no ~/.ray/auth_token to fall back on
    home.mkdir(exist_ok=True)
    extra = {"RAY_ADDRESS": cluster.address, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    extra["RAY_NUM_REDIS_GET_RETRIES"] = "2"  # refused in about 2 s instead of 20
    if driver == "no token":  # the README user's driver before the fix: RAY_AUTH_MODE unset
        env = base_env(HOME=str(home), **extra)
        command = ["examples/rllib_selfplay.py", "--iterations", "1", "--deals", "1"]
    else:
        env = base_env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32), **extra)
        command = ["-c", CONNECT]
    result = cluster.run(command, env=env, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "CONNECTED" not in output, output
    assert "InvalidAuthToken" in output or "Unauthenticated" in output, output
    if driver == "no token":  # init_ray's hint
        assert "set RAY_AUTH_MODE=token (it is unset)" in output, output


def test_rllib_selfplay_example_trains_on_the_worker_node(cluster):
    checkpoint_dir = cluster.root / "checkpoint"
    example = [
        "examples/rllib_selfplay.py", "--table", "2p", "--iterations", "2",
        "--num-env-runners", "1", "--envs-per-runner", "2", "--train-batch-size", "96",
        "--minibatch-size", "48", "--num-epochs", "1", "--snapshot-every", "1",
        "--pool-size", "1", "--deals", "2", "--checkpoint-dir", str(checkpoint_dir),
    ]  # fmt: skip
    result = cluster.run(example)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "trained 2 iterations" in output and "win rate against random" in output, output

    # The env runners ran on the worker node, the only one with a CPU and BASTRA_NODE.
    runners = [a for a in cluster.query()["actors"] if "EnvRunner" in a["class"]]
    assert runners, cluster.query()
    assert {a["node"] for a in runners} == {cluster.worker_node_id}, runners
    assert {a["ip"] for a in runners} == {LOOPBACK}, runners
    assert_only_loopback_sockets(cluster)  # the workers Ray started for the job included

    # The driver's checkpoint loads without Ray and plays legal moves.
    import torch

    import bastra_env
    from agents import load_policy

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        policy = load_policy(checkpoint_dir)
        env = bastra_env.env(num_players=2, max_rounds=1)
        env.reset(seed=0)
        moves = 0
        for _agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            action = policy.act(observation)
            assert observation["action_mask"][action] == 1
            env.step(action)
            moves += 1
            if moves == 12:
                break
        assert moves == 12
    finally:
        torch.set_num_threads(threads)


SELFPLAY_DRIVER = """
import hashlib, json, os, signal, threading
import numpy as np, torch
from agents.integrations.ray_selfplay import RaySelfPlay
from agents.learning.network import NetworkConfig, PolicyValueNet
from agents.training.config import parse_config
from agents.training.endgame import SHARD_FIELDS, play_remote_shard, shard_inputs

torch.manual_seed(0)
model = PolicyValueNet(NetworkConfig(hidden=(32,), pair_width=16)).eval()
config = parse_config(["--config", "endgame_smoke", "endgame.rounds=512", "threads=1"])[0]
shared = shard_inputs(model, config, 128)
runner = RaySelfPlay(1)  # RAY_ADDRESS: the cluster, with the token
before = runner.where()
killed, timers = [], []

def kill_mid_shard(index, result):
    if not killed:  # the actor has its next shard: kill its process while it plays it
        killed.append(result["worker_pid"])
        timers.append(threading.Timer(0.3, os.kill, (result["worker_pid"], signal.SIGKILL)))
        timers[0].start()

def digest(shards):
    h = hashlib.sha256()
    for shard in shards:
        for name in SHARD_FIELDS:
            h.update(np.ascontiguousarray(shard[name]).tobytes())
    return h.hexdigest()

shards = runner.run(play_remote_shard, shared, [0, 1, 2, 3], on_result=kill_mid_shard)
timers[0].join()  # the kill has landed
if not runner.replaced:  # it landed after the last shard came back: the next run meets it
    assert digest(runner.run(play_remote_shard, shared, [3])) == digest(shards[3:])
print("SELFPLAY " + json.dumps({"before": before, "after": runner.where(), "killed": killed,
                                "replaced": runner.replaced, "digest": digest(shards),
                                "rounds": [int(s["rounds"]) for s in shards]}), flush=True)
runner.close()
"""


def test_searched_self_play_on_the_worker_node_survives_a_killed_actor(cluster):
    """The endgame learning's searched self-play actors on the cluster (token authentication
    on): placed on the worker node (the only one with a CPU), the actor's process killed while it
    plays a shard, the shard played again by a fresh actor there (or, where the kill landed
    after the last shard came back, the next run's shard), and the data exactly what this
    process computes for the same shards."""
    import hashlib

    import numpy as np
    import torch

    from agents.learning.network import NetworkConfig, PolicyValueNet
    from agents.training.config import parse_config
    from agents.training.endgame import SHARD_FIELDS, play_remote_shard, shard_inputs

    result = cluster.run(["-c", SELFPLAY_DRIVER])
    output = result.stdout + result.stderr
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith("SELFPLAY ")]
    assert result.returncode == 0 and lines, output
    found = json.loads(lines[0][len("SELFPLAY ") :])
    assert found["killed"] and found["replaced"] >= 1, found
    nodes = {actor["node_id"] for actor in found["before"] + found["after"]}
    assert nodes == {cluster.worker_node_id}, found
    assert found["after"][0]["pid"] != found["before"][0]["pid"]  # a fresh actor

    torch.manual_seed(0)
    model = PolicyValueNet(NetworkConfig(hidden=(32,), pair_width=16)).eval()
    config = parse_config(["--config", "endgame_smoke", "endgame.rounds=512", "threads=1"])[0]
    shared = shard_inputs(model, config, 128)
    h = hashlib.sha256()
    for index in range(4):
        shard = play_remote_shard(shared, index)
        for name in SHARD_FIELDS:
            h.update(np.ascontiguousarray(shard[name]).tobytes())
    assert found["digest"] == h.hexdigest(), found  # none lost, none twice
    assert found["rounds"] == [128] * 4
    assert_only_loopback_sockets(cluster)
