"""dynamo_hooks: preflight checks and install hooks of the dynamo-platform chart.

One registry of checks (`dynamo_hooks.checks`) serves both the `helm dynamo` plugin and the chart's
pre-install / pre-upgrade hook Jobs (`dynamo-hooks`), so a plain `helm install`, a GitOps render applied later
and the plugin all reach the same verdict. `dynamo_hooks.certs` holds pure certificate functions the
operator reuses.
"""
