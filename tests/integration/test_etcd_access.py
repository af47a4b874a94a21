"""Per-namespace etcd access, run for real against an etcd started with exactly the ETCD_* settings and the
Secrets ``helm template`` renders with the chart's **default** values (mutual TLS, RBAC on; addresses moved
to free 127.0.0.1 ports, files to a temporary directory; the test bed's pinned etcd binary, which reads
the same variables as the chart's v3.5 image and has the same ``grpc-proxy``).

The operator's own code does every administrative step (``runtime/etcdadmin.py`` with the chart's
``<release>-etcd-admin`` Secret: root, authentication on, a user and role per namespace) and issues the
namespaces' certificates as the controller does (``controllers/etcdaccess.py``). Then:

* a client without a certificate is refused at the handshake; the operator's own certificate (no
  Common Name) without a token, and the gateway for a namespace's certificate, are refused too;
* with its certificate, namespace ``team-a`` reads and writes under ``ns/team-a/`` and is refused every
  key of ``team-b`` and the runtime's global ``v1/`` range;
* through a graph pod's path (``etcd-tunnel`` + ``etcd grpc-proxy --namespace``, as the pod's sidecars run
  them), the runtime's ``v1/mdc/...`` lands in ``ns/team-a/v1/mdc/...``, and ``team-b``'s path reading
  ``v1/mdc/`` sees none of it;
* removing the namespace's access (its last graph gone) takes its user and keys: its certificate is refused.
"""

from __future__ import annotations

import base64
import datetime as dt
import ssl
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from dynamo_localcluster.cluster import free_port
from dynamo_operator import pki
from dynamo_operator.controllers.etcdaccess import renewal_reason
from dynamo_operator.render import etcdaccess as ea
from dynamo_operator.runtime.etcdadmin import AdminCredentials, EtcdAdmin, EtcdAdminError
from support import chart, chartetcd, etcdgrpc
from support.poll import wait_for

pytestmark = pytest.mark.api

RELEASE, NAMESPACE = "dp", "dynamo-system"


def _render(tmp: Path) -> list[dict]:
    """``helm template`` with the chart's default values."""
    proc = chart.template(tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return chart.docs(proc)


@pytest.fixture
def etcd(tmp_path: Path):
    """The chart's etcd (defaults) on loopback; yields (client port, admin Secret data, processes)."""
    docs = _render(tmp_path)
    (sts,) = [d for d in docs if d["kind"] == "StatefulSet" and d["metadata"]["name"] == f"{RELEASE}-etcd"]
    secrets = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Secret"}
    assert f"{RELEASE}-etcd-client-tls" not in secrets  # no certificate shared by every workload
    with chartetcd.serve(sts, secrets[f"{RELEASE}-etcd-server-tls"]["data"], tmp_path) as served:
        yield served.port, secrets[f"{RELEASE}-etcd-admin"]["data"], served.procs


def _admin(
    port: int, data: dict[str, str], host: str = "localhost", connect_to: str | None = None
) -> EtcdAdmin:
    raw = {k: base64.b64decode(v) for k, v in data.items()}
    creds = AdminCredentials(
        ca=raw["ca.crt"], cert=raw["tls.crt"], key=raw["tls.key"], password=raw["password"].decode()
    )
    # the server certificate names the Service and localhost, as the pods' tunnels verify it
    return EtcdAdmin(f"https://{host}:{port}", creds, connect_to=connect_to)


def _namespace_tls(admin_data: dict[str, str], namespace: str, directory: Path) -> tuple[Path, Path, Path]:
    ca, ca_key = (base64.b64decode(admin_data[k]) for k in ("ca.crt", "ca.key"))
    cert, key = pki.issue_client(ca, ca_key, ea.user_name(namespace), dt.timedelta(days=90))
    files = chartetcd.write_files(
        {k: base64.b64encode(v).decode() for k, v in {"ca.crt": ca, "tls.crt": cert, "tls.key": key}.items()},
        directory,
    )
    return files["ca.crt"], files["tls.crt"], files["tls.key"]


def _pod_path(procs: chartetcd.Processes, namespace: str, tls_dir: Path, etcd_port: int) -> tuple[str, str]:
    """A graph pod's sidecars, as rendered (``etcdaccess.sidecars``), on free loopback ports: (the address
    the runtime's ETCD_ENDPOINTS names in the pod: the watch keeper's, the gRPC proxy's behind it)."""
    tunnel, proxy, runtime = free_port(), free_port(), free_port()
    cli = str(Path(sys.executable).parent / "dynamo-operator")
    procs.start(
        f"tunnel-{namespace}",
        [
            cli,
            "etcd-tunnel",
            f"--listen=127.0.0.1:{tunnel}",
            f"--upstream=localhost:{etcd_port}",
            f"--tls-dir={tls_dir}",
            f"--watch-listen=127.0.0.1:{runtime}",
            f"--watch-upstream=127.0.0.1:{proxy}",
        ],
    )
    procs.start(
        f"proxy-{namespace}",
        [
            chartetcd.etcd_binary(),
            "grpc-proxy",
            "start",
            f"--endpoints=http://127.0.0.1:{tunnel}",
            f"--listen-addr=127.0.0.1:{proxy}",
            f"--namespace={ea.key_root(namespace)}",
        ],
    )
    url = f"http://127.0.0.1:{runtime}"
    wait_for(
        lambda: etcdgrpc.range_prefix(url, "v1/").status == etcdgrpc.OK,
        30,
        lambda: procs.log(f"proxy-{namespace}") + procs.log(f"tunnel-{namespace}"),
    )
    return url, f"http://127.0.0.1:{proxy}"


def test_each_namespace_reaches_only_its_own_keys(etcd, tmp_path: Path) -> None:
    port, admin_data, procs = etcd
    admin = _admin(port, admin_data)
    admin.ensure_auth()
    admin.ensure_auth()  # idempotent: authentication already on, root's token taken
    for ns in ("team-a", "team-b"):
        admin.ensure_namespace(ea.user_name(ns), ea.key_root(ns))
        admin.ensure_namespace(ea.user_name(ns), ea.key_root(ns))
    a = _namespace_tls(admin_data, "team-a", tmp_path / "team-a")
    b = _namespace_tls(admin_data, "team-b", tmp_path / "team-b")
    direct = f"https://localhost:{port}"

    anonymous = ssl.create_default_context(cafile=str(a[0]))
    with pytest.raises((ssl.SSLError, urllib.error.URLError, ConnectionError)):
        urllib.request.urlopen(
            urllib.request.Request(f"{direct}/v3/kv/range", b"{}"), timeout=5, context=anonymous
        )
    operator_tls = chartetcd.write_files(
        {k: admin_data[k] for k in ("ca.crt", "tls.crt", "tls.key")}, tmp_path / "operator"
    )
    tokenless = etcdgrpc.range_prefix(
        direct, "ns/", (operator_tls["ca.crt"], operator_tls["tls.crt"], operator_tls["tls.key"])
    )
    assert tokenless.status != etcdgrpc.OK, tokenless

    assert etcdgrpc.put(direct, "ns/team-a/probe", "a", a).status == etcdgrpc.OK
    assert etcdgrpc.range_prefix(direct, "ns/team-a/", a).keys() == ["ns/team-a/probe"]
    for prefix in ("ns/team-b/", "v1/", "ns/"):
        denied = etcdgrpc.range_prefix(direct, prefix, a)
        assert denied.status == etcdgrpc.PERMISSION_DENIED, (prefix, denied)
    assert etcdgrpc.put(direct, "ns/team-b/x", "a", a).status == etcdgrpc.PERMISSION_DENIED
    assert etcdgrpc.range_prefix(direct, "ns/team-a/", b).status == etcdgrpc.PERMISSION_DENIED

    path_a, _ = _pod_path(procs, "team-a", a[0].parent, port)
    path_b, _ = _pod_path(procs, "team-b", b[0].parent, port)
    assert etcdgrpc.put(path_a, "v1/mdc/team-a-g/backend/generate/1", "card").status == etcdgrpc.OK
    assert etcdgrpc.range_prefix(path_a, "v1/mdc/", None).keys() == ["v1/mdc/team-a-g/backend/generate/1"]
    assert etcdgrpc.range_prefix(path_b, "v1/mdc/", None).keys() == []  # the runtime's global read, team-b's
    stored = etcdgrpc.range_prefix(direct, "ns/team-a/v1/", a).keys()
    assert stored == ["ns/team-a/v1/mdc/team-a-g/backend/generate/1"]

    admin.remove_namespace(ea.user_name("team-a"), ea.key_root("team-a"))
    gone = etcdgrpc.range_prefix(direct, "ns/team-a/", a)
    assert gone.status != etcdgrpc.OK, gone
    assert ea.user_name("team-a") not in admin.users() and ea.user_name("team-b") in admin.users()
    with pytest.raises(EtcdAdminError):  # the admin's view: team-a's keys went with it
        admin.call("/v3/auth/user/get", {"name": ea.user_name("team-a")})


def test_a_watch_whose_client_side_ended_stays_open_on_the_pod_path(etcd, tmp_path: Path) -> None:
    """The Dynamo runtime ends its side of each Watch stream right after creating the watch and keeps
    reading (``etcdwatch.py``). etcd's gRPC proxy alone ends such a watch at once (the negative control:
    the runtime would re-list and re-watch in a loop); through the pod's path (the watch keeper in front of
    the proxy) the watch stays and delivers the next write under its prefix, namespaced by the proxy."""
    port, admin_data, procs = etcd
    admin = _admin(port, admin_data)
    admin.ensure_auth()
    admin.ensure_namespace(ea.user_name("team-w"), ea.key_root("team-w"))
    tls = _namespace_tls(admin_data, "team-w", tmp_path / "team-w")
    runtime, proxy = _pod_path(procs, "team-w", tls[0].parent, port)

    def put(key: str):
        return lambda: etcdgrpc.put(runtime, key, "x")

    bare = etcdgrpc.watch_half_closed(proxy.removeprefix("http://"), "v1/instances/", put("v1/instances/a"))
    assert bare.ended and not bare.keys, bare
    kept = etcdgrpc.watch_half_closed(runtime.removeprefix("http://"), "v1/instances/", put("v1/instances/b"))
    assert kept.created and kept.keys == ["v1/instances/b"] and kept.ended is None, kept
    stored = etcdgrpc.range_prefix(f"https://localhost:{port}", "ns/team-w/v1/instances/", tls).keys()
    assert "ns/team-w/v1/instances/b" in stored, stored  # where the proxy put the runtime's key


def test_the_admin_reaches_etcd_by_address_checking_the_servers_name(etcd) -> None:
    """``connect_to`` (how the real-node tests reach the etcd Service's ClusterIP from this machine): the
    server's certificate is still checked against the endpoint's name; a name it does not carry fails."""
    port, admin_data, _ = etcd
    service = f"{RELEASE}-etcd.{NAMESPACE}.svc"  # a name of the certificate that this machine cannot resolve
    admin = _admin(port, admin_data, service, connect_to="127.0.0.1")
    admin.ensure_auth()
    admin.call("/v3/kv/put", {"key": base64.b64encode(b"ns/x/k").decode(), "value": ""})
    assert admin.keys("ns/") == ["ns/x/k"] and admin.keys() == ["ns/x/k"]
    with pytest.raises(ssl.SSLCertVerificationError):
        _admin(port, admin_data, "not-the-etcd", connect_to="127.0.0.1").users()


def test_issued_certificates_are_renewed_when_due(tmp_path: Path) -> None:
    """The controller's renewal rule on a certificate the chart's CA (sprig's RSA key) really issued: fresh
    is kept; near its end, issued for another namespace, or under another CA, it is issued again."""
    secrets = {d["metadata"]["name"]: d for d in _render(tmp_path) if d["kind"] == "Secret"}
    admin_data = secrets[f"{RELEASE}-etcd-admin"]["data"]
    ca, ca_key = (base64.b64decode(admin_data[k]) for k in ("ca.crt", "ca.key"))
    cert, key = pki.issue_client(ca, ca_key, ea.user_name("team-a"), dt.timedelta(days=90))
    data = {
        k: base64.b64encode(v).decode() for k, v in {"ca.crt": ca, "tls.crt": cert, "tls.key": key}.items()
    }
    secret = {"metadata": {"annotations": {ea.ANN_ISSUED_FOR: "team-a"}}, "data": data}
    assert renewal_reason(secret, "team-a", ca) == ""
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=70)
    assert "expires" in renewal_reason(secret, "team-a", ca, now=later)
    assert "not issued for team-b" in renewal_reason(secret, "team-b", ca)
    assert renewal_reason(secret, "team-a", b"another CA") == "the etcd CA changed"
