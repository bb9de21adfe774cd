"""A real two-node Ray cluster on this machine, for the slow tests and CI (like scripts/s3_server.py).

Two ``ray start --block`` processes on 127.0.0.1, each in a session of its
own: a head node (``--head``, 1 CPU) and a second node joined to it (1 CPU,
its own node-manager, object-manager, worker, agent and metrics ports, so the
two raylets do not collide). ``--block`` keeps each ``ray start`` in the
foreground watching its node's processes; ``stop`` ends each of the two
sessions by its recorded id (SIGTERM, then SIGKILL after a grace period),
never ``ray stop``, which would end every Ray process of the machine.
The workers inherit this script's environment: export the store's
credentials (``scripts/s3_server.py env``) before ``start``.

Everything about an instance lives in its directory::

    DIR/cluster.json   the head's address and both sessions' process ids
    DIR/auth_token     the cluster's authentication token (mode 0600; ``env`` prints its path, never it)
    DIR/head.log, DIR/node.log
    DIR/tmp/           Ray's session files (--temp-dir); where DIR's path is too long for Ray's
                       sockets (an AF_UNIX path holds at most 107 bytes; pytest's default temporary
                       folder makes it longer), a short directory in the system's temporary folder,
                       which DIR/tmp links to and ``stop`` removes

Ray turns 127.0.0.1 into this machine's own interface address for its
nodes (``services.resolve_ip_for_localhost``): the traffic stays on the
machine. Token authentication is on, with the instance's own token, unless
``start --no-auth``.

Command line::

    python scripts/ray_cluster.py start --dir D     # returns once both nodes are up (2 CPUs)
    eval "$(python scripts/ray_cluster.py env --dir D)"   # VALIDATOR_TEST_RAY_ADDRESS, RAY_AUTH_* for pytest
    python scripts/ray_cluster.py stop --dir D
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HOST = "127.0.0.1"
STATE_FILE = "cluster.json"
TOKEN_FILE = "auth_token"  # the cluster's token (mode 0600); drivers find it through RAY_AUTH_TOKEN_PATH
ENV_ADDRESS = "VALIDATOR_TEST_RAY_ADDRESS"  # what the slow tests read (tests/validator/test_ray_cluster.py)
READY_TIMEOUT_S = 240.0
START_ATTEMPTS = 3
# a busy 2-core machine starts a node's agents slower than Ray's defaults allow (the raylet gives up on its
# dashboard agent after about 15 s and exits): wait longer
SLOW_MACHINE = {"RAY_agent_register_timeout_ms": "180000", "RAY_worker_register_timeout_seconds": "180"}
# Ray puts its sockets at <temp-dir>/session_<date>_<time>_<us>_<pid>/sockets/<name>, and an AF_UNIX path holds
# at most 107 bytes: the longest tail (plasma_store, a 7-digit pid) is 64 bytes; 4 more of margin
SOCKET_PATH_MAX = 107
SOCKET_TAIL = len("/session_2026-11-29_07-58-54_123456_1234567/sockets/plasma_store") + 4


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _ray() -> str:
    exe = Path(sysconfig.get_path("scripts")) / "ray"
    return str(exe) if exe.exists() else "ray"


def _launch(args: list[str], log: Path) -> subprocess.Popen:
    # a busy 2-core machine registers a raylet slower than Ray's default wait (about 30 s)
    env = dict(os.environ, **SLOW_MACHINE, **auth_env(log.parent))
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [_ray(), "start", "--block", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
    return proc


def auth_env(root: Path) -> dict[str, str]:
    """Token authentication with this instance's own token: the cluster and every driver use the same. An instance
    started with ``--no-auth`` has no token and runs without authentication."""
    if not (root / TOKEN_FILE).exists():
        return {"RAY_AUTH_MODE": "disabled"}
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(root / TOKEN_FILE)}


def _token(root: Path) -> None:
    path = root / TOKEN_FILE
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))


def _node_ports() -> list[str]:
    worker = free_port()
    lo, hi = (worker + 1000, worker + 1100) if worker < 60000 else (20000, 20100)

    def outside() -> str:
        # a port of the workers' range given to another component makes ``ray start`` refuse to start
        while True:
            port = free_port()
            if not lo <= port <= hi:
                return str(port)

    return [
        "--node-manager-port",
        outside(),
        "--object-manager-port",
        outside(),
        "--dashboard-agent-listen-port",
        outside(),
        "--dashboard-agent-grpc-port",
        outside(),
        "--runtime-env-agent-port",
        outside(),
        "--metrics-export-port",
        outside(),
        "--min-worker-port",
        str(lo),
        "--max-worker-port",
        str(hi),
    ]


def temp_dir(root: Path) -> Path:
    """Ray's ``--temp-dir``: ``root/tmp``, or a short directory it links to when its sockets' paths would be too
    long there (``SOCKET_PATH_MAX``)."""
    tmp = root / "tmp"
    if tmp.is_symlink() or tmp.is_dir():
        return tmp.resolve()
    if len(os.fsencode(tmp.resolve())) + SOCKET_TAIL <= SOCKET_PATH_MAX:
        tmp.mkdir()
        return tmp
    short = Path(tempfile.mkdtemp(prefix="ray-"))  # in the system temporary folder: ray-xxxxxxxx
    tmp.symlink_to(short, target_is_directory=True)
    return short


def start(root: Path, auth: bool = True) -> dict:
    root.mkdir(parents=True, exist_ok=True)
    tmp = temp_dir(root.resolve())
    if auth:
        _token(root)
    common = ["--node-ip-address", HOST, "--num-cpus", "1", "--disable-usage-stats"]
    state: dict = {"address": "", "pids": []}
    for _attempt in range(START_ATTEMPTS):  # Ray gives a raylet a fixed 30 s to register: a busy machine can miss it
        port = free_port()
        state["address"] = f"{HOST}:{port}"
        head = _launch(
            [
                "--head",
                "--port",
                str(port),
                "--include-dashboard",
                "false",
                "--temp-dir",
                str(tmp),
                *common,
                *_node_ports(),
            ],
            root / "head.log",
        )
        state["pids"] = [head.pid]
        (root / STATE_FILE).write_text(json.dumps(state))
        if _wait(state["address"], 1, root, head):
            break
        _end(head.pid)
    else:
        _give_up(state["address"], 1, root)
    for _attempt in range(START_ATTEMPTS):
        node = _launch(["--address", state["address"], *common, *_node_ports()], root / "node.log")
        state["pids"] = state["pids"][:1] + [node.pid]
        (root / STATE_FILE).write_text(json.dumps(state))
        if _wait(state["address"], 2, root, node):
            return state
        _end(node.pid)
    _give_up(state["address"], 2, root)
    return state


def _give_up(address: str, cpus: int, root: Path) -> None:
    tail = "".join(
        (root / name).read_text(errors="replace")[-2000:] for name in ("head.log", "node.log") if (root / name).exists()
    )
    stop(root)
    raise SystemExit(f"ray cluster at {address} did not reach {cpus} CPU(s):\n{tail}")


def _wait(address: str, cpus: int, root: Path, proc: subprocess.Popen) -> bool:
    """True once the cluster at ``address`` has ``cpus`` CPUs (asked as a driver would); False if ``proc``
    (the node's ``ray start``) exited first or the time ran out."""
    probe = (
        "import ray, sys; ray.init(address=sys.argv[1], logging_level='ERROR', log_to_driver=False); "
        "print(int(ray.cluster_resources().get('CPU', 0))); ray.shutdown()"
    )
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            out = (
                subprocess.run(
                    [sys.executable, "-c", probe, address],
                    capture_output=True,
                    text=True,
                    timeout=120,
                    env=dict(os.environ, **auth_env(root)),
                )
                .stdout.strip()
                .splitlines()
            )
        except subprocess.TimeoutExpired:
            out = []
        if out and out[-1].isdigit() and int(out[-1]) >= cpus:
            return True
        time.sleep(2)
    return False


def _end(pid: int) -> None:
    """End the session of one node's ``ray start`` (started by this script), by its id."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stop(root: Path, grace_s: float = 20.0) -> None:
    path = root / STATE_FILE
    if not path.exists():
        return
    pids = json.loads(path.read_text())["pids"]
    for pid in reversed(pids):  # the second node first, then the head
        try:
            os.killpg(pid, signal.SIGTERM)  # the session this script started for that node, by its id
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + grace_s
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        else:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    path.unlink()
    link = root / "tmp"
    if link.is_symlink():  # the short directory of temp_dir: Ray's session files, nothing else
        shutil.rmtree(link.resolve(), ignore_errors=True)
        link.unlink()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=("start", "stop", "env"))
    p.add_argument("--dir", type=Path, required=True, help="the instance's directory")
    p.add_argument(
        "--no-auth",
        action="store_true",
        help="start without token authentication: for a driver that imported Ray before it could set RAY_AUTH_MODE "
        "(Ray reads it once, at import), as tests/validator/test_ray_cluster.py does when it starts its own cluster",
    )
    args = p.parse_args(argv)
    if args.command == "start":
        state = start(args.dir, auth=not args.no_auth)
        print(f"ray cluster up at {state['address']} (2 nodes, 1 CPU each)", file=sys.stderr)
    elif args.command == "stop":
        stop(args.dir)
    else:
        state = json.loads((args.dir / STATE_FILE).read_text())
        print(f"export {ENV_ADDRESS}={shlex.quote(state['address'])}")
        for name, value in auth_env(args.dir).items():  # the token's path, never the token
            print(f"export {name}={shlex.quote(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
