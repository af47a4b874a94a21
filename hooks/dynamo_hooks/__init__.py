"""dynamo_hooks: preflight checks and install hooks of the dynamo-platform chart.

One registry of checks (`dynamo_hooks.checks`) serves both the `helm dynamo` plugin and the chart's
pre-install / pre-upgrade hook Jobs (`dynamo-hooks`), so a plain `helm install`, a GitOps render applied later
and the plugin all reach the same verdict. The webhook certificate hook writes its Secret through the
operator's own certificate planner (`dynamo_operator.certsecret`, which the operator's certificate
manager uses too), so the two never disagree.
"""
