"""Helpers shared by every test tier, imported as ``support.<module>`` (``pythonpath = ["tests"]`` in
pyproject.toml puts ``tests/`` on the path; nothing here is collected: no ``test_*`` files).

Pure modules (no cluster, no tools; the unit tier may import them):

* ``fakewatch``: a scripted watch (the only way to end a watch with a 410 Gone at a chosen point);
* ``fuzz``: Hypothesis strategies for DGDs and DCDs, valid and invalid.

Cluster modules:

* ``dgd``: DGD read/write/wait helpers and the in-process ``Operator`` (a Manager with the controllers,
  every write recorded, faults injectable, every reconcile recorded);
* ``crs``: Events, conditions, ``kubectl describe``, stand-in worker HTTP servers;
* ``processes``: ``dynamo-operator run`` as a subprocess, its readiness wait, plain HTTP GETs;
* ``helm``: the helm and dynamo-hooks command runners and the shared-cluster guards of the hook tests;
* ``release``: a Helm release with its operator as a local process;
* ``crds``: installing the generated CRDs from ``crds/`` and waiting until they are Established.
"""
