"""S3's checksums: the published check values, botocore's own implementations and framing, a repeating
payload's range against the same bytes laid out, no copies, and one line when the CRT is missing."""

from __future__ import annotations

import base64
import io
import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from botocore.httpchecksum import (
    AwsChunkedWrapper,
    Crc32Checksum,
    CrtCrc32cChecksum,
    CrtCrc64NvmeChecksum,
    Sha256Checksum,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from objperf._engine.payload import payload
from objperf.core.checksums import NAMES, algorithm
from objperf.core.errors import UsageError

pytestmark = pytest.mark.timeout(300)

ALGORITHMS = [name for name in NAMES if name != "none"]
# The check values of each algorithm's catalogue entry: its digest of b"123456789".
CHECK = {"crc32": "cbf43926", "crc32c": "e3069283", "crc64nvme": "ae8b14860a799888",
         "sha256": "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225"}
BOTOCORE = {"crc32": Crc32Checksum, "crc32c": CrtCrc32cChecksum, "crc64nvme": CrtCrc64NvmeChecksum,
            "sha256": Sha256Checksum}


def botocores(name: str, data: bytes) -> str:
    checksum = BOTOCORE[name]()
    checksum.update(data)
    return checksum.b64digest()


def laid_out(data: np.ndarray, offset: int, length: int) -> bytes:
    """The bytes a write sends, made whole: byte i is data[(offset + i) % len(data)]."""
    return data[(offset + np.arange(length)) % len(data)].tobytes() if length else b""


@pytest.mark.parametrize("name", ALGORITHMS)
def test_check_values_and_botocores_implementations(name):
    check = algorithm(name)
    assert base64.b64decode(check.value(b"123456789")).hex() == CHECK[name]
    rng = np.random.default_rng(len(name))
    for size in (0, 1, 3, 4096, 1 << 20, (1 << 20) + 7):
        data = rng.integers(0, 256, size, dtype=np.uint8)
        assert check.value(data) == check.value(memoryview(data)) == check.value(data.tobytes()) \
            == botocores(name, data.tobytes())
    assert check.header == f"x-amz-checksum-{name}" and check.sdk_name == name.upper()


def test_names_as_s3_has_them():
    assert NAMES == ("none", "crc32", "crc32c", "crc64nvme", "sha256")
    assert algorithm("none") is None and algorithm("NONE") is None
    assert algorithm("CRC32C") == algorithm("crc32c")
    for wrong in ("md5", "sha1", "crc-32", ""):
        with pytest.raises(UsageError, match="choose one of none, crc32, crc32c, crc64nvme, sha256"):
            algorithm(wrong)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_any_contiguous_buffer_is_read_as_its_bytes(name):
    check = algorithm(name)
    words = np.arange(1000, dtype=np.uint32)
    assert check.value(words) == check.value(words.tobytes())
    assert check.value(words.reshape(10, 100)) == check.value(words.tobytes())
    assert check.value(bytearray(b"abc")) == check.value(b"abc")
    with pytest.raises(UsageError, match="contiguous"):
        check.value(words.reshape(10, 100)[:, :5])


@pytest.mark.parametrize("name", ALGORITHMS)
@settings(max_examples=60, deadline=None)
@given(size=st.integers(1, 5000), offset=st.integers(0, 20_000), length=st.integers(0, 40_000))
def test_a_repeating_payloads_range_is_the_same_bytes_laid_out(name, size, offset, length):
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
    check = algorithm(name)
    assert check.value_over(data, offset, length) == check.value(laid_out(data, offset, length))


@pytest.mark.parametrize("name", ALGORITHMS)
def test_the_engines_payload_wrapped_without_a_copy(name):
    """A run's payload, a range that wraps round it twice: the same value as its bytes laid out, and no more
    memory than a few objects while it is taken."""
    data = payload(3 << 20, seed=7)
    check = algorithm(name)
    offset, length = (3 << 20) - 12345, (7 << 20) + 99
    expected = check.value(laid_out(data, offset, length))
    tracemalloc.start()
    try:
        got = check.value_over(memoryview(data), offset, length)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == expected
    assert peak < 64 << 10, f"{peak:,} bytes allocated: a copy"
    assert check.value_over(data, offset + 5 * len(data), length) == expected  # any offset, as its remainder
    for length in (0, 1, len(data)):
        assert check.value_over(data, 0, length) == check.value(data[:length])
    with pytest.raises(UsageError):
        check.value_over(data, -1, 10)
    with pytest.raises(UsageError):
        check.value_over(b"", 0, 1)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_aws_chunked_framing_is_botocores(name):
    """One chunk and its trailing checksum, as botocore's own aws-chunked body frames them (a chunk as long as
    the body), an empty body as its last chunk alone."""
    check = algorithm(name)
    for body in (b"x" * 10244, b"a", b""):
        value = check.value(body)
        framed = check.aws_chunked(len(body), value)
        wrapped = AwsChunkedWrapper(io.BytesIO(body), BOTOCORE[name], check.header, chunk_size=max(len(body), 1))
        assert framed.prefix + body + framed.suffix == wrapped.read()
        assert framed.content_length == len(framed.prefix + body + framed.suffix)
        assert framed.headers == {"Content-Encoding": "aws-chunked",
                                  "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
                                  "x-amz-trailer": check.header, "x-amz-decoded-content-length": str(len(body)),
                                  "x-amz-sdk-checksum-algorithm": name.upper()}
    framed = check.aws_chunked(10244, "VALUE")
    assert framed.prefix == b"2804\r\n"
    assert framed.suffix == b"\r\n0\r\n" + check.header.encode() + b":VALUE\r\n\r\n"
    assert check.headers("VALUE") == {check.header: "VALUE"}


REFUSE_CRT = """
import sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "awscrt":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Refuse())
from objperf.core.checksums import algorithm
from objperf.core.extras import MissingExtra
print(algorithm("crc32").value(b"123456789"), algorithm("sha256").value(b""))
for name in ("crc32c", "crc64nvme"):
    try:
        algorithm(name)
    except MissingExtra as exc:
        print(exc)
"""

MARKED_ABSENT = """
import sys
sys.modules["awscrt"] = None  # as objperf's commands mark it, to keep botocore's signing off the CRT
from objperf.core.checksums import algorithm
print(algorithm("crc32c").value(b"123456789"), algorithm("crc64nvme").value(b"123456789"))
import botocore.auth
print(botocore.auth.AUTH_TYPE_MAPS["s3v4-query"].__name__)
"""


def b64(hex_digest: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_digest)).decode()


def run_python(script: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env=os.environ)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_missing_crt_is_one_line_naming_the_extra():
    assert run_python(REFUSE_CRT) == [
        f"{b64(CHECK['crc32'])} 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",  # SHA-256 of nothing
        "the crc32c checksum needs the 'checksums' extra: pip install 'objperf[checksums]'",
        "the crc64nvme checksum needs the 'checksums' extra: pip install 'objperf[checksums]'"]


def test_the_crt_is_found_where_a_command_marked_it_absent_and_stays_so_for_botocore():
    assert run_python(MARKED_ABSENT) == [f"{b64(CHECK['crc32c'])} {b64(CHECK['crc64nvme'])}", "S3SigV4QueryAuth"]
