"""Registry entries (see the package docstring): drafted with ``python -m dynamo_coverage --draft`` and
held to the strict checks of ``check`` (the code names the field and its context, the test names the
field); an ``acts`` without a test is shown as untested."""

from __future__ import annotations

from ..status import Converted, Rendered, Status, StorageOnly, Unresolved, acts, refused  # noqa: F401

TYPES: dict[str, dict[str, Status]] = {
    "config.CheckpointConfiguration": {
        "cleanupImage": refused(
            "config",
            {"checkpoint": {"cleanupImage": "busybox:1.36"}},
            "no artifact cleanup Jobs",
            ("api.config.unsupported:unsupported_errors",),
        ),
        "enabled": acts(
            "render.info:ComponentInfo.checkpoint",
            "tests/unit/test_render_defaults.py::test_checkpoint_disabled_injects_nothing",
        ),
    },
    "config.CheckpointPVCConfig": {
        "accessMode": refused(
            "config",
            {"checkpoint": {"storage": {"pvc": {"accessMode": "ReadWriteMany"}}}},
            "does not create the checkpoint PVC",
            ("api.config.unsupported:unsupported_errors",),
        ),
        "basePath": acts(
            "render.env:checkpoint_env",
            "tests/unit/test_webhooks_validation.py::test_checkpoint_volume_name_clash_is_refused_naming_the_volume_and_the_fix",
        ),
        "create": refused(
            "config",
            {"checkpoint": {"storage": {"pvc": {"create": True}}}},
            "does not create the checkpoint PVC",
            ("api.config.unsupported:unsupported_errors",),
        ),
        "pvcName": acts(
            "render.pod:_operator_volumes",
            "tests/unit/test_render_defaults.py::test_compilation_cache_needs_mount_path_outside_vllm",
        ),
        "size": refused(
            "config",
            {"checkpoint": {"storage": {"pvc": {"size": "1Ti"}}}},
            "does not create the checkpoint PVC",
            ("api.config.unsupported:unsupported_errors",),
        ),
        "storageClassName": refused(
            "config",
            {"checkpoint": {"storage": {"pvc": {"storageClassName": "fast"}}}},
            "does not create the checkpoint PVC",
            ("api.config.unsupported:unsupported_errors",),
        ),
    },
    "config.CheckpointSeccompConfiguration": {
        "disabled": refused(
            "config",
            {"checkpoint": {"seccomp": {"disabled": False}}},
            "injects no localhost seccomp profile",
            ("api.config.unsupported:unsupported_errors",),
        ),
        "profile": refused(
            "config",
            {"checkpoint": {"seccomp": {"profile": "p.json"}}},
            "injects no localhost seccomp profile",
            ("api.config.unsupported:unsupported_errors",),
        ),
    },
    "config.CheckpointStorageConfiguration": {
        "oci": StorageOnly("Deprecated: OCI is retained for compatibility and ignored."),
        "s3": StorageOnly("Deprecated: S3 is retained for compatibility and ignored."),
        "type": acts(
            "render.env:checkpoint_env", "tests/unit/test_render_defaults.py::test_checkpoint_env_s3_location"
        ),
    },
    "config.DRAConfiguration": {
        "enabled": acts(
            "render.context:RenderContext.integration_enabled",
            "tests/unit/test_controllers_gms.py::test_integrations_left_to_detection_or_served_start",
        ),
    },
    "config.DiscoveryConfiguration": {
        "backend": acts(
            "render.context:RenderContext.discovery_backend",
            "tests/unit/test_render_defaults.py::test_discovery_backend_from_config_and_annotation",
        ),
    },
    "config.ETCDAuthConfiguration": {
        "method": acts(
            "render.credentials:etcd_env",
            "tests/unit/test_render_credentials.py::test_incomplete_references_are_refused_naming_the_field",
        ),
        "secretName": acts(
            "render.credentials:etcd_env",
            "tests/unit/test_render_credentials.py::test_incomplete_references_are_refused_naming_the_field",
        ),
    },
    "config.GPUConfiguration": {
        "discoveryEnabled": acts(
            "controllers.dgdr:DGDRReconciler.discover_gpus",
            "tests/unit/test_render_dgdr.py::test_what_the_cluster_lacks_fails_validation_naming_the_field",
        ),
    },
    "config.GroveConfiguration": {
        "enabled": acts(
            "render.context:RenderContext.integration_enabled",
            "tests/unit/test_render_grove.py::test_pathway_is_decided_by_config_detection_and_the_opt_out_annotation",
        ),
        "terminationDelay": acts(
            "render.grove:build_podcliqueset",
            "tests/unit/test_render_grove.py::test_termination_delay_and_priority_class_come_from_config_and_graph",
        ),
    },
    "config.ImagesConfiguration": {
        "operator": acts(
            "controllers.dgdr:register",
            "tests/unit/test_chart_images.py::test_the_operator_defaults_name_no_floating_image",
        ),
        "profiler": acts(
            "controllers.dgdr:register",
            "tests/unit/test_render_dgdr_job.py::test_render_shows_the_requests_children",
        ),
    },
    "config.InfrastructureConfiguration": {
        "etcdAddress": acts(
            "render.env:infrastructure_env",
            "tests/unit/test_chart_values.py::test_each_bundled_store_alone_gives_only_its_address",
        ),
        "modelExpressURL": acts(
            "render.env:infrastructure_env",
            "tests/unit/test_render_defaults.py::test_infrastructure_env_only_when_configured",
        ),
        "natsAddress": acts(
            "render.env:infrastructure_env",
            "tests/unit/test_chart_values.py::test_each_bundled_store_alone_gives_only_its_address",
        ),
        "prometheusEndpoint": acts(
            "render.env:infrastructure_env",
            "tests/unit/test_render_defaults.py::test_infrastructure_env_only_when_configured",
        ),
    },
    "config.IngressConfiguration": {
        "controllerClassName": acts(
            "render.graph:graph_exposure_report",
            "tests/unit/test_render_ingress.py::test_a_configured_gateway_adds_a_virtual_service_where_istio_is_served",
        ),
        "controllerTLSSecretName": acts(
            "render.ingress:exposure",
            "tests/unit/test_render_ingress.py::test_unset_settings_come_from_the_configuration",
        ),
        "hostSuffix": acts(
            "render.ingress:full_host",
            "tests/unit/test_render_ingress.py::test_the_configuration_exposes_frontends_of_graphs_without_an_ingress",
        ),
        "virtualServiceGateway": acts(
            "render.graph:graph_exposure_report",
            "tests/unit/test_render_ingress.py::test_a_configured_gateway_adds_a_virtual_service_where_istio_is_served",
        ),
        "virtualServiceSupportsHTTPS": acts(
            "render.ingress:endpoint_url",
            "tests/unit/test_render_ingress.py::test_the_reported_endpoint_scheme",
        ),
    },
    "config.IstioMeshConfiguration": {
        "caCertificates": acts(
            "render.epp:_tls",
            "tests/unit/test_render_gms.py::test_destination_rule_follows_the_service_mesh_settings",
        ),
        "clientCertificate": acts(
            "render.epp:_tls",
            "tests/unit/test_render_gms.py::test_destination_rule_follows_the_service_mesh_settings",
        ),
        "insecureSkipVerify": acts(
            "render.epp:_tls",
            "tests/unit/test_render_gms.py::test_destination_rule_follows_the_service_mesh_settings",
        ),
        "privateKey": acts(
            "render.epp:_tls",
            "tests/unit/test_render_gms.py::test_destination_rule_follows_the_service_mesh_settings",
        ),
        "tlsMode": acts(
            "render.epp:_tls",
            "tests/unit/test_render_gms.py::test_destination_rule_follows_the_service_mesh_settings",
        ),
    },
    "config.KaiSchedulerConfiguration": {
        "enabled": acts(
            "render.context:RenderContext.integration_enabled",
            "tests/unit/test_render_grove.py::test_kai_scheduler_name_and_queue_when_kai_is_enabled",
        ),
    },
    "config.LWSConfiguration": {
        "enabled": acts(
            "render.context:RenderContext.integration_enabled",
            "tests/unit/test_render_lws.py::test_lws_enabled_by_config_without_detection",
        ),
    },
    "config.LeaderElectionConfiguration": {
        "enabled": acts(
            "settings:runtime_settings",
            "tests/unit/test_runtime_servers.py::test_settings_defaults_and_precedence",
        ),
        "id": acts(
            "settings:runtime_settings",
            "tests/unit/test_hooks_checks.py::test_custom_leader_election_id_blocks_cluster_wide",
        ),
        "namespace": acts(
            "settings:runtime_settings",
            "tests/unit/test_runtime_servers.py::test_settings_defaults_and_precedence",
        ),
    },
    "config.LoggingConfiguration": {
        "format": acts(
            "settings:runtime_settings",
            "tests/unit/test_settings.py::test_a_bare_runtime_defaults_its_scope_lease_as_the_configuration_does",
        ),
        "level": acts(
            "settings:runtime_settings",
            "tests/unit/test_settings.py::test_a_bare_runtime_defaults_its_scope_lease_as_the_configuration_does",
        ),
    },
    "config.MPIConfiguration": {
        "sshNetworkPolicy": acts(
            "render.netpol:mpi_ssh_network_policy",
            "tests/unit/test_render_netpol.py::test_off_by_default_and_absent_for_other_backends",
        ),
        "sshSecretCopy": acts(
            "render.mpisecret:mpi_secret_source",
            "tests/unit/test_render_pvc_mpisecret.py::test_no_copy_where_none_is_needed",
        ),
        "sshSecretName": acts(
            "render.pod:_operator_volumes",
            "tests/integration/test_exposure_storage_cluster.py::test_the_copy_grant_names_the_secret",
        ),
        "sshSecretNamespace": acts(
            "render.mpisecret:mpi_secret_source",
            "tests/integration/test_exposure_storage_cluster.py::test_the_mpi_secret_is_copied_where_the_pods_are",
        ),
    },
    "config.MetricsServer": {
        "bindAddress": acts(
            "settings:_bind",
            "tests/unit/test_runtime_servers.py::test_settings_read_the_defaulted_configuration_document",
        ),
        "port": acts(
            "cli:run",
            "tests/unit/test_chart_values.py::test_plain_loopback_listener_and_service_listener_serve_the_same_registry",
        ),
        "secure": acts(
            "settings:runtime_settings",
            "tests/unit/test_chart_values.py::test_plain_loopback_listener_and_service_listener_serve_the_same_registry",
        ),
    },
    "config.NATSAuthConfiguration": {
        "method": acts(
            "render.credentials:nats_env",
            "tests/unit/test_render_credentials.py::test_incomplete_references_are_refused_naming_the_field",
        ),
        "secretName": acts(
            "render.credentials:nats_env",
            "tests/unit/test_render_credentials.py::test_incomplete_references_are_refused_naming_the_field",
        ),
    },
    "config.NATSTLSConfiguration": {
        "clientCertificate": acts(
            "render.credentials:nats_env",
            "tests/unit/test_render_credentials.py::test_nats_tls_mounts_the_ca_and_the_client_certificate_when_asked",
        ),
        "secretName": acts(
            "render.credentials:nats_env",
            "tests/unit/test_render_credentials.py::test_incomplete_references_are_refused_naming_the_field",
        ),
    },
    "config.NamespaceConfiguration": {
        "restricted": acts(
            "settings:runtime_settings",
            "tests/unit/test_runtime_servers.py::test_settings_read_the_defaulted_configuration_document",
        ),
    },
    "config.NamespaceScopeConfiguration": {
        "leaseDuration": acts(
            "settings:runtime_settings",
            "tests/unit/test_settings.py::test_a_bare_runtime_defaults_its_scope_lease_as_the_configuration_does",
        ),
        "leaseRenewInterval": acts(
            "settings:runtime_settings",
            "tests/unit/test_settings.py::test_a_bare_runtime_defaults_its_scope_lease_as_the_configuration_does",
        ),
    },
    "config.RBACConfiguration": {
        "dgdrProfilingClusterRoleName": acts(
            "controllers.dgdr:register",
            "tests/unit/test_render_dgdr_job.py::test_render_shows_the_requests_children",
        ),
        "eppClusterRoleName": acts(
            "render.component:build_role_binding",
            "tests/unit/test_render_component.py::test_epp_role_binding_names_the_configured_cluster_role",
        ),
        "discoveryClusterRoleName": acts(
            "render.discovery:role_ref",
            "tests/unit/test_render_defaults.py::test_other_graph_components_run_as_the_discovery_account",
        ),
        "discoveryRoleName": acts(
            "render.discovery:role_ref",
            "tests/unit/test_render_defaults.py::test_a_restricted_operator_binds_the_discovery_role_of_its_namespace",
        ),
        "plannerClusterRoleName": acts(
            "render.component:build_role_binding",
            "tests/unit/test_render_component.py::test_planner_service_account_and_role_binding",
        ),
    },
    "config.SecurityConfiguration": {
        "enableHTTP2": acts(
            "webhooks.server:WebhookServer.__init__",
            "tests/unit/test_webhooks_config.py::test_enable_http2_is_accepted_with_a_warning_and_the_server_keeps_http1",
        ),
    },
    "config.Server": {
        "bindAddress": acts(
            "settings:_bind",
            "tests/unit/test_runtime_servers.py::test_settings_read_the_defaulted_configuration_document",
        ),
        "port": acts(
            "webhooks.server:WebhookServer.__init__",
            "tests/unit/test_runtime_servers.py::test_settings_read_the_defaulted_configuration_document",
        ),
    },
    "config.ServiceMeshConfiguration": {
        "enabled": acts(
            "render.context:RenderContext.istio_mesh",
            "tests/unit/test_controllers_gms.py::test_integrations_left_to_detection_or_served_start",
        ),
        "provider": acts(
            "render.context:RenderContext.istio_mesh",
            "tests/unit/test_controllers_gms.py::test_integrations_left_to_detection_or_served_start",
        ),
    },
    "config.VolcanoSchedulerConfiguration": {
        "enabled": refused(
            "config",
            {"orchestrators": {"volcanoScheduler": {"enabled": True}}},
            "Volcano scheduling of Grove PodCliqueSets is not supported",
            ("api.config.unsupported:unsupported_errors",),
        ),
    },
    "config.WebhookServer": {
        "bindAddress": acts(
            "settings:_bind",
            "tests/unit/test_runtime_servers.py::test_settings_read_the_defaulted_configuration_document",
        ),
        "certDir": acts(
            "webhooks:_where",
            "tests/unit/test_webhooks_config.py::test_cert_dir_is_where_a_manual_replica_reads_the_certificate_it_serves",
        ),
        "certProvisionMode": acts(
            "webhooks:_where", "tests/unit/test_api_config.py::test_errors_name_the_field"
        ),
        "host": acts(
            "webhooks.server:WebhookServer.__init__",
            "tests/unit/test_render_component.py::test_registry_normalisation",
        ),
        "port": acts(
            "webhooks.server:WebhookServer.__init__",
            "tests/unit/test_runtime_servers.py::test_settings_read_the_defaulted_configuration_document",
        ),
        "secretName": acts(
            "dynamo_hooks.uninstall:read_release",
            "tests/unit/test_runtime_servers.py::test_settings_read_the_defaulted_configuration_document",
        ),
        "serviceName": acts(
            "webhooks:_where", "tests/unit/test_webhooks_validation.py::test_defaulting_standalone_dcd_name"
        ),
    },
    "config.WorkloadPodTemplateConfiguration": {
        "action": acts(
            "webhooks.validation.pod_policy:PodTemplatePolicy.from_config",
            "tests/unit/test_webhooks_pod_privileges.py::test_deny_refuses_what_a_request_adds_and_only_warns_about_what_was_there",
        ),
        "allow": acts(
            "webhooks.validation.pod_policy:PodTemplatePolicy.from_config",
            "tests/unit/test_webhooks_pod_privileges.py::test_allow_lists_silence_what_they_name",
        ),
        "allowedCapabilities": acts(
            "webhooks.validation.pod_policy:PodTemplatePolicy.from_config",
            "tests/unit/test_webhooks_pod_privileges.py::test_allow_lists_silence_what_they_name",
        ),
        "allowedServiceAccounts": acts(
            "webhooks.validation.pod_policy:PodTemplatePolicy.from_config",
            "tests/unit/test_webhooks_pod_privileges.py::test_allow_lists_silence_what_they_name",
        ),
    },
    "config.WorkloadSecurityConfiguration": {
        "imagePullSecretDiscovery": acts(
            "controllers.wiring:Wiring.pull_secret_discovery",
            "tests/integration/test_controllers_behaviour.py::test_pull_secret_discovery_off_reads_no_secret",
        ),
        "restrictedSecurityContext": acts(
            "render.security:restricted",
            "tests/integration/test_hardening_cluster.py::test_restricted_security_context_lets_graph_pods_into_an_enforced_restricted_namespace",
        ),
    },
}
