"""A local S3 store that outlives one run (``objperf serve``): the embedded SeaweedFS on loopback, telemetry
off, with a bucket made and throwaway keys, up until it is told to stop; then nothing is left of it but the
data directory the user asked to keep.  What other shells and tools need to reach it is its ``LocalStore``."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from objperf.core.errors import ServerError, UsageError
from objperf.options.serve import HIGHEST_PORT, ServeOptions

KEYS_FILE = "objperf-serve-keys.json"  # in a kept --dir: the same keys (and exports) each time it is served
REGION = "us-east-1"
ALIVE_CHECK_S = 0.5  # how often the server's processes are checked while it serves


@dataclass(frozen=True)
class LocalStore:
    """How to reach a running ``objperf serve`` store; ``kept``: its data stays in ``data_dir`` after it stops."""

    endpoint: str
    bucket: str
    access_key: str
    secret_key: str
    data_dir: Path
    kept: bool
    region: str = REGION
    running: Callable[[], bool] = field(default=lambda: True, repr=False, compare=False)  # its processes all run

    def environment(self) -> dict[str, str]:
        """The variables the AWS CLI, the SDKs, s5cmd and objperf read to reach this store."""
        return {"AWS_ACCESS_KEY_ID": self.access_key, "AWS_SECRET_ACCESS_KEY": self.secret_key,
                "AWS_ENDPOINT_URL": self.endpoint, "AWS_REGION": self.region}

    def exports(self) -> list[str]:
        return [f"export {name}={shlex.quote(value)}" for name, value in self.environment().items()]

    def examples(self) -> list[str]:
        """Commands to try against it, in another shell where the exports were pasted."""
        b = self.bucket
        return [f"objperf put s3://{b}/objects/ --object-size 64MiB --keys 4 --requests 4",
                f"objperf fetch s3://{b}/objects/ --duration 10s --out s3://{b}/runs/fetch-1/",
                f"objperf analyze s3://{b}/runs/fetch-1/",
                f"objperf push runs/RUN s3://{b}/shared/RUN/",
                f"objperf fetch s3://{b}/objects/ --local-cluster 2 --duration 10s",
                f"aws s3 ls s3://{b}/ --recursive",
                f"s5cmd --endpoint-url $AWS_ENDPOINT_URL ls 's3://{b}/*'"]


def check_port_free(port: int) -> None:
    """``--port`` and its gRPC neighbour (PORT + 10000) free on 127.0.0.1, or one line saying which is taken."""
    for taken in (port, port + 10000):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            # As SeaweedFS (Go) binds: a port whose last server's connections are in TIME_WAIT is free to it.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", taken))
            except OSError as exc:
                what = "" if taken == port else f" (SeaweedFS's gRPC port for --port {port})"
                raise UsageError(f"port {taken}{what} on 127.0.0.1 is taken: {exc.strerror}; give another --port, "
                                 "or none for a free one") from None


def _port_free(port: int) -> bool:
    try:
        check_port_free(port)
    except UsageError:
        return False
    return True


@dataclass
class Kept:
    """What a kept data directory was served with last (``KEYS_FILE``, readable by its owner only): served
    again, it answers to the exports already pasted — the same keys, and the same port while it is free."""

    directory: Path
    access_key: str
    secret_key: str
    port: int = 0

    @classmethod
    def read(cls, directory: Path) -> Kept:
        path = directory / KEYS_FILE
        try:
            record = json.loads(path.read_text())
            port = record.get("port", 0)
            return cls(directory, str(record["access_key"]), str(record["secret_key"]),
                       port if isinstance(port, int) and 0 < port <= HIGHEST_PORT else 0)
        except FileNotFoundError:
            return cls(directory, "objperf" + secrets.token_hex(6), secrets.token_hex(20))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UsageError(f"cannot read what --dir {directory} was served with ({path}): {exc}") from None

    def write(self) -> None:
        path, tmp = self.directory / KEYS_FILE, self.directory / (KEYS_FILE + ".tmp")
        tmp.unlink(missing_ok=True)
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
            json.dump({"access_key": self.access_key, "secret_key": self.secret_key, "port": self.port}, out)
        os.replace(tmp, path)


@contextlib.contextmanager
def local_store(options: ServeOptions, say: Callable[[str], None]) -> Iterator[LocalStore]:
    """The store ``options`` describe, started, its bucket made; stopped (its scratch directory removed, unless
    it is ``--dir``) however the block ends."""
    from objperf.s3.client import S3Client
    from objperf.servers.seaweed import LocalSeaweed

    options.check()
    if options.port:
        check_port_free(options.port)
    directory, kept, port = None, None, options.port or 0
    if options.dir:
        directory = Path(options.dir).expanduser().resolve()
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot make --dir {options.dir}: {exc.strerror}") from None
        kept = Kept.read(directory)
        if not port and kept.port:
            if _port_free(kept.port):
                port = kept.port
            else:
                say(f"port {kept.port}, which {directory} was served on last, is taken: another one is used "
                    "(paste its AWS_ENDPOINT_URL again)")
    server = LocalSeaweed(directory, s3_port=port, keep_data=directory is not None)
    if kept is not None:
        server.access_key, server.secret_key = kept.access_key, kept.secret_key
    try:
        server.start()
        if kept is not None:
            kept.port = server.s3_port
            kept.write()
        S3Client(server.settings()).create_bucket(options.bucket)
        yield LocalStore(endpoint=server.endpoint, bucket=options.bucket, access_key=server.access_key,
                         secret_key=server.secret_key, data_dir=server.workdir, kept=directory is not None,
                         running=server.running)
    finally:
        server.stop()
        where = server.workdir
        say(f"stopped SeaweedFS; its data is kept in {where} (objperf serve --dir {where} serves it again)"
            if directory is not None else f"stopped SeaweedFS; removed {where}")


def serve(options: ServeOptions, say: Callable[[str], None], ready: Callable[[LocalStore], None],
          stop: threading.Event | None = None) -> LocalStore:
    """Serve until Ctrl-C or SIGTERM (a ``KeyboardInterrupt``), or until ``stop`` is set, calling ``ready`` once
    the store answers; raises ``ServerError`` if the server quits by itself.  What it served."""
    stop = stop or threading.Event()
    with local_store(options, say) as store:
        ready(store)
        try:
            while not stop.wait(ALIVE_CHECK_S):
                if not store.running():
                    raise ServerError("SeaweedFS quit on its own while serving")
        except KeyboardInterrupt:
            pass
    return store
