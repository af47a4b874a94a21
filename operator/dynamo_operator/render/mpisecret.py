"""The MPI SSH Secret where a graph's pods are (``mpi.sshSecretName`` / ``mpi.sshSecretNamespace``).

Multinode TensorRT-LLM pods mount the Secret ``mpi.sshSecretName`` (``render/pod.py``); the platform keeps
it in ``mpi.sshSecretNamespace`` (the release namespace, where the install hook creates it), and a pod can
mount a Secret of its own namespace only. So for a graph elsewhere that runs such pods, the DGD controller
copies the Secret into the graph's namespace under the same name (``controllers/mpisecret.py``): data and
type from the source, kept equal to it (a rotated key reaches every copy), with a plain owner reference
from every graph of the namespace that needs it (one copy per namespace: the garbage collector deletes it
with the last of them; a graph that stops needing it lets go). A Secret of that name the operator did not
copy (the user's) is used as it is and never written.

``mpi.sshSecretCopy: false`` (a dynamo-platform extension) turns copying off; the graph's namespace then
needs the Secret from whoever creates it, and the operator needs no write access to Secrets.
"""

from __future__ import annotations

from . import names
from .context import RenderContext
from .netpol import mpi_components

LABEL_MPI_SSH_COPY = "nvidia.com/dynamo-mpi-ssh-secret"
ANN_COPIED_FROM = "nvidia.com/dynamo-copied-from"
# what a copy may hold: the keys the pods read (``multinode.py``; the install hook writes the user key pair,
# authorized_keys and the pinned host key with its known_hosts, hooks/dynamo_hooks/sshkeys.py) in an Opaque
# Secret. The chart's ValidatingAdmissionPolicy (templates/mpi-secret-rbac.yaml) refuses the operator's
# ServiceAccount any other Secret write, so the copy carries exactly these and nothing else.
MPI_SSH_KEYS = (
    "private.key",
    "private.key.pub",
    "authorized_keys",
    "host.key",
    "host.key.pub",
    "known_hosts",
)
COPY_TYPE = "Opaque"


def mpi_secret_source(ctx: RenderContext) -> tuple[str, str] | None:
    """(namespace, name) of the Secret copies are made from, or None when copying is off."""
    name = ctx.config("mpi", "sshSecretName")
    namespace = ctx.config("mpi", "sshSecretNamespace")
    if not name or not namespace or ctx.config("mpi", "sshSecretCopy") is False:
        return None
    return str(namespace), str(name)


def mpi_secret_copy(dgd: dict, ctx: RenderContext, source: dict | None = None) -> dict | None:
    """The copy a (v1beta1) graph needs in its namespace (None: it needs none: no multinode TensorRT-LLM
    component, the graph lives with the source, or copying is off), with ``source``'s ``MPI_SSH_KEYS`` when
    given (``render`` shows it without: the data is the cluster's); always Opaque (pods read the data only,
    and the admission policy bounding the operator's Secret writes admits no other type)."""
    where = mpi_secret_source(ctx)
    if where is None or not mpi_components(dgd):
        return None
    src_ns, name = where
    namespace = (dgd.get("metadata") or {}).get("namespace") or "default"
    if namespace == src_ns:
        return None
    copy: dict = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {LABEL_MPI_SSH_COPY: "true", names.LABEL_MANAGED_BY: names.MANAGED_BY},
            "annotations": {
                ANN_COPIED_FROM: f"{src_ns}/{name}",
                names.ANN_OPERATOR_VERSION: ctx.operator_version,
            },
        },
        "type": COPY_TYPE,
    }
    data = {k: v for k, v in ((source or {}).get("data") or {}).items() if k in MPI_SSH_KEYS}
    if data:
        copy["data"] = data
    return copy


def is_copy(secret: dict) -> bool:
    """The operator made ``secret`` (only copies are ever written or deleted)."""
    labels = (secret.get("metadata") or {}).get("labels") or {}
    return labels.get(names.LABEL_MANAGED_BY) == names.MANAGED_BY and labels.get(LABEL_MPI_SSH_COPY) == "true"
