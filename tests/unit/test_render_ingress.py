"""A component's Ingress / Istio VirtualService (render/ingress.py): the v1alpha1 ``ingress`` acts wherever
it lives (a v1alpha1 object, a v1beta1 object's conversion record, the DCD a graph builds), the
configuration's ``ingress.*`` exposes frontends by default, and what cannot act is refused or reported."""

from __future__ import annotations

import copy

import pytest
import yaml
from click.testing import CliRunner
from dynamo_operator.api.alpha import alpha_spec
from dynamo_operator.api.conversion import convert
from dynamo_operator.controllers import status as st
from dynamo_operator.controllers import store
from dynamo_operator.controllers.notices import NoticeEvents
from dynamo_operator.render import RenderContext, RenderError, notices, render_all, render_graph
from dynamo_operator.render.cli import render_command
from dynamo_operator.render.graph import graph_exposure_report
from dynamo_operator.render.info import component_info
from dynamo_operator.render.ingress import exposure_report
from dynamo_operator.render.validate import to_v1beta1
from dynamo_operator.webhooks.validation import Context, validate
from support.graphs import FULL_INGRESS as FULL
from support.graphs import alpha_dcd
from support.graphs import exposed_alpha_graph as alpha_graph

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"


def beta_graph() -> dict:
    return to_v1beta1(convert(alpha_graph(), "v1beta1"))


def exposed(objs: list[dict]) -> dict[tuple[str, str], dict]:
    return {(o["kind"], o["metadata"]["name"]): o for o in objs if o["kind"] in ("Ingress", "VirtualService")}


def ctx(config: dict | None = None, istio: bool = False) -> RenderContext:
    return RenderContext(operator_config=config, detected=frozenset({"istio"} if istio else ()))


def test_a_v1alpha1_ingress_becomes_an_ingress_to_the_frontend_service():
    objs = exposed(render_all(alpha_graph(FULL), ctx()))
    ing = objs[("Ingress", "llm-frontend")]
    assert ing["apiVersion"] == "networking.k8s.io/v1"
    assert ing["metadata"]["namespace"] == "team"
    assert ing["spec"] == {
        "ingressClassName": "nginx",
        "rules": [
            {
                "host": "llm-api.example.com",  # <hostPrefix><host>.<hostSuffix>
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "pathType": "Prefix",
                            "backend": {"service": {"name": "llm-frontend", "port": {"number": 8000}}},
                        }
                    ]
                },
            }
        ],
        "tls": [{"hosts": ["llm-api.example.com"], "secretName": "llm-tls"}],
    }
    md = ing["metadata"]
    assert md["annotations"]["nginx.ingress.kubernetes.io/proxy-read-timeout"] == "600"
    assert md["labels"]["team"] == "a"
    assert md["labels"]["app.kubernetes.io/managed-by"] == "dynamo-operator"  # the operator's cache sees it
    assert md["labels"]["nvidia.com/dynamo-component"] == "Frontend"
    assert "nvidia.com/dynamo-spec-hash" in md["annotations"]
    assert len(objs) == 1  # an Ingress, no VirtualService


def test_the_ingress_labels_cannot_replace_the_operators_own():
    ingress = {**FULL, "labels": {"app.kubernetes.io/managed-by": "me", "nvidia.com/dynamo-component": "x"}}
    ing = exposed(render_all(alpha_graph(ingress), ctx()))[("Ingress", "llm-frontend")]
    assert ing["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "dynamo-operator"
    assert ing["metadata"]["labels"]["nvidia.com/dynamo-component"] == "Frontend"


def test_the_ingress_acts_from_a_v1beta1_objects_conversion_record():
    """What the controllers see: the stored v1alpha1 graph read as v1beta1, the ingress in its record."""
    beta = convert(alpha_graph(FULL), "v1beta1")
    assert "ingress" not in str(beta["spec"])
    assert exposed(render_all(beta, ctx())) == exposed(render_all(alpha_graph(FULL), ctx()))


def test_the_graphs_dcd_carries_the_ingress_in_its_v1alpha1_spec():
    """The DCD a graph builds holds the component's ingress where a v1alpha1 DCD would: its stored form
    has ``spec.ingress``, and reading it back (as the DCD controller does) gives the same annotation, so a
    converged DCD is not rewritten."""
    (frontend, _) = render_graph(alpha_graph(FULL), ctx())
    wire = store.to_wire(frontend)
    assert wire["apiVersion"] == "nvidia.com/v1alpha1"
    assert wire["spec"]["ingress"] == FULL
    read = store.to_internal({**wire, "metadata": {**wire["metadata"], "uid": "u1", "resourceVersion": "7"}})
    assert read["metadata"]["annotations"] == frontend["metadata"]["annotations"]
    assert read["spec"] == frontend["spec"]
    assert alpha_spec(read)["ingress"] == FULL


def test_a_standalone_v1alpha1_dcd_with_an_ingress_renders_it():
    dcd = alpha_dcd({"enabled": True, "host": "front"}, image=IMAGE, serviceName="Frontend")
    ing = exposed(render_all(dcd, ctx()))[("Ingress", "front")]
    assert ing["spec"]["rules"][0]["host"] == "front.local"  # upstream's default suffix
    assert "ingressClassName" not in ing["spec"]  # the cluster's default IngressClass
    assert "tls" not in ing["spec"]


def test_unset_settings_come_from_the_configuration():
    config = {
        "ingress": {"controllerClassName": "traefik", "controllerTLSSecretName": "wild", "hostSuffix": "corp"}
    }
    ing = exposed(render_all(alpha_graph({"enabled": True, "host": "api"}), ctx(config)))[
        ("Ingress", "llm-frontend")
    ]
    assert ing["spec"]["ingressClassName"] == "traefik"
    assert ing["spec"]["rules"][0]["host"] == "api.corp"
    assert ing["spec"]["tls"] == [{"hosts": ["api.corp"], "secretName": "wild"}]


def test_the_configuration_exposes_frontends_of_graphs_without_an_ingress():
    config = {"ingress": {"controllerClassName": "nginx", "hostSuffix": "example.com"}}
    objs = exposed(render_all(beta_graph(), ctx(config)))
    assert list(objs) == [("Ingress", "llm-frontend")]  # the frontend only
    assert objs[("Ingress", "llm-frontend")]["spec"]["rules"][0]["host"] == "llm.example.com"  # graph name
    assert exposed(render_all(beta_graph(), ctx())) == {}  # nothing configured: nothing exposed


def test_a_component_ingress_disabled_keeps_it_private_despite_the_configuration():
    config = {"ingress": {"controllerClassName": "nginx"}}
    assert exposed(render_all(alpha_graph({"enabled": False}), ctx(config))) == {}


def test_a_configured_gateway_adds_a_virtual_service_where_istio_is_served():
    config = {"ingress": {"controllerClassName": "nginx", "virtualServiceGateway": "istio-system/gw"}}
    objs = exposed(render_all(beta_graph(), ctx(config, istio=True)))
    assert set(objs) == {("Ingress", "llm-frontend"), ("VirtualService", "llm-frontend")}
    vs = objs[("VirtualService", "llm-frontend")]
    assert vs["apiVersion"] == "networking.istio.io/v1beta1"
    assert vs["spec"] == {
        "hosts": ["llm.local"],
        "gateways": ["istio-system/gw"],
        "http": [
            {
                "match": [{"uri": {"prefix": "/"}}],
                "route": [{"destination": {"host": "llm-frontend", "port": {"number": 8000}}}],
            }
        ],
    }
    # without Istio's API the VirtualService is not rendered, and the report says why
    assert set(exposed(render_all(beta_graph(), ctx(config)))) == {("Ingress", "llm-frontend")}
    endpoints, problems = graph_exposure_report(beta_graph(), ctx(config))
    assert endpoints == ["Frontend at http://llm.local (Ingress team/llm-frontend)"]
    ((reason, message),) = problems
    assert reason == "VirtualServiceUnavailable"
    assert "networking.istio.io" in message and "virtualServiceGateway" in message


def test_use_virtual_service_renders_a_virtual_service_instead_of_an_ingress():
    ingress = {"enabled": True, "host": "api", "useVirtualService": True, "virtualServiceGateway": "gw"}
    objs = exposed(render_all(alpha_graph(ingress), ctx({"ingress": {"controllerClassName": "nginx"}}, True)))
    assert list(objs) == [("VirtualService", "llm-frontend")]
    assert objs[("VirtualService", "llm-frontend")]["spec"]["gateways"] == ["gw"]


def test_a_worker_ingress_routes_to_the_workers_service_port():
    objs = exposed(render_all(alpha_graph(worker_ingress={"enabled": True, "host": "w"}), ctx()))
    ing = objs[("Ingress", "llm-vllmworker")]
    backend = ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": "llm-vllmworker", "port": {"number": 9090}}


def test_the_grove_pathway_exposes_the_same_way():
    objs = render_all(alpha_graph(FULL), ctx({"orchestrators": {"grove": {"enabled": True}}}))
    # the graph's discovery ServiceAccount (render/discovery.py), then the PodCliqueSet
    assert [o["kind"] for o in objs[:2]] == ["ServiceAccount", "PodCliqueSet"]
    assert ("Ingress", "llm-frontend") in exposed(objs)


@pytest.mark.parametrize(
    ("ingress", "config", "istio", "url"),
    [
        ({"enabled": True, "host": "a", "ingressControllerClassName": "c"}, {}, False, "http://a.local"),
        ({"enabled": True, "host": "a", "tls": {"secretName": "s"}}, {}, False, "https://a.local"),
        (
            {"enabled": True, "host": "a", "useVirtualService": True, "virtualServiceGateway": "g"},
            {},
            True,
            "http://a.local",
        ),
        (
            {"enabled": True, "host": "a", "useVirtualService": True, "virtualServiceGateway": "g"},
            {"ingress": {"virtualServiceSupportsHTTPS": True}},
            True,
            "https://a.local",
        ),
    ],
)
def test_the_reported_endpoint_scheme(ingress, config, istio, url):
    """TLS on an Ingress, or a gateway that serves HTTPS (``virtualServiceSupportsHTTPS``), means https."""
    (frontend, _) = render_graph(alpha_graph(ingress), ctx(config, istio))
    endpoints, problems = exposure_report(component_info(frontend), ctx(config, istio))
    assert problems == []
    assert endpoints[0].startswith(f"Frontend at {url} (")


def test_the_exposed_condition():
    status: dict = {}
    st.set_exposed(status, ["Frontend at http://a.local (Ingress t/a)"], [], 3)
    cond = st.condition(status, st.EXPOSED)
    assert (cond["status"], cond["reason"], cond["observedGeneration"]) == ("True", "Exposed", 3)
    st.set_exposed(status, [], [(st.REASON_VS_UNAVAILABLE, "Frontend: no VirtualService ...")], 4)
    cond = st.condition(status, st.EXPOSED)
    assert (cond["status"], cond["reason"]) == ("False", "VirtualServiceUnavailable")
    assert cond["message"] == "Frontend: no VirtualService ..."
    st.set_exposed(
        status, ["Worker at http://w.local (Ingress t/w)"], [(st.REASON_POLICY, "Frontend: ...")], 4
    )
    cond = st.condition(status, st.EXPOSED)
    assert (cond["status"], cond["reason"]) == ("False", "IngressPolicy")
    assert cond["message"] == "Frontend: ...; Worker at http://w.local (Ingress t/w)"
    st.set_exposed(status, [], [], 5)
    assert st.condition(status, st.EXPOSED) is None


@pytest.mark.parametrize(
    ("ingress", "field"),
    [
        ({"enabled": True}, "spec.ingress.host"),
        ({"enabled": True, "host": "Not_A_Host"}, "spec.ingress.host"),
        ({"enabled": True, "host": "a", "useVirtualService": True}, "spec.ingress.virtualServiceGateway"),
        ({"enabled": True, "host": "a", "virtualServiceGateway": "g"}, "spec.ingress.virtualServiceGateway"),
    ],
)
def test_what_cannot_act_is_a_render_error_naming_the_field(ingress, field):
    with pytest.raises(RenderError) as err:
        render_all(alpha_graph(ingress), ctx())
    assert err.value.path == field
    assert "DynamoComponentDeployment team/llm-frontend" in str(err.value)


VS_WITH_INGRESS_ONLY = {
    "enabled": True,
    "host": "a",
    "useVirtualService": True,
    "virtualServiceGateway": "istio-system/gw",
    "ingressControllerClassName": "nginx",
    "tls": {"secretName": "a-tls"},
}
INGRESS_ONLY_WARNINGS = [
    "spec.services[Frontend].ingress.ingressControllerClassName: has no effect: useVirtualService renders a "
    "VirtualService instead of an Ingress, so no Ingress controller is selected; remove it, or set "
    "useVirtualService: false for an Ingress",
    "spec.services[Frontend].ingress.tls.secretName: has no effect: useVirtualService renders a "
    "VirtualService, which cannot carry a certificate (the Istio Gateway terminates TLS); set the Secret as "
    "the Gateway's credentialName (tls still marks the endpoint HTTPS)",
]


def test_ingress_only_settings_beside_use_virtual_service_are_accepted_with_a_warning(tmp_path):
    """Upstream renders the VirtualService and ignores ingressControllerClassName and tls.secretName: so do
    we, and say so where the author looks: admission (kubectl's Warning), render's stderr, an Event."""
    graph = alpha_graph(VS_WITH_INGRESS_ONLY)
    objs = exposed(render_all(graph, ctx(istio=True)))
    assert set(objs) == {("VirtualService", "llm-frontend")}  # the VirtualService alone
    assert objs[("VirtualService", "llm-frontend")]["spec"]["gateways"] == ["istio-system/gw"]
    assert notices.warnings(graph) == INGRESS_ONLY_WARNINGS
    result = validate("DynamoGraphDeployment", "v1alpha1", graph, None, Context())
    assert result.errors == [] and result.warnings == INGRESS_ONLY_WARNINGS
    # render: the same text on stderr, the YAML on stdout
    path = tmp_path / "g.yaml"
    path.write_text(yaml.safe_dump(graph))
    out = CliRunner().invoke(render_command, ["-f", str(path), "--detected", "istio"])
    assert out.exit_code == 0, out.output
    prefix = f"Warning: {path}#0: DynamoGraphDeployment team/llm: "
    assert out.stderr.splitlines() == [prefix + w for w in INGRESS_ONLY_WARNINGS]
    # the controller: one Warning Event per notice on the graph
    events: list[tuple[str, str]] = []
    recorder = type("R", (), {"warning": lambda self, obj, reason, message: events.append((reason, message))})
    live = {**graph, "metadata": {**graph["metadata"], "uid": "u", "generation": 1}}
    NoticeEvents(recorder()).record(live, to_v1beta1(convert(live, "v1beta1")))
    beta_paths = [w.replace("spec.services[Frontend]", "spec.components[0]") for w in INGRESS_ONLY_WARNINGS]
    assert events == [("FieldHasNoEffect", w) for w in beta_paths]  # the controllers read v1beta1


def test_a_standalone_dcd_gets_the_same_warning_at_its_own_path():
    dcd = alpha_dcd(VS_WITH_INGRESS_ONLY, image=IMAGE)
    assert notices.warnings(dcd) == [
        w.replace("spec.services[Frontend]", "spec") for w in INGRESS_ONLY_WARNINGS
    ]
    kinds = [
        o["kind"] for o in render_all(dcd, ctx(istio=True)) if o["kind"] in ("Ingress", "VirtualService")
    ]
    assert kinds == ["VirtualService"]


def test_component_type_main_is_kept_on_the_dcd_and_its_children():
    graph = alpha_graph()
    graph["spec"]["services"]["Frontend"]["componentType"] = "main"
    objs = render_all(graph, ctx())
    frontend = [o for o in objs if o["metadata"]["name"] == "llm-frontend"]
    for o in frontend:
        assert o["metadata"]["labels"]["nvidia.com/dynamo-component-type"] == "main", o["kind"]
    dep = next(o for o in frontend if o["kind"] == "Deployment")
    assert dep["spec"]["template"]["metadata"]["labels"]["nvidia.com/dynamo-component-type"] == "main"
    dcd = next(o for o in frontend if o["kind"] == "DynamoComponentDeployment")
    assert store.to_wire(dcd)["spec"]["componentType"] == "main"  # the stored DCD says what the user wrote


def test_a_beta_graph_renders_without_conversions_when_it_cannot_hold_v1alpha1_fields():
    """A graph written in v1beta1 has no record: nothing v1alpha1-only, nothing to carry."""
    dcds = render_graph(beta_graph(), ctx())
    assert all("nvidia.com/conversion-from-v1alpha1" not in d["metadata"]["annotations"] for d in dcds)
    assert graph_exposure_report(beta_graph(), ctx()) == ([], [])


def test_changing_the_ingress_changes_the_dcd_hash():
    a = render_graph(alpha_graph(FULL), ctx())[0]
    changed = copy.deepcopy(FULL)
    changed["host"] = "other"
    b = render_graph(alpha_graph(changed), ctx())[0]
    h = "nvidia.com/dynamo-spec-hash"
    assert a["metadata"]["annotations"][h] != b["metadata"]["annotations"][h]
