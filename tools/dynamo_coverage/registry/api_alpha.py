"""Registry entries (see the package docstring); drafted with ``python -m dynamo_coverage --draft``
and reviewed by hand."""

from __future__ import annotations

from ..status import Status, StorageOnly, acts, refused  # noqa: F401

TYPES: dict[str, dict[str, Status]] = {
    "v1alpha1.Autoscaling": {
        "behavior": StorageOnly("Deprecated: This field is ignored."),
        "enabled": StorageOnly("Deprecated: This field is ignored."),
        "maxReplicas": StorageOnly("Deprecated: This field is ignored."),
        "metrics": StorageOnly("Deprecated: This field is ignored."),
        "minReplicas": StorageOnly("Deprecated: This field is ignored."),
    },
    "v1alpha1.ConfigMapKeySelector": {
        "key": acts(
            "api.conversion:_copy_keys",
            "tests/integration/test_dgdr_cluster.py::test_invalid_request_fails_validation_without_a_job",
        ),
        "name": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/integration/test_dgdr_cluster.py::test_invalid_request_fails_validation_without_a_job",
        ),
    },
    "v1alpha1.DeploymentOverridesSpec": {
        "annotations": acts(
            "api.conversion:_without_annotation",
            "tests/unit/test_api_conversion.py::test_shared_memory_size_zero_disables",
        ),
        "labels": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_render_dgdr.py::test_completed_profiling_generates_the_dgd_and_deploys_it",
        ),
        "name": acts(
            "api.conversion:_named",
            "tests/unit/test_render_dgdr.py::test_completed_profiling_generates_the_dgd_and_deploys_it",
        ),
    },
    "v1alpha1.DeploymentStatus": {
        "name": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_render_dgdr.py::test_deploying_follows_the_dgd_to_ready_and_back_when_it_degrades",
        ),
        "state": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_render_dgdr.py::test_deploying_follows_the_dgd_to_ready_and_back_when_it_degrades",
        ),
    },
    "v1alpha1.DynamoCheckpointIdentity": {
        "backendFramework": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_webhooks_server.py::test_validate_allows_and_warns",
            via="v1beta1.DynamoCheckpointIdentity.backendFramework",
        ),
        "model": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_webhooks_server.py::test_validate_allows_and_warns",
            via="v1beta1.DynamoCheckpointIdentity.model",
        ),
    },
    "v1alpha1.DynamoCheckpointJobConfig": {
        "activeDeadlineSeconds": acts(
            "render.checkpoint:checkpoint_job",
            "tests/unit/test_render_checkpoint.py::test_job_runs_the_template_once_with_the_target_told_its_checkpoint",
        ),
        "backoffLimit": StorageOnly("Deprecated: BackoffLimit is ignored."),
        "podTemplateSpec": acts(
            "render.checkpoint:checkpoint_job",
            "tests/unit/test_webhooks_validation.py::test_dynamo_checkpoint_rules",
        ),
        "targetContainerName": acts(
            "render.checkpoint:_target",
            "tests/unit/test_webhooks_validation.py::test_dynamo_checkpoint_rules",
        ),
        "ttlSecondsAfterFinished": StorageOnly("Deprecated: TTLSecondsAfterFinished is ignored."),
    },
    "v1alpha1.DynamoCheckpointStatus": {
        "checkpointID": acts(
            "render.checkpoint:checkpoint_job",
            "tests/unit/test_render_checkpoint.py::test_phases_pending_creating_ready_and_the_job_is_deleted_after",
        ),
        "conditions": acts(
            "api.conversion:_dcd_status",
            "tests/unit/test_render_dgdr.py::test_spec_changes_after_profiling_started_are_rejected",
        ),
        "createdAt": acts(
            "render.checkpoint:step",
            "tests/unit/test_render_checkpoint.py::test_phases_pending_creating_ready_and_the_job_is_deleted_after",
        ),
        "jobName": acts(
            "render.dgdr:_pending",
            "tests/unit/test_render_checkpoint.py::test_phases_pending_creating_ready_and_the_job_is_deleted_after",
        ),
        "location": StorageOnly("Deprecated: Location is ignored and no longer populated."),
        "message": acts(
            "render.dgdr:_fail",
            "tests/unit/test_render_dgdr.py::test_missing_config_map_ref_fails_validation",
        ),
        "phase": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_rollout.py::test_no_restart_keeps_only_a_terminal_status",
        ),
        "storageType": StorageOnly("Deprecated: StorageType is ignored and no longer populated."),
    },
    "v1alpha1.DynamoComponentDeploymentSharedSpec": {
        "annotations": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "componentType": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "envFromSecret": acts(
            "api.conversion:_main_container_to_beta",
            "tests/unit/test_api_models.py::test_typed_access_to_fields_the_operator_reads",
        ),
        "envs": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "extraPodSpec": acts(
            "api.conversion:_pod_template_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "globalDynamoNamespace": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_render_defaults.py::test_global_dynamo_namespace",
            via="v1beta1.DynamoComponentDeploymentSharedSpec.globalDynamoNamespace",
        ),
        "labels": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_api_conversion.py::test_fields_without_a_v1beta1_home_travel_in_one_annotation",
        ),
        "livenessProbe": acts(
            "api.conversion:_main_container_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "minAvailable": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_crds_fresh.py::test_reference_markers_reach_the_schema",
            via="v1beta1.DynamoComponentDeploymentSharedSpec.minAvailable",
        ),
        "readinessProbe": acts(
            "api.conversion:_main_container_to_beta",
            "tests/unit/test_render_defaults.py::test_multinode_sglang_rendered",
        ),
        "replicas": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
            via="v1beta1.DynamoComponentDeploymentSharedSpec.replicas",
        ),
        "serviceName": acts(
            "api.conversion:_dcd_to_alpha",
            "tests/unit/test_api_models.py::test_v1alpha1_markers_are_enforced",
        ),
        "subComponentType": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
    },
    "v1alpha1.DynamoComponentDeploymentSpec": {
        "annotations": acts(
            "api.conversion:_without_annotation",
            "tests/unit/test_api_conversion.py::test_shared_memory_size_zero_disables",
        ),
        "backendFramework": acts(
            "api.conversion:_dcd_to_alpha",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
            via="v1beta1.DynamoComponentDeploymentSpec.backendFramework",
        ),
        "componentType": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "envFromSecret": acts(
            "api.conversion:_main_container_to_beta",
            "tests/unit/test_api_models.py::test_typed_access_to_fields_the_operator_reads",
        ),
        "envs": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "extraPodSpec": acts(
            "api.conversion:_pod_template_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "globalDynamoNamespace": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_render_defaults.py::test_global_dynamo_namespace",
            via="v1beta1.DynamoComponentDeploymentSpec.globalDynamoNamespace",
        ),
        "labels": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_api_conversion.py::test_shared_memory_size_zero_disables",
        ),
        "livenessProbe": acts(
            "api.conversion:_main_container_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "minAvailable": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_webhooks_validation.py::test_defaulting_grove_min_available",
            via="v1beta1.DynamoComponentDeploymentSpec.minAvailable",
        ),
        "readinessProbe": acts(
            "api.conversion:_main_container_to_beta",
            "tests/unit/test_render_defaults.py::test_multinode_sglang_rendered",
        ),
        "replicas": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_scaling_adapter_service_name_becomes_component_name",
            via="v1beta1.DynamoComponentDeploymentSpec.replicas",
        ),
        "serviceName": acts(
            "api.conversion:_dcd_to_alpha",
            "tests/unit/test_api_conversion.py::test_shared_memory_size_zero_disables",
        ),
        "subComponentType": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
    },
    "v1alpha1.DynamoComponentDeploymentStatus": {
        "conditions": acts(
            "api.conversion:_dcd_status",
            "tests/unit/test_render_dgdr.py::test_spec_changes_after_profiling_started_are_rejected",
            via="v1beta1.DynamoComponentDeploymentStatus.conditions",
        ),
        "observedGeneration": acts(
            "api.conversion:_dcd_status",
            "tests/unit/test_render_dgdr.py::test_spec_changes_after_profiling_started_are_rejected",
            via="v1beta1.DynamoComponentDeploymentStatus.observedGeneration",
        ),
        "podSelector": acts(
            "api.conversion:_dcd_status",
            "tests/unit/test_render_netpol.py::test_the_policy_selects_the_pods_the_graph_renders",
            via="v1beta1.DynamoComponentDeploymentStatus.podSelector",
        ),
    },
    "v1alpha1.DynamoGraphDeploymentRequestSpec": {
        "autoApply": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_render_dgdr.py::test_auto_apply_off_stops_at_ready_with_the_generated_spec",
            via="v1beta1.DynamoGraphDeploymentRequestSpec.autoApply",
        ),
        "backend": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_render_defaults.py::test_multinode_vllm_sglang_workers_lose_all_probes_leaders_keep_them",
            via="v1beta1.DynamoGraphDeploymentRequestSpec.backend",
        ),
        "model": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_render_checkpoint.py::test_checkpoint_id_is_stable_per_identity",
            via="v1beta1.DynamoGraphDeploymentRequestSpec.model",
        ),
        "useMocker": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_render_dgdr.py::test_profiling_job_runs_the_profiler_and_the_output_copier",
        ),
    },
    "v1alpha1.DynamoGraphDeploymentRequestStatus": {
        "backend": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_render_defaults.py::test_multinode_vllm_sglang_workers_lose_all_probes_leaders_keep_them",
        ),
        "conditions": acts(
            "api.conversion:_dcd_status",
            "tests/unit/test_render_dgdr.py::test_spec_changes_after_profiling_started_are_rejected",
            via="v1beta1.DynamoGraphDeploymentRequestStatus.conditions",
        ),
        "generatedDeployment": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_render_dgdr.py::test_auto_apply_off_stops_at_ready_with_the_generated_spec",
        ),
        "observedGeneration": acts(
            "api.conversion:_dcd_status",
            "tests/unit/test_render_dgdr.py::test_spec_changes_after_profiling_started_are_rejected",
            via="v1beta1.DynamoGraphDeploymentRequestStatus.observedGeneration",
        ),
        "state": acts(
            "api.conversion:_dgd_status",
            "tests/unit/test_api_conversion.py::test_status_services_become_components",
        ),
    },
    "v1alpha1.DynamoGraphDeploymentScalingAdapterSpec": {
        "replicas": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_scaling_adapter_service_name_becomes_component_name",
            via="v1beta1.DynamoGraphDeploymentScalingAdapterSpec.replicas",
        ),
    },
    "v1alpha1.DynamoGraphDeploymentScalingAdapterStatus": {
        "replicas": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_scaling_adapter_service_name_becomes_component_name",
            via="v1beta1.DynamoGraphDeploymentScalingAdapterStatus.replicas",
        ),
    },
    "v1alpha1.DynamoGraphDeploymentServiceRef": {
        "name": acts(
            "api.conversion:_named",
            "tests/unit/test_api_conversion.py::test_scaling_adapter_service_name_becomes_component_name",
        ),
        "serviceName": acts(
            "api.conversion:_dgdsa",
            "tests/unit/test_api_conversion.py::test_alpha_beta_alpha_round_trip_is_lossless",
        ),
    },
    "v1alpha1.DynamoGraphDeploymentSpec": {
        "annotations": acts(
            "api.conversion:_without_annotation",
            "tests/unit/test_api_conversion.py::test_shared_memory_size_zero_disables",
            via="v1beta1.DynamoGraphDeploymentSpec.annotations",
        ),
        "backendFramework": acts(
            "api.conversion:_dcd_to_alpha",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
            via="v1beta1.DynamoGraphDeploymentSpec.backendFramework",
        ),
        "envs": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "labels": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_api_conversion.py::test_shared_memory_size_zero_disables",
            via="v1beta1.DynamoGraphDeploymentSpec.labels",
        ),
        "priorityClassName": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_render_grove.py::test_termination_delay_and_priority_class_come_from_config_and_graph",
            via="v1beta1.DynamoGraphDeploymentSpec.priorityClassName",
        ),
    },
    "v1alpha1.DynamoGraphDeploymentStatus": {
        "conditions": acts(
            "api.conversion:_dcd_status",
            "tests/unit/test_render_dgdr.py::test_spec_changes_after_profiling_started_are_rejected",
            via="v1beta1.DynamoGraphDeploymentStatus.conditions",
        ),
        "observedGeneration": acts(
            "api.conversion:_dcd_status",
            "tests/unit/test_render_dgdr.py::test_spec_changes_after_profiling_started_are_rejected",
            via="v1beta1.DynamoGraphDeploymentStatus.observedGeneration",
        ),
        "state": acts(
            "api.conversion:_dgd_status",
            "tests/unit/test_api_conversion.py::test_status_services_become_components",
            via="v1beta1.DynamoGraphDeploymentStatus.state",
        ),
    },
    "v1alpha1.DynamoModelSpec": {
        "baseModelName": acts(
            "render.model:pod_selector", "tests/unit/test_render_model.py::test_load_request_body"
        ),
        "modelName": acts(
            "render.names:model_hash", "tests/unit/test_render_model.py::test_load_request_body"
        ),
        "modelType": acts("render.model:is_lora", "tests/unit/test_render_model.py::test_load_request_body"),
    },
    "v1alpha1.DynamoModelStatus": {
        "conditions": acts(
            "api.conversion:_dcd_status",
            "tests/unit/test_render_dgdr.py::test_spec_changes_after_profiling_started_are_rejected",
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
    "v1alpha1.EPPConfig": {},
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
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "labels": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_api_conversion.py::test_fields_without_a_v1beta1_home_travel_in_one_annotation",
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
            "tests/unit/test_api_models.py::test_typed_access_to_fields_the_operator_reads",
        ),
        "envs": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_render_gms.py::test_frontend_sidecar_from_v1alpha1_gets_the_defaults_too",
        ),
        "image": acts(
            "api.conversion:_pod_template_to_beta", "tests/unit/test_webhooks_validation.py::test_alpha_paths"
        ),
    },
    "v1alpha1.GMSClientPodSpec": {
        "name": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_webhooks_gms.py::test_v1alpha1_shapes_conversion_keeps_aside_are_refused",
            via="v1beta1.GMSClientPodSpec.name",
        ),
        "podTemplate": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_render_gms.py::test_problems_of_every_inconsistent_combination",
            via="v1beta1.GMSClientPodSpec.podTemplate",
        ),
    },
    "v1alpha1.GPUMemoryServiceSpec": {
        "enabled": acts(
            "api.conversion:_experimental_to_beta", "tests/unit/test_webhooks_gms.py::test_v1alpha1_paths"
        ),
        "mode": acts(
            "api.conversion:_experimental_to_beta",
            "tests/unit/test_webhooks_gms.py::test_v1alpha1_paths",
            via="v1beta1.GPUMemoryServiceSpec.mode",
        ),
    },
    "v1alpha1.IngressSpec": {
        "annotations": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_api_conversion.py::test_fields_without_a_v1beta1_home_travel_in_one_annotation",
        ),
        "enabled": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_fields_without_a_v1beta1_home_travel_in_one_annotation",
        ),
        "labels": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_api_conversion.py::test_fields_without_a_v1beta1_home_travel_in_one_annotation",
        ),
    },
    "v1alpha1.IngressTLSSpec": {},
    "v1alpha1.KvTransferPolicy": {},
    "v1alpha1.ModelReference": {
        "name": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
            via="v1beta1.ModelReference.name",
        ),
    },
    "v1alpha1.ModelSource": {
        "uri": acts("render.model:source_uri", "tests/unit/test_render_model.py::test_load_request_body"),
    },
    "v1alpha1.MultinodeSpec": {},
    "v1alpha1.PVC": {
        "name": acts(
            "api.conversion:_named",
            "tests/unit/test_api_conversion.py::test_fields_without_a_v1beta1_home_travel_in_one_annotation",
        ),
        "size": acts(
            "api.conversion:_shared_to_beta",
            "tests/integration/test_crds_apiserver.py::test_scale_subresource_drives_the_adapter",
        ),
    },
    "v1alpha1.PlacementStatus": {
        "state": acts(
            "api.conversion:_dgd_status",
            "tests/unit/test_api_conversion.py::test_status_services_become_components",
            via="v1beta1.PlacementStatus.state",
        ),
    },
    "v1alpha1.PodReference": {
        "name": acts(
            "api.conversion:_named",
            "tests/integration/test_crds_apiserver.py::test_scale_subresource_drives_the_adapter",
        ),
        "uid": acts(
            "runtime.events:EventCorrelator.correlate",
            "tests/integration/test_crds_apiserver.py::test_scale_subresource_drives_the_adapter",
        ),
    },
    "v1alpha1.PodSnapshotContentSource": {},
    "v1alpha1.PodSnapshotContentStatus": {
        "conditions": acts(
            "api.conversion:_dcd_status",
            "tests/unit/test_render_dgdr.py::test_spec_changes_after_profiling_started_are_rejected",
        ),
    },
    "v1alpha1.PodSnapshotReference": {
        "name": acts(
            "api.conversion:_named",
            "tests/integration/test_crds_apiserver.py::test_scale_subresource_drives_the_adapter",
        ),
        "namespace": acts(
            "render.pullsecrets:PullSecretIndex.lookup",
            "tests/unit/test_render_component.py::test_index_only_dockerconfigjson_secrets_in_the_namespace",
        ),
        "uid": acts(
            "render.env:common_env",
            "tests/integration/test_crds_apiserver.py::test_scale_subresource_drives_the_adapter",
        ),
    },
    "v1alpha1.PodSnapshotStatus": {
        "conditions": acts(
            "api.conversion:_dcd_status",
            "tests/unit/test_render_dgdr.py::test_spec_changes_after_profiling_started_are_rejected",
        ),
    },
    "v1alpha1.ProfilingConfigSpec": {
        "profilerImage": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_api_models.py::test_v1alpha1_markers_are_enforced",
        ),
        "resources": acts(
            "api.conversion:_main_container_to_beta",
            "tests/integration/test_crds_apiserver.py::test_scale_subresource_drives_the_adapter",
        ),
    },
    "v1alpha1.ResourceItem": {
        "cpu": acts(
            "api.conversion:_resources_from_container", "tests/unit/test_webhooks_gms.py::test_v1alpha1_paths"
        ),
        "custom": acts(
            "api.conversion:_resources_from_container",
            "tests/integration/test_scaling_cluster.py::test_adapter_lifecycle_kubectl_scale_and_hand_back",
        ),
        "gpu": acts(
            "api.conversion:_resources_from_container",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "memory": acts(
            "api.conversion:_resources_from_container",
            "tests/integration/test_webhooks_api.py::test_create_rule_refused_with_its_message",
        ),
    },
    "v1alpha1.Resources": {
        "claims": acts(
            "api.conversion:_resources_from_container",
            "tests/unit/test_render_gms.py::test_gms_extra_client_containers_are_wired_and_absent_names_ignored",
        ),
    },
    "v1alpha1.Restart": {},
    "v1alpha1.RestartStatus": {
        "phase": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_rollout.py::test_no_restart_keeps_only_a_terminal_status",
            via="v1beta1.RestartStatus.phase",
        ),
    },
    "v1alpha1.RestartStrategy": {
        "type": acts(
            "api.conversion:_body",
            "tests/unit/test_rollout.py::test_sequential_restart_follows_an_explicit_order",
            via="v1beta1.RestartStrategy.type",
        ),
    },
    "v1alpha1.RollingUpdateStatus": {
        "phase": acts(
            "api.conversion:_dgdr_to_beta",
            "tests/unit/test_status_progress.py::test_dgd_progress_is_any_change_while_the_graph_is_still_starting",
            via="v1beta1.RollingUpdateStatus.phase",
        ),
    },
    "v1alpha1.ScalingAdapter": {
        "enabled": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_webhooks_validation.py::test_alpha_update_rules_and_scaling_adapter",
        ),
    },
    "v1alpha1.ServiceCheckpointConfig": {
        "enabled": acts(
            "api.conversion:_experimental_to_beta",
            "tests/unit/test_api_conversion.py::test_fields_without_a_v1beta1_home_travel_in_one_annotation",
        ),
        "mode": acts(
            "api.conversion:_experimental_to_beta", "tests/unit/test_webhooks_gms.py::test_v1alpha1_paths"
        ),
    },
    "v1alpha1.ServiceCheckpointJobConfig": {
        "podTemplate": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_crds_fresh.py::test_reference_markers_reach_the_schema",
        ),
    },
    "v1alpha1.ServiceCheckpointStatus": {},
    "v1alpha1.ServiceReplicaStatus": {
        "componentName": acts(
            "api.conversion:_replica_status_to_beta",
            "tests/unit/test_crds_fresh.py::test_reference_markers_reach_the_schema",
        ),
        "componentNames": acts(
            "api.conversion:_replica_status_to_alpha",
            "tests/unit/test_api_conversion.py::test_status_services_become_components",
        ),
        "replicas": acts(
            "api.conversion:_shared_to_beta",
            "tests/integration/test_webhooks_api.py::test_create_rule_refused_with_its_message",
        ),
    },
    "v1alpha1.SharedMemorySpec": {
        "disabled": acts(
            "api.conversion:_shared_to_beta",
            "tests/unit/test_api_conversion.py::test_edit_in_other_version_wins_over_saved_data",
        ),
        "size": acts(
            "api.conversion:_shared_to_beta",
            "tests/integration/test_crds_apiserver.py::test_scale_subresource_drives_the_adapter",
        ),
    },
    "v1alpha1.SpecTopologyConstraint": {},
    "v1alpha1.TopologyConstraint": {},
    "v1alpha1.VolumeMount": {
        "mountPoint": acts(
            "api.conversion:_pod_template_to_beta",
            "tests/integration/test_crds_apiserver.py::test_scale_subresource_drives_the_adapter",
        ),
        "name": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/integration/test_crds_apiserver.py::test_scale_subresource_drives_the_adapter",
        ),
    },
}
