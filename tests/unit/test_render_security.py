"""security.workloads.restrictedSecurityContext (render/security.py): the restricted Pod Security profile's
settings on every pod the operator renders, per pathway, never over what the author wrote, and none at all
for a pod template with its own pod securityContext (the defaults document's rule)."""

from __future__ import annotations

import copy

import pytest
from dynamo_operator.api.config import OPERATOR_IMAGE
from dynamo_operator.render import RenderContext, dgdr_job, render_all, security
from dynamo_operator.render import checkpoint as rc
from dynamo_operator.render import dgdr as rd
from support import graphs

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"
MPI = {"sshSecretName": "mpi-run-ssh-secret"}
ON = {"security": {"workloads": {"restrictedSecurityContext": True}}, "mpi": MPI}
OFF = {"mpi": MPI}
RESTRICTED_POD = {"fsGroup": 1000, "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def ctx(config: dict, *detected: str) -> RenderContext:
    cfg = copy.deepcopy(config)
    cfg.setdefault("orchestrators", {})["grove"] = {"enabled": "grove" in detected}
    return RenderContext(operator_config=cfg, detected=frozenset(detected))


def main(**extra) -> dict:
    return {"name": "main", "image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"], **extra}


def component(name: str, ctype: str = "worker", pod: dict | None = None, **extra) -> dict:
    spec = pod if pod is not None else {"containers": [main()]}
    return {"name": name, "type": ctype, "podTemplate": {"spec": spec}, **extra}


def graph(*components: dict, backend: str = "vllm") -> dict:
    return graphs.dgd(*components, backendFramework=backend)


def trtllm_multinode() -> dict:
    worker = main(
        command=["python3", "-m", "dynamo.trtllm"],
        args=["--model-path", "m"],
        resources={"limits": {"nvidia.com/gpu": "8"}},
    )
    return component("TrtWorker", pod={"containers": [worker]}, multinode={"nodeCount": 2})


def pod_specs(objs: list[dict]) -> dict[str, dict]:
    """Every pod spec the rendered objects carry, by where it sits."""
    out: dict[str, dict] = {}
    for o in objs:
        name, spec = o["metadata"]["name"], o.get("spec") or {}
        if o["kind"] == "Deployment":
            out[f"Deployment/{name}"] = spec["template"]["spec"]
        elif o["kind"] == "LeaderWorkerSet":
            lwt = spec["leaderWorkerTemplate"]
            out[f"LeaderWorkerSet/{name}/leader"] = lwt["leaderTemplate"]["spec"]
            out[f"LeaderWorkerSet/{name}/worker"] = lwt["workerTemplate"]["spec"]
        elif o["kind"] == "PodCliqueSet":
            for clique in spec["template"]["cliques"]:
                out[f"PodCliqueSet/{name}/{clique['name']}"] = clique["spec"]["podSpec"]
        elif o["kind"] == "Job":
            out[f"Job/{name}"] = spec["template"]["spec"]
    return out


def containers(pod: dict) -> list[dict]:
    return [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]


def assert_restricted(pods: dict[str, dict]) -> None:
    assert pods
    for where, pod in pods.items():
        sc = pod["securityContext"]
        assert sc["runAsNonRoot"] is True and sc["seccompProfile"] == {"type": "RuntimeDefault"}, where
        for c in containers(pod):
            assert c["securityContext"]["allowPrivilegeEscalation"] is False, (where, c["name"])
            assert c["securityContext"]["capabilities"]["drop"] == ["ALL"], (where, c["name"])


PATHWAYS = {
    "deployment": (graph(component("Frontend", "frontend"), component("Worker")), ()),
    "lws": (graph(component("Frontend", "frontend"), trtllm_multinode(), backend="trtllm"), ("lws",)),
    "grove": (graph(component("Frontend", "frontend"), trtllm_multinode(), backend="trtllm"), ("grove",)),
}


@pytest.mark.parametrize("pathway", sorted(PATHWAYS))
def test_every_pod_of_every_pathway_gets_the_restricted_settings(pathway):
    dgd, detected = PATHWAYS[pathway]
    pods = pod_specs(render_all(dgd, ctx(ON, *detected)))
    kinds = {where.split("/")[0] for where in pods}
    assert kinds == {"deployment": {"Deployment"}, "lws": {"Deployment", "LeaderWorkerSet"}}.get(
        pathway, {"PodCliqueSet"}
    )
    assert_restricted(pods)
    for pod in pods.values():
        assert pod["securityContext"] == RESTRICTED_POD  # next to the documented fsGroup, nothing else


@pytest.mark.parametrize("pathway", sorted(PATHWAYS))
def test_switch_off_renders_exactly_the_documented_default(pathway):
    dgd, detected = PATHWAYS[pathway]
    for where, pod in pod_specs(render_all(dgd, ctx(OFF, *detected))).items():
        assert pod["securityContext"] == {"fsGroup": 1000}, where
        assert all("securityContext" not in c for c in containers(pod)), where


def test_the_switch_is_off_by_default():
    assert not security.restricted(RenderContext())
    dgd, _ = PATHWAYS["deployment"]
    assert render_all(dgd, RenderContext()) == render_all(dgd, ctx({}))


def test_containers_the_operator_adds_are_hardened_too():
    """The frontend sidecar, the GMS server init container, the user's sidecars and init containers."""
    pod = {
        "initContainers": [{"name": "fetch", "image": "busybox:1.36"}],
        "containers": [
            main(resources={"limits": {"nvidia.com/gpu": "1"}}),
            {"name": "sidecar-frontend", "image": IMAGE},
            {"name": "log-shipper", "image": "fluent-bit:3"},
        ],
    }
    worker = component(
        "Worker", pod=pod, frontendSidecar="sidecar-frontend", experimental={"gpuMemoryService": {}}
    )
    pods = pod_specs(render_all(graph(worker), ctx({**ON, "dra": {"enabled": True}}, "dra")))
    (spec,) = pods.values()
    names = [c["name"] for c in containers(spec)]
    assert {"fetch", "gms-server", "main", "sidecar-frontend", "log-shipper"} <= set(names), names
    assert_restricted(pods)


def test_what_the_author_wrote_on_a_container_is_kept():
    pod = {
        "containers": [
            main(securityContext={"allowPrivilegeEscalation": True, "capabilities": {"add": ["IPC_LOCK"]}}),
            {
                "name": "dbg",
                "image": "busybox:1.36",
                "securityContext": {"capabilities": {"drop": ["NET_RAW"]}},
            },
            {"name": "priv", "image": "busybox:1.36", "securityContext": {"privileged": True}},
            {
                "name": "admin",
                "image": "busybox:1.36",
                "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}},
            },
        ]
    }
    (spec,) = pod_specs(render_all(graph(component("Worker", pod=pod)), ctx(ON))).values()
    by_name = {c["name"]: c["securityContext"] for c in spec["containers"]}
    assert by_name["main"] == {
        "allowPrivilegeEscalation": True,
        "capabilities": {"add": ["IPC_LOCK"], "drop": ["ALL"]},
    }
    assert by_name["dbg"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["NET_RAW"]}}
    # allowPrivilegeEscalation false next to privileged or an added SYS_ADMIN is refused by the API server
    assert by_name["priv"] == {"privileged": True, "capabilities": {"drop": ["ALL"]}}
    assert by_name["admin"] == {"capabilities": {"add": ["SYS_ADMIN"], "drop": ["ALL"]}}
    assert spec["securityContext"] == RESTRICTED_POD


@pytest.mark.parametrize("own", [{}, {"runAsUser": 0}, {"fsGroup": 2000, "runAsNonRoot": True}])
def test_a_pod_template_with_its_own_security_context_gets_nothing_injected(own):
    """The documented rule: any pod securityContext in the template means no defaults, at pod or container
    level (so an author may still run as root, with the capabilities root needs)."""
    pod = {"securityContext": own, "containers": [main(), {"name": "side", "image": "busybox:1.36"}]}
    for detected, dgd in (
        ((), graph(component("Worker", pod=pod))),
        (
            ("lws",),
            graph(component("Frontend", "frontend"), _with_pod(trtllm_multinode(), own), backend="trtllm"),
        ),
    ):
        for where, spec in pod_specs(render_all(dgd, ctx(ON, *detected))).items():
            if "Frontend" in where or "frontend" in where:
                continue
            assert spec["securityContext"] == own, where
            assert all("securityContext" not in c for c in containers(spec)), where


def _with_pod(comp: dict, own: dict) -> dict:
    comp = copy.deepcopy(comp)
    comp["podTemplate"]["spec"]["securityContext"] = own
    return comp


def _dgdr() -> dict:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "req", "namespace": "team", "generation": 1, "uid": "u1"},
        "spec": {
            "model": "Qwen/Qwen3-0.6B",
            "backend": "vllm",
            "profilingConfig": {"profilerImage": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.1"},
        },
    }


def test_the_dgdr_profiling_job():
    plain = rd.profiling_job(_dgdr())
    assert security.harden_job(copy.deepcopy(plain), False) == plain
    job = security.harden_job(copy.deepcopy(plain), True)
    assert_restricted(pod_specs([job]))
    pod = job["spec"]["template"]["spec"]
    base = plain["spec"]["template"]["spec"]["securityContext"]
    assert pod["securityContext"] == {**base, "seccompProfile": {"type": "RuntimeDefault"}}
    copier = next(c for c in pod["containers"] if c["name"] == rd.COPIER_CONTAINER)
    assert copier["securityContext"] == dgdr_job.output_copier(_dgdr(), OPERATOR_IMAGE)["securityContext"]


def test_a_profiling_override_with_its_own_pod_security_context_opts_out():
    """``overrides.profilingJob`` is the author's pod: a pod securityContext there means no injection."""
    req = _dgdr()
    req["apiVersion"] = "nvidia.com/v1beta1"
    req["spec"] = {
        "model": "Qwen/Qwen3-0.6B",
        "overrides": {"profilingJob": {"template": {"spec": {"securityContext": {"runAsUser": 0}}}}},
    }
    own = dgdr_job.override_pod_spec(req)
    assert own == {"securityContext": {"runAsUser": 0}}
    plain = rd.profiling_job(req)
    assert security.harden_job(copy.deepcopy(plain), True, own) == plain
    assert dgdr_job.override_pod_spec(_dgdr()) is None


def _checkpoint(pod_sc: dict | None = None) -> dict:
    spec: dict = {"containers": [{"name": "main", "image": "vllm:1"}]}
    if pod_sc is not None:
        spec["securityContext"] = pod_sc
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoCheckpoint",
        "metadata": {"name": "warm", "namespace": "team", "generation": 1, "uid": "u"},
        "spec": {"identity": {"model": "m"}, "job": {"podTemplateSpec": {"spec": spec}}},
    }


def test_the_checkpoint_job_follows_the_same_rule():
    ckpt = _checkpoint()
    user = ckpt["spec"]["job"]["podTemplateSpec"]["spec"]
    assert_restricted(pod_specs([security.harden_job(rc.checkpoint_job(ckpt), True, user)]))
    own = _checkpoint({"runAsUser": 0})
    job = security.harden_job(rc.checkpoint_job(own), True, own["spec"]["job"]["podTemplateSpec"]["spec"])
    pod = job["spec"]["template"]["spec"]
    assert pod["securityContext"] == {"runAsUser": 0}
    assert all("securityContext" not in c for c in pod["containers"])


def test_an_operator_set_pod_field_is_completed_not_replaced():
    """A pod-level field the operator itself set (a checkpoint's Localhost seccomp profile, say) stays."""
    pod = {
        "securityContext": {"seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"}},
        "containers": [],
    }
    security.harden_pod_spec(pod, {})
    assert pod["securityContext"] == {
        "seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"},
        "runAsNonRoot": True,
    }
