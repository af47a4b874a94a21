"""The DGD controller's copies of the MPI SSH Secret (``render/mpisecret.py``): one per namespace with
graphs that run multinode TensorRT-LLM components, outside ``mpi.sshSecretNamespace``.

The copy has the source's type and data and a plain owner reference from each graph of its namespace that
needs it: the garbage collector deletes it with the last such graph, and a graph that stops needing it
(single node now, another backend) drops its reference (the copy goes when none is left). Every pass
brings the copy back to the source (a rotated key, an edited or deleted copy); the source is watched
(``dgd.register``), so a rotation reaches the copies at once, as do the copies (an edit or a deletion is
written back at once). A Secret of that name the operator did not make
is never written (the user's wins).

Reads are by name (two caches of that one name: the source in its namespace, the copies in the operator's
scope, both watched), so the grant can name the Secret (``resourceNames``) for everything but
``create``, which Kubernetes cannot restrict by name: the chart bounds it with a ValidatingAdmissionPolicy
(only Opaque Secrets of that name, with the copy's labels and the MPI keys, outside the original's
namespace); see docs/storage.md.
"""

from __future__ import annotations

from kubernetes.client.exceptions import ApiException

from dynamo_operator.render.mpisecret import ANN_COPIED_FROM, is_copy, mpi_secret_copy, mpi_secret_source
from dynamo_operator.runtime.client import SECRETS

from .common import Deps
from .sync import owner_reference


class MPISecretSync:
    def __init__(self, deps: Deps, source_cache=None, copies_cache=None):
        self.deps = deps
        self.source_cache = source_cache  # the caches of the one Secret name (``wiring``), when copying is on
        self.copies_cache = copies_cache

    def _get(self, namespace: str, name: str) -> dict | None:
        if self.copies_cache is not None:
            cached = self.copies_cache.get(namespace, name)
            return self.deps.recent.resolve(cached) if cached is not None else None
        return self._read(namespace, name)

    def _read(self, namespace: str, name: str) -> dict | None:
        try:
            return self.deps.client.get(SECRETS, name, namespace)
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def _source(self, namespace: str, name: str) -> dict | None:
        """The original, from its watched cache (a missing one appears there when made: the watch re-queues
        the graphs), so the grant on it is list/watch by name, no get."""
        if self.source_cache is not None:
            return self.source_cache.get(namespace, name)
        return self._read(namespace, name)

    def apply(self, live: dict, internal: dict) -> str | None:
        """Make the copy the graph ``live`` (stored form) needs, or let go of one it no longer needs; the
        reason the copy cannot be made (the original is missing), for the graph's Ready message: its
        multinode pods cannot start, the rest of the graph can."""
        ctx = self.deps.render_context(live["metadata"]["namespace"])
        where = mpi_secret_source(ctx)
        if where is None:
            return None
        shape = mpi_secret_copy(internal, ctx)
        namespace = live["metadata"]["namespace"]
        if shape is None:
            if namespace != where[0]:
                self._release(live, namespace, where[1])
            return None
        source = self._source(*where)
        if source is None:
            return (
                f"the MPI SSH Secret {where[0]}/{where[1]} (mpi.sshSecretNamespace/sshSecretName) does not "
                f"exist, so it cannot be copied into {namespace} for the multinode TensorRT-LLM pods; create "
                "it (the chart's dynamo.mpiRun.sshKeygen hook does) or fix the operator configuration"
            )
        self._ensure(live, mpi_secret_copy(internal, ctx, source) or shape)
        return None

    def _ensure(self, owner: dict, desired: dict) -> None:
        md = desired["metadata"]
        have = self._get(md["namespace"], md["name"])
        ref = owner_reference(owner, controller=False)
        if have is None:
            body = {**desired, "metadata": {**md, "ownerReferences": [ref]}}
            try:
                self.deps.client.create(SECRETS, body, md["namespace"])
            except ApiException as e:
                if e.status != 409:
                    raise
                return  # made meanwhile: the next pass compares it
            self.deps.recorder.normal(
                owner,
                "SuccessfulCreate",
                f"Created Secret {md['namespace']}/{md['name']} (copy of {_src(md)})",
            )
            return
        if not is_copy(have):
            return  # the user's Secret of that name: theirs to keep
        refs = have["metadata"].get("ownerReferences") or []
        same = (have.get("data") or {}) == (desired.get("data") or {})  # (a Secret's type is immutable)
        if same and any(r.get("uid") == ref["uid"] for r in refs):
            return
        body = {**have, "data": desired.get("data") or {}}
        body["metadata"] = {
            **have["metadata"],
            "ownerReferences": [r for r in refs if r.get("uid") != ref["uid"]],
        }
        body["metadata"]["ownerReferences"].append(ref)
        body["metadata"].pop("managedFields", None)
        self.deps.recent.remember(have, self.deps.client.replace(SECRETS, body))
        if not same:
            self.deps.recorder.normal(
                owner, "UpdateSecret", f"Updated Secret {md['namespace']}/{md['name']} from {_src(md)}"
            )

    def _release(self, owner: dict, namespace: str, name: str) -> None:
        have = self._get(namespace, name)
        if have is None or not is_copy(have):
            return
        uid = owner["metadata"]["uid"]
        refs = have["metadata"].get("ownerReferences") or []
        rest = [r for r in refs if r.get("uid") != uid]
        if len(rest) == len(refs):
            return
        md = have["metadata"]
        try:
            if rest:
                body = {**have, "metadata": {**md, "ownerReferences": rest}}
                body["metadata"].pop("managedFields", None)
                self.deps.recent.remember(have, self.deps.client.replace(SECRETS, body))
            else:
                self.deps.client.delete(SECRETS, name, namespace, preconditions={"uid": md.get("uid")})
                self.deps.recorder.normal(owner, "DeleteSecret", f"Deleted Secret {namespace}/{name}")
        except ApiException as e:
            if e.status not in (404, 409):
                raise


def _src(md: dict) -> str:
    return (md.get("annotations") or {}).get(ANN_COPIED_FROM, "?")
