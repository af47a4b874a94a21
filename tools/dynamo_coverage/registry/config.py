"""Registry entries (see the package docstring); drafted with ``python -m dynamo_coverage --draft``
and reviewed by hand."""

from __future__ import annotations

from ..status import Status, StorageOnly, acts, refused  # noqa: F401

TYPES: dict[str, dict[str, Status]] = {
    "config.CheckpointConfiguration": {
        "enabled": acts(
            "render.info:ComponentInfo.checkpoint",
            "tests/unit/test_render_defaults.py::test_checkpoint_disabled_injects_nothing",
        ),
    },
    "config.CheckpointOCIConfig": {
        "uri": acts(
            "render.env:checkpoint_env", "tests/unit/test_render_defaults.py::test_checkpoint_env_s3_location"
        ),
    },
    "config.CheckpointPVCConfig": {
        "basePath": acts(
            "render.env:checkpoint_env", "tests/unit/test_render_defaults.py::test_checkpoint_env_pvc"
        ),
        "create": acts(
            "render.checkpoint:step",
            "tests/integration/test_checkpoint_cluster.py::test_disabled_configuration_reports_why_and_creates_nothing",
        ),
        "pvcName": acts(
            "render.pod:_operator_volumes",
            "tests/unit/test_render_defaults.py::test_compilation_cache_needs_mount_path_outside_vllm",
        ),
        "size": acts(
            "render.pod:shared_memory_size",
            "tests/unit/test_api_models.py::test_typed_access_to_fields_the_operator_reads",
        ),
    },
    "config.CheckpointS3Config": {
        "uri": acts(
            "render.env:checkpoint_env", "tests/unit/test_render_defaults.py::test_checkpoint_env_s3_location"
        ),
    },
    "config.CheckpointSeccompConfiguration": {
        "disabled": acts(
            "render.checkpoint:step", "tests/unit/test_webhooks_validation.py::test_dynamo_checkpoint_rules"
        ),
    },
    "config.CheckpointStorageConfiguration": {
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
    "config.GPUConfiguration": {},
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
    "config.IngressConfiguration": {},
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
        "sshSecretName": acts(
            "render.pod:_operator_volumes",
            "tests/unit/test_render_multinode.py::test_build_pod_template_defaults_to_lws_addressing",
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
            "controllers.wiring:Wiring.device_classes_watched",
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
        "plannerClusterRoleName": acts(
            "render.component:build_role_binding",
            "tests/unit/test_render_component.py::test_planner_service_account_and_role_binding",
        ),
    },
    "config.SecurityConfiguration": {},
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
        "enabled": acts(
            "render.context:RenderContext.integration_enabled",
            "tests/unit/test_render_lws.py::test_lws_enabled_by_config_without_detection",
        ),
    },
    "config.WebhookServer": {
        "bindAddress": acts(
            "settings:_bind",
            "tests/unit/test_runtime_servers.py::test_settings_read_the_defaulted_configuration_document",
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
}
