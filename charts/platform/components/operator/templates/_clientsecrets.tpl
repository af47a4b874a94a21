{{- /*
The operator's per-namespace client-certificate Secrets (controllers/clientcert.py): etcd's
(etcdAuth.method namespaceCertificate, etcd-access-rbac.yaml) and NATS's (natsAuth.method namespaceAccount,
nats-access-rbac.yaml), granted the same way, each in roles of its own:
- get on the service's admin Secret (the CA and its key), by name, in the release namespace (a Role);
- list/watch (its cache, by field selector on the name), update and delete of the client Secret's name
  wherever graphs run, by name, and create, which RBAC cannot restrict by name;
- the bound on that create: a ValidatingAdmissionPolicy lets the operator's ServiceAccount write, of the
  Secrets other than the webhook certificate, the MPI SSH Secrets and the other service's client Secrets
  (each bounded by its own policy), only kubernetes.io/tls Secrets of that name carrying the operator's
  labels (before and after), with the keys ca.crt, tls.crt and tls.key only.
*/}}

{{/* Names of the operator's Secrets other than `svc`'s client Secret whose bounds are elsewhere. */}}
{{- define "dynamo-operator.otherBoundedSecrets" -}}
{{- $root := index . 0 }}{{- $svc := index . 1 }}
{{- $out := list }}
{{- if include "dynamo-operator.mpiSecretCopy" $root }}{{ $out = append $out (list "not-the-mpi-ssh-secret" $root.Values.dynamo.mpiRun.secretName) }}{{ end }}
{{- if and (ne $svc "etcd") (eq (include "dynamo-operator.etcdAuthMethod" $root) "namespaceCertificate") }}{{ $out = append $out (list "not-the-etcd-client-secret" (include "dynamo-operator.etcdClientSecret" $root)) }}{{ end }}
{{- if and (ne $svc "nats") (eq (include "dynamo-operator.natsAuthMethod" $root) "namespaceAccount") }}{{ $out = append $out (list "not-the-nats-client-secret" (include "dynamo-operator.natsClientSecret" $root)) }}{{ end }}
{{- toJson $out }}
{{- end }}

{{/* dict: root, svc (etcd|nats), what (etcd|NATS), secret, label, admin, valuesKey, code (the controller) */}}
{{- define "dynamo-operator.clientSecretAccess" -}}
{{- $root := .root }}
{{- if not (semverCompare ">=1.30-0" $root.Capabilities.KubeVersion.Version) }}
{{- fail (printf "dynamo-operator.%s.method=%s needs Kubernetes 1.30+ (a ValidatingAdmissionPolicy bounds the operator's create on Secrets); this cluster is %s. %s docs/security-network.md." .valuesKey .method $root.Capabilities.KubeVersion.Version .optOut) }}
{{- end }}
{{- $restricted := $root.Values.namespaceRestriction.enabled }}
{{- $name := ternary (printf "%s-%s-access" (include "dynamo-operator.fullname" $root) .svc) (printf "%s-%s-access" (include "dynamo-operator.clusterName" $root) .svc) $restricted }}
{{- $policy := printf "%s-%s-access" (include "dynamo-operator.clusterName" $root) .svc }}
{{- $kind := ternary "Role" "ClusterRole" $restricted }}
{{- $secret := .secret }}
{{- $user := printf "system:serviceaccount:%s:%s" $root.Release.Namespace (include "dynamo-operator.serviceAccountName" $root) }}
apiVersion: rbac.authorization.k8s.io/v1
kind: {{ $kind }}
metadata:
  name: {{ $name }}
  {{- if $restricted }}
  namespace: {{ include "dynamo-operator.targetNamespace" $root }}
  {{- end }}
  labels:
    {{- include "dynamo-operator.labels" $root | nindent 4 }}
rules:
  # controllers/clientcert.py ClientSecrets._write: a graph namespace's certificate (bounded by the policy below)
  - apiGroups: [""]
    resources: ["secrets"]
    verbs: ["create"]
  # controllers/wiring.py {{ .svc }}_clients (their cache), clientcert.py _write (owners added, renewed) and
  # release (the last graph lets go)
  - apiGroups: [""]
    resources: ["secrets"]
    resourceNames: [{{ $secret | quote }}]
    verbs: ["list", "watch", "update", "delete"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: {{ $kind }}Binding
metadata:
  name: {{ $name }}
  {{- if $restricted }}
  namespace: {{ include "dynamo-operator.targetNamespace" $root }}
  {{- end }}
  labels:
    {{- include "dynamo-operator.labels" $root | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: {{ $kind }}
  name: {{ $name }}
subjects:
  - kind: ServiceAccount
    name: {{ include "dynamo-operator.serviceAccountName" $root }}
    namespace: {{ $root.Release.Namespace }}
---
# {{ .code }}: {{ .adminWhat }}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "dynamo-operator.fullname" $root }}-{{ .svc }}-admin
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "dynamo-operator.labels" $root | nindent 4 }}
rules:
  - apiGroups: [""]
    resources: ["secrets"]
    resourceNames: [{{ .admin | quote }}]
    verbs: ["get"]
  {{- with .extraRules }}
  {{- . | nindent 2 }}
  {{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "dynamo-operator.fullname" $root }}-{{ .svc }}-admin
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "dynamo-operator.labels" $root | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "dynamo-operator.fullname" $root }}-{{ .svc }}-admin
subjects:
  - kind: ServiceAccount
    name: {{ include "dynamo-operator.serviceAccountName" $root }}
    namespace: {{ $root.Release.Namespace }}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: {{ $policy }}
  labels:
    {{- include "dynamo-operator.labels" $root | nindent 4 }}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE", "DELETE"]
        resources: ["secrets"]
  # every Secret write of the operator but the other Secrets it keeps, whose bounds are elsewhere: with
  # this create granted, a Secret of any other name (a token Secret) is refused here, also where the MPI
  # SSH Secrets' policy is not rendered (an operator restricted to the release namespace)
  matchConditions:
    - name: the-operator
      expression: request.userInfo.username == {{ $user | quote }}
    {{- range (include "dynamo-operator.otherBoundedSecrets" (list $root .svc) | fromJsonArray) }}
    - name: {{ index . 0 }}
      expression: request.name != {{ index . 1 | quote }}
    {{- end }}
    {{- if eq $root.Values.webhook.certificateMode "auto" }}
    - name: not-the-webhook-certificate
      expression: '!(request.namespace == {{ $root.Release.Namespace | quote }} && request.name == {{ $root.Values.webhook.certificateSecret.name | quote }})'
    {{- end }}
  variables:
    - name: secret
      expression: 'request.operation == "DELETE" ? oldObject : object'
    - name: ours
      expression: '{"app.kubernetes.io/managed-by": "dynamo-operator", {{ .label | quote }}: "true"}'
  validations:
    - expression: 'variables.secret.metadata.name == {{ $secret | quote }}'
      reason: Forbidden
      messageExpression: '"the Dynamo operator may write only the {{ .what }} client Secret " + {{ $secret | quote }} + ", not Secret " + request.namespace + "/" + variables.secret.metadata.name + " (ValidatingAdmissionPolicy " + {{ $policy | quote }} + ", dynamo-operator.{{ .valuesKey }})"'
    - expression: 'variables.ours.all(k, has(variables.secret.metadata.labels) && k in variables.secret.metadata.labels && variables.secret.metadata.labels[k] == variables.ours[k])'
      reason: Forbidden
      messageExpression: '"Secret " + request.namespace + "/" + variables.secret.metadata.name + " is not an {{ .what }} client Secret the Dynamo operator made (labels app.kubernetes.io/managed-by=dynamo-operator and {{ .label }}=true): the operator may not write it (ValidatingAdmissionPolicy " + {{ $policy | quote }} + ")"'
    - expression: 'request.operation != "UPDATE" || variables.ours.all(k, has(oldObject.metadata.labels) && k in oldObject.metadata.labels && oldObject.metadata.labels[k] == variables.ours[k])'
      reason: Forbidden
      messageExpression: '"Secret " + request.namespace + "/" + oldObject.metadata.name + " is not an {{ .what }} client Secret the Dynamo operator made: the operator may not take it over"'
    - expression: 'request.operation == "DELETE" || object.type == "kubernetes.io/tls"'
      reason: Forbidden
      message: the Dynamo operator's {{ .what }} client Secrets are of type kubernetes.io/tls only
    - expression: 'request.operation == "DELETE" || !has(object.data) || object.data.all(k, k in ["ca.crt", "tls.crt", "tls.key"])'
      reason: Forbidden
      message: the Dynamo operator's {{ .what }} client Secrets hold only ca.crt, tls.crt and tls.key
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: {{ $policy }}
  labels:
    {{- include "dynamo-operator.labels" $root | nindent 4 }}
spec:
  policyName: {{ $policy }}
  validationActions: [Deny]
{{- end }}
