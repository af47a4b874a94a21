"""Registry entries (see the package docstring): drafted with ``python -m dynamo_coverage --draft`` and
held to the strict checks of ``check`` (the code names the field and its context, the test names the
field); an ``acts`` without a test is shown as untested."""

from __future__ import annotations

from ..status import Converted, Rendered, Status, StorageOnly, Unresolved, acts, refused  # noqa: F401

# the minimal graph's component made a GPU worker, so that GPU memory service settings are judged alone
_GMS_WORKER = {
    "spec.components[0].type": "worker",
    "spec.components[0].podTemplate.spec.containers[0].resources": {"limits": {"nvidia.com/gpu": "1"}},
}

TYPES: dict[str, dict[str, Status]] = {
    "v1beta1.CompilationCacheConfig": {
        "mountPath": acts(
            "render.pod:compilation_cache_mount",
            "tests/unit/test_render_defaults.py::test_compilation_cache_needs_mount_path_outside_vllm",
        ),
        "pvcName": acts(
            "render.pod:compilation_cache_mount",
            "tests/unit/test_render_defaults.py::test_compilation_cache_needs_mount_path_outside_vllm",
        ),
    },
    "v1beta1.ComponentCheckpointConfig": {
        "checkpointRef": acts(
            "render.graph_checkpoint:plan_checkpoints",
            (
                "tests/unit/test_render_graph_checkpoint.py::test_checkpoint_ref_restores_an_existing_checkpoint_and_creates_none",
                "tests/integration/test_graph_checkpoint_cluster.py::test_wait_for_checkpoint_holds_the_worker_until_the_graphs_checkpoint_is_ready",
            ),
        ),
        "deletionPolicy": acts(
            "render.graph_checkpoint:plan_checkpoints",
            "tests/unit/test_render_graph_checkpoint.py::test_what_the_component_runs_names_its_checkpoint",
        ),
        "enabled": acts(
            "render.graph_checkpoint:checkpoint_config",
            "tests/unit/test_render_graph_checkpoint.py::test_auto_checkpoint_is_dgd_scoped_named_labelled_and_runs_the_components_own_pod",
        ),
        "mode": acts(
            "render.gms:_gms_problems",
            "tests/unit/test_render_gms.py::test_problems_of_every_inconsistent_combination",
        ),
        "startupPolicy": acts(
            "render.graph_checkpoint:_point_dcd_at",
            "tests/unit/test_render_graph_checkpoint.py::test_what_the_component_runs_names_its_checkpoint",
        ),
        "targetContainerName": acts(
            "render.graph_checkpoint:auto_checkpoint",
            "tests/unit/test_render_graph_checkpoint.py::test_job_pod_template_and_target_container_are_merged_over_the_rendered_pod",
        ),
    },
    "v1beta1.ComponentCheckpointJobConfig": {
        "podTemplate": acts(
            "render.graph_checkpoint:_job_template",
            "tests/unit/test_render_graph_checkpoint.py::test_job_pod_template_and_target_container_are_merged_over_the_rendered_pod",
        ),
        "gmsClientContainers": refused(
            "admission",
            {
                "spec.components[0].experimental.checkpoint": {
                    "enabled": True,
                    "job": {"gmsClientContainers": ["s"]},
                }
            },
            "the checkpoint Job gets no GPU Memory Service client wiring",
            "webhooks.validation.component_checkpoint:_check_target_and_job",
            kind="DynamoGraphDeployment",
            version="v1beta1",
        ),
    },
    "v1beta1.ComponentCheckpointStatus": {
        "checkpointID": acts(
            "render.graph_checkpoint:CheckpointPlan.status",
            "tests/unit/test_render_graph_checkpoint.py::test_wait_for_checkpoint_holds_replicas_at_zero_until_ready",
        ),
        "checkpointName": acts(
            "render.graph_checkpoint:CheckpointPlan.status",
            "tests/unit/test_render_graph_checkpoint.py::test_the_dcd_restores_from_the_graphs_checkpoint",
        ),
        "identityHash": acts(
            "render.graph_checkpoint:CheckpointPlan.status",
            "tests/unit/test_render_graph_checkpoint.py::test_the_dcd_restores_from_the_graphs_checkpoint",
        ),
        "ready": acts(
            "render.graph_checkpoint:CheckpointPlan.status",
            "tests/unit/test_render_graph_checkpoint.py::test_wait_for_checkpoint_holds_replicas_at_zero_until_ready",
        ),
    },
    "v1beta1.ComponentReplicaStatus": {
        "availableReplicas": acts(
            "controllers.grove:component_readiness",
            "tests/unit/test_render_grove.py::test_grove_status_says_what_is_missing_and_never_fakes_readiness",
        ),
        "componentKind": acts(
            "controllers.status:replica_status",
            "tests/unit/test_render_grove.py::test_grove_status_says_what_is_missing_and_never_fakes_readiness",
        ),
        "componentNames": acts(
            "controllers.status:replica_status",
            "tests/unit/test_render_grove.py::test_grove_status_says_what_is_missing_and_never_fakes_readiness",
        ),
        "readyReplicas": acts(
            "controllers.status:replica_status",
            (
                "tests/unit/test_component_pods.py::test_scheduled_replicas_is_written_only_when_known",
                "tests/integration/test_controllers_cluster.py::test_scale_remove_hand_edit_and_delete",
            ),
        ),
        "replicas": acts(
            "controllers.status:replica_status",
            "tests/unit/test_render_grove.py::test_grove_status_says_what_is_missing_and_never_fakes_readiness",
        ),
        "runtimeNamespace": acts(
            "controllers.status:replica_status",
            (
                "tests/unit/test_render_grove.py::test_grove_status_says_what_is_missing_and_never_fakes_readiness",
                "tests/integration/test_rollout_cluster.py::test_worker_change_rolls_workers_with_truthful_status",
            ),
        ),
        "updatedReplicas": acts(
            "controllers.status:replica_status",
            "tests/unit/test_render_grove.py::test_grove_status_says_what_is_missing_and_never_fakes_readiness",
        ),
        "scheduledReplicas": acts(
            ("controllers.status:replica_status", "controllers.grove:replica_status"),
            (
                "tests/unit/test_component_pods.py::test_scheduled_replicas_is_written_only_when_known",
                "tests/unit/test_component_pods.py::test_grove_reports_scheduled_replicas_itself",
                "tests/integration/test_controllers_cluster.py::test_graph_reaches_successful_with_documented_defaults",
            ),
            note="Deployment pathway: the component's scheduled pods (controllers/component_pods.py); Grove: "
            "its own count; a LeaderWorkerSet: not reported (the reference's nil)",
        ),
    },
    "v1beta1.DeploymentInfoStatus": {
        "availableReplicas": acts(
            "render.dgdr:deployment_info",
            "tests/unit/test_render_dgdr.py::test_deploying_follows_the_dgd_to_ready_and_back_when_it_degrades",
        ),
        "replicas": acts(
            "render.dgdr:deployment_info",
            "tests/unit/test_render_dgdr.py::test_deploying_follows_the_dgd_to_ready_and_back_when_it_degrades",
        ),
    },
    "v1beta1.DynamoCheckpointIdentity": {
        "backendFramework": acts(
            "render.graph_checkpoint:auto_checkpoint",
            "tests/unit/test_render_graph_checkpoint.py::test_the_dcd_restores_from_the_graphs_checkpoint",
        ),
        "dtype": acts(
            "render.checkpoint_ids:identity_hash",
            "tests/unit/test_render_defaults.py::test_identity_hash_is_upstreams_normalised_form",
        ),
        "dynamoVersion": acts(
            "render.checkpoint_ids:identity_hash",
            "tests/unit/test_field_effects.py::test_every_identity_field_names_another_checkpoint",
        ),
        "extraParameters": acts(
            "render.checkpoint_ids:identity_hash",
            "tests/unit/test_field_effects.py::test_every_identity_field_names_another_checkpoint",
        ),
        "maxModelLen": acts(
            "render.checkpoint_ids:identity_hash",
            "tests/unit/test_field_effects.py::test_every_identity_field_names_another_checkpoint",
        ),
        "model": acts(
            "render.checkpoint_ids:identity_hash",
            "tests/unit/test_field_effects.py::test_every_identity_field_names_another_checkpoint",
        ),
        "pipelineParallelSize": acts(
            "render.checkpoint_ids:identity_hash",
            "tests/unit/test_field_effects.py::test_every_identity_field_names_another_checkpoint",
        ),
        "tensorParallelSize": acts(
            "render.checkpoint_ids:identity_hash",
            "tests/unit/test_render_defaults.py::test_identity_hash_is_upstreams_normalised_form",
        ),
    },
    "v1beta1.DynamoComponentDeploymentSharedSpec": {
        "frontendSidecar": acts(
            "render.hashing:worker_hash",
            "tests/unit/test_render_gms.py::test_frontend_sidecar_defaults_command_and_args_and_keeps_a_users_probe",
        ),
        "globalDynamoNamespace": acts(
            "render.graph:build_dcd", "tests/unit/test_render_graph.py::test_dyn_namespace_global_and_dots"
        ),
        "minAvailable": acts(
            "render.grove:_component_parts",
            "tests/unit/test_render_grove.py::test_single_node_components_are_one_clique_each",
        ),
        "name": acts(
            "render.graph:build_dcd", "tests/unit/test_render_graph.py::test_dyn_namespace_global_and_dots"
        ),
        "podTemplate": acts(
            "render.pod:build_pod_template",
            "tests/unit/test_render_credentials.py::test_user_env_still_wins_over_the_injected_credentials",
        ),
        "replicas": acts(
            "render.grove:_component_parts",
            "tests/unit/test_render_grove.py::test_single_node_components_are_one_clique_each",
        ),
        "scalingAdapter": acts(
            "render.scaling:has_adapter",
            "tests/unit/test_controllers_status.py::test_a_component_with_a_scaling_adapter_gets_one_and_loses_it_without",
        ),
        "sharedMemorySize": acts(
            "render.hashing:worker_hash",
            "tests/unit/test_render_scaling.py::test_worker_hash_changes_with_what_workers_run",
        ),
        "type": acts(
            "render.epp:epp_component",
            "tests/unit/test_render_gms.py::test_epp_without_the_inference_pool_api_is_refused",
        ),
    },
    "v1beta1.DynamoComponentDeploymentSpec": {
        "backendFramework": acts(
            "render.info:component_info",
            "tests/unit/test_render_defaults.py::test_single_node_has_no_multinode_env",
        ),
        "frontendSidecar": acts(
            "render.pod:_with_frontend_sidecar",
            "tests/unit/test_render_gms.py::test_frontend_sidecar_gets_the_frontend_defaults_under_the_users_fields",
        ),
        "globalDynamoNamespace": acts(
            "render.info:component_info", "tests/unit/test_render_defaults.py::test_global_dynamo_namespace"
        ),
        "minAvailable": acts(
            "render.grove:_clique",
            "tests/unit/test_render_grove.py::test_single_node_components_are_one_clique_each",
        ),
        "name": acts(
            "render.multinode:_find_main",
            "tests/unit/test_render_multinode.py::test_vllm_ray_leader_runs_head_then_vllm_workers_join",
        ),
        "podTemplate": acts(
            "render.pod:build_pod_template",
            "tests/unit/test_render_component.py::test_frontend_default_command_only_without_user_command",
        ),
        "replicas": acts(
            "render.grove:_clique",
            "tests/unit/test_render_grove.py::test_single_node_components_are_one_clique_each",
        ),
        "scalingAdapter": acts(
            "render.scaling:has_adapter",
            "tests/unit/test_controllers_status.py::test_a_component_with_a_scaling_adapter_gets_one_and_loses_it_without",
            note="the DGD controller creates the adapter for a graph's component (its DCD carries the field); a standalone DCD gets none, though admission holds its replicas for one (reported to the lead, issue 32)",
        ),
        "sharedMemorySize": acts(
            "render.hashing:worker_hash",
            "tests/unit/test_render_scaling.py::test_worker_hash_changes_with_what_workers_run",
        ),
        "type": acts(
            "render.info:component_info", "tests/unit/test_render_defaults.py::test_dyn_component_is_the_type"
        ),
    },
    "v1beta1.DynamoComponentDeploymentStatus": {
        "conditions": acts(
            "controllers.status:dcd_status",
            "tests/unit/test_controllers_pure.py::test_the_component_status_carries_its_selector_generation_and_both_conditions",
        ),
        "observedGeneration": acts(
            "controllers.status:dcd_status",
            (
                "tests/unit/test_controllers_pure.py::test_the_component_status_carries_its_selector_generation_and_both_conditions",
                "tests/integration/test_rollout_cluster.py::test_restart_sequential_then_parallel",
            ),
        ),
        "podSelector": acts(
            "render.netpol:mpi_ssh_network_policy",
            "tests/unit/test_render_netpol.py::test_policy_admits_sshd_only_from_the_same_graph",
        ),
    },
    "v1beta1.DynamoGraphDeploymentComponentRef": {
        "componentName": acts(
            "render.scaling:build_adapter",
            "tests/unit/test_render_scaling.py::test_one_adapter_per_component_with_scaling_adapter_seeded_with_its_replicas",
        ),
        "name": acts(
            "render.scaling:build_adapter",
            "tests/unit/test_render_scaling.py::test_adapter_converts_to_the_storage_version_with_service_name",
        ),
    },
    "v1beta1.DynamoGraphDeploymentExperimentalSpec": {
        "kvTransferPolicy": acts(
            "render.kvtransfer:policy_of",
            "tests/unit/test_render_kvtransfer.py::test_a_label_key_policy_reaches_every_worker_pod_and_no_other",
        ),
    },
    "v1beta1.KvTransferPolicy": {
        "clusterTopologyName": acts(
            "render.kvtransfer:source_annotations",
            "tests/unit/test_render_kvtransfer.py::test_a_cluster_topology_policy_on_grove_projects_the_dynamo_owned_label",
        ),
        "domain": acts(
            "render.kvtransfer:policy_env",
            "tests/unit/test_render_kvtransfer.py::test_a_label_key_policy_reaches_every_worker_pod_and_no_other",
        ),
        "enforcement": acts(
            "render.kvtransfer:policy_env",
            "tests/unit/test_render_kvtransfer.py::test_a_label_key_policy_reaches_every_worker_pod_and_no_other",
        ),
        "labelKey": acts(
            "render.kvtransfer:domain_label",
            "tests/unit/test_render_kvtransfer.py::test_a_label_key_policy_reaches_every_worker_pod_and_no_other",
        ),
        "preferredWeight": acts(
            "render.kvtransfer:policy_env",
            "tests/unit/test_render_kvtransfer.py::test_a_label_key_policy_reaches_every_worker_pod_and_no_other",
        ),
    },
    "v1beta1.DynamoGraphDeploymentRequestSpec": {
        "autoApply": acts(
            "api.dgdr_conversion:spec_to_beta",
            "tests/unit/test_render_dgdr.py::test_auto_apply_off_stops_at_ready_with_the_generated_spec",
        ),
        "backend": acts(
            "render.graph_checkpoint:_identity",
            "tests/unit/test_render_graph_checkpoint.py::test_render_all_lists_the_checkpoint_first_and_refuses_what_cannot_act",
        ),
        "image": acts(
            "render.dgdr_job:profiler_spec",
            "tests/unit/test_render_dgdr_job.py::test_render_shows_the_requests_children",
        ),
        "model": Rendered("render.dgdr_job:profiler_spec"),
        "searchStrategy": Rendered("render.dgdr_job:profiler_spec"),
    },
    "v1beta1.DynamoGraphDeploymentRequestStatus": {
        "conditions": acts(
            "api.dgdr_conversion:status_to_beta",
            "tests/unit/test_render_dgdr.py::test_v1beta1_readers_see_the_conditions_and_generation_the_controller_wrote",
        ),
        "dgdName": acts(
            "api.dgdr_conversion:status_to_beta",
            "tests/unit/test_dgdr_conversion.py::test_generated_graph_name_is_the_dgd_name_before_it_is_created",
        ),
        "observedGeneration": acts(
            (
                "render.dgdr:_pending",
                "render.dgdr:step",
                "api.dgdr_conversion:status_to_beta",
            ),
            (
                "tests/unit/test_render_dgdr.py::test_pending_validates_and_creates_the_job",
                "tests/unit/test_render_dgdr.py::test_v1beta1_readers_see_the_conditions_and_generation_the_controller_wrote",
            ),
        ),
        "phase": acts(
            "api.dgdr_conversion:status_to_beta",
            (
                "tests/unit/test_render_dgdr.py::test_v1beta1_readers_see_the_progress_as_the_seed_says",
                "tests/unit/test_dgdr_conversion.py::test_status_phases_follow_the_v1beta1_lifecycle",
            ),
        ),
        "profilingJobName": acts(
            "api.dgdr_conversion:status_payload",
            "tests/unit/test_dgdr_conversion.py::test_fields_both_versions_hold_land_in_their_v1alpha1_homes",
        ),
        "profilingPhase": acts(
            (
                "render.dgdr:_pending",
                "render.dgdr:_profiling",
            ),
            (
                "tests/unit/test_render_dgdr.py::test_pending_validates_and_creates_the_job",
                "tests/unit/test_render_dgdr.py::test_completed_job_waits_for_its_output_then_fails_after_the_grace_period",
            ),
        ),
    },
    "v1beta1.DynamoGraphDeploymentScalingAdapterSpec": {
        "replicas": acts(
            "render.scaling:build_adapter",
            "tests/unit/test_render_scaling.py::test_adapter_defaults_to_one_replica_and_none_without_scaling_adapter",
        ),
    },
    "v1beta1.DynamoGraphDeploymentScalingAdapterStatus": {
        "lastScaleTime": acts(
            "controllers.dgdsa:AdapterReconciler.__call__",
            (
                "tests/unit/test_controllers_status.py::test_an_adapter_scales_its_component_and_records_when",
                "tests/integration/test_scaling_cluster.py::test_adapter_lifecycle_kubectl_scale_and_hand_back",
            ),
        ),
        "replicas": acts(
            "render.component:build_deployment",
            "tests/unit/test_render_component.py::test_default_replicas_is_one_and_zero_is_kept",
        ),
        "selector": acts(
            "render.component:build_deployment",
            "tests/unit/test_render_component.py::test_model_ref_headless_service",
        ),
    },
    "v1beta1.DynamoGraphDeploymentSpec": {
        "annotations": acts(
            "render.graph:build_dcd",
            "tests/unit/test_render_graph.py::test_labels_and_annotations_propagate_component_wins",
        ),
        "backendFramework": acts(
            "render.info:component_info",
            "tests/unit/test_render_defaults.py::test_single_node_has_no_multinode_env",
        ),
        "env": acts(
            "render.env:backend_env", "tests/unit/test_render_defaults.py::test_global_dynamo_namespace"
        ),
        "labels": acts(
            "render.graph:build_dcd",
            "tests/unit/test_render_graph.py::test_labels_and_annotations_propagate_component_wins",
        ),
        "priorityClassName": acts(
            "render.grove:build_podcliqueset",
            "tests/unit/test_render_grove.py::test_termination_delay_and_priority_class_come_from_config_and_graph",
        ),
    },
    "v1beta1.DynamoGraphDeploymentStatus": {
        "conditions": acts(
            "controllers.status:dgd_status",
            "tests/unit/test_controllers_pure.py::test_the_graph_status_carries_its_state_ready_condition_generation_and_components",
        ),
        "observedGeneration": acts(
            "controllers.status:dgd_status",
            "tests/unit/test_controllers_pure.py::test_the_graph_status_carries_its_state_ready_condition_generation_and_components",
        ),
        "state": acts(
            (
                "controllers.status:dgd_status",
                "controllers.status:dgd_ready_condition",
            ),
            (
                "tests/unit/test_controllers_pure.py::test_the_graph_status_carries_its_state_ready_condition_generation_and_components",
                "tests/unit/test_controllers_pure.py::test_dgd_ready_reasons_name_the_components",
            ),
        ),
    },
    "v1beta1.EPPConfig": {
        "config": acts(
            "render.component:build_epp_configmap",
            "tests/unit/test_render_component.py::test_epp_configmap_from_config_and_mount",
        ),
        "configMapRef": acts(
            "render.pod:epp_config_source",
            "tests/unit/test_render_component.py::test_epp_config_map_ref_uses_users_configmap",
        ),
    },
    "v1beta1.FailoverSpec": {
        "mode": acts(
            "render.gms:_failover_problems", "tests/unit/test_webhooks_gms.py::test_failover_modes_must_match"
        ),
        "numShadows": acts(
            "render.gms:_failover_problems",
            "tests/unit/test_render_gms.py::test_problems_of_every_inconsistent_combination",
        ),
    },
    "v1beta1.FeaturesSpec": {
        "planner": acts(
            "render.dgdr_output:_check_planner",
            "tests/unit/test_render_dgdr_output.py::test_the_planner_feature_needs_a_planner_in_the_graph",
        ),
    },
    "v1beta1.GPUMemoryServiceSpec": {
        # inter-pod GMS client pods are not wired: refused as a whole (GMSClientPodSpec's rows with it)
        "extraClientPods": refused(
            "admission",
            {
                **_GMS_WORKER,
                "spec.components[0].experimental.gpuMemoryService": {"extraClientPods": [{"name": "c"}]},
            },
            "is reserved for inter-pod GMS client pods, which are not wired yet",
            "render.gms:_gms_problems",
            kind="DynamoGraphDeployment",
            version="v1beta1",
        ),
        "deviceClassName": acts(
            "render.gms:device_class",
            "tests/unit/test_render_gms.py::test_gms_claim_template_replaces_the_gpu_request_by_a_shared_dra_claim",
        ),
        "extraClientContainers": acts(
            "render.gms:apply_gms",
            "tests/unit/test_render_gms.py::test_gms_extra_client_containers_are_wired_and_absent_names_ignored",
        ),
        "mode": acts(
            "render.gms:_gms_problems",
            "tests/unit/test_render_gms.py::test_inconsistent_failover_is_refused_by_the_renderer",
        ),
    },
    "v1beta1.HardwareSpec": {
        "gpuSku": acts(
            "render.gpu:needs_discovery",
            "tests/unit/test_render_dgdr_job.py::test_discovered_hardware_fills_what_the_request_leaves_out",
        ),
        "interconnect": Rendered("render.dgdr_job:profiler_spec"),
        "numGpusPerNode": acts(
            "render.gpu:needs_discovery",
            "tests/unit/test_render_dgdr_job.py::test_discovered_hardware_fills_what_the_request_leaves_out",
        ),
        "rdma": Rendered("render.dgdr_job:profiler_spec"),
        "totalGpus": acts(
            "render.gpu:needs_discovery",
            "tests/unit/test_render_dgdr_job.py::test_discovered_hardware_fills_what_the_request_leaves_out",
        ),
        "vramMb": acts(
            "render.gpu:needs_discovery",
            "tests/unit/test_render_dgdr_job.py::test_discovered_hardware_fills_what_the_request_leaves_out",
        ),
    },
    "v1beta1.MockerSpec": {
        "enabled": acts(
            "api.dgdr_conversion:spec_to_beta",
            "tests/unit/test_dgdr_conversion.py::test_upstream_v1alpha1_request_reads_as_typed_v1beta1_fields",
        ),
    },
    "v1beta1.ModelCacheSpec": {
        "pvcModelPath": acts(
            "api.dgdr_conversion:_move",
            "tests/unit/test_dgdr_conversion.py::test_upstream_v1alpha1_request_reads_as_typed_v1beta1_fields",
        ),
        "pvcMountPath": acts(
            "render.dgdr_job:model_cache",
            "tests/unit/test_render_dgdr_job.py::test_the_model_cache_pvc_is_mounted_read_only",
        ),
        "pvcName": acts(
            "render.dgdr_job:model_cache",
            "tests/unit/test_render_dgdr_job.py::test_the_model_cache_pvc_is_mounted_read_only",
        ),
    },
    "v1beta1.ModelReference": {
        "name": acts(
            (
                "render.pod:system_labels",
                "render.component:build_model_service",
            ),
            "tests/unit/test_render_component.py::test_model_ref_headless_service",
        ),
        "revision": acts(
            "render.component:build_model_service",
            "tests/unit/test_render_component.py::test_model_ref_headless_service",
        ),
    },
    "v1beta1.MultinodeSpec": {
        "nodeCount": acts(
            (
                "render.info:component_info",
                "render.grove:podclique_names",
            ),
            "tests/unit/test_render_grove.py::test_multinode_component_is_a_scaling_group_of_leader_and_worker_cliques",
        ),
    },
    "v1beta1.OverridesSpec": {
        "dgd": acts(
            "render.dgd_override:apply_override",
            (
                "tests/unit/test_render_dgdr_output.py::test_the_generated_graph_carries_the_override_and_is_stored_as_v1alpha1",
                "tests/unit/test_render_dgdr_output.py::test_an_override_the_graph_cannot_take_fails_the_output",
            ),
        ),
        "profilingJob": acts(
            "render.dgdr_job:profiling_job",
            "tests/unit/test_render_dgdr_job.py::test_protected_labels_stay_the_operators",
        ),
    },
    "v1beta1.ParetoConfig": {
        "config": StorageOnly("Deprecated: The profiler no longer generates Pareto configurations."),
    },
    "v1beta1.PlacementStatus": {
        "state": acts(
            "api.conversion:_dgd_status",
            "tests/unit/test_status_progress.py::test_conversion_is_reused_for_the_same_live_dict_only",
        ),
        "score": StorageOnly(
            "Until a source is selected and implemented, the DGD controller does not write this field"
        ),
    },
    "v1beta1.ProfilingResultsStatus": {
        "selectedConfig": acts(
            "api.dgdr_conversion:status_to_beta",
            (
                "tests/unit/test_dgdr_conversion.py::test_generated_graph_name_is_the_dgd_name_before_it_is_created",
                "tests/integration/test_dgdr_cluster.py::test_v1beta1_request_with_every_field_is_kept_and_acted_on",
            ),
        ),
    },
    "v1beta1.Restart": {
        "id": acts(
            "controllers.rollout:restart", "tests/unit/test_rollout.py::test_a_new_restart_id_starts_over"
        ),
    },
    "v1beta1.RestartStatus": {
        "inProgress": acts(
            "controllers.rollout:restart",
            "tests/unit/test_rollout.py::test_sequential_restart_follows_an_explicit_order",
        ),
        "observedID": acts(
            "controllers.rollout:restart",
            "tests/unit/test_rollout.py::test_no_restart_keeps_only_a_terminal_status",
        ),
        "phase": acts(
            "controllers.rollout:restart",
            "tests/unit/test_rollout.py::test_no_restart_keeps_only_a_terminal_status",
        ),
    },
    "v1beta1.RestartStrategy": {
        "order": acts(
            "controllers.rollout:restart_order",
            "tests/unit/test_rollout.py::test_sequential_restart_follows_an_explicit_order",
        ),
        "type": acts(
            "controllers.rollout:restart",
            "tests/unit/test_rollout.py::test_sequential_restart_follows_an_explicit_order",
        ),
    },
    "v1beta1.RollingUpdateStatus": {
        "endTime": acts(
            "controllers.rollout:rolling_update",
            "tests/unit/test_rollout.py::test_reverting_to_the_live_revision_completes_a_running_update",
        ),
        "phase": acts(
            "controllers.rollout:rolling_update",
            "tests/unit/test_rollout.py::test_hash_change_starts_pending_then_in_progress_then_completes",
        ),
        "startTime": acts(
            "controllers.rollout:rolling_update",
            "tests/unit/test_rollout.py::test_reverting_to_the_live_revision_completes_a_running_update",
        ),
        "updatedComponents": acts(
            "controllers.status:rolling_overlay",
            "tests/unit/test_rollout.py::test_overlay_never_reports_successful_during_a_rolling_update",
        ),
    },
    "v1beta1.SLASpec": {
        "e2eLatency": Rendered("render.dgdr_job:profiler_spec"),
        "itl": acts(
            "api.dgdr_conversion:_move",
            "tests/unit/test_dgdr_conversion.py::test_upstream_v1alpha1_request_reads_as_typed_v1beta1_fields",
        ),
        "optimizationType": Rendered("render.dgdr_job:profiler_spec"),
        "ttft": acts(
            "api.dgdr_conversion:_move",
            "tests/unit/test_dgdr_conversion.py::test_wrongly_typed_blob_values_stay_v1alpha1_only",
        ),
    },
    "v1beta1.SpecTopologyConstraint": {
        "clusterTopologyName": acts(
            "api.conversion:_dgd_to_alpha",
            "tests/unit/test_field_effects.py::test_topology_profile_is_v1beta1s_cluster_topology_name",
        ),
        "packDomain": acts(
            "render.grove:_component_parts",
            "tests/unit/test_render_grove.py::test_a_pack_domain_grove_does_not_know_is_an_error_naming_the_field",
        ),
    },
    "v1beta1.TopologyConstraint": {
        "packDomain": acts(
            "render.grove:_component_parts",
            "tests/unit/test_render_grove.py::test_a_pack_domain_grove_does_not_know_is_an_error_naming_the_field",
        ),
    },
    "v1beta1.WorkloadSpec": {
        "concurrency": Rendered("render.dgdr_job:profiler_spec"),
        "isl": acts(
            "api.dgdr_conversion:_move",
            "tests/unit/test_dgdr_conversion.py::test_upstream_v1alpha1_request_reads_as_typed_v1beta1_fields",
        ),
        "osl": acts(
            "api.dgdr_conversion:_move",
            "tests/unit/test_dgdr_conversion.py::test_upstream_v1alpha1_request_reads_as_typed_v1beta1_fields",
        ),
        "requestRate": Rendered("render.dgdr_job:profiler_spec"),
    },
}
