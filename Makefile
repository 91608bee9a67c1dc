# objperf: `make demo` and `make test` set everything up on a fresh Debian box
# (system packages, .venv, the libcurl engine build) and then run.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.objperf-installed
# The Ruby SDK is a peer of the client comparison (the S3-vs-R2 article ran it).
# nginx is the raw HTTP ceiling of the bench and the HTTP/2 server of the tests (nginx-light: no daemon started).
DEBS   := build-essential python3-dev python3-venv libcurl4-openssl-dev zlib1g-dev ruby ruby-aws-sdk-s3 nginx-light
DEMO_OUT ?= data/demo

# The compatibility suite's other servers from Debian: Ceph (a monitor, an OSD and the RADOS Gateway) and
# OpenStack Swift (a proxy with its S3 API, and an account, a container and an object server).
COMPAT_DEBS := ceph-mon ceph-osd radosgw ceph-common swift swift-proxy swift-object swift-container swift-account

.PHONY: demo test test-fast test-compat compat-deps bench lab lint sample system-deps clean

demo: $(STAMP)
	rm -rf $(DEMO_OUT)
	$(PY) -m objperf.fetch --object-size 1GiB --concurrency 16 --duration 20s --out $(DEMO_OUT) --figures

test: $(STAMP)
	$(PY) -m pytest -q

# The tests that start nothing (no server, command or kernel): under a minute.
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not integration"

# The core of the suite against SeaweedFS, Ceph's RADOS Gateway, Swift's S3 API and moto, each on loopback.
test-compat: $(STAMP) compat-deps
	OBJPERF_COMPAT=1 $(PY) -m pytest -q tests/compat

compat-deps:
	@missing=""; for p in $(COMPAT_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing Debian packages:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; fi

# JupyterLab on the checkout (notebooks/ beside the runs/ a user just made), on loopback only; it prints the URL
# (with its token) to open.
lab: $(STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=. --ServerApp.ip=127.0.0.1 --no-browser --allow-root

# data/sample made again with today's code: every study --quick and the client comparison (several minutes).
sample: $(STAMP)
	$(PY) -m objperf.studies.sample data/sample

bench: $(STAMP)
	$(VENV)/bin/nox -s bench

lint: $(STAMP)
	$(VENV)/bin/ruff check objperf tests noxfile.py setup.py

# Debian packages, installed only when something is missing (needs root, as on CI).
system-deps:
	@missing=""; \
	for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if ! command -v curl-config >/dev/null 2>&1 || [ ! -f /usr/include/zlib.h ] || \
	   ! $(PYTHON) -c 'import ensurepip, venv, sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null || \
	   ! command -v cc >/dev/null 2>&1 || ! command -v nginx >/dev/null 2>&1 || \
	   ! ruby -e 'require "aws-sdk-s3"' >/dev/null 2>&1; then \
		if [ -n "$$missing" ]; then \
			echo "installing Debian packages:$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
		fi; \
	fi

$(STAMP): pyproject.toml setup.py $(wildcard objperf/_engine/*.pyx objperf/_engine/*.pxi objperf/_engine/*.pxd) \
          objperf/_engine/objperf_helpers.h
	$(MAKE) system-deps
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,bench,lab,compat]'
	$(PY) -m compileall -q objperf
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info objperf/_engine/*.so objperf/_engine/core.c .nox
