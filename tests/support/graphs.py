"""The one builder of DynamoGraphDeployments for tests: ``dgd(*components, **spec)`` and
``component(name, type, ...)``, each with options, so a test states only what matters to it.

Pure dictionaries (no cluster, no operator import): the unit tier uses it as well as the cluster tiers.
"""

from __future__ import annotations

from collections.abc import Sequence

GROUP = "nvidia.com"
KIND = "DynamoGraphDeployment"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"
VLLM = ("python3", "-m", "dynamo.vllm")


def main_container(
    image: str = IMAGE,
    command: Sequence[str] | None = None,
    args: Sequence[str] | None = None,
    gpus: int | str | None = None,
    env: list[dict] | None = None,
    resources: dict | None = None,
) -> dict:
    """The ``main`` container: the image, then only the fields given (GPUs as a ``nvidia.com/gpu`` limit;
    ``resources``, when given, replaces that)."""
    main: dict = {"name": "main", "image": image}
    if command is not None:
        main["command"] = list(command)
    if args:
        main["args"] = list(args)
    if gpus is not None:
        main["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    if resources is not None:
        main["resources"] = resources
    if env is not None:
        main["env"] = env
    return main


def component(
    name: str,
    type_: str = "worker",
    *,
    replicas: int | None = None,
    image: str = IMAGE,
    command: Sequence[str] | None = None,
    args: Sequence[str] | None = None,
    gpus: int | str | None = None,
    env: list[dict] | None = None,
    resources: dict | None = None,
    sidecars: Sequence[dict] = (),
    nodes: int | None = None,
    **fields,
) -> dict:
    """A component whose pod template holds a ``main`` container (then any ``sidecars``); ``nodes`` > 1
    makes it multinode; any other field (``scalingAdapter``, ``envs``...) is set as given."""
    comp: dict = {"name": name, "type": type_}
    if replicas is not None:
        comp["replicas"] = replicas
    main = main_container(image, command, args, gpus, env, resources)
    comp["podTemplate"] = {"spec": {"containers": [main, *sidecars]}}
    if nodes is not None and nodes > 1:
        comp["multinode"] = {"nodeCount": nodes}
    comp.update(fields)
    return comp


def dgd(
    *components: dict,
    name: str = "g",
    namespace: str | None = "ns",
    version: str = "v1beta1",
    metadata: dict | None = None,
    **spec,
) -> dict:
    """A DGD of ``components`` (v1beta1 shape) in ``namespace`` (None: no namespace, as a manifest a user
    applies with ``-n``); ``metadata`` adds fields such as annotations; every other keyword is a ``spec``
    field."""
    metadata = {
        "name": name,
        **({"namespace": namespace} if namespace is not None else {}),
        **(metadata or {}),
    }
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": KIND,
        "metadata": metadata,
        "spec": {"components": list(components), **spec},
    }


def dgd_v1alpha1(
    services: dict, name: str = "g", namespace: str | None = "ns", metadata: dict | None = None, **spec
) -> dict:
    """A DGD in the v1alpha1 shape: components are ``services`` keyed by name; ``metadata`` as in ``dgd``."""
    metadata = {
        "name": name,
        **({"namespace": namespace} if namespace is not None else {}),
        **(metadata or {}),
    }
    return {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": KIND,
        "metadata": metadata,
        "spec": {**spec, "services": services},
    }


def alpha_service(
    type_: str,
    *,
    image: str = IMAGE,
    command: Sequence[str] | None = None,
    gpus: int | str | None = None,
    **fields,
) -> dict:
    """A v1alpha1 service (a value of ``dgd_v1alpha1``'s ``services``): ``componentType``, a main container
    of ``image`` (and ``command``), ``gpus`` as the v1alpha1 ``resources.limits.gpu``; any other field
    (``ingress``, ``volumeMounts``...) set as given."""
    main: dict = {"image": image}
    if command is not None:
        main["command"] = list(command)
    service: dict = {"componentType": type_}
    if gpus is not None:
        service["resources"] = {"limits": {"gpu": str(gpus)}}
    service["extraPodSpec"] = {"mainContainer": main}
    service.update(fields)
    return service


# -- v1alpha1-only fields: a component's ingress, graph claims (renderer, webhook and cluster tests) ---------


def alpha_dcd(
    ingress: dict, name: str = "front", namespace: str = "team", image: str = IMAGE, **spec
) -> dict:
    """A v1alpha1 DynamoComponentDeployment of its own: a frontend of ``image`` with the v1alpha1-only
    ``ingress``; ``spec`` adds fields (``serviceName``...)."""
    return {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            **spec,
            "componentType": "frontend",
            "extraPodSpec": {"mainContainer": {"image": image}},
            "ingress": ingress,
        },
    }


# every ingress setting a v1alpha1 component takes (an Ingress with class, TLS, labels and annotations)
FULL_INGRESS = {
    "enabled": True,
    "host": "api",
    "hostPrefix": "llm-",
    "hostSuffix": "example.com",
    "ingressControllerClassName": "nginx",
    "tls": {"secretName": "llm-tls"},
    "annotations": {"nginx.ingress.kubernetes.io/proxy-read-timeout": "600"},
    "labels": {"team": "a"},
}


def exposed_alpha_graph(
    ingress: dict | None = None,
    worker_ingress: dict | None = None,
    image: str = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0",
) -> dict:
    """v1alpha1 graph ``team/llm``: a Frontend and a one-GPU VllmWorker, each with ``ingress`` if given."""
    frontend = alpha_service("frontend", image=image, **({"ingress": ingress} if ingress is not None else {}))
    worker = alpha_service(
        "worker",
        image=image,
        command=VLLM,
        gpus=1,
        **({"ingress": worker_ingress} if worker_ingress is not None else {}),
    )
    return dgd_v1alpha1({"Frontend": frontend, "VllmWorker": worker}, name="llm", namespace="team")


# -- the GPU memory service and EPP graphs (renderer, webhook and cluster tests) -----------------------------

CONTAINER_DISCOVERY = {"nvidia.com/dynamo-kube-discovery-mode": "container"}


def gpu_main(gpus: str | None = "2", **extra) -> dict:
    """A vLLM ``main`` container asking for ``gpus`` GPUs (limit and request, and 4 CPUs); None: none."""
    resources = (
        {"limits": {"nvidia.com/gpu": gpus, "cpu": "4"}, "requests": {"nvidia.com/gpu": gpus}}
        if gpus
        else None
    )
    return {**main_container(command=VLLM, args=["--model", "m"], resources=resources), **extra}


def _with_containers(name: str, type_: str, *containers: dict) -> dict:
    return {"name": name, "type": type_, "podTemplate": {"spec": {"containers": list(containers)}}}


def gms_graph(
    failover: bool = False,
    gms: dict | None = None,
    sidecars: Sequence[dict] = (),
    worker: dict | None = None,
    namespace: str = "team",
) -> dict:
    """A Frontend and a Worker with the GPU memory service (``gms``: its settings), ``failover`` on request;
    ``worker`` adds fields to the Worker."""
    experimental: dict = {"gpuMemoryService": gms if gms is not None else {}}
    if failover:
        experimental["failover"] = {}
    frontend = {
        "name": "Frontend",
        "type": "frontend",
        "podTemplate": {"spec": {"containers": [gpu_main(None)]}},
    }
    pod = {"spec": {"containers": [gpu_main(), *sidecars]}}
    gms_worker = {"name": "Worker", "type": "worker", "experimental": experimental, "podTemplate": pod}
    return dgd(
        frontend,
        {**gms_worker, **(worker or {})},
        name="g",
        namespace=namespace,
        metadata={"annotations": dict(CONTAINER_DISCOVERY)},
    )


def epp_graph(namespace: str = "team") -> dict:
    """An EPP in front of disaggregated Decode and Prefill workers and a Frontend."""
    epp = component(
        "Epp", "epp", image="epp:1", eppConfig={"config": {"plugins": [{"type": "label-filter"}]}}
    )
    workers = [_with_containers(n, n.lower(), gpu_main("1")) for n in ("Decode", "Prefill")]
    frontend = {
        "name": "Frontend",
        "type": "frontend",
        "podTemplate": {"spec": {"containers": [gpu_main(None)]}},
    }
    return dgd(epp, *workers, frontend, name="gaie", namespace=namespace)
