"""The DGD controller's per-namespace MPI SSH Secrets (``render/mpisecret.py``): one in each namespace with
graphs that run multinode TensorRT-LLM components, outside ``mpi.sshSecretNamespace``, holding keys made for
that namespace (``sshkeys.complete_keys``).

Never rotated by accident: an existing Secret's readable private keys are kept, whatever the pass, the
operator restart or the replica; only what derives from them (public halves, ``authorized_keys``,
``known_hosts``) is written back when edited. New keys are made only where there are none to keep: no
Secret yet (a create that finds one made meanwhile keeps that one: 409, never an overwrite), a private key
deleted or made unreadable by hand, or keys not made for this namespace (an earlier operator's copy of the
shared Secret: the upgrade migration). When the keys change, the graph's pass ends (``apply`` says so); the
Secret's watch event starts the next pass, which renders the namespace's multinode pods with the new key
id (``Deps.render_context``), so they roll onto the new keys together, and no pod is ever rendered with
keys the API server does not hold yet.

The Secret has a plain owner reference from each graph of its namespace that needs it: the garbage
collector deletes it with the last such graph, and a graph that stops needing it drops its reference (the
Secret goes when none is left). A Secret of that name the operator did not make is never written (the
user's wins).

Reads are from one cache of that Secret name in the operator's scope (``wiring.mpi_secrets``), so the grant
names the Secret (``resourceNames``) for everything but ``create``, which Kubernetes cannot restrict by
name: the chart bounds it with a ValidatingAdmissionPolicy (only Opaque Secrets of that name, with the
operator's labels and the MPI keys, outside the release namespace); see docs/storage.md.
"""

from __future__ import annotations

import base64

from kubernetes.client.exceptions import ApiException

from dynamo_operator.render import RenderContext
from dynamo_operator.render.mpisecret import (
    ANN_COPIED_FROM,
    is_ours,
    key_id,
    keys_made_here,
    mpi_secret_home,
    mpi_ssh_secret,
)
from dynamo_operator.runtime.client import SECRETS
from dynamo_operator.sshkeys import MPI_SSH_KEYS, complete_keys

from .common import Deps, read_secret, release_secret, replace_secret
from .sync import owner_reference


def _encoded(data: dict[str, bytes]) -> dict[str, str]:
    return {k: base64.b64encode(v).decode("ascii") for k, v in sorted(data.items())}


def _decoded(secret: dict) -> dict[str, bytes]:
    out = {}
    for key, value in (secret.get("data") or {}).items():
        if key in MPI_SSH_KEYS and value:
            try:
                out[key] = base64.b64decode(value)
            except ValueError:
                continue
    return out


def wanted_keys(secret: dict) -> tuple[dict[str, str], str]:
    """The data the operator's Secret should hold, and why it differs in its keys (empty: same keys, at
    most a derived entry restored). Keys made for another namespace, or for none (an earlier operator's
    copy of the shared Secret), are replaced, never completed."""
    namespace = (secret.get("metadata") or {}).get("namespace")
    if not keys_made_here(secret):
        data, _ = complete_keys({})
        copied = ((secret.get("metadata") or {}).get("annotations") or {}).get(ANN_COPIED_FROM)
        if copied:
            return _encoded(data), f"replaced the keys copied from {copied} by keys made for {namespace}"
        return _encoded(data), f"the keys were not made for {namespace}: made new ones"
    data, made = complete_keys(_decoded(secret))
    why = f"{' and '.join(made)} missing or unreadable: made anew" if made else ""
    return _encoded(data), why


class MPISecretSync:
    def __init__(self, deps: Deps):
        self.deps = deps

    def _get(self, namespace: str, name: str) -> dict | None:
        return read_secret(self.deps, self.deps.mpi_secrets, namespace, name)

    def apply(self, live: dict, internal: dict, ctx: RenderContext) -> bool:
        """Provide the Secret the graph ``live`` (stored form; ``internal``: its v1beta1 form) needs, or let
        go of one it no longer needs. True when this pass wrote new keys (or found a Secret made meanwhile):
        the pass must end here, and the next one renders the pods with the keys' id."""
        home = mpi_secret_home(ctx)
        if home is None:
            return False
        namespace = live["metadata"]["namespace"]
        desired = mpi_ssh_secret(internal, ctx)
        if desired is None:
            if namespace != home[0]:
                self._release(live, namespace, home[1])
            return False
        have = self._get(namespace, home[1])
        if have is None:
            return self._create(live, desired)
        if not is_ours(have):
            return False  # the user's Secret of that name: theirs to keep
        return self._update(live, desired, have)

    def _create(self, owner: dict, desired: dict) -> bool:
        md = desired["metadata"]
        data, _ = complete_keys({})
        body = {**desired, "metadata": {**md, "ownerReferences": [owner_reference(owner, controller=False)]}}
        body["data"] = _encoded(data)
        try:
            self.deps.client.create(SECRETS, body, md["namespace"])
        except ApiException as e:
            if e.status != 409:
                raise
            return True  # made meanwhile (another graph's pass): its keys are kept, the next pass sees them
        self.deps.recorder.normal(
            owner,
            "SuccessfulCreate",
            f"Created Secret {md['namespace']}/{md['name']} with MPI SSH keys made for {md['namespace']}",
        )
        return True

    def _update(self, owner: dict, desired: dict, have: dict) -> bool:
        """Add the graph's owner reference, write back derived entries, replace keys not made here."""
        ref = owner_reference(owner, controller=False)
        refs = have["metadata"].get("ownerReferences") or []
        annotations = {**(have["metadata"].get("annotations") or {}), **desired["metadata"]["annotations"]}
        annotations.pop(ANN_COPIED_FROM, None)
        data, why = wanted_keys(have)
        owned = any(r.get("uid") == ref["uid"] for r in refs)
        if owned and data == (have.get("data") or {}) and annotations == have["metadata"].get("annotations"):
            return False
        md = {**have["metadata"], "annotations": annotations}
        md["ownerReferences"] = [*(r for r in refs if r.get("uid") != ref["uid"]), ref]
        md.pop("managedFields", None)
        written = replace_secret(self.deps, have, {**have, "metadata": md, "data": data})
        where = f"{md['namespace']}/{md['name']}"
        if why:
            self.deps.recorder.normal(owner, "UpdateSecret", f"Secret {where}: {why}")
        elif data != (have.get("data") or {}):
            self.deps.recorder.normal(
                owner, "UpdateSecret", f"Secret {where}: restored from its private keys"
            )
        return key_id(written) != key_id(have)

    def _release(self, owner: dict, namespace: str, name: str) -> None:
        have = self._get(namespace, name)
        if have is None or not is_ours(have) or not release_secret(self.deps, have, owner["metadata"]["uid"]):
            return
        self.deps.recorder.normal(owner, "DeleteSecret", f"Deleted Secret {namespace}/{name}")
