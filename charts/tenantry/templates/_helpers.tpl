{{/* Chart name, overridable. */}}
{{- define "tenantry.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release-scoped full name, at most 63 characters. */}}
{{- define "tenantry.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "tenantry.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels on every object of the release. */}}
{{- define "tenantry.labels" -}}
helm.sh/chart: {{ include "tenantry.chart" . }}
app.kubernetes.io/name: {{ include "tenantry.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tenantry
{{- end -}}

{{/* Labels that select the operator's pods; never change them across upgrades. */}}
{{- define "tenantry.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tenantry.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "tenantry.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "tenantry.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "tenantry.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The operator's permissions, shared by the ClusterRole and the namespaced
Roles: exactly the minimum the operator is tested with
(test/fixtures/k8s/operator-rbac.yaml; a chart test keeps them equal). */}}
{{- define "tenantry.rules" -}}
- apiGroups: [tenantry.dev]
  resources: [observabilitystacks, tenants]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [tenantry.dev]
  resources: [observabilitystacks/status, tenants/status]
  verbs: [patch]
- apiGroups: [""]
  resources: [secrets, configmaps, services]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [apps]
  resources: [deployments, statefulsets]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [autoscaling]
  resources: [horizontalpodautoscalers]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [get, list, watch, delete]
- apiGroups: [""]
  resources: [pods]
  verbs: [get]
- apiGroups: [""]
  resources: [events]
  verbs: [create]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, create, update]
{{- end -}}
