"""Session fixtures for the real local control plane, and the marker rules.

Tests without a ``tools``, ``api`` or ``cluster`` marker are unit tests (marked ``unit`` here), so
``pytest -m unit`` (``make unit``) runs the pure-code suite in under a minute with no cluster and no tools
(no .tools, no Go). Nothing this file imports at the top may need them either.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from dynamo_localcluster.cluster import REPO_ROOT, LocalCluster, sweep
from support import cleanup, coverage_scope, moduletimes, order

CLUSTER_ROOT = REPO_ROOT / ".cache" / "test-clusters"
TIERS = ("tools", "api", "cluster", "realnode")  # the markers of tests that are not unit tests
SESSION_STARTED = pytest.StashKey[float]()  # seconds since boot when the session began
# module fixtures whose cluster-wide state is costly to build and tear down: the modules using one run one
# after another at the end of the session, and the state carries from one to the next (support.order)
CARRIED = ("third_party_crds",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if not any(item.get_closest_marker(m) for m in TIERS):
            item.add_marker(pytest.mark.unit)
    for fixture in CARRIED:
        order.group_modules_using(items, fixture)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Side by side (``make integration`` runs two pytest processes), a --basetemp given to both becomes one
    subdirectory each: pytest empties its basetemp when it starts, and the cleanup kills what names it."""
    stream = os.environ.get("DYNAMO_TEST_STREAM")
    if stream and config.option.basetemp:
        shared = Path(config.option.basetemp)
        shared.mkdir(parents=True, exist_ok=True)  # pytest makes only the last level
        config.option.basetemp = str(shared / stream)
    if stream:  # an integration stream: print the per-module times its place in the split follows
        config.pluginmanager.register(moduletimes.ModuleTimes(), "moduletimes")
    if getattr(config.option, "cov_source", None):  # make unit: measured for the coverage table's proof
        config.pluginmanager.register(coverage_scope, "coverage_scope")


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[SESSION_STARTED] = cleanup.uptime()


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> Iterator[None]:
    """Nothing a test started may outlive the suite: every process below this one, and every process
    started since the session began that names a test cluster directory or this run's temporary
    directory, is reported and killed (never this process's own ancestors: see ``support.cleanup``).

    A wrapper, so it looks only after every other plugin has finished: under ``-n`` (pytest-xdist, which
    ``make unit`` uses) the workers are this process's children until xdist shuts them down."""
    try:
        yield
    finally:
        _kill_leftovers(session)


def _kill_leftovers(session: pytest.Session) -> None:
    # Only this session's clusters: another pytest run may share the checkout.
    markers = [str(CLUSTER_ROOT / f"{profile}-{os.getpid()}") for profile in ("api", "cluster")]
    basetemp = getattr(session.config, "_tmp_path_factory", None)
    if basetemp is not None:
        with contextlib.suppress(Exception):
            markers.append(str(basetemp.getbasetemp()))
    since = session.config.stash.get(SESSION_STARTED, 0.0)
    leaked = cleanup.leftovers(os.getpid(), markers, since, cleanup.process_table())
    if not leaked:
        return
    for pid in leaked:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = "\n".join(f"  pid {pid}: {cmd[:200]}" for pid, cmd in sorted(leaked.items()))
    if reporter is not None:
        reporter.write_line(
            f"ERROR: {len(leaked)} process(es) started by the tests were still running:\n{lines}"
        )
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _run_cluster(profile: str) -> Iterator[LocalCluster]:
    directory = CLUSTER_ROOT / f"{profile}-{os.getpid()}"
    cluster = LocalCluster(directory, profile=profile, nodes=2)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
        # The suite's promise: nothing it started outlives it. Anything still alive is killed and
        # reported as an error, so a leak is seen rather than inherited by the next run.
        leaked = sweep(directory)
        assert not leaked, f"processes left running after the {profile} cluster stopped: {leaked}"


@pytest.fixture(scope="session")
def api_cluster() -> Iterator[LocalCluster]:
    """etcd + kube-apiserver on 127.0.0.1: for operator, CRD and webhook integration tests."""
    yield from _run_cluster("api")


@pytest.fixture(scope="session")
def kube_cluster() -> Iterator[LocalCluster]:
    """The 'cluster' profile: controllers, scheduler, kwok nodes; Pods become Running and Ready."""
    yield from _run_cluster("cluster")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def dynamo_crds(kube_cluster: LocalCluster) -> Iterator[list[str]]:
    """The generated CRDs on the 'cluster' profile, with conversion served for the whole session by the
    operator's own webhook server on 127.0.0.1.

    A session fixture because CRDs are cluster-wide and the garbage collector watches the preferred
    version (v1beta1): without a live conversion webhook, dependents of deleted Dynamo objects are never
    collected, whichever test module happens to run next."""
    from support.crds import serve_crds

    yield from serve_crds(kube_cluster)


@pytest.fixture(scope="module")
def client(kube_cluster: LocalCluster):
    """A ``ResourceClient`` on the 'cluster' profile (modules on the 'api' profile define their own)."""
    from dynamo_operator.runtime.client import ResourceClient

    return ResourceClient(kube_cluster.api_client())


def _listable(client, res) -> bool:
    from kubernetes.client.exceptions import ApiException

    try:
        client.list(res, limit=1)
        return True
    except ApiException:
        return False


@pytest.fixture(scope="module")
def crds(client, dynamo_crds: list[str]) -> list[str]:
    """The generated CRDs, served (incl. conversion) by the session's ``dynamo_crds`` fixture, once DGDs
    and DCDs can be listed (and DGDs in v1beta1, through the conversion webhook)."""
    from dynamo_operator.controllers import store
    from support.crds import DGD_BETA
    from support.poll import wait_for

    wait_for(lambda: _listable(client, store.DGD) and _listable(client, store.DCD), 30)
    wait_for(lambda: _listable(client, DGD_BETA), 30, "v1beta1 DGDs listed through the conversion webhook")
    return dynamo_crds


@pytest.fixture
def ns(request: pytest.FixtureRequest, client, crds) -> Iterator[str]:
    """A fresh namespace on the 'cluster' profile, named ``<the module's NS_PREFIX>-<random>``; deleted
    after the test."""
    import uuid

    from dynamo_operator.runtime.client import NAMESPACES
    from kubernetes.client.exceptions import ApiException

    name = f"{getattr(request.module, 'NS_PREFIX', 'test')}-{uuid.uuid4().hex[:8]}"
    client.create(NAMESPACES, {"metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiException):
        client.delete(NAMESPACES, name)


@pytest.fixture(scope="module")
def third_party_crds(request: pytest.FixtureRequest, kube_cluster: LocalCluster, crds) -> Iterator[list[str]]:
    """The vendored Grove, Kai and LWS CRDs. Removed (their API groups no longer served) after the module,
    since operators started later auto-detect Grove and LWS and must find the shared cluster as it was;
    unless the next module uses them too (such modules run one after another, last: ``CARRIED``), or no
    later test uses the cluster, which stops next."""
    from support.crds import install_third_party_crds, remove_third_party_crds

    try:
        yield install_third_party_crds(kube_cluster)
    finally:
        items, module = request.session.items, request.path
        if not order.next_module_uses(items, module, "third_party_crds") and order.later_modules_use(
            items, module, "kube_cluster"
        ):
            remove_third_party_crds(kube_cluster.env)
