"""Registry entries (see the package docstring): drafted with ``python -m dynamo_coverage --draft`` and
held to the strict checks of ``check`` (the code names the field and its context, the test names the
field); an ``acts`` without a test is shown as untested."""

from __future__ import annotations

from ..status import Converted, Rendered, Status, StorageOnly, Unresolved, acts, refused  # noqa: F401

# a component's v1alpha1 ingress acts only when enabled (and a host to route is required then); a
# VirtualService needs a gateway, the configuration's here (the component's own is refused without one)
_INGRESS_ON = {"spec.ingress.enabled": True, "spec.ingress.host": "cov"}
_GATEWAY = {"config:ingress.virtualServiceGateway": "istio-system/gw"}
# a v1alpha1 GPU memory service is carried (to v1beta1's experimental.gpuMemoryService) only when enabled
_GMS_ON = {"spec.gpuMemoryService.enabled": True}


def _claim(create: bool = True) -> dict:
    """A ``spec.pvcs[]`` entry the operator creates (the field's sample replaces its value here)."""
    entry = {"name": "cov", "create": create, "size": "1Gi", "storageClass": "standard"}
    entry["volumeAccessMode"] = "ReadWriteOnce"
    return {f"spec.pvcs.{k}": v for k, v in entry.items()}


def _snapshot_refused(kind: str, code: str | tuple[str, ...] = ()) -> Status:
    """A pod snapshot kind's struct: the object is refused when created (its source asks for a capture)."""
    return refused(
        "admission",
        {
            "spec.source": {
                "podRef": {"name": "worker-0"},
                **({"nodeName": "n1"} if "Content" in kind else {}),
            }
        },
        "by this operator: it runs no snapshot node agent",
        code,
        kind=kind,
        version="v1alpha1",
    )


TYPES: dict[str, dict[str, Status]] = {
    # no snapshot node agent here: new PodSnapshots and contents are refused (webhooks/validation/
    # podsnapshot.py); a refused object never gets a status, so the status structs go with it
    "v1alpha1.PodSnapshot": {
        "spec": _snapshot_refused("PodSnapshot", "webhooks.validation.podsnapshot:validate_pod_snapshot"),
        "status": _snapshot_refused("PodSnapshot"),
    },
    "v1alpha1.PodSnapshotContent": {
        "spec": _snapshot_refused(
            "PodSnapshotContent", "webhooks.validation.podsnapshot:validate_pod_snapshot"
        ),
        "status": _snapshot_refused("PodSnapshotContent"),
    },
    "v1alpha1.Autoscaling": {
        "behavior": StorageOnly("Deprecated: This field is ignored."),
        "enabled": StorageOnly("Deprecated: This field is ignored."),
        "maxReplicas": StorageOnly("Deprecated: This field is ignored."),
        "metrics": StorageOnly("Deprecated: This field is ignored."),
        "minReplicas": StorageOnly("Deprecated: This field is ignored."),
    },
    "v1alpha1.ConfigMapKeySelector": {
        "name": Rendered("render.dgdr_job:profiling_job"),
        "key": Rendered(
            "render.dgdr_job:_volumes", context={"spec.profilingConfig.configMapRef.name": "base"}
        ),
    },
    "v1alpha1.DeploymentOverridesSpec": {
        "annotations": acts(
            "render.dgdr_output:_metadata",
            "tests/unit/test_render_dgdr_output.py::test_deployment_overrides_name_label_and_annotate_the_generated_graph",
        ),
        "labels": acts(
            "render.dgdr_output:_metadata",
            (
                "tests/unit/test_render_dgdr_output.py::test_deployment_overrides_name_label_and_annotate_the_generated_graph",
                "tests/integration/test_dgdr_cluster.py::test_profiling_job_completes_and_the_generated_graph_is_deployed",
            ),
        ),
        "name": acts(
            "render.dgdr_output:_metadata",
            (
                "tests/unit/test_render_dgdr_output.py::test_deployment_overrides_name_label_and_annotate_the_generated_graph",
                "tests/integration/test_dgdr_cluster.py::test_deployment_overrides_place_name_and_image_the_generated_graph",
            ),
        ),
        "namespace": acts(
            "render.dgdr_output:_metadata",
            (
                "tests/unit/test_render_dgdr_output.py::test_configmaps_go_where_the_graph_goes",
                "tests/integration/test_dgdr_cluster.py::test_deployment_overrides_place_name_and_image_the_generated_graph",
            ),
            note="v1beta1 has no home for it (overrides.dgd ignores identity metadata): it travels in the "
            "conversion annotation and the controller reads the stored v1alpha1 request",
        ),
        "workersImage": acts(
            "render.dgdr_output:generated",
            (
                "tests/unit/test_render_dgdr.py::test_completed_profiling_generates_the_dgd_and_deploys_it",
                "tests/integration/test_dgdr_cluster.py::test_deployment_overrides_place_name_and_image_the_generated_graph",
            ),
            note="read from the stored v1alpha1 request; v1beta1 readers see it in the conversion annotation",
        ),
    },
    "v1alpha1.DeploymentStatus": {
        "created": acts(
            "api.dgdr_conversion:status_to_beta",
            "tests/unit/test_dgdr_conversion.py::test_status_phases_follow_the_v1beta1_lifecycle",
        ),
        "name": Converted("v1beta1.DynamoGraphDeploymentRequestStatus.dgdName"),
        "state": acts(
            "api.dgdr_conversion:status_to_beta",
            "tests/unit/test_dgdr_conversion.py::test_status_phases_follow_the_v1beta1_lifecycle",
        ),
        "namespace": acts(
            "render.dgdr:_generated",
            (
                "tests/unit/test_render_dgdr.py::test_completed_profiling_generates_the_dgd_and_deploys_it",
                "tests/integration/test_dgdr_cluster.py::test_deployment_overrides_place_name_and_image_the_generated_graph",
            ),
            note="where the generated graph went (deploymentOverrides.namespace, else the request's)",
        ),
    },
    "v1alpha1.DynamoCheckpointIdentity": {
        "backendFramework": Converted("v1beta1.DynamoCheckpointIdentity.backendFramework"),
        "dtype": Rendered("render.checkpoint:checkpoint_id"),
        "dynamoVersion": Rendered("render.checkpoint:checkpoint_id"),
        "extraParameters": Rendered("render.checkpoint:checkpoint_id"),
        "maxModelLen": Rendered("render.checkpoint:checkpoint_id"),
        "model": Converted("v1beta1.DynamoCheckpointIdentity.model"),
        "pipelineParallelSize": Rendered("render.checkpoint:checkpoint_id"),
        "tensorParallelSize": Rendered("render.checkpoint:checkpoint_id"),
    },
    "v1alpha1.DynamoCheckpointJobConfig": {
        "activeDeadlineSeconds": acts(
            "render.checkpoint:checkpoint_job",
            "tests/unit/test_render_checkpoint.py::test_job_runs_the_template_once_with_the_target_told_its_checkpoint",
        ),
        "backoffLimit": StorageOnly("Deprecated: BackoffLimit is ignored."),
        "podTemplateSpec": acts(
            "render.checkpoint:checkpoint_job",
            "tests/unit/test_render_checkpoint.py::test_job_runs_the_template_once_with_the_target_told_its_checkpoint",
        ),
        "targetContainerName": acts(
            "render.checkpoint:_target",
            "tests/unit/test_render_checkpoint.py::test_target_container_name_and_disabled_shared_memory",
        ),
        "ttlSecondsAfterFinished": StorageOnly("Deprecated: TTLSecondsAfterFinished is ignored."),
    },
    "v1alpha1.DynamoCheckpointStatus": {
        "checkpointID": acts(
            "render.checkpoint:step",
            "tests/unit/test_render_checkpoint.py::test_phases_pending_creating_ready_and_the_job_is_deleted_after",
        ),
        "conditions": acts(
            "controllers.checkpoint:CheckpointReconciler._reconcile",
            "tests/unit/test_controllers_status.py::test_a_checkpoints_first_pass_creates_its_job_and_writes_phase_job_name_and_conditions",
        ),
        "createdAt": acts(
            "render.checkpoint:step",
            "tests/unit/test_render_checkpoint.py::test_phases_pending_creating_ready_and_the_job_is_deleted_after",
        ),
        "identityHash": acts(
            "render.graph_checkpoint:CheckpointPlan.status",
            "tests/unit/test_render_graph_checkpoint.py::test_the_dcd_restores_from_the_graphs_checkpoint",
        ),
        "jobName": acts(
            "render.checkpoint:step",
            (
                "tests/unit/test_render_checkpoint.py::test_phases_pending_creating_ready_and_the_job_is_deleted_after",
                "tests/unit/test_controllers_status.py::test_a_checkpoints_first_pass_creates_its_job_and_writes_phase_job_name_and_conditions",
            ),
        ),
        "location": StorageOnly("Deprecated: Location is ignored and no longer populated."),
        "message": acts(
            "render.checkpoint:job_outcome",
            "tests/unit/test_render_checkpoint.py::test_failed_or_lost_job_fails_the_checkpoint",
        ),
        "phase": acts(
            "render.checkpoint:step",
            (
                "tests/unit/test_render_checkpoint.py::test_phases_pending_creating_ready_and_the_job_is_deleted_after",
                "tests/unit/test_controllers_status.py::test_a_checkpoints_first_pass_creates_its_job_and_writes_phase_job_name_and_conditions",
            ),
        ),
        "storageType": StorageOnly("Deprecated: StorageType is ignored and no longer populated."),
        # this platform creates no PodSnapshot (its checkpoint Job writes the checkpoint; PodSnapshots are
        # refused): the field stays empty, which the reference defines as "never created"
        "podSnapshotName": StorageOnly("distinguish a never-created snapshot (empty)"),
    },
    "v1alpha1.DynamoComponentDeploymentSharedSpec": {
        "annotations": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_api_conversion.py::test_fields_without_a_v1beta1_home_travel_in_one_annotation",
        ),
        "componentType": acts(
            "api.conversion:_shared_to_beta", "tests/unit/test_webhooks_validation.py::test_alpha_paths"
        ),
        "dynamoNamespace": StorageOnly("Deprecated: not used;"),
        "envFromSecret": acts(
            "api.conversion:_main_container_to_beta",
            "tests/unit/test_field_effects.py::test_env_from_secret_comes_first_in_the_main_containers_env_from",
        ),
        "envs": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_render_gms.py::test_frontend_sidecar_from_v1alpha1_gets_the_defaults_too",
        ),
        "extraPodSpec": acts(
            "api.conversion:_pod_template_to_beta",
            "tests/unit/test_webhooks_gms.py::test_v1alpha1_shapes_conversion_keeps_aside_are_refused",
        ),
        "globalDynamoNamespace": Converted(
            "v1beta1.DynamoComponentDeploymentSharedSpec.globalDynamoNamespace"
        ),
        "labels": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_render_dgdr_output.py::test_the_generated_graph_carries_the_override_and_is_stored_as_v1alpha1",
        ),
        "livenessProbe": acts(
            "api.conversion:_main_container_to_beta",
            "tests/unit/test_api_conversion.py::test_services_map_becomes_components_list_with_main_container",
        ),
        "minAvailable": Converted("v1beta1.DynamoComponentDeploymentSharedSpec.minAvailable"),
        "readinessProbe": acts(
            "api.conversion:_main_container_to_beta",
            "tests/unit/test_field_effects.py::test_the_services_readiness_probe_is_the_main_containers",
        ),
        "replicas": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
            via="v1beta1.DynamoComponentDeploymentSharedSpec.replicas",
        ),
        "subComponentType": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_field_effects.py::test_sub_component_type_makes_a_worker_a_prefill_or_decode_component",
        ),
        "serviceName": refused(
            "admission",
            {"spec.services.Frontend.serviceName": "api"},
            "serviceName cannot rename it: remove serviceName or rename the key",
            "webhooks.validation.alpha_only:_service_name",
            kind="DynamoGraphDeployment",
            version="v1alpha1",
            note="the services key names the component; its own name is accepted (it changes nothing)",
        ),
    },
    "v1alpha1.DynamoComponentDeploymentSpec": {
        "annotations": acts(
            "api.conversion:_pod_template_to_beta",
            "tests/unit/test_field_effects.py::test_a_services_labels_and_annotations_reach_its_pods_under_extra_pod_metadata",
        ),
        "backendFramework": acts(
            "api.conversion:_dcd_to_alpha",
            "tests/unit/test_render_component.py::test_v1alpha1_dcd_renders_like_its_conversion",
            via="v1beta1.DynamoComponentDeploymentSpec.backendFramework",
        ),
        "componentType": acts(
            "api.conversion:_shared_to_beta", "tests/unit/test_webhooks_validation.py::test_alpha_paths"
        ),
        "dynamoNamespace": StorageOnly("Deprecated: not used;"),
        "envFromSecret": acts(
            "api.conversion:_main_container_to_beta",
            "tests/unit/test_field_effects.py::test_env_from_secret_comes_first_in_the_main_containers_env_from",
        ),
        "envs": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_render_gms.py::test_frontend_sidecar_from_v1alpha1_gets_the_defaults_too",
        ),
        "extraPodSpec": acts(
            "api.conversion:_pod_template_to_beta",
            "tests/unit/test_webhooks_gms.py::test_v1alpha1_shapes_conversion_keeps_aside_are_refused",
        ),
        "globalDynamoNamespace": Converted("v1beta1.DynamoComponentDeploymentSpec.globalDynamoNamespace"),
        "labels": acts(
            "api.conversion:_pod_template_to_beta",
            "tests/unit/test_field_effects.py::test_a_services_labels_and_annotations_reach_its_pods_under_extra_pod_metadata",
        ),
        "livenessProbe": acts(
            "api.conversion:_main_container_to_beta",
            "tests/unit/test_api_conversion.py::test_services_map_becomes_components_list_with_main_container",
        ),
        "minAvailable": Converted("v1beta1.DynamoComponentDeploymentSpec.minAvailable"),
        "readinessProbe": acts(
            "api.conversion:_main_container_to_beta",
            "tests/unit/test_field_effects.py::test_the_services_readiness_probe_is_the_main_containers",
        ),
        "replicas": Converted("v1beta1.DynamoComponentDeploymentSpec.replicas"),
        "serviceName": acts(
            "api.conversion:_dcd_to_alpha",
            "tests/unit/test_api_conversion.py::test_shared_memory_size_zero_disables",
        ),
        "subComponentType": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_field_effects.py::test_sub_component_type_makes_a_worker_a_prefill_or_decode_component",
        ),
    },
    "v1alpha1.DynamoComponentDeploymentStatus": {
        "conditions": Converted("v1beta1.DynamoComponentDeploymentStatus.conditions"),
        "observedGeneration": Converted("v1beta1.DynamoComponentDeploymentStatus.observedGeneration"),
        "podSelector": Converted("v1beta1.DynamoComponentDeploymentStatus.podSelector"),
    },
    "v1alpha1.DynamoGraphDeploymentExperimentalSpec": {
        "kvTransferPolicy": Converted("v1beta1.DynamoGraphDeploymentExperimentalSpec.kvTransferPolicy"),
    },
    "v1alpha1.DynamoGraphDeploymentRequestSpec": {
        "autoApply": acts(
            "api.dgdr_conversion:spec_to_beta",
            "tests/unit/test_render_dgdr.py::test_auto_apply_off_stops_at_ready_with_the_generated_spec",
            via="v1beta1.DynamoGraphDeploymentRequestSpec.autoApply",
        ),
        "backend": acts(
            "api.dgdr_conversion:spec_to_beta",
            "tests/unit/test_dgdr_conversion.py::test_wrongly_typed_blob_values_stay_v1alpha1_only",
            via="v1beta1.DynamoGraphDeploymentRequestSpec.backend",
        ),
        "enableGpuDiscovery": StorageOnly("DEPRECATED: This field is deprecated"),
        "model": acts(
            "api.dgdr_conversion:spec_to_beta",
            "tests/unit/test_dgdr_conversion.py::test_wrongly_typed_blob_values_stay_v1alpha1_only",
            via="v1beta1.DynamoGraphDeploymentRequestSpec.model",
        ),
        "useMocker": acts(
            "api.dgdr_conversion:spec_to_beta",
            "tests/unit/test_dgdr_conversion.py::test_upstream_v1alpha1_request_reads_as_typed_v1beta1_fields",
        ),
    },
    "v1alpha1.DynamoGraphDeploymentRequestStatus": {
        "conditions": Converted("v1beta1.DynamoGraphDeploymentRequestStatus.conditions"),
        "generatedDeployment": acts(
            "api.dgdr_conversion:status_to_beta",
            "tests/unit/test_dgdr_conversion.py::test_generated_graph_name_is_the_dgd_name_before_it_is_created",
        ),
        "observedGeneration": acts(
            (
                "render.dgdr:_pending",
                "render.dgdr:step",
            ),
            (
                "tests/unit/test_render_dgdr.py::test_pending_validates_and_creates_the_job",
                "tests/unit/test_render_dgdr.py::test_spec_changes_after_profiling_started_are_rejected",
                "tests/unit/test_controllers_status.py::test_a_requests_first_pass_starts_profiling_and_writes_its_conditions_and_generation",
            ),
            via="v1beta1.DynamoGraphDeploymentRequestStatus.observedGeneration",
        ),
        "profilingResults": acts(
            "api.dgdr_conversion:status_to_beta",
            "tests/unit/test_render_dgdr.py::test_completed_profiling_generates_the_dgd_and_deploys_it",
            via="v1beta1.DynamoGraphDeploymentRequestStatus.profilingResults",
        ),
        "state": acts(
            "api.conversion:_dgd_status",
            "tests/unit/test_api_conversion.py::test_status_services_become_components",
        ),
        "backend": acts(
            "render.dgdr:step",
            (
                "tests/unit/test_render_dgdr.py::test_pending_validates_and_creates_the_job",
                "tests/integration/test_dgdr_cluster.py::test_profiling_job_completes_and_the_generated_graph_is_deployed",
            ),
            note="v1beta1 has no such status field (its spec.backend says it): stored v1alpha1 status",
        ),
    },
    "v1alpha1.DynamoGraphDeploymentScalingAdapterSpec": {
        "replicas": Converted("v1beta1.DynamoGraphDeploymentScalingAdapterSpec.replicas"),
    },
    "v1alpha1.DynamoGraphDeploymentScalingAdapterStatus": {
        "lastScaleTime": Converted("v1beta1.DynamoGraphDeploymentScalingAdapterStatus.lastScaleTime"),
        "replicas": Converted("v1beta1.DynamoGraphDeploymentScalingAdapterStatus.replicas"),
        "selector": Converted("v1beta1.DynamoGraphDeploymentScalingAdapterStatus.selector"),
    },
    "v1alpha1.DynamoGraphDeploymentServiceRef": {
        "name": Converted("v1beta1.DynamoGraphDeploymentComponentRef.name"),
        "serviceName": acts(
            "api.conversion:_dgdsa",
            "tests/unit/test_api_conversion.py::test_scaling_adapter_service_name_becomes_component_name",
        ),
    },
    "v1alpha1.DynamoGraphDeploymentSpec": {
        "annotations": Converted("v1beta1.DynamoGraphDeploymentSpec.annotations"),
        "backendFramework": Converted("v1beta1.DynamoGraphDeploymentSpec.backendFramework"),
        "envs": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_render_gms.py::test_frontend_sidecar_from_v1alpha1_gets_the_defaults_too",
        ),
        "labels": Converted("v1beta1.DynamoGraphDeploymentSpec.labels"),
        "priorityClassName": Converted("v1beta1.DynamoGraphDeploymentSpec.priorityClassName"),
    },
    "v1alpha1.DynamoGraphDeploymentStatus": {
        "conditions": Converted("v1beta1.DynamoGraphDeploymentStatus.conditions"),
        "observedGeneration": Converted("v1beta1.DynamoGraphDeploymentStatus.observedGeneration"),
        "state": acts(
            "api.conversion:_dgd_status",
            "tests/unit/test_api_conversion.py::test_status_services_become_components",
            via="v1beta1.DynamoGraphDeploymentStatus.state",
        ),
    },
    "v1alpha1.DynamoModelSpec": {
        "baseModelName": acts(
            "controllers.dynamomodel:DynamoModelReconciler._reconcile",
            "tests/unit/test_controllers_status.py::test_a_base_models_pass_finds_its_workers_by_base_model_name_and_writes_its_conditions",
        ),
        "modelName": acts(
            "render.model:load_request", "tests/unit/test_render_model.py::test_load_request_body"
        ),
        "modelType": acts(
            "render.model:is_lora",
            "tests/unit/test_render_model.py::test_base_model_endpoints_are_discovered_not_probed",
        ),
    },
    "v1alpha1.DynamoModelStatus": {
        "conditions": acts(
            "controllers.dynamomodel:DynamoModelReconciler._reconcile",
            "tests/unit/test_controllers_status.py::test_a_base_models_pass_finds_its_workers_by_base_model_name_and_writes_its_conditions",
        ),
        "loraFallbackCoveredEndpoints": acts(
            "render.model:model_status",
            "tests/unit/test_render_model.py::test_no_endpoints_reports_no_services_and_zero_counters",
        ),
        "readyEndpoints": acts(
            "render.model:model_status",
            "tests/unit/test_render_model.py::test_no_endpoints_reports_no_services_and_zero_counters",
        ),
        "totalEndpoints": acts(
            "render.model:model_status",
            "tests/unit/test_render_model.py::test_no_endpoints_reports_no_services_and_zero_counters",
        ),
    },
    "v1alpha1.EPPConfig": {
        "config": Converted("v1beta1.EPPConfig.config"),
        "configMapRef": Converted("v1beta1.EPPConfig.configMapRef"),
    },
    "v1alpha1.EndpointInfo": {
        "address": acts(
            "render.model:candidates",
            "tests/unit/test_render_model.py::test_base_model_endpoints_are_discovered_not_probed",
        ),
        "loraFallbackCovered": acts(
            "render.model:model_status",
            "tests/unit/test_render_model.py::test_legacy_prefill_is_covered_by_a_capable_prefill_of_its_topology",
        ),
        "podName": acts(
            "render.model:candidates",
            "tests/unit/test_render_model.py::test_base_model_endpoints_are_discovered_not_probed",
        ),
        "ready": acts(
            "render.model:model_status",
            "tests/unit/test_render_model.py::test_base_model_endpoints_are_discovered_not_probed",
        ),
    },
    "v1alpha1.ExtraPodMetadata": {
        "annotations": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_api_conversion.py::test_fields_without_a_v1beta1_home_travel_in_one_annotation",
        ),
        "labels": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_render_dgdr_output.py::test_the_generated_graph_carries_the_override_and_is_stored_as_v1alpha1",
        ),
    },
    "v1alpha1.FailoverSpec": {
        "enabled": acts(
            "api.conversion:_experimental_to_beta", "tests/unit/test_webhooks_gms.py::test_v1alpha1_paths"
        ),
        "mode": acts(
            "api.conversion:_experimental_to_beta",
            "tests/unit/test_webhooks_gms.py::test_v1alpha1_paths",
            via="v1beta1.FailoverSpec.mode",
        ),
        "numShadows": acts(
            "api.conversion:_experimental_to_beta",
            "tests/unit/test_webhooks_gms.py::test_v1alpha1_shapes_conversion_keeps_aside_are_refused",
            via="v1beta1.FailoverSpec.numShadows",
        ),
    },
    "v1alpha1.FrontendSidecarSpec": {
        "args": acts(
            "api.conversion:_pod_template_to_beta", "tests/unit/test_webhooks_validation.py::test_alpha_paths"
        ),
        "envFromSecret": acts(
            "api.conversion:_pod_template_to_beta",
            "tests/unit/test_field_effects.py::test_the_frontend_sidecars_env_from_secret",
        ),
        "envs": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_render_gms.py::test_frontend_sidecar_from_v1alpha1_gets_the_defaults_too",
        ),
        "image": acts(
            "api.conversion:_pod_template_to_beta", "tests/unit/test_webhooks_validation.py::test_alpha_paths"
        ),
    },
    "v1alpha1.GPUMemoryServiceSpec": {
        "extraClientPods": refused(
            "admission",
            {
                "spec.services.Frontend.componentType": "worker",
                "spec.services.Frontend.resources": {"limits": {"gpu": "1"}},
                "spec.services.Frontend.gpuMemoryService": {
                    "enabled": True,
                    "extraClientPods": [{"name": "c"}],
                },
            },
            "is reserved for inter-pod GMS client pods, which are not wired yet",
            "render.gms:_gms_problems",
            kind="DynamoGraphDeployment",
            version="v1alpha1",
        ),
        "enabled": acts(
            "api.conversion:_experimental_to_beta", "tests/unit/test_webhooks_gms.py::test_v1alpha1_paths"
        ),
        "mode": acts(
            "api.conversion:_experimental_to_beta",
            "tests/unit/test_webhooks_gms.py::test_v1alpha1_paths",
            via="v1beta1.GPUMemoryServiceSpec.mode",
        ),
        "deviceClassName": Converted("v1beta1.GPUMemoryServiceSpec.deviceClassName", context=_GMS_ON),
        "extraClientContainers": Converted(
            "v1beta1.GPUMemoryServiceSpec.extraClientContainers", context=_GMS_ON
        ),
    },
    "v1alpha1.IngressSpec": {
        "annotations": Rendered("render.ingress:exposure", context=_INGRESS_ON),
        "enabled": Rendered("render.ingress:exposure", context={"spec.ingress.host": "cov"}),
        "labels": Rendered("render.ingress:exposure", context=_INGRESS_ON),
        "host": Rendered("render.ingress:exposure", context=_INGRESS_ON),
        "hostPrefix": Rendered("render.ingress:full_host", context=_INGRESS_ON),
        "hostSuffix": Rendered("render.ingress:full_host", context=_INGRESS_ON),
        "ingressControllerClassName": Rendered("render.ingress:exposure", context=_INGRESS_ON),
        "useVirtualService": Rendered("render.ingress:exposure", context={**_INGRESS_ON, **_GATEWAY}),
        "virtualServiceGateway": Rendered(
            "render.ingress:exposure",
            context={**_INGRESS_ON, **_GATEWAY, "spec.ingress.useVirtualService": True},
        ),
    },
    "v1alpha1.IngressTLSSpec": {
        "secretName": Rendered("render.ingress:build_ingress", context=_INGRESS_ON),
    },
    "v1alpha1.ModelReference": {
        "name": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_webhooks_gms.py::test_v1alpha1_shapes_conversion_keeps_aside_are_refused",
            via="v1beta1.ModelReference.name",
        ),
        "revision": Converted("v1beta1.ModelReference.revision"),
    },
    "v1alpha1.ModelSource": {
        "uri": acts("render.model:source_uri", "tests/unit/test_render_model.py::test_load_request_body"),
    },
    "v1alpha1.MultinodeSpec": {
        "nodeCount": Converted("v1beta1.MultinodeSpec.nodeCount"),
    },
    "v1alpha1.PVC": {
        "name": Rendered("render.pvc:build_pvc", context=_claim()),
        "create": Rendered("render.pvc:graph_pvcs", context=_claim(create=False)),
        "size": Rendered("render.pvc:build_pvc", context=_claim()),
        "storageClass": Rendered("render.pvc:build_pvc", context=_claim()),
        "volumeAccessMode": Rendered("render.pvc:build_pvc", context=_claim()),
    },
    "v1alpha1.PlacementStatus": {
        "state": acts(
            "api.conversion:_dgd_status",
            "tests/unit/test_api_conversion.py::test_status_services_become_components",
            via="v1beta1.PlacementStatus.state",
        ),
        "score": Converted("v1beta1.PlacementStatus.score"),
    },
    "v1alpha1.DynamoWorkerMetadataSpec": {
        # written and read by the runtime in graph pods; the operator only grants that (render/discovery.py)
        "data": StorageOnly("the operator does not interpret it."),
    },
    "v1alpha1.ProfilingConfigSpec": {
        "config": acts(
            "api.dgdr_conversion:spec_to_beta",
            "tests/unit/test_dgdr_conversion.py::test_wrongly_typed_blob_values_stay_v1alpha1_only",
        ),
        "nodeSelector": acts(
            "api.dgdr_conversion:_job_override_from_alpha",
            "tests/unit/test_dgdr_conversion.py::test_fields_both_versions_hold_land_in_their_v1alpha1_homes",
        ),
        "outputPVC": Rendered("render.dgdr_job:profiling_job"),
        "profilerImage": acts(
            "api.dgdr_conversion:spec_to_beta",
            "tests/unit/test_dgdr_conversion.py::test_wrongly_typed_blob_values_stay_v1alpha1_only",
        ),
        "resources": acts(
            "api.dgdr_conversion:_job_override_from_alpha",
            "tests/unit/test_dgdr_conversion.py::test_upstream_v1alpha1_request_reads_as_typed_v1beta1_fields",
        ),
        "tolerations": acts(
            "api.dgdr_conversion:_job_override_from_alpha",
            "tests/unit/test_dgdr_conversion.py::test_fields_both_versions_hold_land_in_their_v1alpha1_homes",
        ),
    },
    "v1alpha1.ResourceItem": {
        "cpu": acts(
            "api.conversion:_resources_from_container", "tests/unit/test_webhooks_gms.py::test_v1alpha1_paths"
        ),
        "custom": acts(
            "api.conversion:_resources_to_container",
            "tests/unit/test_field_effects.py::test_gpu_type_names_the_gpu_resource_and_memory_and_custom_resources_pass_through",
        ),
        "gpu": acts(
            "api.conversion:_resources_from_container",
            "tests/unit/test_api_conversion.py::test_services_map_becomes_components_list_with_main_container",
        ),
        "gpuType": acts(
            "api.conversion:_resources_to_container",
            "tests/unit/test_field_effects.py::test_gpu_type_names_the_gpu_resource_and_memory_and_custom_resources_pass_through",
        ),
        "memory": acts(
            "api.conversion:_resources_to_container",
            (
                "tests/unit/test_field_effects.py::test_gpu_type_names_the_gpu_resource_and_memory_and_custom_resources_pass_through",
                "tests/unit/test_api_conversion.py::test_service_resources_merge_into_the_main_containers_and_keep_its_claims",
            ),
        ),
    },
    "v1alpha1.Resources": {
        "claims": acts(
            (
                "api.conversion:_resources_to_container",
                "api.conversion:_merge_resources",
            ),
            "tests/unit/test_api_conversion.py::test_service_resources_merge_into_the_main_containers_and_keep_its_claims",
        ),
    },
    "v1alpha1.Restart": {
        "id": Converted("v1beta1.Restart.id"),
    },
    "v1alpha1.RestartStatus": {
        "inProgress": Converted("v1beta1.RestartStatus.inProgress"),
        "observedID": Converted("v1beta1.RestartStatus.observedID"),
        "phase": Converted("v1beta1.RestartStatus.phase"),
    },
    "v1alpha1.RestartStrategy": {
        "order": Converted("v1beta1.RestartStrategy.order"),
        "type": Converted("v1beta1.RestartStrategy.type"),
    },
    "v1alpha1.RollingUpdateStatus": {
        "endTime": Converted("v1beta1.RollingUpdateStatus.endTime"),
        "phase": Converted("v1beta1.RollingUpdateStatus.phase"),
        "startTime": Converted("v1beta1.RollingUpdateStatus.startTime"),
        "updatedServices": acts(
            "api.conversion:_dgd_status",
            "tests/unit/test_field_effects.py::test_a_rolling_updates_updated_services_are_its_updated_components",
        ),
    },
    "v1alpha1.ScalingAdapter": {
        "enabled": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_webhooks_validation.py::test_alpha_update_rules_and_scaling_adapter",
        ),
    },
    "v1alpha1.ServiceCheckpointConfig": {
        "checkpointRef": Converted("v1beta1.ComponentCheckpointConfig.checkpointRef"),
        "deletionPolicy": Converted("v1beta1.ComponentCheckpointConfig.deletionPolicy"),
        "enabled": acts(
            "api.conversion:_experimental_to_beta",
            "tests/unit/test_api_conversion.py::test_fields_without_a_v1beta1_home_travel_in_one_annotation",
        ),
        "mode": acts(
            "api.conversion:_experimental_to_beta", "tests/unit/test_webhooks_gms.py::test_v1alpha1_paths"
        ),
        "startupPolicy": Converted("v1beta1.ComponentCheckpointConfig.startupPolicy"),
        "targetContainerName": Converted("v1beta1.ComponentCheckpointConfig.targetContainerName"),
    },
    "v1alpha1.ServiceCheckpointJobConfig": {
        "podTemplate": Converted("v1beta1.ComponentCheckpointJobConfig.podTemplate"),
        "gmsClientContainers": refused(
            "admission",
            {"spec.services.Frontend.checkpoint": {"enabled": True, "job": {"gmsClientContainers": ["s"]}}},
            "the checkpoint Job gets no GPU Memory Service client wiring",
            "webhooks.validation.component_checkpoint:_check_target_and_job",
            kind="DynamoGraphDeployment",
            version="v1alpha1",
        ),
    },
    "v1alpha1.ServiceCheckpointStatus": {
        "checkpointID": Converted("v1beta1.ComponentCheckpointStatus.checkpointID"),
        "checkpointName": Converted("v1beta1.ComponentCheckpointStatus.checkpointName"),
        "identityHash": Converted("v1beta1.ComponentCheckpointStatus.identityHash"),
        "ready": Converted("v1beta1.ComponentCheckpointStatus.ready"),
    },
    "v1alpha1.ServiceReplicaStatus": {
        "availableReplicas": Converted("v1beta1.ComponentReplicaStatus.availableReplicas"),
        "componentKind": Converted("v1beta1.ComponentReplicaStatus.componentKind"),
        "componentName": acts(
            "api.conversion:_replica_status_to_alpha",
            "tests/unit/test_field_effects.py::test_a_v1alpha1_reader_sees_a_components_newest_resource_as_its_component_name",
        ),
        "componentNames": acts(
            "api.conversion:_replica_status_to_alpha",
            "tests/unit/test_api_conversion.py::test_status_services_become_components",
        ),
        "readyReplicas": Converted("v1beta1.ComponentReplicaStatus.readyReplicas"),
        "replicas": Converted("v1beta1.ComponentReplicaStatus.replicas"),
        "runtimeNamespace": Converted("v1beta1.ComponentReplicaStatus.runtimeNamespace"),
        "updatedReplicas": Converted("v1beta1.ComponentReplicaStatus.updatedReplicas"),
        "scheduledReplicas": Converted("v1beta1.ComponentReplicaStatus.scheduledReplicas"),
    },
    "v1alpha1.SharedMemorySpec": {
        "disabled": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_render_graph.py::test_v1alpha1_shared_memory_disabled_renders_without_shm",
        ),
        "size": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
    },
    "v1alpha1.SpecTopologyConstraint": {
        "packDomain": Converted("v1beta1.SpecTopologyConstraint.packDomain"),
        "topologyProfile": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_field_effects.py::test_topology_profile_is_v1beta1s_cluster_topology_name",
        ),
    },
    "v1alpha1.TopologyConstraint": {
        "packDomain": Converted("v1beta1.TopologyConstraint.packDomain"),
    },
    "v1alpha1.VolumeMount": {
        "mountPoint": acts(
            "api.conversion:_pod_template_to_beta",
            "tests/unit/test_render_dgdr_output.py::test_a_graph_the_profiler_already_mounted_is_left_as_it_is",
        ),
        "name": acts(
            "api.conversion:_pod_template_to_beta",
            "tests/unit/test_field_effects.py::test_a_volume_mount_used_as_compilation_cache_becomes_the_components_cache",
        ),
        "useAsCompilationCache": acts(
            "api.conversion:_pod_template_to_beta",
            "tests/unit/test_field_effects.py::test_a_volume_mount_used_as_compilation_cache_becomes_the_components_cache",
        ),
    },
}
