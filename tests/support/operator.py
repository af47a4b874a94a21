"""The in-process operator the controller tests run: ``Operator``, a Manager with ``controllers.setup``
(leader election off, health and metrics on 127.0.0.1), the one way a test builds one.

Two thin test seams sit on top of the real client and controllers, never in place of the apiserver:

* ``FaultClient``: a ``ResourceClient`` that records every write (attempted, accepted, refused) and, on
  request, fails a chosen call (a 500, a forced 409) before it is sent, the faults a real server does not
  produce on demand;
* each controller's ``reconcile_fn`` is wrapped to record what every reconcile returned or raised (and to
  hold a controller's reconciles of one namespace while a test looks at an intermediate state).
"""

from __future__ import annotations

import contextlib
import copy
import json
import threading
import time
from dataclasses import dataclass

from dynamo_operator.controllers import setup
from dynamo_operator.runtime.client import ResourceClient
from dynamo_operator.runtime.controller import Request, Result
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.runtime.settings import RuntimeSettings
from dynamo_operator.tunables import ControllerTunables
from kubernetes.client.exceptions import ApiException

from support.poll import wait_for

WAIT = 60.0


# -- the recording client ------------------------------------------------------------------------------------


@dataclass
class Fault:
    method: str
    path_suffix: str
    status: int
    reason: str
    times: int | None  # None: until cleared
    hits: int = 0

    def error(self, path: str) -> ApiException:
        e = ApiException(status=self.status, reason=self.reason)
        e.body = json.dumps(
            {"kind": "Status", "reason": self.reason, "code": self.status, "message": f"injected: {path}"}
        )
        return e


class FaultClient(ResourceClient):
    """The real client. Every non-GET request is recorded: in ``writes`` (with its body) before it is
    sent, then in ``accepted`` (a mutation the server accepted) or ``refused`` (with the status; e.g. a
    create refused as AlreadyExists by a cache that had not seen the object yet, which changes nothing).
    Injected faults are raised instead of sending the request and are not recorded as writes."""

    def __init__(self, api_client):
        super().__init__(api_client)
        self._lock = threading.Lock()
        self.writes: list[tuple[str, str, object]] = []
        self.accepted: list[tuple[str, str]] = []
        self.refused: list[tuple[str, str, int]] = []
        self.faults: list[Fault] = []

    def inject(self, method: str, path_suffix: str, status: int, reason: str, times: int | None = 1) -> Fault:
        fault = Fault(method, path_suffix, status, reason, times)
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear(self, fault: Fault) -> None:
        with self._lock:
            if fault in self.faults:
                self.faults.remove(fault)

    def request(self, method, path, *args, **kw):
        with self._lock:
            fault = next(
                (f for f in self.faults if f.method == method and path.endswith(f.path_suffix)), None
            )
            if fault is not None:
                fault.hits += 1
                if fault.times is not None and fault.hits >= fault.times:
                    self.faults.remove(fault)
            elif method != "GET":
                self.writes.append((method, path, copy.deepcopy(kw.get("body"))))
        if fault is not None:
            raise fault.error(path)
        try:
            out = super().request(method, path, *args, **kw)
        except ApiException as e:
            if method != "GET":
                with self._lock:
                    self.refused.append((method, path, e.status))
            raise
        if method != "GET":
            with self._lock:
                self.accepted.append((method, path))
        return out

    def writes_in(self, ns: str, events: bool = False) -> list[tuple[str, str, object]]:
        with self._lock:
            return [
                w for w in self.writes if f"/namespaces/{ns}/" in w[1] and (events or "/events" not in w[1])
            ]


# -- the in-process operator ---------------------------------------------------------------------------------


@dataclass
class Outcome:
    at: float
    controller: str
    request: Request
    result: Result | None
    error: BaseException | None


class Operator:
    """An in-process operator (leader election off, health and metrics on 127.0.0.1) whose client is a
    ``FaultClient`` and whose reconciles are recorded. ``config``: its OperatorConfiguration (a dict);
    ``user``: an identity every request impersonates (its ServiceAccount, to prove its RBAC grants);
    ``controller_tunables``: the controllers' (``ControllerTunables``, default the shipped ones);
    ``settings``: any ``RuntimeSettings`` field (``tunables`` there is the runtime's). ``start``/``stop``, or
    use it as a context manager."""

    def __init__(
        self,
        kube_cluster,
        config: dict | None = None,
        user: str | None = None,
        controller_tunables: ControllerTunables | None = None,
        **settings,
    ):
        api_client = kube_cluster.api_client()
        if user is not None:
            api_client.set_default_header("Impersonate-User", user)
        self.mgr = Manager(
            RuntimeSettings(
                **{
                    "metrics_bind_address": "0",
                    "health_probe_bind_address": "127.0.0.1:0",
                    "metrics_secure": False,
                    "leader_elect": False,
                    **settings,
                }
            ),
            api_client,
        )
        self.client = FaultClient(self.mgr.api_client)
        self.mgr.client = self.client  # before setup: informers, recorder and reconcilers all use it
        self.controllers = setup(self.mgr, config, controller_tunables)
        self.outcomes: list[Outcome] = []
        self.held: set[tuple[str, str]] = set()  # (controller, namespace) whose reconciles wait
        self._active: dict[str, int] = {}
        self._lock = threading.Lock()
        for name, ctl in self.controllers.items():
            ctl.reconcile_fn = self._recording(name, ctl.reconcile_fn)

    def _recording(self, name, fn):
        def run(req: Request):
            with contextlib.suppress(AssertionError):  # held at most WAIT seconds, then it runs
                wait_for(lambda: (name, req.namespace) not in self.held, WAIT, interval=0.05)
            with self._lock:
                self._active[req.namespace] = self._active.get(req.namespace, 0) + 1
            result, error = None, None
            try:
                result = fn(req)
                return result
            except Exception as e:
                error = e
                raise
            finally:
                with self._lock:
                    self._active[req.namespace] -= 1
                    self.outcomes.append(Outcome(time.monotonic(), name, req, result, error))

        return run

    def start(self) -> None:
        self.mgr.start()
        assert self.mgr.wait_for_cache_sync(30)
        wait_for(
            lambda: all(c.running for c in self.controllers.values()),
            30,
        )

    def stop(self) -> None:
        self.held.clear()
        self.mgr.stop()
        assert self.mgr.wait(30)

    def __enter__(self) -> Operator:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def reconciles(self) -> int:
        return sum(c.reconciles for c in self.controllers.values())

    def outcomes_for(self, controller: str, ns: str, name: str, since: int = 0) -> list[Outcome]:
        with self._lock:
            return [
                o
                for o in self.outcomes[since:]
                if o.controller == controller and o.request == Request(ns, name)
            ]

    def mark(self) -> int:
        with self._lock:
            return len(self.outcomes)

    def idle(self, ns: str | None = None, quiet: float = 2.0, timeout: float = 30.0) -> bool:
        """Wait until no reconcile (of ``ns``, or of any namespace) ran or finished for ``quiet`` seconds,
        counted from this call at the earliest; without ``ns`` the work queues must be empty as well."""
        busy = time.monotonic()  # the last moment something was seen running or queued

        def quiet_now() -> bool:
            nonlocal busy
            now = time.monotonic()
            with self._lock:
                running = any(n for k, n in self._active.items() if ns in (None, k))
                last = max((o.at for o in self.outcomes if ns in (None, o.request.namespace)), default=0.0)
            queued = ns is None and any(
                c.queue is not None and len(c.queue) for c in self.controllers.values()
            )
            if running or queued:
                busy = now
            return now - max(last, busy) >= quiet

        return wait_for(
            quiet_now, timeout, f"no reconcile in {ns or 'any namespace'} for {quiet}s", interval=0.2
        )

    def enqueue(self, controller: str, ns: str, name: str) -> None:
        self.controllers[controller].enqueue(Request(ns, name))


# -- the chart's own identity ------------------------------------------------------------------------------


@contextlib.contextmanager
def chart_operator_identity(kube_cluster, prefix: str):
    """The chart's cluster-wide manager ClusterRole and its binding (rendered by ``helm template`` for a
    release named ``<prefix>-<random>``), with the admission policies that bound its writes, applied; yields
    the ServiceAccount's user name an ``Operator`` impersonates (``Operator(kube_cluster, user=...)``), so
    every write goes through the chart's grants and policies, and a missing rule fails the test. Everything
    applied is deleted afterwards (the policies match only this release's account)."""
    import subprocess
    import uuid

    import yaml
    from dynamo_localcluster.cluster import REPO_ROOT

    from support.rbac import render

    env = kube_cluster.env
    release = f"{prefix}-{uuid.uuid4().hex[:6]}"
    docs = render(env, REPO_ROOT / "charts" / "platform", release, f"{release}-system")
    crbs = [d for d in docs if d["kind"] == "ClusterRoleBinding"]
    (manager,) = [d for d in crbs if d["metadata"]["name"].endswith("-manager")]
    (subject,) = manager["subjects"]
    # every ClusterRole bound to the manager's account (its main grant, the MPI Secret's, NetworkPolicies')
    bindings = [d for d in crbs if subject in (d.get("subjects") or [])]
    bound = {b["roleRef"]["name"] for b in bindings}
    grants = bindings + [d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] in bound]
    policies = [d for d in docs if d["kind"].startswith("ValidatingAdmissionPolicy")]
    assert policies, "the chart renders no admission policy"
    text = yaml.safe_dump_all(grants + policies)

    def kubectl(*args: str, check: bool = True) -> None:
        p = subprocess.run(
            ["kubectl", *args], input=text, env=env, capture_output=True, text=True, timeout=120
        )
        assert p.returncode == 0 or not check, p.stderr

    kubectl("apply", "-f", "-")
    try:
        yield f"system:serviceaccount:{subject['namespace']}:{subject['name']}"
    finally:
        kubectl("delete", "--ignore-not-found", "-f", "-", check=False)
