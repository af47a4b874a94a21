"""Helpers shared by the integration test modules (not collected: no ``test_*`` files here).

* ``dgd``: DGD read/write/wait helpers and the in-process ``Operator`` (a Manager with the controllers,
  every write recorded, faults injectable, every reconcile recorded);
* ``processes``: ``dynamo-operator run`` as a subprocess, its readiness wait, plain HTTP GETs;
* ``helm``: the helm and dynamo-hooks command runners and the shared-cluster guards of the hook tests;
* ``crds``: installing the generated CRDs from ``crds/`` and waiting until they are Established.
"""
