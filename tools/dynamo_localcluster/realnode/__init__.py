"""A real kubelet node beside kwok's fake GPU nodes: the ``node`` profile of the local control plane.

kubelet and kube-proxy built from the pinned Kubernetes module, containerd v2 from its Go module, Debian's
runc and CNI plugins; a bridge with no way out, guarded by iptables; a DNS server for cluster names only; a
complete teardown that a killed run cannot escape. Modules: ``layout`` (names, ranges, paths), ``preflight``
(can this machine run it), ``network``, ``runtime`` (containerd), ``kubelet`` (kubelet and kube-proxy),
``dns``, ``teardown``, ``reaper``, ``node`` (the lifecycle the cluster calls). Nothing is imported here, so
each module runs as ``python -m`` without importing the others first.
"""
