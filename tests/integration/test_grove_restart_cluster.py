"""``spec.restart`` on the Grove pathway, on the real control plane with the vendored Grove CRDs.

kwok runs no Grove operator, so ``FakeGrove`` plays the part the DGD controller reads back: it reports
the PodCliqueSet's ``status.observedGeneration`` and creates each component's PodClique (owned by the
PodCliqueSet) with all replicas ready, only when the test says so. That lets the test hold Grove between
steps and see that the restart waits for it: a Sequential restart puts the id on one component's clique,
and moves on only once Grove has observed that generation and the component is ready again.

The vendored CRDs are the session's carried ``third_party_crds`` (conftest), shared with the other modules
that need them.
"""

from __future__ import annotations

import pytest
from dynamo_operator.controllers import store
from dynamo_operator.controllers.sync import PODCLIQUES, PODCLIQUESETS
from dynamo_operator.render import grove as rgrove
from dynamo_operator.render import names
from kubernetes.client.exceptions import ApiException
from support import graphs
from support.crs import running_operator, wait_event_reasons
from support.dgd import IMAGE, apply_dgd, dgd_status, get, wait_status
from support.poll import wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "grst"
WAIT = 90.0
GROVE_ON = {"orchestrators": {"grove": {"enabled": True}}}


def graph(ns: str, restart: dict | None = None) -> dict:
    worker = graphs.component("Worker", image=IMAGE, command=graphs.VLLM)
    frontend = graphs.component(
        "Frontend", "frontend", image=IMAGE, command=["python3", "-m", "dynamo.frontend"]
    )
    return graphs.dgd(worker, frontend, namespace=ns, **({"restart": restart} if restart is not None else {}))


class FakeGrove:
    """What the Grove operator would report for one PodCliqueSet, on demand."""

    def __init__(self, client, ns: str, pcs_name: str):
        self.client, self.ns, self.pcs_name = client, ns, pcs_name

    def pcs(self) -> dict | None:
        return get(self.client, PODCLIQUESETS, self.pcs_name, self.ns)

    def observe(self) -> int:
        """Observe the current generation: every clique exists with all its replicas ready. Returns the
        generation observed."""
        pcs = self.pcs()
        assert pcs is not None, "no PodCliqueSet"
        gen = pcs["metadata"]["generation"]
        owner = {
            "apiVersion": PODCLIQUESETS.api_version,
            "kind": PODCLIQUESETS.kind,
            "name": self.pcs_name,
            "uid": pcs["metadata"]["uid"],
            "controller": True,
        }
        for clique in pcs["spec"]["template"]["cliques"]:
            name = rgrove.child_name(self.pcs_name, clique["name"])
            replicas = clique["spec"]["replicas"]
            if get(self.client, PODCLIQUES, name, self.ns) is None:
                body = {
                    "apiVersion": PODCLIQUES.api_version,
                    "kind": PODCLIQUES.kind,
                    "metadata": {"name": name, "namespace": self.ns, "ownerReferences": [owner]},
                    "spec": {
                        "roleName": clique["name"],
                        "replicas": replicas,
                        "podSpec": clique["spec"]["podSpec"],
                    },
                }
                self.client.create(PODCLIQUES, body, self.ns)
            self._status(
                PODCLIQUES,
                name,
                {"replicas": replicas, "readyReplicas": replicas, "updatedReplicas": replicas},
            )
        self._status(PODCLIQUESETS, self.pcs_name, {"observedGeneration": gen})
        return gen

    def _status(self, res, name: str, status: dict) -> None:
        for _ in range(5):
            obj = get(self.client, res, name, self.ns)
            obj["status"] = {**(obj.get("status") or {}), **status}
            try:
                self.client.replace(res, obj, subresource="status")
                return
            except ApiException as e:
                if e.status != 409:
                    raise
        raise AssertionError(f"could not write the status of {res.kind} {name}")


def clique_restarts(grove: FakeGrove) -> dict[str, str | None]:
    cliques = ((grove.pcs() or {}).get("spec") or {}).get("template", {}).get("cliques") or []
    return {c["name"]: (c.get("annotations") or {}).get(names.ANN_RESTART_AT) for c in cliques}


def restart_is(expected: dict):
    return lambda s: s.get("restart") == expected


def test_restart_on_grove_rolls_cliques_in_order_and_reports_status(
    kube_cluster, client, ns, third_party_crds
):
    with running_operator(kube_cluster, GROVE_ON):
        apply_dgd(client, graph(ns))
        grove = FakeGrove(client, ns, rgrove.pcs_name(graph(ns)))
        wait_for(lambda: grove.pcs() is not None, WAIT, lambda: dgd_status(client, ns), interval=0.3)
        grove.observe()
        wait_status(client, ns, lambda s: s.get("state") == "successful", timeout=WAIT)
        assert clique_restarts(grove) == {"worker": None, "frontend": None}

        # Sequential (the default) in name order: Frontend first; Worker waits for Grove to roll it
        apply_dgd(client, graph(ns, {"id": "r1"}))
        s = wait_status(
            client, ns, restart_is({"observedID": "r1", "phase": "Restarting", "inProgress": ["Frontend"]}),
            timeout=WAIT,
        )  # fmt: skip
        assert s["state"] == "pending"
        assert clique_restarts(grove) == {"worker": None, "frontend": "r1"}
        rolled = grove.observe()  # Grove rolls the frontend clique and reports it ready again
        wait_status(
            client, ns, restart_is({"observedID": "r1", "phase": "Restarting", "inProgress": ["Worker"]}),
            timeout=WAIT,
        )  # fmt: skip
        assert clique_restarts(grove) == {"worker": "r1", "frontend": "r1"}
        assert grove.pcs()["metadata"]["generation"] == rolled + 1  # one clique per step
        grove.observe()
        s = wait_status(client, ns, restart_is({"observedID": "r1", "phase": "Completed"}), timeout=WAIT)
        wait_for(lambda: dgd_status(client, ns).get("state") == "successful", WAIT, interval=0.3)
        wait_event_reasons(client, ns, "g", {"RestartStarted", "RestartCompleted"}, names.DGD_KIND)

        # Parallel: every clique gets the new id in one generation
        before = grove.pcs()["metadata"]["generation"]
        apply_dgd(client, graph(ns, {"id": "r2", "strategy": {"type": "Parallel"}}))
        wait_status(
            client, ns,
            restart_is({"observedID": "r2", "phase": "Restarting", "inProgress": ["Frontend", "Worker"]}),
            timeout=WAIT,
        )  # fmt: skip
        assert clique_restarts(grove) == {"worker": "r2", "frontend": "r2"}
        assert grove.pcs()["metadata"]["generation"] == before + 1
        grove.observe()
        wait_status(client, ns, restart_is({"observedID": "r2", "phase": "Completed"}), timeout=WAIT)

        # a finished restart stays on the cliques (removing spec.restart does not roll the pods back)
        apply_dgd(client, graph(ns))
        done = grove.pcs()["metadata"]["generation"]
        wait_for(
            lambda: dgd_status(client, ns).get("observedGeneration") == _generation(client, ns),
            WAIT,
            interval=0.3,
        )
        assert clique_restarts(grove) == {"worker": "r2", "frontend": "r2"}
        assert grove.pcs()["metadata"]["generation"] == done
        assert dgd_status(client, ns)["restart"] == {"observedID": "r2", "phase": "Completed"}


def _generation(client, ns: str) -> int:
    return get(client, store.DGD, "g", ns)["metadata"]["generation"]
