{{/*
The credentials the operator passes to the workloads (natsAuth, natsTLS, etcdAuth): the Secret names
written to the OperatorConfiguration, with the bundled subcharts' generated Secrets as defaults.
*/}}

{{/* etcdAuth.method as it acts: "" is namespaceCertificate with the bundled etcd, none is nothing. */}}
{{- define "dynamo-operator.etcdAuthMethod" -}}
{{- $m := .Values.etcdAuth.method | default "" }}
{{- if eq $m "none" }}
{{- else if $m }}{{ $m }}
{{- else if include "dynamo-operator.etcdBundled" . }}namespaceCertificate
{{- end }}
{{- end }}

{{/* natsAuth.method as it acts: "" is namespaceAccount with the bundled NATS, none is nothing. */}}
{{- define "dynamo-operator.natsAuthMethod" -}}
{{- $m := .Values.natsAuth.method | default "" }}
{{- if eq $m "none" }}
{{- else if $m }}{{ $m }}
{{- else if include "dynamo-operator.natsBundled" . }}namespaceAccount
{{- end }}
{{- end }}

{{/* The Secret the operator writes in each graph namespace with namespaceAccount. */}}
{{- define "dynamo-operator.natsClientSecret" -}}
{{- .Values.natsAuth.secretName | default "dynamo-nats-client" }}
{{- end }}

{{/* The Secret the operator writes in each graph namespace with namespaceCertificate. */}}
{{- define "dynamo-operator.etcdClientSecret" -}}
{{- .Values.etcdAuth.secretName | default "dynamo-etcd-client" }}
{{- end }}

{{/* The etcd-proxy sidecar's image: etcdAuth.proxyImage, else the bundled etcd's (imported from the etcd
     chart: Chart.yaml import-values), else refused naming the value. */}}
{{- define "dynamo-operator.etcdProxyImage" -}}
{{- $bundled := dig "etcdImage" dict (.Values.bundled | default dict) }}
{{- if .Values.etcdAuth.proxyImage }}
{{- .Values.etcdAuth.proxyImage }}
{{- else if and (include "dynamo-operator.etcdBundled" .) $bundled.repository $bundled.tag }}
{{- printf "%s:%s" $bundled.repository $bundled.tag }}
{{- else }}
{{- fail "dynamo-operator.etcdAuth.proxyImage is empty: name the etcd image of the etcd-proxy sidecar (an image with etcd grpc-proxy, the same etcd your etcdAddr runs; only the bundled etcd has a default)" }}
{{- end }}
{{- end }}

{{/* The bundled etcd serves https exactly when the workloads authenticate with client certificates. */}}
{{- define "dynamo-operator.bundledEtcdScheme" -}}
{{- if has (include "dynamo-operator.etcdAuthMethod" .) (list "clientCertificate" "namespaceCertificate") }}https{{ else }}http{{ end }}
{{- end }}

{{- define "dynamo-operator.natsBundled" -}}
{{- if and (not .Values.natsAddr) (.Values.bundled | default dict).nats }}true{{ end }}
{{- end }}
{{- define "dynamo-operator.etcdBundled" -}}
{{- if and (not .Values.etcdAddr) (.Values.bundled | default dict).etcd }}true{{ end }}
{{- end }}

{{/* secretName, else the bundled subchart's Secret (<release>-<suffix>), else fail naming the value. */}}
{{- define "dynamo-operator.credentialSecret" -}}
{{- $root := index . 0 }}{{- $value := index . 1 }}{{- $key := index . 2 }}{{- $bundled := index . 3 }}{{- $suffix := index . 4 -}}
{{- if $value.secretName }}
{{- $value.secretName }}
{{- else if $bundled }}
{{- printf "%s-%s" $root.Release.Name $suffix }}
{{- else }}
{{- fail (printf "dynamo-operator.%s.secretName is empty: name the Secret holding the credentials, in every namespace where graphs run (only the bundled NATS/etcd have a default)" $key) }}
{{- end }}
{{- end }}

{{/* Credentials with no address to use them at: refused here, as the operator refuses them at load
     (api/config _credentials_without_address), so the release does not install a crash-looping operator.
     list: root, the credential value, what it is set to, the service (nats, etcd). */}}
{{- define "dynamo-operator.credentialNeedsAddress" -}}
{{- $root := index . 0 }}{{ $key := index . 1 }}{{ $set := index . 2 }}{{ $svc := index . 3 }}
{{- if not (include (printf "dynamo-operator.%sAddress" $svc) $root) }}
{{- fail (printf "dynamo-operator.%s is %s but there is no %s address (dynamo-operator.%sAddr is empty and the bundled %s is not installed): the workloads would get credentials and nowhere to use them; set dynamo-operator.%sAddr, enable the bundled %s (%s.enabled=true), or set dynamo-operator.%s back to its default" $key $set $svc $svc $svc $svc $svc $svc $key) }}
{{- end }}
{{- end }}

{{/* The infrastructure credential sections of the OperatorConfiguration (indented under infrastructure). */}}
{{- define "dynamo-operator.infrastructureCredentials" -}}
{{- $natsMethod := include "dynamo-operator.natsAuthMethod" . }}
{{- if eq $natsMethod "namespaceAccount" }}
{{- if not (include "dynamo-operator.natsBundled" .) }}
{{- fail "dynamo-operator.natsAuth.method=namespaceAccount needs the bundled NATS (the operator keeps its accounts file); with natsAddr use userPassword, token or credentialsFile" }}
{{- end }}
{{- if .Values.natsTLS.enabled }}
{{- fail "dynamo-operator.natsTLS.enabled=true with natsAuth.method namespaceAccount: each namespace's own Secret holds the CA and its certificate; set natsTLS.enabled=false (or choose another natsAuth.method)" }}
{{- end }}
natsAuth:
  method: namespaceAccount
  secretName: {{ include "dynamo-operator.natsClientSecret" . }}
  adminSecretName: {{ printf "%s-nats-admin" .Release.Name }}
  adminSecretNamespace: {{ .Release.Namespace }}
  accountsConfigMap: {{ printf "%s-nats-accounts" .Release.Name }}
  monitorURL: {{ printf "http://%s-nats.%s.svc.%s:8222" .Release.Name .Release.Namespace .Values.kubernetesClusterDomain | quote }}
{{- else if $natsMethod }}
{{- include "dynamo-operator.credentialNeedsAddress" (list . "natsAuth.method" $natsMethod "nats") }}
natsAuth:
  method: {{ $natsMethod }}
  secretName: {{ include "dynamo-operator.credentialSecret" (list . .Values.natsAuth "natsAuth" (include "dynamo-operator.natsBundled" .) "nats-client") }}
{{- end }}
{{- if .Values.natsTLS.enabled }}
{{- include "dynamo-operator.credentialNeedsAddress" (list . "natsTLS.enabled" "true" "nats") }}
natsTLS:
  secretName: {{ include "dynamo-operator.credentialSecret" (list . .Values.natsTLS "natsTLS" (include "dynamo-operator.natsBundled" .) "nats-client-tls") }}
  clientCertificate: {{ .Values.natsTLS.clientCertificate }}
{{- end }}
{{- $etcdMethod := include "dynamo-operator.etcdAuthMethod" . }}
{{- if and (eq $etcdMethod "userPassword") (include "dynamo-operator.etcdBundled" .) }}
{{- fail "dynamo-operator.etcdAuth.method=userPassword: the bundled etcd authenticates clients with certificates; use namespaceCertificate (the default) or clientCertificate, or set etcdAddr to an etcd with user authentication" }}
{{- end }}
{{- if eq $etcdMethod "namespaceCertificate" }}
{{- include "dynamo-operator.credentialNeedsAddress" (list . "etcdAuth.method" $etcdMethod "etcd") }}
etcdAuth:
  method: namespaceCertificate
  secretName: {{ include "dynamo-operator.etcdClientSecret" . }}
  {{- if not (or .Values.etcdAuth.adminSecretName (include "dynamo-operator.etcdBundled" .)) }}
  {{- fail "dynamo-operator.etcdAuth.adminSecretName is empty: with an external etcd and method namespaceCertificate, name the Secret in the release namespace with the etcd CA (ca.crt, ca.key), a client certificate without a Common Name (tls.crt, tls.key) and root's password (password); docs/security-network.md" }}
  {{- end }}
  adminSecretName: {{ .Values.etcdAuth.adminSecretName | default (printf "%s-etcd-admin" .Release.Name) }}
  adminSecretNamespace: {{ .Release.Namespace }}
  proxyImage: {{ include "dynamo-operator.etcdProxyImage" . | quote }}
{{- else if $etcdMethod }}
{{- include "dynamo-operator.credentialNeedsAddress" (list . "etcdAuth.method" $etcdMethod "etcd") }}
etcdAuth:
  method: {{ $etcdMethod }}
  secretName: {{ include "dynamo-operator.credentialSecret" (list . .Values.etcdAuth "etcdAuth" (include "dynamo-operator.etcdBundled" .) "etcd-client-tls") }}
{{- end }}
{{- end }}
