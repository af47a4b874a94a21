"""Hypothesis strategies for DynamoGraphDeploymentRequests of both versions, every field of the seed's
specs and statuses (002: v1alpha1 DynamoGraphDeploymentRequestSpec/Status, v1beta1 likewise), including
values only one version can hold and values of the wrong type inside the v1alpha1 profiler blob.

Shared by the conversion round-trip properties (``test_dgdr_conversion``, ``test_api_conversion``)."""

from __future__ import annotations

import json

from dynamo_operator.api.dgdr_conversion import GPU_SKUS, STATUS_ANNOTATION
from hypothesis import strategies as st

dns = st.from_regex(r"\A[a-z][a-z0-9]{0,6}\Z")
text = st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=8)
labels = st.dictionaries(dns, text, max_size=2)
positive = st.one_of(st.integers(1, 5000), st.floats(0.5, 5000, allow_nan=False, allow_infinity=False))
count = st.integers(1, 64)
skus = st.sampled_from(sorted(GPU_SKUS))
resources = st.fixed_dictionaries(
    {}, optional={"limits": st.just({"cpu": "2"}), "requests": st.just({"memory": "4Gi"})}
)
tolerations = st.just([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
conditions = st.just(
    [
        {
            "type": "Profiling",
            "status": "False",
            "reason": "SweepingDecode",
            "message": "m",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ]
)
planner = st.one_of(
    st.just({}),
    st.fixed_dictionaries({}, optional={"mode": st.sampled_from(["disagg", "agg"]), "ttft_ms": positive}),
)
generated = st.builds(
    lambda name: {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
    },
    dns,
)

# ---------------------------------------------------------------- v1alpha1

blob = st.fixed_dictionaries(
    {},
    optional={
        "sla": st.fixed_dictionaries(
            {},
            optional={
                "ttft": st.one_of(positive, st.just("fast")),
                "itl": positive,
                "isl": st.one_of(count, st.just(1.5)),
                "osl": count,
                "extra": text,
            },
        ),
        "deployment": st.fixed_dictionaries(
            {},
            optional={
                "modelCache": st.fixed_dictionaries(
                    {}, optional={"pvcName": dns, "modelPathInPvc": text, "pvcMountPath": st.just("/opt/m")}
                )
            },
        ),
        "hardware": st.fixed_dictionaries(
            {},
            optional={
                "numGpusPerNode": count,
                "gpuType": st.one_of(skus, st.just("H100-SXM5-80GB")),
                "minNumGpusPerEngine": count,
            },
        ),
        "planner": planner,
        "sweep": st.just({"useAiConfigurator": True}),
    },
)
alpha_status_payload = st.one_of(
    st.builds(
        lambda p: json.dumps(p),
        st.fixed_dictionaries(
            {},
            optional={
                "profilingPhase": st.sampled_from(["Initializing", "SweepingDecode", "Done"]),
                "profilingJobName": dns,
                "deploymentInfo": st.fixed_dictionaries(
                    {}, optional={"replicas": count, "availableReplicas": count}
                ),
                "unknown": st.just(1),
            },
        ),
    ),
    st.just("not json"),
)
alpha_metadata = st.builds(
    lambda name, lab, ann, payload: {
        "name": name,
        "namespace": "ns",
        **({"labels": lab} if lab else {}),
        **(
            {"annotations": {**ann, **({STATUS_ANNOTATION: payload} if payload else {})}}
            if ann or payload
            else {}
        ),
    },
    dns,
    labels,
    labels,
    st.one_of(st.none(), alpha_status_payload),
)
alpha_dgdr = st.builds(
    lambda meta, spec, status: {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": meta,
        "spec": spec,
        **({"status": status} if status is not None else {}),
    },
    alpha_metadata,
    st.fixed_dictionaries(
        {
            "model": text,
            "backend": st.sampled_from(["auto", "vllm", "sglang", "trtllm"]),
            "profilingConfig": st.fixed_dictionaries(
                {"profilerImage": st.one_of(text, st.just(""))},
                optional={
                    "config": blob,
                    "configMapRef": st.fixed_dictionaries({"name": dns}, optional={"key": text}),
                    "outputPVC": dns,
                    "resources": resources,
                    "tolerations": tolerations,
                    "nodeSelector": labels,
                },
            ),
        },
        optional={
            "useMocker": st.booleans(),
            "autoApply": st.booleans(),
            "enableGpuDiscovery": st.booleans(),
            "deploymentOverrides": st.fixed_dictionaries(
                {},
                optional={
                    "name": dns,
                    "namespace": dns,
                    "labels": labels,
                    "annotations": labels,
                    "workersImage": text,
                },
            ),
        },
    ),
    st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {},
            optional={
                "state": st.sampled_from(
                    [
                        "Initializing",
                        "Pending",
                        "Profiling",
                        "Deploying",
                        "Ready",
                        "DeploymentDeleted",
                        "Failed",
                    ]
                ),
                "backend": st.just("vllm"),
                "observedGeneration": st.integers(1, 5),
                "conditions": conditions,
                "profilingResults": st.just("configmap/dgdr-output-x"),
                "generatedDeployment": generated,
                "deployment": st.fixed_dictionaries(
                    {},
                    optional={
                        "name": dns,
                        "namespace": dns,
                        "state": st.sampled_from(["pending", "successful"]),
                        "created": st.booleans(),
                    },
                ),
            },
        ),
    ),
)

# ---------------------------------------------------------------- v1beta1

profiling_job = st.fixed_dictionaries(
    {},
    optional={
        "backoffLimit": st.integers(0, 3),
        "activeDeadlineSeconds": st.integers(60, 3600),
        "template": st.fixed_dictionaries(
            {},
            optional={
                "metadata": st.fixed_dictionaries({}, optional={"labels": labels}),
                "spec": st.fixed_dictionaries(
                    {},
                    optional={
                        "containers": st.lists(
                            st.fixed_dictionaries(
                                {},
                                optional={
                                    "name": st.sampled_from(["profiler", "other"]),
                                    "resources": resources,
                                    "image": text,
                                    "env": st.just([{"name": "A", "value": "1"}]),
                                },
                            ),
                            max_size=2,
                        ),
                        "tolerations": tolerations,
                        "nodeSelector": labels,
                        "priorityClassName": dns,
                    },
                ),
            },
        ),
    },
)
dgd_override = st.one_of(
    st.builds(
        lambda lab: {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoGraphDeployment",
            "metadata": {"labels": lab},
            "spec": {"components": [{"name": "Worker", "replicas": 2}]},
        },
        labels,
    ),
    st.just(
        {
            "apiVersion": "nvidia.com/v1alpha1",
            "kind": "DynamoGraphDeployment",
            "spec": {"services": {"decode": {"extraPodSpec": {"mainContainer": {"args": ["--x", "1"]}}}}},
        }
    ),
)
beta_spec = st.fixed_dictionaries(
    {"model": text},
    optional={
        "backend": st.sampled_from(["auto", "vllm", "sglang", "trtllm"]),
        "image": text,
        "modelCache": st.fixed_dictionaries(
            {}, optional={"pvcName": dns, "pvcModelPath": text, "pvcMountPath": st.just("/opt/m")}
        ),
        "hardware": st.fixed_dictionaries(
            {},
            optional={
                "gpuSku": skus,
                "vramMb": st.floats(1024, 200000, allow_nan=False),
                "totalGpus": count,
                "numGpusPerNode": count,
                "interconnect": st.sampled_from(["nvlink", "pcie"]),
                "rdma": st.booleans(),
            },
        ),
        "workload": st.fixed_dictionaries(
            {}, optional={"isl": count, "osl": count, "concurrency": positive, "requestRate": positive}
        ),
        "sla": st.fixed_dictionaries(
            {},
            optional={
                "ttft": positive,
                "itl": positive,
                "e2eLatency": positive,
                "optimizationType": st.sampled_from(["latency", "throughput"]),
            },
        ),
        "overrides": st.fixed_dictionaries({}, optional={"profilingJob": profiling_job, "dgd": dgd_override}),
        "features": st.fixed_dictionaries(
            {},
            optional={
                "planner": planner,
                "mocker": st.fixed_dictionaries({}, optional={"enabled": st.booleans()}),
            },
        ),
        "searchStrategy": st.sampled_from(["rapid", "thorough"]),
        "autoApply": st.booleans(),
    },
)
beta_status = st.fixed_dictionaries(
    {},
    optional={
        "phase": st.sampled_from(["Pending", "Profiling", "Ready", "Deploying", "Deployed", "Failed"]),
        "profilingPhase": st.sampled_from(["Initializing", "SweepingPrefill", "GeneratingDGD", "Done"]),
        "dgdName": dns,
        "profilingJobName": dns,
        "conditions": conditions,
        "profilingResults": st.fixed_dictionaries(
            {},
            optional={
                "selectedConfig": st.one_of(generated, st.just({"a": 1})),
                "pareto": st.just([{"config": {"b": 2}}]),
            },
        ),
        "deploymentInfo": st.fixed_dictionaries({}, optional={"replicas": count, "availableReplicas": count}),
        "observedGeneration": st.integers(1, 5),
    },
)
beta_metadata = st.fixed_dictionaries(
    {"name": dns, "namespace": st.just("ns")}, optional={"labels": labels, "annotations": labels}
)
beta_dgdr = st.builds(
    lambda meta, spec, status: {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": meta,
        "spec": spec,
        **({"status": status} if status is not None else {}),
    },
    beta_metadata,
    beta_spec,
    st.one_of(st.none(), beta_status),
)
