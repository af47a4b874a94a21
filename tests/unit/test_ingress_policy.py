"""The ingress policy (render/ingress_policy.py, issue 30 item 4): a graph author's ``ingress`` cannot inject
configuration into the shared ingress controller, claim a host outside the configured suffixes or attach to
a gateway the configuration does not name. Admission refuses what a request adds (naming the object, the
field and the fix) and warns about what the old object already had; the renderer withholds a refused
exposure and reports it in the ``Exposed`` condition."""

from __future__ import annotations

import pytest
from dynamo_operator.api.config import ConfigError, parse_operator_config
from dynamo_operator.controllers import status as st
from dynamo_operator.render import RenderContext, render_all, render_graph
from dynamo_operator.render.info import component_info
from dynamo_operator.render.ingress import exposure_report
from dynamo_operator.render.ingress_policy import configuration_injection
from dynamo_operator.webhooks.validation import Context, denial_message, validate
from support.graphs import FULL_INGRESS as FULL
from support.graphs import alpha_dcd
from support.graphs import exposed_alpha_graph as alpha_graph

SNIPPET = "nginx.ingress.kubernetes.io/server-snippet"
EXPOSED_KINDS = ("Ingress", "VirtualService")


def with_annotations(**extra) -> dict:
    return {**FULL, "annotations": {**FULL["annotations"], **extra}}


def exposed_kinds(graph: dict, config: dict | None = None) -> list[str]:
    ctx = RenderContext(operator_config=config, detected=frozenset({"istio"}))
    return [o["kind"] for o in render_all(graph, ctx) if o["kind"] in EXPOSED_KINDS]


def report(graph: dict, config: dict | None = None):
    ctx = RenderContext(operator_config=config, detected=frozenset({"istio"}))
    frontend = render_graph(graph, ctx)[0]
    return exposure_report(component_info(frontend), ctx)


def errors_and_warnings(obj, old=None, config: dict | None = None):
    result = validate("DynamoGraphDeployment", "v1alpha1", obj, old, Context(ingress=config or {}))
    return [str(e) for e in result.errors], result.warnings


@pytest.mark.parametrize(
    ("key", "value", "injects"),
    [
        ("nginx.ingress.kubernetes.io/configuration-snippet", "more_set_headers x;", True),
        ("nginx.ingress.kubernetes.io/server-snippet", "location /x {}", True),
        ("nginx.ingress.kubernetes.io/auth-snippet", "x", True),
        ("nginx.ingress.kubernetes.io/stream-snippet", "x", True),
        ("nginx.ingress.kubernetes.io/modsecurity-snippet", "x", True),
        ("custom.prefix.io/configuration-snippet", "x", True),  # ingress-nginx's prefix is configurable
        ("nginx.org/server-snippets", "x", True),
        ("nginx.org/location-snippets", "x", True),
        ("haproxy.org/backend-config-snippet", "x", True),
        ("haproxy-ingress.github.io/config-backend", "x", True),
        ("ingress.kubernetes.io/config-global", "x", True),
        ("nginx.ingress.kubernetes.io/auth-tls-secret", "other/ca", True),
        ("nginx.ingress.kubernetes.io/auth-secret", "kube-system/admin", True),
        ("nginx.ingress.kubernetes.io/auth-tls-secret", "team/ca", False),  # its own namespace
        ("nginx.ingress.kubernetes.io/auth-secret", "basic-auth", False),
        ("nginx.ingress.kubernetes.io/proxy-read-timeout", "600", False),
        ("nginx.ingress.kubernetes.io/rewrite-target", "/", False),
        ("example.com/snippetless", "x", False),
    ],
)
def test_which_annotations_reach_past_their_route(key, value, injects):
    assert (configuration_injection(key, value, "team") is not None) is injects


def test_a_snippet_is_refused_at_admission_naming_the_field_and_the_fix():
    errs, _ = errors_and_warnings(alpha_graph(with_annotations(**{SNIPPET: "location / {}"})))
    assert errs == [
        "spec.services[Frontend].ingress.annotations[nginx.ingress.kubernetes.io/server-snippet]: Forbidden: "
        "is a configuration snippet: the ingress controller pastes it unvalidated into the configuration it "
        "shares with every other Ingress (ingress-nginx rates *-snippet annotations Critical); remove the "
        "annotation, or ask the platform team to allow it in ingress.allowedAnnotations (chart: "
        "dynamo-operator.dynamo.ingress.allowedAnnotations)"
    ]
    result = validate("DynamoGraphDeployment", "v1alpha1", alpha_graph(with_annotations(**{SNIPPET: "x"})))
    assert denial_message("DynamoGraphDeployment", "llm", result.errors).startswith(
        'DynamoGraphDeployment.nvidia.com "llm" is invalid: spec.services[Frontend].ingress.annotations['
    )


def test_an_allowed_annotation_passes_and_renders():
    graph = alpha_graph(with_annotations(**{SNIPPET: "location / {}"}))
    config = {"ingress": {"allowedAnnotations": [SNIPPET]}}
    assert errors_and_warnings(graph, config=config["ingress"]) == ([], [])
    assert exposed_kinds(graph, config) == ["Ingress"]
    assert errors_and_warnings(graph, config={"allowedAnnotations": ["*"]}) == ([], [])


def test_the_renderer_withholds_a_refused_exposure_and_says_why():
    """A graph admitted before the policy: no Ingress (the syncer deletes the old one), Exposed=False."""
    graph = alpha_graph(with_annotations(**{SNIPPET: "location / {}"}))
    assert exposed_kinds(graph) == []
    endpoints, problems = report(graph)
    assert endpoints == []
    ((reason, message),) = problems
    assert reason == st.REASON_POLICY == "IngressPolicy"
    assert message.startswith(
        "Frontend: not exposed: spec.ingress.annotations[nginx.ingress.kubernetes.io/server-snippet]: is a "
        "configuration snippet"
    )
    status: dict = {}
    st.set_exposed(status, endpoints, problems, 1)
    assert st.condition(status, st.EXPOSED)["reason"] == "IngressPolicy"


def test_a_snippet_the_old_object_had_is_warned_about_not_refused():
    """The operator's own updates (replicas, restarts) must not be blocked by a setting they keep."""
    old = alpha_graph(with_annotations(**{SNIPPET: "x"}))
    new = alpha_graph(with_annotations(**{SNIPPET: "x"}))
    new["spec"]["services"]["Frontend"]["replicas"] = 3
    errs, warnings = errors_and_warnings(new, old)
    assert errs == []
    (warning,) = [w for w in warnings if "snippet" in w]
    assert warning.startswith(
        "spec.services[Frontend].ingress.annotations[nginx.ingress.kubernetes.io/server-snippet]"
    )
    assert warning.endswith("(the operator does not expose the component until then)")
    changed = alpha_graph(with_annotations(**{SNIPPET: "y"}))  # a new value is a new injection
    errs, _ = errors_and_warnings(changed, old)
    assert len(errs) == 1 and "Forbidden" in errs[0]


@pytest.mark.parametrize(
    ("suffix", "allowed"),
    [
        (None, True),  # the configured suffix
        ("apps.example.com", True),
        ("team.apps.example.com", True),  # a subdomain of it
        ("bank.example.org", False),
        ("evilapps.example.com", False),  # not a subdomain: the dot matters
        ("extra.example.net", True),  # allowedHostSuffixes
    ],
)
def test_the_host_must_end_in_a_configured_suffix(suffix, allowed):
    ingress = {"enabled": True, "host": "api", **({"hostSuffix": suffix} if suffix else {})}
    section = {"hostSuffix": "apps.example.com", "allowedHostSuffixes": ["extra.example.net"]}
    errs, _ = errors_and_warnings(alpha_graph(ingress), config=section)
    assert (errs == []) is allowed
    assert bool(exposed_kinds(alpha_graph(ingress), {"ingress": section})) is allowed
    if not allowed:
        (err,) = errs
        assert err.startswith(
            f"spec.services[Frontend].ingress.hostSuffix: Forbidden: gives the host 'api.{suffix}'"
        )
        assert (
            "ingress.allowedHostSuffixes (chart: dynamo-operator.dynamo.ingress.allowedHostSuffixes)" in err
        )


def test_without_a_configured_suffix_any_host_is_accepted():
    """Upstream's behaviour: the policy constrains hosts only when the configuration names a suffix."""
    assert errors_and_warnings(alpha_graph(FULL)) == ([], [])
    assert exposed_kinds(alpha_graph(FULL)) == ["Ingress"]


@pytest.mark.parametrize(
    ("gateway", "allowed"),
    [
        (None, True),
        ("istio-system/public", True),
        ("istio-system/internal", True),
        ("istio-system/admin", False),
    ],
)
def test_the_gateway_must_be_a_configured_one(gateway, allowed):
    ingress = {"enabled": True, "host": "api", "useVirtualService": True}
    if gateway:
        ingress["virtualServiceGateway"] = gateway
    section = {"virtualServiceGateway": "istio-system/public", "allowedGateways": ["istio-system/internal"]}
    errs, _ = errors_and_warnings(alpha_graph(ingress), config=section)
    assert (errs == []) is allowed
    assert (exposed_kinds(alpha_graph(ingress), {"ingress": section}) == ["VirtualService"]) is allowed
    if not allowed:
        (err,) = errs
        assert err.startswith(
            "spec.services[Frontend].ingress.virtualServiceGateway: Forbidden: is not a gateway the operator "
            "configuration allows (istio-system/public, istio-system/internal)"
        )


def test_the_configurations_own_exposure_is_not_judged():
    """Frontends the configuration exposes get its own suffix and gateway: the platform team's choice."""
    config = {"ingress": {"controllerClassName": "nginx", "allowedHostSuffixes": ["example.com"]}}
    graph = alpha_graph()
    assert exposed_kinds(graph, config) == ["Ingress"]  # host llm.local, outside example.com


def test_the_configuration_lists_are_checked_when_loaded():
    with pytest.raises(ConfigError) as err:
        parse_operator_config(
            {
                "ingress": {
                    "allowedAnnotations": ["*", "nginx.ingress.kubernetes.io/server-snippet", "bad key!"],
                    "allowedHostSuffixes": ["Example.COM"],
                    "allowedGateways": ["istio-system/gw", "a/b/c"],
                }
            }
        )
    assert err.value.errors == [
        ("ingress.allowedAnnotations[2]", "'bad key!' is not an annotation key (or \"*\")"),
        ("ingress.allowedHostSuffixes[0]", "'Example.COM' is not a lower-case DNS domain"),
        ("ingress.allowedGateways[1]", "'a/b/c' is not an Istio gateway (namespace/name)"),
    ]


def test_the_operators_own_dcds_are_not_judged_again():
    """A graph admitted before the policy: the DCD the operator creates for it carries the same ingress,
    which the graph's admission judged; refusing it would break the graph, the renderer withholds it."""
    dcd = alpha_dcd(with_annotations(**{SNIPPET: "x"}))
    op = "system:serviceaccount:dynamo-system:dynamo-operator"
    ctx = Context(username=op, operator_usernames=frozenset({op}))
    assert validate("DynamoComponentDeployment", "v1alpha1", dcd, None, ctx).errors == []
    (err,) = validate("DynamoComponentDeployment", "v1alpha1", dcd, None, Context(username="alice")).errors
    assert str(err).startswith(
        "spec.ingress.annotations[nginx.ingress.kubernetes.io/server-snippet]: Forbidden"
    )
