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
) -> dict:
    """The ``main`` container: the image, then only the fields given (GPUs as a ``nvidia.com/gpu`` limit)."""
    main: dict = {"name": "main", "image": image}
    if command is not None:
        main["command"] = list(command)
    if args:
        main["args"] = list(args)
    if gpus is not None:
        main["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
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
    nodes: int | None = None,
    **fields,
) -> dict:
    """A component whose pod template holds one ``main`` container; ``nodes`` > 1 makes it multinode;
    any other field (``scalingAdapter``, ``envs``...) is set as given."""
    comp: dict = {"name": name, "type": type_}
    if replicas is not None:
        comp["replicas"] = replicas
    comp["podTemplate"] = {"spec": {"containers": [main_container(image, command, args, gpus, env)]}}
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


def dgd_v1alpha1(services: dict, name: str = "g", namespace: str | None = "ns", **spec) -> dict:
    """A DGD in the v1alpha1 shape: components are ``services`` keyed by name."""
    metadata: dict = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": KIND,
        "metadata": metadata,
        "spec": {**spec, "services": services},
    }
