"""Create, update, adopt and delete children so they match what ``render`` produced.

**When is a child written?** Only when one of these holds (zero writes for a converged child, also right
after an operator restart, because every check reads state the apiserver keeps):

1. it does not exist;
2. it lacks our owner reference (controller reference for owned children; a plain owner reference for the
   shared ``planner-serviceaccount`` / ``epp-serviceaccount`` and their RoleBindings). A shared object the
   operator did not create (not labelled ``managed-by: dynamo-operator``, or Helm's: the restricted chart
   creates those two ServiceAccounts itself) is used as it is: no owner reference is added, so neither the
   operator nor Kubernetes' garbage collector deletes it when its last user goes (``is_foreign``);
3. its ``nvidia.com/dynamo-spec-hash`` annotation differs from the desired one: the desired content changed
   (or the annotation was edited away);
4. **drift**: what we set is no longer there: desired ⊆ live fails for the content (``spec``; ConfigMap
   ``data`` compared exactly), our labels or our annotations (``diff.first_difference``, which tolerates
   apiserver defaults, dropped empty values and quantity canonicalisation);
5. **generation moved**: for kinds with ``metadata.generation`` (Deployment, DCD) a generation newer than
   the one our own last write produced (or, after a restart, the one first seen converged) means somebody
   else changed the spec, e.g. *added* a field that check 4 cannot see; the desired content is written back
   whole.

A write replaces the content (``spec``, or the kind's top-level content fields) with the desired one,
merges labels and annotations (other writers' keys, like ``deployment.kubernetes.io/revision``, survive)
and keeps ``resourceVersion`` for optimistic concurrency: a concurrent change yields 409, which the
reconcilers turn into a quick requeue without an error event.

**Stale cache.** Right after a write the informer may still hold the previous version; ``RecentWrites``
remembers (resourceVersion before the write → the write's response) so the next reconcile uses the response
instead of tripping over the stale copy (and a 409). A child just created is remembered the same way until
the informer shows it: a second pass right after the first (its Deployment's first event) would otherwise
find no child in the cache and create it again, a refused write (409) the floor never makes.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from kubernetes.client.exceptions import ApiException

from dynamo_operator.api.jsontree import copy_tree
from dynamo_operator.render import discovery, names
from dynamo_operator.runtime.atomic import AtomicCounter
from dynamo_operator.runtime.client import (
    CONFIGMAPS,
    DEPLOYMENTS,
    ROLEBINDINGS,
    SERVICEACCOUNTS,
    SERVICES,
    ResourceClient,
    ResourceDescriptor,
    custom,
)
from dynamo_operator.runtime.events import EventRecorder
from dynamo_operator.runtime.informer import PACKED, Indexer, unpack
from dynamo_operator.runtime.log import get_logger

from . import store
from .diff import first_difference

LWS = custom("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet")
PODCLIQUESETS = custom("grove.io", "v1alpha1", "podcliquesets", "PodCliqueSet")
PODCLIQUES = custom("grove.io", "v1alpha1", "podcliques", "PodClique")
PODCLIQUESCALINGGROUPS = custom("grove.io", "v1alpha1", "podcliquescalinggroups", "PodCliqueScalingGroup")
NETWORKPOLICIES = custom("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy")
INGRESSES = custom("networking.k8s.io", "v1", "ingresses", "Ingress")
VIRTUALSERVICES = custom("networking.istio.io", "v1beta1", "virtualservices", "VirtualService")
# GPU memory service: the component's ResourceClaimTemplate, and the DeviceClasses it names (read only)
RESOURCECLAIMTEMPLATES = custom("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate")
DEVICECLASSES = custom("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", namespaced=False)
# EPP: the graph's InferencePool and (Istio mesh) DestinationRule
INFERENCEPOOLS = custom("inference.networking.k8s.io", "v1", "inferencepools", "InferencePool")
DESTINATIONRULES = custom("networking.istio.io", "v1beta1", "destinationrules", "DestinationRule")

SHARED_NAMES = frozenset({names.PLANNER_SERVICE_ACCOUNT, names.EPP_SERVICE_ACCOUNT})
HELM_RELEASE_ANNOTATION = "meta.helm.sh/release-name"  # Helm stamps it on every object of a release

_SERVICE_ALLOCATED = ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "healthCheckNodePort")


@dataclass(frozen=True)
class ChildType:
    """How to compare and write one kind of child."""

    res: ResourceDescriptor
    content: tuple[str, ...] = ("spec",)  # top-level fields the operator owns
    exact: bool = False  # compare content both ways (kinds the apiserver does not default)
    immutable: bool = False  # the content cannot be updated: a changed child is deleted and re-created
    # the internal form of a live child: the whole object, unpacked from a lean cache entry
    to_internal: Callable[[dict], dict] = unpack
    to_wire: Callable[[dict], dict] = lambda obj: obj


CHILD_TYPES: dict[tuple[str, str], ChildType] = {
    ("", "ServiceAccount"): ChildType(SERVICEACCOUNTS, content=()),
    ("", "ConfigMap"): ChildType(CONFIGMAPS, content=("data", "binaryData"), exact=True),
    ("", "Service"): ChildType(SERVICES),
    ("apps", "Deployment"): ChildType(DEPLOYMENTS),
    ("rbac.authorization.k8s.io", "RoleBinding"): ChildType(ROLEBINDINGS, content=("roleRef", "subjects")),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): ChildType(LWS),
    ("grove.io", "PodCliqueSet"): ChildType(PODCLIQUESETS),
    ("networking.k8s.io", "NetworkPolicy"): ChildType(NETWORKPOLICIES),
    ("networking.k8s.io", "Ingress"): ChildType(INGRESSES),
    ("networking.istio.io", "VirtualService"): ChildType(VIRTUALSERVICES),
    # the apiserver refuses any change of a ResourceClaimTemplate's spec
    ("resource.k8s.io", "ResourceClaimTemplate"): ChildType(RESOURCECLAIMTEMPLATES, immutable=True),
    ("inference.networking.k8s.io", "InferencePool"): ChildType(INFERENCEPOOLS),
    ("networking.istio.io", "DestinationRule"): ChildType(DESTINATIONRULES),
    (names.GROUP, names.DCD_KIND): ChildType(store.DCD, to_internal=store.to_internal, to_wire=store.to_wire),
}


def child_type(obj: dict) -> ChildType:
    api_version = obj.get("apiVersion", "")
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    ct = CHILD_TYPES.get((group, obj.get("kind", "")))
    if ct is None:
        raise ValueError(f"no child type for {api_version} {obj.get('kind')}")
    return ct


def is_shared(obj: dict) -> bool:
    """Children several components use (one per namespace): plain owner references from each user."""
    if obj.get("kind") in ("ServiceAccount", "RoleBinding") and obj["metadata"]["name"] in SHARED_NAMES:
        return True
    return obj.get("kind") in ("ServiceAccount", "RoleBinding") and discovery.is_discovery_rbac(obj)


def is_foreign(obj: dict) -> bool:
    """A live object the operator did not create: not labelled ``managed-by: dynamo-operator``, or Helm's
    (its ``meta.helm.sh/release-name`` annotation; an operator before this rule relabelled the chart's
    ServiceAccounts it took over). The operator uses such a shared object, never owns it."""
    md = obj.get("metadata") or {}
    if (md.get("labels") or {}).get(names.LABEL_MANAGED_BY) != names.MANAGED_BY:
        return True
    return HELM_RELEASE_ANNOTATION in (md.get("annotations") or {})


class Conflict(Exception):
    """409 on a write: the object changed under us; requeue quickly, no error event."""


class OwnershipConflict(Exception):
    """The child exists and another object is its controller."""

    def __init__(self, child: dict, owner_ref: dict):
        md = child.get("metadata") or {}
        self.child = child
        self.owner_ref = owner_ref
        super().__init__(
            f"{child.get('kind')} {md.get('namespace')}/{md.get('name')} is controlled by "
            f"{owner_ref.get('kind')} {owner_ref.get('name')} (uid {owner_ref.get('uid')})"
        )

    def previous_incarnation_of(self, owner: dict) -> bool:
        """The controller is a deleted object of the owner's kind and name (deleted and re-created: the
        garbage collector has not removed the old children yet)."""
        return (
            self.owner_ref.get("kind") == owner.get("kind")
            and self.owner_ref.get("name") == owner["metadata"]["name"]
        )


def owner_reference(owner: dict, controller: bool = True) -> dict:
    md = owner["metadata"]
    ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": md["name"], "uid": md["uid"]}
    if controller:
        ref["controller"] = True
        ref["blockOwnerDeletion"] = True
    return ref


def controller_ref(obj: dict) -> dict | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def _key(obj: dict) -> tuple[str, str, str]:
    md = obj.get("metadata") or {}
    return (obj.get("kind", ""), md.get("namespace") or "", md.get("name") or "")


def _rv(obj: dict | None) -> str:
    return ((obj or {}).get("metadata") or {}).get("resourceVersion", "")


class RecentWrites:
    """(kind, namespace, name) → (resourceVersion before our write, the write's response)."""

    def __init__(self, size: int = 4096):
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self.size = size

    def remember(self, before: dict | None, after: dict) -> None:
        if before is None or not _rv(before):
            return
        with self._lock:
            self._items[_key(after)] = (_rv(before), after)
            self._items.move_to_end(_key(after))
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def remember_created(self, after: dict) -> None:
        """``after`` was just created: it exists before the informer shows it (``created``)."""
        with self._lock:
            self._items[_key(after)] = ("", after)
            self._items.move_to_end(_key(after))
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def created(self, kind: str, namespace: str, name: str) -> dict | None:
        """An object this process created that the cache does not show yet."""
        with self._lock:
            entry = self._items.get((kind, namespace or "", name))
        return entry[1] if entry is not None and entry[0] == "" else None

    def resolve(self, cached: dict | None) -> dict | None:
        """The freshest known version of a cached object."""
        if cached is None:
            return None
        k = _key(cached)
        with self._lock:
            entry = self._items.get(k)
            if entry is None:
                return cached
            before, after = entry
            if _rv(cached) == before:
                return after
            del self._items[k]  # the cache caught up (or moved on)
            return cached

    def forget(self, obj: dict) -> None:
        with self._lock:
            self._items.pop(_key(obj), None)

    def observe(self, obj: dict) -> None:
        """The cache now holds ``obj``: its entry is obsolete once the cache moved past the version the write
        replaced. Dropping it here, not at the next ``resolve``, keeps the map to the writes in flight; it
        used to hold thousands of whole objects after a burst until evicted by size."""
        k = _key(obj)
        with self._lock:
            entry = self._items.get(k)
            if entry is not None and _rv(obj) != entry[0]:
                del self._items[k]


REASON_CREATED = "SuccessfulCreate"


@dataclass
class SyncResult:
    action: str  # "created" | "updated" | "unchanged"
    obj: dict  # the live object after the sync (wire form)
    reason: str = ""


@dataclass
class ChildSyncer:
    """Writes children for one controller; ``stores`` are the informer caches of the child kinds."""

    client: ResourceClient
    recorder: EventRecorder
    stores: dict[ResourceDescriptor, Indexer] = field(default_factory=dict)
    recent: RecentWrites = field(default_factory=RecentWrites)

    def __post_init__(self) -> None:
        self._generations: dict[str, int] = {}
        self._glock = threading.Lock()
        self.log = get_logger("sync")
        self._writes = AtomicCounter()  # child writes sent (a syncer serves every worker)

    @property
    def writes(self) -> int:
        return self._writes.value

    # -- reading --------------------------------------------------------------------------------------------
    def live(self, ct: ChildType, namespace: str, name: str) -> dict | None:
        st = self.stores.get(ct.res)
        if st is not None:
            cached = st.get(namespace, name)
            if cached is None:
                return self.recent.created(ct.res.kind, namespace, name)
            return self.recent.resolve(cached)  # a lean entry: its readers unpack (``ChildType``)
        return self.get(ct, namespace, name)

    def get(self, ct: ChildType, namespace: str, name: str) -> dict | None:
        try:
            obj = self.client.get(ct.res, name, namespace)
        except ApiException as e:
            if e.status == 404:
                return None
            raise
        obj.setdefault("apiVersion", ct.res.api_version)
        obj.setdefault("kind", ct.res.kind)
        return obj

    def owned(self, owner_uid: str) -> list[tuple[ChildType, dict]]:
        """Cached children (any kind with a store) that carry an owner reference to ``owner_uid``."""
        out = []
        for ct in CHILD_TYPES.values():
            st = self.stores.get(ct.res)
            if st is None:
                continue
            for obj in st.by_index("owner", owner_uid):
                out.append((ct, self.recent.resolve(obj) or obj))
        return out

    # -- decisions ------------------------------------------------------------------------------------------
    def why_update(self, ct: ChildType, desired: dict, live: dict, owner: dict, shared: bool) -> str | None:
        """Why ``live`` must be rewritten to match ``desired`` (None: converged)."""
        md = live.get("metadata") or {}
        uid = owner["metadata"]["uid"]
        refs = md.get("ownerReferences") or []
        if shared:
            if not any(r.get("uid") == uid for r in refs):
                return "owner reference missing"
        else:
            ctrl = controller_ref(live)
            if ctrl is not None and ctrl.get("uid") != uid:
                raise OwnershipConflict(live, ctrl)
            if ctrl is None:
                return "adopting: no controller owner reference"
        have = ct.to_internal(live)  # whole (a lean cache entry keeps metadata without annotations)
        hmd = have.get("metadata") or {}
        want_hash = desired["metadata"]["annotations"][names.ANN_SPEC_HASH]
        have_hash = (hmd.get("annotations") or {}).get(names.ANN_SPEC_HASH)
        if have_hash != want_hash:
            return "desired content changed" if have_hash else "spec hash annotation missing"
        d = first_difference(desired["metadata"].get("labels") or {}, hmd.get("labels") or {}, "labels")
        d = d or first_difference(
            desired["metadata"].get("annotations") or {}, hmd.get("annotations") or {}, "annotations"
        )
        for k in ct.content:
            if d:
                break
            d = first_difference(desired.get(k), have.get(k), k, quantity=False)
            if not d and ct.exact:
                d = first_difference(have.get(k), desired.get(k), k)
                d = d and f"{k}: has fields the operator does not set ({d})"
        if d:
            return f"drift: {d}"
        gen = md.get("generation")
        luid = md.get("uid")
        if gen is not None and luid:
            with self._glock:
                seen = self._generations.get(luid)
                if seen is None or gen < seen:  # first sight (e.g. after a restart) or a stale cache
                    if seen is None:
                        self._generations[luid] = int(gen)
                    return None
                if gen > seen:
                    return f"drift: metadata.generation {seen} -> {gen} (spec changed outside the operator)"
        return None

    def _note_generation(self, obj: dict) -> None:
        md = obj.get("metadata") or {}
        if md.get("generation") is not None and md.get("uid"):
            with self._glock:
                self._generations[md["uid"]] = int(md["generation"])

    # -- writing --------------------------------------------------------------------------------------------
    def announce_created(self, owner: dict, created: list[dict]) -> None:
        """One ``SuccessfulCreate`` Event on ``owner`` naming every child it created in one pass (as the
        ReplicaSet controller says "Created pod: x"): an Event is a write, and one per child was half of the
        operator's writes in a burst of new graphs."""
        if created:
            listed = ", ".join(f"{o.get('kind')} {_name(o)}" for o in created)
            self.recorder.normal(owner, REASON_CREATED, f"Created {listed}")

    def sync(self, owner: dict, desired: dict, shared: bool | None = None) -> SyncResult:
        """Make the child ``desired`` (internal form, hash-stamped) exist as rendered, owned by ``owner``
        (wire form). No Event for a creation: ``apply`` announces a pass's creations together."""
        ct = child_type(desired)
        shared = is_shared(desired) if shared is None else shared
        md = desired["metadata"]
        live = self.live(ct, md["namespace"], md["name"])
        if live is None:
            try:
                return self._create(ct, owner, desired, shared)
            except ApiException as e:
                if e.status != 409:
                    raise
                live = self.get(ct, md["namespace"], md["name"])  # created meanwhile / not in our cache
                if live is None:
                    raise Conflict(str(e)) from e
        if shared and is_foreign(_whole(live)):  # the lean cache entry keeps no labels
            return self._use_foreign(ct, owner, live)
        reason = self.why_update(ct, desired, live, owner, shared)
        if reason is None:
            return SyncResult("unchanged", live)
        return self._update(ct, owner, desired, live, shared, reason)

    def _use_foreign(self, ct: ChildType, owner: dict, live: dict) -> SyncResult:
        """A shared object someone else made (the restricted chart's ServiceAccounts): used as it is. The
        one write is dropping an owner reference an earlier operator added (what the garbage collector
        would delete it by once the graph goes); nothing else of it is changed."""
        uid = owner["metadata"]["uid"]
        if not any(r.get("uid") == uid for r in (live.get("metadata") or {}).get("ownerReferences") or []):
            return SyncResult("unchanged", live)
        return self._drop_reference(ct, owner, live, "not the operator's: owner reference removed")

    def _write(self, fn: Callable[[], dict], obj: dict | None = None) -> dict:
        """``obj``: the live object written (an update, a deletion); gone (404), it is forgotten, so a
        remembered creation the cache never showed is not taken for a live object again."""
        try:
            out = fn()
        except ApiException as e:
            if e.status == 404 and obj is not None:
                self.recent.forget(obj)
            if e.status == 409 and api_reason(e) != "AlreadyExists":
                raise Conflict(str(e.reason)) from e
            raise
        self._writes.add()
        return out

    def _create(self, ct: ChildType, owner: dict, desired: dict, shared: bool) -> SyncResult:
        body = ct.to_wire(copy_tree(desired))
        body["metadata"]["ownerReferences"] = [owner_reference(owner, controller=not shared)]
        out = self._write(lambda: self.client.create(ct.res, body, body["metadata"]["namespace"]))
        out.setdefault("apiVersion", ct.res.api_version)
        out.setdefault("kind", ct.res.kind)
        if ct.res in self.stores:
            self.recent.remember_created(out)
        self._note_generation(out)
        return SyncResult("created", out, "missing")

    def _update(
        self, ct: ChildType, owner: dict, desired: dict, live: dict, shared: bool, reason: str
    ) -> SyncResult:
        want = ct.to_wire(copy_tree(desired))
        live = _whole(live)
        body = copy_tree(live)
        md = body.setdefault("metadata", {})
        md.pop("managedFields", None)
        md["labels"] = {**(md.get("labels") or {}), **(want["metadata"].get("labels") or {})}
        kept = {
            k: v for k, v in (md.get("annotations") or {}).items() if not store.is_conversion_annotation(k)
        }
        md["annotations"] = {**kept, **(want["metadata"].get("annotations") or {})}
        refs = [r for r in md.get("ownerReferences") or [] if r.get("uid") != owner["metadata"]["uid"]]
        refs.append(owner_reference(owner, controller=not shared))
        md["ownerReferences"] = refs
        for k in ct.content:
            if k in want:
                body[k] = want[k]
            else:
                body.pop(k, None)
        if ct.res == SERVICES:
            spec, old = body.get("spec") or {}, live.get("spec") or {}
            for k in _SERVICE_ALLOCATED:
                if k not in spec and k in old:
                    spec[k] = old[k]
        if ct.res == ROLEBINDINGS and (live.get("roleRef") or {}) != (want.get("roleRef") or {}):
            # roleRef is immutable: replace the binding
            self._delete(ct, live)
            return self._create(ct, owner, desired, shared)
        if ct.immutable and any(first_difference(want.get(k), live.get(k), k) for k in ct.content):
            self._delete(ct, live)
            message = f"Replaced {ct.res.kind} {_name(live)}: {reason}"
            self.recorder.normal(owner, f"Update{ct.res.kind}", message)
            return self._create(ct, owner, desired, shared)
        out = self._write(lambda: self.client.replace(ct.res, body), live)
        out.setdefault("apiVersion", ct.res.api_version)
        out.setdefault("kind", ct.res.kind)
        self.recent.remember(live, out)
        self._note_generation(out)
        self.log.info("updated child", kind=ct.res.kind, name=_name(out), reason=reason)
        self.recorder.normal(owner, f"Update{ct.res.kind}", f"Updated {ct.res.kind} {_name(out)}: {reason}")
        return SyncResult("updated", out, reason)

    def _delete(self, ct: ChildType, obj: dict) -> bool:
        md = obj["metadata"]
        try:
            self._write(
                lambda: self.client.delete(
                    ct.res, md["name"], md.get("namespace"), preconditions={"uid": md.get("uid")}
                ),
                obj,
            )
        except ApiException as e:
            if e.status in (404, 409):  # gone, or replaced by a new object with the same name
                return False
            raise
        self.recent.forget(obj)
        with self._glock:
            self._generations.pop(md.get("uid"), None)
        return True

    def delete(self, owner: dict, ct: ChildType, obj: dict) -> None:
        """Delete a child the owner controls and no longer renders."""
        if self._delete(ct, obj):
            self.recorder.normal(owner, f"Delete{ct.res.kind}", f"Deleted {ct.res.kind} {_name(obj)}")

    def release(self, owner: dict, ct: ChildType, obj: dict) -> None:
        """Drop ``owner``'s plain owner reference from a shared child it no longer renders; delete the child
        when nobody else references it, unless its graph takes it over (``heir``)."""
        obj = _whole(obj)
        uid = owner["metadata"]["uid"]
        refs = obj["metadata"].get("ownerReferences") or []
        rest = [r for r in refs if r.get("uid") != uid]
        if len(rest) == len(refs):
            return
        if is_foreign(obj):  # someone else's (the chart's): never deleted, whoever still references it
            self._drop_reference(ct, owner, obj, "released; not the operator's, so kept")
            return
        if not rest and (heir := _heir(owner, obj)) is not None:
            rest = [heir]
        if not rest:
            self.delete(owner, ct, obj)
            return
        self._drop_reference(ct, owner, obj, "released", rest)

    def _drop_reference(
        self, ct: ChildType, owner: dict, obj: dict, why: str, refs: list[dict] | None = None
    ) -> SyncResult:
        """Replace ``obj`` with ``owner``'s owner reference removed (``refs``: the references to keep);
        labels, annotations and content stay as they are."""
        obj = _whole(obj)
        uid = owner["metadata"]["uid"]
        body = copy_tree(obj)
        body["metadata"].pop("managedFields", None)
        if refs is None:
            refs = [r for r in body["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
        body["metadata"]["ownerReferences"] = refs
        out = self._write(lambda: self.client.replace(ct.res, body), obj)
        out.setdefault("apiVersion", ct.res.api_version)
        out.setdefault("kind", ct.res.kind)
        self.recent.remember(obj, out)
        message = f"Shared {ct.res.kind} {_name(obj)}: {why}"
        self.recorder.normal(owner, f"Update{ct.res.kind}", message)
        return SyncResult("updated", out, why)

    def apply(self, owner: dict, desired: list[dict], announce: bool = True) -> list[SyncResult]:
        """Make ``owner``'s children exactly ``desired``: create or update each (results in the same order),
        then prune the cached children that are no longer desired. ``announce``: one ``SuccessfulCreate``
        Event for what this pass created (updates and deletions always get theirs)."""
        results: list[SyncResult] = []
        try:
            for child in desired:
                results.append(self.sync(owner, child))
        finally:  # what was created before a failure is announced too
            if announce:
                self.announce_created(owner, [r.obj for r in results if r.action == "created"])
        self.prune(owner, {child_key(child) for child in desired})
        return results

    def prune(self, owner: dict, keep: set[tuple[str, str, str]]) -> int:
        """Delete (or release) every cached child of ``owner`` whose (kind, namespace, name) is not in
        ``keep``. Returns how many were removed or released."""
        uid = owner["metadata"]["uid"]
        n = 0
        for ct, obj in self.owned(uid):
            if _key(obj) in keep or obj["metadata"].get("deletionTimestamp"):
                continue
            ctrl = controller_ref(obj)
            if ctrl is not None and ctrl.get("uid") == uid:
                self.delete(owner, ct, obj)
                n += 1
            elif ctrl is None:
                self.release(owner, ct, obj)
                n += 1
        return n


def _whole(obj: dict) -> dict:
    """A live child whole (a lean cache entry unpacked), what a write starts from."""
    return unpack(obj) if PACKED in obj else obj


def _heir(owner: dict, obj: dict) -> dict | None:
    """Who takes over a shared child its last component releases: the component's graph, for the graph's
    discovery account (components rendered it before the graph did; deleting it and letting the graph
    create it again would invalidate the tokens of every pod running as it)."""
    ctrl = controller_ref(owner)
    if ctrl is None or not discovery.is_discovery_rbac(obj):
        return None
    if not store.DGD.matches(ctrl.get("apiVersion", ""), ctrl.get("kind", "")):
        return None
    return {k: ctrl[k] for k in ("apiVersion", "kind", "name", "uid") if k in ctrl}


def api_reason(e: ApiException) -> str:
    """The ``reason`` of a Status body (``AlreadyExists``, ``Conflict``...), or ""."""
    body = e.body
    if isinstance(body, bytes):
        body = body.decode(errors="replace")
    if isinstance(body, str) and body.startswith("{"):
        try:
            return str(json.loads(body).get("reason") or "")
        except ValueError:
            return ""
    return ""


def _name(obj: dict) -> str:
    md = obj.get("metadata") or {}
    return f"{md.get('namespace')}/{md.get('name')}" if md.get("namespace") else str(md.get("name"))


def child_key(obj: dict) -> tuple[str, str, str]:
    return _key(obj)
