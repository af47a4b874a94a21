"""Hypothesis strategies for DynamoGraphDeployments and DynamoComponentDeployments, valid and invalid: the
fuzzers of admission (unit) and of the whole reconcile path through a real apiserver (faults) draw the same
inputs."""

from __future__ import annotations

import uuid

from hypothesis import strategies as st

# Values a user (or a broken generator) might put anywhere: the right shape and every wrong one.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["", "1", "-1", "frontend", "worker", "planner", "prefill", "decode", "vllm", "8Gi"]),
)
garbage = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
names = st.one_of(
    st.from_regex(r"[a-z][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True),
    st.text(max_size=70),
    st.sampled_from(["Frontend", "VllmDecodeWorker", "a" * 64, "UPPER", "-bad", "ok"]),
)
component_types = st.sampled_from(["frontend", "worker", "prefill", "decode", "planner", "epp", "", "bogus"])


def container(draw) -> dict:
    c: dict = {"name": "main", "image": draw(st.sampled_from(["nvcr.io/x/vllm-runtime:0.7.0", "", "x y"]))}
    if draw(st.booleans()):
        c["resources"] = {
            "limits": {"nvidia.com/gpu": draw(st.one_of(st.sampled_from(["1", "0", "-1", "x"]), garbage))}
        }
    if draw(st.booleans()):
        c["env"] = draw(
            st.lists(
                st.one_of(
                    st.fixed_dictionaries({"name": names, "value": st.text(max_size=8)}),
                    garbage,
                ),
                max_size=2,
            )
        )
    if draw(st.booleans()):
        c["args"] = draw(st.one_of(st.lists(st.text(max_size=8), max_size=3), garbage))
    return c


@st.composite
def components(draw) -> dict:
    comp: dict = {"name": draw(names), "type": draw(component_types)}
    if draw(st.booleans()):
        comp["replicas"] = draw(st.one_of(st.integers(-3, 5), garbage))
    if draw(st.integers(0, 4)):
        comp["podTemplate"] = {"spec": {"containers": [container(draw)]}}
    else:
        comp["podTemplate"] = draw(garbage)
    for key in ("multinode", "scalingAdapter", "envFromSecret", "sharedMemory", "frontendSidecar"):
        if draw(st.integers(0, 9)) == 0:
            comp[key] = draw(garbage)
    if draw(st.integers(0, 9)) == 0:
        comp[draw(st.text(min_size=1, max_size=10))] = draw(garbage)  # unknown field
    return comp


@st.composite
def dgds(draw) -> dict:
    spec: dict = {
        "backendFramework": draw(st.one_of(st.sampled_from(["vllm", "sglang", "trtllm", "", "x"]), garbage)),
        "components": draw(st.one_of(st.lists(components(), min_size=0, max_size=4), garbage)),
    }
    if draw(st.integers(0, 4)) == 0:
        spec["envs"] = draw(garbage)
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": draw(names), "namespace": "fuzz", "uid": str(uuid.uuid4())},
        "spec": draw(st.one_of(st.just(spec), garbage)) if draw(st.integers(0, 19)) == 0 else spec,
    }


@st.composite
def dcds(draw) -> dict:
    comp = draw(components())
    spec = {k: v for k, v in comp.items() if k != "name"}
    spec["backendFramework"] = draw(st.sampled_from(["vllm", "sglang", "x"]))
    if draw(st.booleans()):
        spec["componentName"] = comp["name"]
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": draw(names), "namespace": "fuzz", "uid": str(uuid.uuid4())},
        "spec": spec,
    }
