# objperf: `make demo` and `make test` set everything up on a fresh Debian box
# (system packages, .venv, the libcurl engine build) and then run.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.objperf-installed
# What the demo needs: objperf, its embedded server, figures and report; the suite takes every extra (STAMP).
DEMO_STAMP := $(VENV)/.objperf-demo
ENGINE_SOURCES := pyproject.toml setup.py $(wildcard objperf/_engine/*.pyx objperf/_engine/*.pxi objperf/_curl/*.pyx objperf/_curl/*.pxi objperf/_curl/*.pxd) \
                  objperf/_curl/objperf_helpers.h objperf/core/schema.py
# What building the engine needs.
BUILD_DEBS := build-essential python3-dev python3-venv libcurl4-openssl-dev zlib1g-dev
# The Ruby SDK is a peer of the client comparison (the S3-vs-R2 article ran it).
# nginx is the raw HTTP ceiling of the bench and the HTTP/2 server of the tests (nginx-light: no daemon started).
PEER_DEBS := ruby ruby-aws-sdk-s3 nginx-light
# The browser the tests open `objperf report`'s pages in (headless).
BROWSER_DEBS := chromium
DEBS   := $(BUILD_DEBS) $(PEER_DEBS) $(BROWSER_DEBS)
DEMO_OUT ?= data/demo

# The compatibility suite's other servers from Debian: Ceph (a monitor, an OSD and the RADOS Gateway) and
# OpenStack Swift (a proxy with its S3 API, and an account, a container and an object server).
COMPAT_DEBS := ceph-mon ceph-osd radosgw ceph-common swift swift-proxy swift-object swift-container swift-account

.PHONY: demo test test-fast test-compat compat-deps bench lab lint sample system-deps clean

demo: $(DEMO_STAMP)
	rm -rf $(DEMO_OUT)
	$(VENV)/bin/objperf fetch --object-size 1GiB --concurrency 16 --duration 20s --out $(DEMO_OUT) --figures
	$(VENV)/bin/objperf report $(DEMO_OUT) -o $(DEMO_OUT)/report.html
	@echo "objperf is $(VENV)/bin/objperf: '. $(VENV)/bin/activate' puts it on your PATH"

test: $(STAMP)
	$(PY) -m pytest -q --durations=25

# The tests that start nothing (no server, command or kernel): a few minutes.
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not integration"

# The core of the suite against SeaweedFS, Ceph's RADOS Gateway, Swift's S3 API and moto, each on loopback.
test-compat: $(STAMP) compat-deps
	OBJPERF_COMPAT=1 $(PY) -m pytest -q --durations=10 tests/compat

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
	$(PY) -m objperf.commands.sample data/sample

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
	   { [ -n "$(filter chromium,$(DEBS))" ] && ! command -v chromium >/dev/null 2>&1; } || \
	   ! ruby -e 'require "aws-sdk-s3"' >/dev/null 2>&1; then \
		if [ -n "$$missing" ]; then \
			echo "installing Debian packages:$$missing"; \
			apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
		fi; \
	fi

DEMO_INSTALL := -e '.[local,plots,report]'
TEST_INSTALL := -e '.[dev,compat]'
# pip's own lines show the downloads; while the engine compiles (a minute on two cores) a line every 15 s says so.
PIP_INSTALL = ( while sleep 15; do echo "  … still installing (building objperf's libcurl engine takes a minute)"; done ) & \
	ticker=$$!; $(PY) -m pip install --progress-bar on --disable-pip-version-check $(1); status=$$?; \
	kill $$ticker 2>/dev/null; exit $$status

$(VENV)/.venv-made:
	$(MAKE) system-deps DEBS="$(BUILD_DEBS)"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	touch $@

$(DEMO_STAMP): $(ENGINE_SOURCES) $(VENV)/.venv-made
	@echo "installing objperf with its embedded server, figures and HTML report into $(VENV)"
	@$(call PIP_INSTALL,$(DEMO_INSTALL))
	touch $@

$(STAMP): $(ENGINE_SOURCES) $(VENV)/.venv-made
	$(MAKE) system-deps
	@echo "installing objperf with every extra and the test tools into $(VENV)"
	@$(call PIP_INSTALL,$(TEST_INSTALL))
	$(PY) -m compileall -q objperf
	touch $@ $(DEMO_STAMP)

clean:
	rm -rf $(VENV) build *.egg-info objperf/_engine/*.so objperf/_engine/core.c .nox
