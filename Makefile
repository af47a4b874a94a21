# Two commands matter: `make demo` (the product on a local control plane) and `make test` (what CI runs).
SHELL := /bin/bash
.DEFAULT_GOAL := help
export GOTOOLCHAIN ?= local

VENV      := .venv
PY        := $(VENV)/bin/python
STAMP     := $(VENV)/.installed
TOOLS     := .tools/bin/kube-apiserver
# Helm state stays inside the checkout: plugins, repositories and cache never touch ~/.config/helm.
HELM_HOME := $(CURDIR)/.cache/helm
export HELM_CONFIG_HOME := $(HELM_HOME)/config
export HELM_CACHE_HOME  := $(HELM_HOME)/cache
export HELM_DATA_HOME   := $(HELM_HOME)/data
export HELM_PLUGINS     := $(HELM_HOME)/plugins
export PATH := $(CURDIR)/.tools/bin:$(CURDIR)/$(VENV)/bin:$(PATH)
CHARTS := $(patsubst %/Chart.yaml,%,$(wildcard charts/*/Chart.yaml charts/*/components/*/Chart.yaml))

.PHONY: help
help:
	@echo "make demo        install the platform on a local control plane and deploy a sample graph"
	@echo "make demo-down   stop the demo cluster"
	@echo "make test        everything CI checks, cheapest first: lint, chart checks, unit, integration"
	@echo "make unit        the unit tier alone: no cluster, no tools (no .tools, no Go), under a minute"
	@echo "make cluster-up  start a local control plane and print its KUBECONFIG line"
	@echo "make cluster-down"
	@echo "make crds        regenerate crds/ from the API models"
	@echo "make coverage-doc regenerate docs/api-coverage.md (what acts, is refused or stored only)"
	@echo "make security-doc regenerate the grant reference of docs/security.md from the chart"
	@echo "make tools       build the pinned test tools (first time: 20-40 min)"
	@echo "make bench       measure the operator against the API server's floor (BENCH_N=500, ~20 min)"
	@echo "make bench-scale the same at 5000 graphs (memory at scale; hours)"
	@echo "make image       build the operator image without an engine (OCI + docker-archive; prints its digest)"
	@echo "make images      the operator, Dynamo runtime, MPI engine, sandbox, NATS, etcd, LWS and storage images for the real node"
	@echo "make node-tools  build the real node's kubelet, kube-proxy and containerd (first time: ~10 min)"

# The development environment installs from a hashed lock (requirements-dev.lock, `make image-lock`): it runs
# as root where the real node runs, so nothing unpinned or unhashed reaches it. The project itself goes in
# last, editable, with no dependency resolution and no build isolation (its build tools are in the lock).
$(STAMP): pyproject.toml requirements-dev.lock
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes --no-deps -r requirements-dev.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

.PHONY: venv
venv: $(STAMP)

.PHONY: tools
# One build at a time: the checks' job and the real-node tier's ask for the tools at once (`make test`).
tools:
	@mkdir -p .cache
	flock .cache/build-tools.lock bash tools/build-tools.sh

# Helm plugins (helm-unittest from the tool cache, our own `dynamo` plugin) are linked into $(HELM_PLUGINS).
.PHONY: helm-plugins
helm-plugins: tools
	mkdir -p $(HELM_PLUGINS)
	ln -sfn $(realpath .tools/helm-plugins)/unittest $(HELM_PLUGINS)/unittest
	@if [ -f plugin/plugin.yaml ]; then ln -sfn $(CURDIR)/plugin $(HELM_PLUGINS)/dynamo; fi

.PHONY: lint
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

.PHONY: crds
crds: $(STAMP)
	$(PY) -m dynamo_operator.api.crdgen --out crds

# docs/api-coverage.md from the API models, the configuration and the charts' values (a test fails when stale)
.PHONY: coverage-doc
coverage-doc: $(STAMP)
	$(PY) -m dynamo_coverage --write

# the grant reference of docs/security.md from the rendered chart (tests/unit/test_security_doc.py fails when stale)
.PHONY: security-doc
security-doc: $(STAMP) tools
	$(PY) -m dynamo_coverage.grants --write

# helm lint and helm unittest of every chart, then the values tests through `helm template` (pytest's
# `tools` tier): the chart's mistakes show within the first minute or two.
.PHONY: charts-check
charts-check: $(STAMP) helm-plugins
	@for c in $(CHARTS); do echo "== helm lint $$c"; helm lint --strict $$c || exit 1; \
	  if [ -d $$c/tests ]; then echo "== helm unittest $$c"; helm unittest $$c || exit 1; fi; done
	$(PY) -m pytest -m tools -q --ignore=tests/realnode $(PYTEST_ARGS)

# The pure-code tier: needs the venv only (no .tools, no Go, no cluster), spread over one pytest-xdist
# worker per core (UNIT_WORKERS=0 runs it in one process, as a debugger wants).
# It runs under coverage.py with one context per test, and then holds every "acts" row of
# docs/api-coverage.md to it: the unit test a row names must run the code it names (`dynamo_coverage --prove`;
# only on the whole tier: a PYTEST_ARGS selection skips the proof). Only the tests the table names are
# measured (tests/support/coverage_scope.py; DYNAMO_COVERAGE_ALL=1 measures all): +15% CPU, not +70%.
UNIT_WORKERS ?= auto
COVERAGE_DATA := .cache/coverage/unit
UNIT_COVERAGE := --cov=dynamo_operator --cov=dynamo_hooks --cov=dynamo_plugin --cov-context=test --cov-report=
.PHONY: unit
unit: $(STAMP)
	mkdir -p $(dir $(COVERAGE_DATA))
	COVERAGE_FILE=$(COVERAGE_DATA) $(PY) -m pytest -m unit -q -n $(UNIT_WORKERS) --dist worksteal \
	  --ignore=tests/realnode $(UNIT_COVERAGE) $(PYTEST_ARGS)
	@if [ -z "$(PYTEST_ARGS)" ]; then $(PY) -m dynamo_coverage --prove --data $(COVERAGE_DATA); fi

# The tiers on a local control plane (api, cluster, the fault tests), as three pytest processes side by
# side: one process waiting on its control plane leaves most of the 2 cores idle. Each process starts the
# control planes its tests need, on free ports and in directories of its own (with a --basetemp in
# PYTEST_ARGS, each gets a subdirectory: tests/conftest.py). `planes` takes the tests that start control
# planes of their own (the fault tests, the RBAC proof), so it starts no shared one; `side` the api tier,
# the benchmark and the Helm releases (chart installs, the plugin, uninstall, the demo); `main` everything
# else, so a new test module lands there. The split follows the per-module seconds each process prints at
# its end, so that all three end together (docs/testing.md). Each one's output is printed when it ends.
INTEGRATION_PLANES := tests/faults tests/integration/test_rbac_cluster.py
INTEGRATION_SIDE := tests/integration/test_bench.py tests/integration/test_crds_apiserver.py \
  tests/integration/test_hooks_checks_cluster.py tests/integration/test_localcluster_api.py \
  tests/integration/test_runtime_api.py tests/integration/test_runtime_faults_api.py \
  tests/integration/test_webhooks_api.py tests/integration/test_uninstall.py \
  tests/integration/test_chart_install.py tests/integration/test_plugin_cluster.py tests/integration/test_hooks_cluster.py \
  tests/integration/test_demo.py tests/integration/test_upgrade.py
INTEGRATION_STREAMS := integration-planes integration-side integration-main
.PHONY: integration $(INTEGRATION_STREAMS)
integration: $(STAMP) helm-plugins
	$(MAKE) --no-print-directory -j3 --output-sync=target $(INTEGRATION_STREAMS)
integration-planes: $(STAMP) helm-plugins
	DYNAMO_TEST_STREAM=planes $(PY) -m pytest -m "api or cluster" $(PYTEST_ARGS) $(INTEGRATION_PLANES)
integration-side: $(STAMP) helm-plugins
	DYNAMO_TEST_STREAM=side $(PY) -m pytest -m "api or cluster" $(PYTEST_ARGS) $(INTEGRATION_SIDE)
integration-main: $(STAMP) helm-plugins
	DYNAMO_TEST_STREAM=main $(PY) -m pytest -m "api or cluster" $(PYTEST_ARGS) --ignore=tests/realnode \
	  $(addprefix --ignore=,$(INTEGRATION_PLANES) $(INTEGRATION_SIDE))

# Every tier in one pytest run (PYTEST_ARGS narrows it, e.g. PYTEST_ARGS=tests/integration/test_demo.py).
.PHONY: pytest
pytest: $(STAMP) helm-plugins
	$(PY) -m pytest --ignore=tests/realnode $(PYTEST_ARGS)

# Cheapest first, so a mistake fails early: ruff (seconds), then two jobs side by side. One is the charts and
# the unit tier (a minute or two, side by side: one needs helm, the other only the venv), then the three
# integration processes. The other is the real-node tier (the node's tools, the images, then its tests),
# the run's longest job: it waits on real containers far more than it computes, and started after the checks
# it ran alone, its tail at a third of the machine, for two to three minutes. Started beside them it still
# stops early when they fail: the checks' job leaves $(CHECKS_FAILED), and the tier ends before its next
# test (tests/realnode/conftest.py), tearing its node down. Its output is printed when it ends.
# REALNODE_OVERLAP=0 runs everything one after the other instead (docs/testing.md says what each layout cost).
REALNODE_OVERLAP ?= 1
CHECKS_FAILED := .cache/checks-failed
REALNODE_LOG := .cache/test-realnode.log
.PHONY: test checks realnode-tools test-streams realnode-beside
checks: lint
	$(MAKE) --no-print-directory -j2 --output-sync=target charts-check unit
test: lint
ifeq ($(REALNODE_OVERLAP),1)
	@mkdir -p $(dir $(CHECKS_FAILED)) && rm -f $(CHECKS_FAILED)
	@$(MAKE) --no-print-directory -j2 test-streams realnode-beside
else
	@$(MAKE) --no-print-directory -j2 --output-sync=target charts-check unit
	@$(MAKE) --no-print-directory realnode-tools
	@$(MAKE) --no-print-directory integration
	@$(MAKE) --no-print-directory test-realnode
endif
test-streams:
	@$(MAKE) --no-print-directory -j2 --output-sync=target charts-check unit || { touch $(CHECKS_FAILED); exit 1; }
	@$(MAKE) --no-print-directory -j3 --output-sync=target $(INTEGRATION_STREAMS)
realnode-beside:
	@echo "test-realnode: runs beside the checks and the integration processes; its output ($(REALNODE_LOG)) follows when it ends"
	@$(MAKE) --no-print-directory test-realnode REALNODE_STOP_WHEN=$(CURDIR)/$(CHECKS_FAILED) >$(REALNODE_LOG) 2>&1; \
	  rc=$$?; cat $(REALNODE_LOG); exit $$rc
# Where this machine can run a node: its Debian packages (as root, only the missing ones) and its tools.
# The one place that decides it for `make test`, `test-realnode` and `demo`; elsewhere it does nothing.
realnode-tools: $(STAMP)
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory node-deps; fi; \
	if $(VENV)/bin/dynamo-localcluster node-check --machine --quiet; then \
	  $(MAKE) --no-print-directory node-tools; fi

# ---- the real node and the images (docs/realnode.md) -----------------------------------------------------
# Debian packages for `make image` and the real node, installed through apt-get only when missing (root).
NODE_DEBS := mmdebstrap umoci skopeo runc containernetworking-plugins iptables conntrack nftables
.PHONY: node-deps node-tools image images image-lock test-realnode
node-deps:
	@missing=$$(for p in $(NODE_DEBS); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then echo "node-deps: missing Debian packages:" $$missing "(install them as root)" >&2; exit 1; fi; \
	  echo "node-deps: installing" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

node-tools:
	bash tools/node/build-node-tools.sh

# The operator image (last line: its manifest digest).
image: $(STAMP) node-deps
	$(PY) image/build.py operator

images: image node-tools
	$(PY) image/build.py runtime
	$(PY) image/build.py mpi
	$(PY) image/build.py helm-test
	@for r in pause nats etcd lws local-path-provisioner; do $(PY) image/build.py $$r || exit 1; done

# Regenerate the hashed wheel locks of the images and of the development environment (needs PyPI).
image-lock: $(STAMP)
	$(PY) image/lock.py

# The serial real-node tier: only on a machine that can run a node (root, kernel features); elsewhere it is
# skipped with one line saying why. As root the Debian packages it needs are installed first (only the missing
# ones). One real node per machine at a time.
# The images and the tests are two recipe lines: make runs a line that names $(MAKE) even under `make -n`, so a
# dry run that shared one line with pytest started a real node (it did, once, beside a real run).
# The whole tier runs as two lanes on the one node (tests/support/realnode_lanes.py): the owner lane's pytest
# starts the node, runs ct install and installs the platform; the guest lane's attaches once the node runs
# and runs its modules beside the owner's; the guest's output follows the owner's, and either lane's failure
# fails the tier. A selection (REALNODE_PYTEST_ARGS) is one lane.
REALNODE_SHARE := $(CURDIR)/.cache/realnode-lanes
test-realnode: realnode-tools helm-plugins
	@if $(VENV)/bin/dynamo-localcluster node-check --machine --quiet; then $(MAKE) --no-print-directory images; fi
	@if ! why=$$($(VENV)/bin/dynamo-localcluster node-check --machine 2>&1); then \
	  echo "test-realnode: skipped ($$(echo "$$why" | head -n 1))"; \
	elif [ -n "$(REALNODE_PYTEST_ARGS)" ]; then \
	  DYNAMO_REALNODE_TIER=1 DYNAMO_STOP_WHEN=$(REALNODE_STOP_WHEN) $(PY) -m pytest tests/realnode $(REALNODE_PYTEST_ARGS); \
	else \
	  rm -rf $(REALNODE_SHARE) && mkdir -p $(REALNODE_SHARE) && \
	  export DYNAMO_REALNODE_TIER=1 DYNAMO_STOP_WHEN=$(REALNODE_STOP_WHEN) DYNAMO_REALNODE_SHARE=$(REALNODE_SHARE); \
	  DYNAMO_REALNODE_LANE=guest $(PY) -m pytest tests/realnode >$(REALNODE_SHARE)/guest.log 2>&1 & guest=$$!; \
	  DYNAMO_REALNODE_LANE=owner $(PY) -m pytest tests/realnode; owner=$$?; \
	  wait $$guest; rc=$$?; echo "---- test-realnode, the guest lane (exit $$rc) ----"; cat $(REALNODE_SHARE)/guest.log; \
	  [ $$owner = 0 ] && [ $$rc = 0 ]; \
	fi

.PHONY: cluster-up cluster-down
cluster-up: $(STAMP) tools
	$(VENV)/bin/dynamo-localcluster up --profile cluster --dir .cache/localcluster
cluster-down: $(STAMP)
	$(VENV)/bin/dynamo-localcluster down --dir .cache/localcluster

# Performance on the local control plane: table on stdout, JSON in bench/results/ (docs/performance.md).
.PHONY: bench
bench: $(STAMP) tools
	$(PY) -m bench

# The same at 5000 graphs (the floor once, before the operator; no 2N point: 10000 graphs do not fit 2
# cores): memory at scale, a restart over 5000 converged graphs; hours on 2 cores (docs/performance.md).
.PHONY: bench-scale
bench-scale: $(STAMP) tools
	BENCH_N=$${BENCH_N:-5000} BENCH_GROW=0 BENCH_FLOOR_AFTER=0 $(PY) -m bench

# The demo runs on the real node where this machine can run one (it then builds what that needs first),
# else on kwok's fake nodes; it says which and why.
.PHONY: demo demo-down
demo: realnode-tools helm-plugins
	@if $(VENV)/bin/dynamo-localcluster node-check --machine --quiet; then \
	  $(MAKE) --no-print-directory images; fi
	$(VENV)/bin/dynamo-localcluster demo
demo-down: $(STAMP)
	$(VENV)/bin/dynamo-localcluster demo --down
