"""Build objperf's libcurl engine (Cython) against the system libcurl.

libcurl is found through ``curl-config``; set ``OBJPERF_CURL_CONFIG`` to the
path of another ``curl-config`` to build against a different libcurl.
"""

import functools
import os
import shlex
import shutil
import subprocess
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))

DEBIAN_HINT = (
    "objperf needs libcurl's development files: on Debian/Ubuntu run "
    "'apt-get install libcurl4-openssl-dev' (or set OBJPERF_CURL_CONFIG to a curl-config)."
)


def curl_config(*args: str) -> list[str]:
    tool = os.environ.get("OBJPERF_CURL_CONFIG") or shutil.which("curl-config")
    if not tool:
        sys.exit(f"error: curl-config not found. {DEBIAN_HINT}")
    try:
        out = subprocess.run([tool, *args], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.exit(f"error: running {tool} {' '.join(args)} failed ({exc}). {DEBIAN_HINT}")
    return shlex.split(out)


@functools.cache
def curl_build_flags() -> dict[str, list[str]]:
    flags: dict[str, list[str]] = {
        "include_dirs": [], "library_dirs": [], "libraries": [], "extra_compile_args": [], "extra_link_args": []}
    for token in curl_config("--cflags"):
        if token.startswith("-I"):
            flags["include_dirs"].append(token[2:])
        else:
            flags["extra_compile_args"].append(token)
    for token in curl_config("--libs"):
        if token.startswith("-L"):
            flags["library_dirs"].append(token[2:])
        elif token.startswith("-l"):
            flags["libraries"].append(token[2:])
        else:
            flags["extra_link_args"].append(token)
    header_dirs = flags["include_dirs"] + ["/usr/include", "/usr/local/include", "/usr/include/x86_64-linux-gnu",
                                           "/usr/include/aarch64-linux-gnu"]
    if not any(os.path.exists(os.path.join(d, "curl", "curl.h")) for d in header_dirs):
        sys.exit(f"error: curl/curl.h not found. {DEBIAN_HINT}")
    return flags


def curl_extension(module: str, *, numpy_api: bool) -> Extension:
    """One of objperf's extensions (``objperf._engine.core``, ``objperf._curl.exchange``), built against libcurl
    (and zlib) with the helpers in ``objperf/_curl``."""
    flags = curl_build_flags()
    macros = [("CURL_DISABLE_TYPECHECK", "1")]
    include_dirs = ["objperf/_curl", *flags["include_dirs"]]
    if numpy_api:
        macros.append(("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION"))
        include_dirs.insert(0, numpy.get_include())
    return Extension(
        module,
        sources=[module.replace(".", "/") + ".pyx"],
        include_dirs=include_dirs,
        library_dirs=flags["library_dirs"],
        libraries=[*flags["libraries"], "z"],
        extra_compile_args=["-O2", *flags["extra_compile_args"]],
        extra_link_args=flags["extra_link_args"],
        define_macros=macros,
    )


def write_ring() -> None:
    """objperf/_engine/ringgen.py, loaded by path: the build needs nothing of objperf installed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("ringgen", os.path.join(HERE, "objperf", "_engine", "ringgen.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_ring()


def extensions() -> list[Extension]:
    write_ring()  # the row ring's C side, from objperf/core/schema.py: one definition of the row layout
    engine = curl_extension("objperf._engine.core", numpy_api=True)
    exchange = curl_extension("objperf._curl.exchange", numpy_api=False)  # one request at a time, no NumPy
    directives = {"boundscheck": False, "wraparound": False, "cdivision": True}
    return cythonize([engine, exchange], language_level=3, compiler_directives=directives)


setup(ext_modules=extensions())
