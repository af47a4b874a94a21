"""Benchmarks of the operator on the local control plane, each figure a ratio or count from one run.

``make bench`` (``python -m bench``) starts a local control plane, measures the *floor* (a minimal client
creating exactly the objects the operator would create, with the same client library and concurrency),
then runs ``dynamo-operator run`` as a process against a second, identical control plane and measures the
burst, idle writes, a restart, admission latency and the process's memory and CPU.  Absolute times on a
shared machine vary; the targets are ratios and counts measured in the same run.
"""
