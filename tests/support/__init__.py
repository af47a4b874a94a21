"""Helpers shared by every test tier, imported as ``support.<module>`` (``pythonpath = ["tests"]`` in
pyproject.toml puts ``tests/`` on the path; nothing here is collected: no ``test_*`` files).

Pure modules (no cluster, no tools; the unit tier may import them):

* ``poll``: ``wait_for`` and ``stays``, the one way a test waits (a bounded poll on a condition);
* ``graphs``: the one DGD builder (``dgd``, ``component``, the GPU memory service and EPP graphs);
* ``fakewatch``: a scripted watch (the only way to end a watch with a 410 Gone at a chosen point), the
  ConfigMaps and the event recorder the informer tests share;
* ``fakecerts``: the certificate manager's fake client and the objects its tests start from;
* ``admission``: AdmissionReviews and calls into the webhook application;
* ``order``: the session's module order (modules sharing a costly module fixture run together);
* ``fuzz``: Hypothesis strategies for DGDs and DCDs, valid and invalid;
* ``chart``: ``helm template`` of the chart (the ``tools`` tier: helm, no cluster);
* ``examples``: which examples each cluster test applies.

Cluster modules:

* ``operator``: the in-process ``Operator`` (the one builder of a Manager with the controllers: every
  write recorded, faults injectable, every reconcile recorded, an identity to impersonate);
* ``dgd``: DGD read/write/wait helpers;
* ``lifecycle``: what a user does that the operator answers, one function per kind of graph or request
  (the RBAC proof runs them all under the operator's ServiceAccount); ``rbac``: the audit log's reading;
* ``crs``: Events, conditions, ``kubectl describe``, stand-in worker HTTP servers;
* ``processes``: ``dynamo-operator run`` as a subprocess, its readiness wait, plain HTTP GETs;
* ``helm``: the helm and dynamo-hooks command runners and the shared-cluster guards of the hook tests;
* ``release``: a Helm release with its operator as a local process;
* ``crds``: installing the generated CRDs from ``crds/`` and waiting until they are Established; serving
  their conversion from the operator's own webhook server (the session fixture, the restricted RBAC run).
"""
