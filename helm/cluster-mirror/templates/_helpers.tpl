{{/*
The authentication choice: the service refuses to start (exit 1) without a mechanism or the explicit opt-out, so the
chart refuses to render instead of producing a pod that crash-loops.
*/}}
{{- define "cluster-mirror.checkAuth" -}}
{{- $a := .Values.auth -}}
{{- if not (or $a.basic.usersSecret $a.jwt.publicKeyLocation $a.mtls.clientCaSecret $a.disabled) -}}
{{- fail "cluster-mirror: choose how the REST control plane authenticates callers: set auth.basic.usersSecret (a Secret with users.properties), auth.jwt.publicKeyLocation and auth.jwt.issuer, or auth.mtls.clientCaSecret with tls.secret; or auth.disabled=true to run it open (see profiles/ and README \"Helm chart\")" -}}
{{- end -}}
{{- if $a.jwt.publicKeyLocation -}}
{{- $_ := required "cluster-mirror: auth.jwt.issuer is required with auth.jwt.publicKeyLocation (mp.jwt.verify.issuer)" $a.jwt.issuer -}}
{{- end -}}
{{- if $a.mtls.clientCaSecret -}}
{{- $_ := required "cluster-mirror: auth.mtls.clientCaSecret needs tls.secret (a kubernetes.io/tls Secret with the server's certificate)" .Values.tls.secret -}}
{{- if not $a.mtls.certRoles -}}
{{- fail "cluster-mirror: auth.mtls.clientCaSecret needs auth.mtls.certRoles (client certificate CN: roles), else no client certificate holds a role" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "cluster-mirror.labels" -}}
app.kubernetes.io/name: cluster-mirror
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Whether the plain HTTP port is served (not when TLS is on and httpsOnly). */}}
{{- define "cluster-mirror.http" -}}
{{- if not (and .Values.tls.secret .Values.tls.httpsOnly) -}}true{{- end -}}
{{- end -}}

{{/* The config files added with quarkus.config.locations. */}}
{{- define "cluster-mirror.configLocations" -}}
{{- $l := list -}}
{{- if .Values.auth.basic.usersSecret -}}
{{- $l = append $l (printf "/etc/cluster-mirror/users/%s" .Values.auth.basic.usersKey) -}}
{{- end -}}
{{- if .Values.tls.secret -}}
{{- $l = append $l "/etc/cluster-mirror/config/tls.properties" -}}
{{- end -}}
{{- join "," $l -}}
{{- end -}}
