"""Registry entries (see the package docstring): drafted with ``python -m dynamo_coverage --draft`` and
held to the strict checks of ``check`` (the code names the field and its context, the test names the
field); an ``acts`` without a test is shown as untested."""

from __future__ import annotations

from ..status import Converted, Rendered, Status, StorageOnly, Unresolved, acts, refused, warned  # noqa: F401

TYPES: dict[str, dict[str, Status]] = {
    "config.CheckpointConfiguration": {
        "cleanupImage": acts(
            "render.checkpoint_storage:cleanup_job",
            "tests/unit/test_checkpoint_storage.py::test_the_cleanup_job_removes_exactly_the_checkpoints_directory",
        ),
        "enabled": acts(
            "render.info:ComponentInfo.checkpoint",
            "tests/unit/test_render_defaults.py::test_checkpoint_disabled_injects_nothing",
        ),
    },
    "config.CheckpointPVCConfig": {
        "accessMode": acts(
            "render.checkpoint_storage:storage_claim",
            "tests/unit/test_checkpoint_storage.py::test_the_claim_is_upstreams_shape",
        ),
        "basePath": acts(
            "render.env:checkpoint_env", "tests/unit/test_render_defaults.py::test_checkpoint_env_pvc"
        ),
        "create": acts(
            "render.checkpoint_storage:storage_claim",
            "tests/unit/test_checkpoint_storage.py::test_no_claim_without_create_or_with_checkpointing_off",
        ),
        "pvcName": acts(
            "render.pod:_operator_volumes",
            "tests/unit/test_render_defaults.py::test_compilation_cache_needs_mount_path_outside_vllm",
        ),
        "size": acts(
            "render.checkpoint_storage:storage_claim",
            "tests/unit/test_checkpoint_storage.py::test_the_claim_is_upstreams_shape",
        ),
        "storageClassName": acts(
            "render.checkpoint_storage:storage_claim",
            "tests/unit/test_checkpoint_storage.py::test_the_claim_is_upstreams_shape",
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
            (
                "render.context:RenderContext.integration_enabled",
                "controllers.discovery:check_required_integrations",
            ),
            (
                "tests/unit/test_render_gms.py::test_gms_without_dra_or_gpus_is_refused_by_the_renderer",
                "tests/unit/test_controllers_gms.py::test_an_integration_the_configuration_requires_must_be_served",
            ),
        ),
    },
    "config.DiscoveryConfiguration": {
        "backend": acts(
            "render.context:RenderContext.discovery_backend",
            "tests/unit/test_render_defaults.py::test_discovery_backend_from_config_and_annotation",
        ),
    },
    "config.ETCDAuthConfiguration": {
        "adminSecretName": acts(
            "render.etcdaccess:admin_secret",
            "tests/unit/test_render_etcd_access.py::test_the_operator_reads_the_admin_secret_the_configuration_names",
        ),
        "adminSecretNamespace": acts(
            "render.etcdaccess:admin_secret",
            "tests/unit/test_render_etcd_access.py::test_the_operator_reads_the_admin_secret_the_configuration_names",
        ),
        "method": acts(
            "render.credentials:etcd_env",
            "tests/unit/test_render_credentials.py::test_user_password_for_nats_and_client_certificates_for_etcd",
        ),
        "proxyImage": acts(
            "render.etcdaccess:sidecars",
            "tests/unit/test_render_etcd_access.py::test_a_graph_on_etcd_reaches_it_through_its_sidecars_with_no_credential_in_the_runtime",
        ),
        "secretName": acts(
            "render.credentials:etcd_env",
            "tests/unit/test_render_credentials.py::test_user_password_for_nats_and_client_certificates_for_etcd",
        ),
    },
    "config.GPUConfiguration": {
        "discoveryEnabled": acts(
            "controllers.dgdr:register",
            "tests/unit/test_controllers_pure.py::test_the_request_controller_takes_its_images_role_and_gpu_discovery_from_the_configuration",
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
            "tests/unit/test_controllers_pure.py::test_the_request_controller_takes_its_images_role_and_gpu_discovery_from_the_configuration",
        ),
        "profiler": acts(
            "controllers.dgdr:register",
            "tests/unit/test_controllers_pure.py::test_the_request_controller_takes_its_images_role_and_gpu_discovery_from_the_configuration",
        ),
    },
    "config.InfrastructureConfiguration": {
        "etcdAddress": acts(
            "render.env:infrastructure_env",
            "tests/unit/test_render_defaults.py::test_infrastructure_env_only_when_configured",
        ),
        "modelExpressURL": acts(
            "render.env:infrastructure_env",
            "tests/unit/test_render_defaults.py::test_infrastructure_env_only_when_configured",
        ),
        "natsAddress": acts(
            "render.env:infrastructure_env",
            "tests/unit/test_render_defaults.py::test_infrastructure_env_only_when_configured",
        ),
        "prometheusEndpoint": acts(
            "render.env:infrastructure_env",
            "tests/unit/test_render_defaults.py::test_infrastructure_env_only_when_configured",
        ),
    },
    "config.IngressConfiguration": {
        "allowedAnnotations": acts(
            "render.ingress_policy:IngressPolicy.from_config",
            "tests/unit/test_ingress_policy.py::test_an_allowed_annotation_passes_and_renders",
        ),
        "allowedGateways": acts(
            "render.ingress_policy:IngressPolicy.from_config",
            "tests/unit/test_ingress_policy.py::test_the_gateway_must_be_a_configured_one",
        ),
        "allowedHostSuffixes": acts(
            "render.ingress_policy:IngressPolicy.from_config",
            "tests/unit/test_ingress_policy.py::test_the_host_must_end_in_a_configured_suffix",
        ),
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
            "tests/unit/test_runtime_servers.py::test_settings_defaults_and_precedence",
        ),
        "namespace": acts(
            "settings:runtime_settings",
            "tests/unit/test_runtime_servers.py::test_settings_defaults_and_precedence",
        ),
    },
    "config.LoggingConfiguration": {
        "format": acts(
            "settings:runtime_settings",
            "tests/unit/test_runtime_servers.py::test_settings_defaults_and_precedence",
        ),
        "level": acts(
            "settings:runtime_settings",
            "tests/unit/test_runtime_servers.py::test_settings_defaults_and_precedence",
        ),
    },
    "config.MPIConfiguration": {
        "sshNetworkPolicy": acts(
            "render.netpol:mpi_ssh_network_policy",
            "tests/unit/test_render_netpol.py::test_on_by_default_off_when_asked_and_absent_for_other_backends",
        ),
        "sshSecretCopy": acts(
            "render.mpisecret:mpi_secret_home",
            "tests/unit/test_render_pvc_mpisecret.py::test_no_secret_where_none_is_needed",
        ),
        "sshSecretName": acts(
            (
                "render.pod:_operator_volumes",
                "render.mpisecret:mpi_secret_home",
            ),
            (
                "tests/unit/test_render_multinode.py::test_trtllm_worker_runs_sshd_with_tcp_readiness",
                "tests/unit/test_render_pvc_mpisecret.py::test_a_multinode_trtllm_graph_elsewhere_gets_a_secret_of_its_namespaces_own",
                "tests/integration/test_exposure_storage_cluster.py::test_the_copy_grant_names_the_secret",
            ),
        ),
        "sshSecretNamespace": acts(
            "render.mpisecret:mpi_secret_home",
            (
                "tests/unit/test_render_pvc_mpisecret.py::test_no_secret_where_none_is_needed",
                "tests/unit/test_render_pvc_mpisecret.py::test_a_multinode_trtllm_graph_elsewhere_gets_a_secret_of_its_namespaces_own",
                "tests/integration/test_exposure_storage_cluster.py::test_each_namespace_gets_mpi_keys_of_its_own",
            ),
        ),
    },
    "config.MetricsServer": {
        "bindAddress": acts(
            "settings:_bind",
            "tests/unit/test_runtime_servers.py::test_settings_read_the_defaulted_configuration_document",
        ),
        "port": acts(
            "settings:_bind", "tests/unit/test_runtime_servers.py::test_settings_defaults_and_precedence"
        ),
        "secure": acts(
            "settings:runtime_settings",
            "tests/unit/test_runtime_servers.py::test_settings_defaults_and_precedence",
        ),
    },
    "config.NATSAuthConfiguration": {
        "accountsConfigMap": acts(
            "render.natsaccess:accounts_config_map",
            "tests/unit/test_nats_namespace_accounts.py::test_the_operator_reads_the_admin_secret_and_accounts_config_map_the_configuration_names",
        ),
        "adminSecretName": acts(
            "render.natsaccess:admin_secret",
            "tests/unit/test_nats_namespace_accounts.py::test_the_operator_reads_the_admin_secret_and_accounts_config_map_the_configuration_names",
        ),
        "adminSecretNamespace": acts(
            "render.natsaccess:admin_secret",
            "tests/unit/test_nats_namespace_accounts.py::test_the_operator_reads_the_admin_secret_and_accounts_config_map_the_configuration_names",
        ),
        "method": acts(
            "render.credentials:nats_env",
            (
                "tests/unit/test_render_credentials.py::test_other_nats_methods",
                "tests/unit/test_render_credentials.py::test_user_password_for_nats_and_client_certificates_for_etcd",
            ),
        ),
        "monitorURL": acts(
            "render.natsaccess:monitor_url",
            "tests/unit/test_nats_namespace_accounts.py::test_a_new_account_holds_the_pods_until_the_server_serves_it",
        ),
        "secretName": acts(
            "render.credentials:nats_env", "tests/unit/test_render_credentials.py::test_other_nats_methods"
        ),
    },
    "config.NATSTLSConfiguration": {
        "clientCertificate": acts(
            "render.credentials:nats_env",
            "tests/unit/test_render_credentials.py::test_nats_tls_mounts_the_ca_and_the_client_certificate_when_asked",
        ),
        "secretName": acts(
            "render.credentials:nats_env",
            "tests/unit/test_render_credentials.py::test_nats_tls_mounts_the_ca_and_the_client_certificate_when_asked",
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
            "tests/unit/test_runtime_servers.py::test_settings_defaults_and_precedence",
        ),
        "leaseRenewInterval": acts(
            "settings:runtime_settings",
            "tests/unit/test_runtime_servers.py::test_settings_defaults_and_precedence",
        ),
    },
    "config.RBACConfiguration": {
        "dgdrProfilingClusterRoleName": acts(
            "controllers.dgdr:register",
            "tests/unit/test_controllers_pure.py::test_the_request_controller_takes_its_images_role_and_gpu_discovery_from_the_configuration",
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
        "enableHTTP2": warned(
            "webhooks.server:WebhookServer.__init__",
            "tests/unit/test_webhooks_config.py::test_enable_http2_is_accepted_with_a_warning_and_the_server_keeps_http1",
            "the operator logs it at start: the webhook server speaks HTTP/1.1 only (no HTTP/2 server in the "
            "Python standard library), which is what upstream's default turns HTTP/2 off for",
        ),
    },
    "config.Server": {
        "bindAddress": acts(
            "settings:_bind",
            "tests/unit/test_runtime_servers.py::test_settings_read_the_defaulted_configuration_document",
        ),
        "port": acts(
            "settings:_bind", "tests/unit/test_runtime_servers.py::test_settings_defaults_and_precedence"
        ),
    },
    "config.ServiceMeshConfiguration": {
        "enabled": acts(
            "render.context:RenderContext.integration_enabled",
            (
                "tests/unit/test_render_gms.py::test_destination_rule_when_the_mesh_is_enabled_explicitly",
                "tests/unit/test_render_gms.py::test_no_destination_rule_without_an_enabled_istio_mesh",
            ),
        ),
        "provider": acts(
            "render.context:RenderContext.istio_mesh",
            (
                "tests/unit/test_render_gms.py::test_destination_rule_follows_the_service_mesh_settings",
                "tests/unit/test_render_gms.py::test_no_destination_rule_without_an_enabled_istio_mesh",
            ),
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
            "webhooks:_where",
            (
                "tests/unit/test_webhooks_config.py::test_host_port_mode_secret_and_service_come_from_the_configuration",
                "tests/unit/test_webhooks_config.py::test_cert_dir_is_where_a_manual_replica_reads_the_certificate_it_serves",
            ),
        ),
        "host": acts(
            "webhooks:_where",
            "tests/unit/test_webhooks_config.py::test_host_port_mode_secret_and_service_come_from_the_configuration",
        ),
        "port": acts(
            "webhooks:_where",
            "tests/unit/test_webhooks_config.py::test_host_port_mode_secret_and_service_come_from_the_configuration",
        ),
        "secretName": acts(
            (
                "webhooks:_where",
                "dynamo_hooks.uninstall:read_release",
            ),
            "tests/unit/test_webhooks_config.py::test_host_port_mode_secret_and_service_come_from_the_configuration",
        ),
        "serviceName": acts(
            "webhooks:_where",
            "tests/unit/test_webhooks_config.py::test_host_port_mode_secret_and_service_come_from_the_configuration",
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
            (
                "tests/unit/test_controllers_pure.py::test_pull_secret_discovery_off_registers_no_secret_cache",
                "tests/integration/test_controllers_behaviour.py::test_pull_secret_discovery_off_reads_no_secret",
            ),
        ),
        "restrictedSecurityContext": acts(
            "render.security:restricted",
            (
                "tests/unit/test_render_security.py::test_every_pod_of_every_pathway_gets_the_restricted_settings",
                "tests/integration/test_hardening_cluster.py::test_restricted_security_context_lets_graph_pods_into_an_enforced_restricted_namespace",
            ),
        ),
    },
}
