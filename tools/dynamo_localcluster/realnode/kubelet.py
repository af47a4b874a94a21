"""The kubelet and kube-proxy of the real node: certificates, kubeconfigs, configuration files, command lines.

Settings that matter here, each for a reason measured on this kind of machine:
- The node's IP is the bridge's gateway address (the kubelet refuses a loopback node IP); the kubelet serves
  on it (for the API server's logs/exec/port-forward), its health endpoint on 127.0.0.1.
- cgroupfs driver on cgroup v1 hierarchies: ``failCgroupV1: false``; pods under a cgroup root of the node's
  own (``cgroupRoot``), never the machine-wide ``kubepods`` another node on this machine would use.
- Registered with a taint: only workloads meant for the real node (they tolerate it) land here.
- No image garbage collection (every image is imported, none could be pulled back) and eviction thresholds
  low enough that a busy development disk does not evict the test pods.
- Pods resolve names through the cluster DNS on the node address; the host's resolv.conf is never copied in.
- kube-proxy: iptables mode, NodePorts only on the node address (never on the external interface), no
  conntrack sysctl changes, ``oomScoreAdj: 0`` (root here lacks CAP_SYS_RESOURCE).
"""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from .. import pki as pki_mod
from . import layout


def kubeconfig(path: Path, server: str, ca: Path, crt: Path, key: Path, user: str) -> Path:
    def b64(p: Path) -> str:
        return base64.b64encode(p.read_bytes()).decode()

    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "local", "cluster": {"server": server, "certificate-authority-data": b64(ca)}}],
        "users": [{"name": user, "user": {"client-certificate-data": b64(crt), "client-key-data": b64(key)}}],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": user}}],
        "current-context": "local",
    }
    path.write_text(yaml.safe_dump(cfg))
    path.chmod(0o600)
    return path


def node_certificates(pki: pki_mod.Pki) -> dict[str, tuple[Path, Path]]:
    """Client certificates of the kubelet (the Node authorizer's ``system:node:<name>``) and kube-proxy
    (``system:kube-proxy``, bound to ``system:node-proxier`` by the default policy), and the kubelet's
    serving certificate for the node address."""
    return {
        "kubelet-client": pki_mod.issue(
            pki, "kubelet-client", f"system:node:{layout.NODE_NAME}", "system:nodes", client=True
        ),
        "kubelet-serving": pki_mod.issue(
            pki,
            "kubelet-serving",
            layout.NODE_NAME,
            server=True,
            dns=[layout.NODE_NAME],
            ips=[layout.NODE_IP],
        ),
        "kube-proxy": pki_mod.issue(pki, "kube-proxy-client", "system:kube-proxy", client=True),
    }


def kubelet_config(ca: Path, serving: tuple[Path, Path], ports: dict[str, int], resolv: Path) -> dict:
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": layout.NODE_IP,
        "port": ports["kubelet"],
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": ports["kubelet-healthz"],
        "tlsCertFile": str(serving[0]),
        "tlsPrivateKeyFile": str(serving[1]),
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(ca)},
        },
        "authorization": {"mode": "Webhook"},
        "containerRuntimeEndpoint": f"unix://{layout.CONTAINERD_SOCKET}",
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": f"/{layout.CGROUP_PARENT}",
        "failCgroupV1": False,
        "failSwapOn": False,
        "clusterDomain": layout.CLUSTER_DOMAIN,
        "clusterDNS": [layout.NODE_IP],
        "resolvConf": str(resolv),
        "registerWithTaints": [layout.TAINT],
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
        "serializeImagePulls": False,
        "maxPods": 110,
        "hairpinMode": "hairpin-veth",
        "enforceNodeAllocatable": ["pods"],
        "cgroupsPerQOS": True,
        "shutdownGracePeriod": "0s",
        "containerLogMaxSize": "10Mi",
        "rotateCertificates": False,
        "serverTLSBootstrap": False,
        "protectKernelDefaults": False,
        "nodeStatusUpdateFrequency": "5s",
        "syncFrequency": "10s",
        "fileCheckFrequency": "20s",
        "volumeStatsAggPeriod": "0s",
        "localStorageCapacityIsolation": True,
    }


def kube_proxy_config(kubeconfig_path: Path, ports: dict[str, int]) -> dict:
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "mode": "iptables",
        "clientConnection": {"kubeconfig": str(kubeconfig_path)},
        "hostnameOverride": layout.NODE_NAME,
        "bindAddress": layout.NODE_IP,
        "healthzBindAddress": f"127.0.0.1:{ports['kube-proxy-healthz']}",
        "metricsBindAddress": f"127.0.0.1:{ports['kube-proxy-metrics']}",
        "clusterCIDR": str(layout.POD_CIDR),
        "detectLocalMode": "ClusterCIDR",
        "nodePortAddresses": [f"{layout.NODE_IP}/32"],
        "oomScoreAdj": 0,
        "conntrack": {"maxPerCore": 0, "min": 0},
        "iptables": {"masqueradeAll": False, "localhostNodePorts": False, "syncPeriod": "10s"},
    }


def write_all(directory: Path, pki: pki_mod.Pki, server: str, ports: dict[str, int]) -> dict[str, Path]:
    """Every file the kubelet and kube-proxy read, under ``directory``; returns their paths by role."""
    directory.mkdir(parents=True, exist_ok=True)
    certs = node_certificates(pki)
    resolv = directory / "resolv.conf"
    # Only what the kubelet merges into ClusterFirst pods' resolv.conf: no host name server, no search list.
    resolv.write_text("# no upstream: pods resolve only cluster names, through the node's DNS\n")
    kubelet_kc = kubeconfig(
        directory / "kubelet.kubeconfig", server, pki.ca_crt, *certs["kubelet-client"], "kubelet"
    )
    proxy_kc = kubeconfig(
        directory / "kube-proxy.kubeconfig", server, pki.ca_crt, *certs["kube-proxy"], "proxy"
    )
    kubelet_cfg = directory / "kubelet.yaml"
    kubelet_cfg.write_text(
        yaml.safe_dump(kubelet_config(pki.ca_crt, certs["kubelet-serving"], ports, resolv))
    )
    proxy_cfg = directory / "kube-proxy.yaml"
    proxy_cfg.write_text(yaml.safe_dump(kube_proxy_config(proxy_kc, ports)))
    return {"kubelet-config": kubelet_cfg, "kubelet-kubeconfig": kubelet_kc, "kube-proxy-config": proxy_cfg}


def kubelet_argv(bin_dir: Path, files: dict[str, Path]) -> list[str]:
    return [
        str(bin_dir / "kubelet"),
        f"--config={files['kubelet-config']}",
        f"--kubeconfig={files['kubelet-kubeconfig']}",
        f"--root-dir={layout.KUBELET_ROOT}",
        f"--hostname-override={layout.NODE_NAME}",
        f"--node-ip={layout.NODE_IP}",
        f"--node-labels={layout.NODE_LABEL}=true",
        "--v=1",
    ]


def kube_proxy_argv(bin_dir: Path, files: dict[str, Path]) -> list[str]:
    return [str(bin_dir / "kube-proxy"), f"--config={files['kube-proxy-config']}", "--v=1"]
