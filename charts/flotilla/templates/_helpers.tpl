{{/* Names, labels and the small pieces every workload shares. */}}

{{- define "flotilla.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name; every object's name starts with it. */}}
{{- define "flotilla.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "flotilla.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels of one component: (dict "root" $ "component" "api"). */}}
{{- define "flotilla.selectorLabels" -}}
app.kubernetes.io/name: {{ include "flotilla.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* All labels of one component's objects: (dict "root" $ "component" "api"). */}}
{{- define "flotilla.labels" -}}
helm.sh/chart: {{ include "flotilla.chart" .root }}
{{ include "flotilla.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: flotilla
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* An image reference: repository:tag, and @digest when one is given. */}}
{{- define "flotilla.imageRef" -}}
{{- $tag := toString .tag }}
{{- printf "%s:%s" .repository $tag }}
{{- with .digest }}@{{ . }}{{ end }}
{{- end }}

{{/* The server image (api, master, migrate). A numeric tag (--set image.tag=123) is kept as written. */}}
{{- define "flotilla.image" -}}
{{- $tag := .Values.image.tag | toString | default .Chart.AppVersion }}
{{- include "flotilla.imageRef" (dict "repository" .Values.image.repository "tag" $tag "digest" .Values.image.digest) }}
{{- end }}

{{/* The worker image: worker.image, else the server image's repository with "-worker". */}}
{{- define "flotilla.workerImage" -}}
{{- $w := .Values.worker.image }}
{{- $repository := $w.repository | default (printf "%s-worker" .Values.image.repository) }}
{{- $tag := $w.tag | toString | default (.Values.image.tag | toString) | default .Chart.AppVersion }}
{{- include "flotilla.imageRef" (dict "repository" $repository "tag" $tag "digest" $w.digest) }}
{{- end }}

{{/* A pod template's labels: the selector, commonLabels and the component's podLabels: (dict "root" $ "component" "api"). */}}
{{- define "flotilla.podLabels" -}}
{{ include "flotilla.selectorLabels" . }}
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- with (index .root.Values .component | default dict).podLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Where a component's pods may run: nodeSelector, tolerations, affinity, priorityClassName
and topologySpreadConstraints (by default, spread over nodes when the scheduler can).
(dict "root" $ "component" "api")
*/}}
{{- define "flotilla.podPlacement" -}}
{{- $v := index .root.Values .component }}
{{- with $v.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- if $v.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml $v.topologySpreadConstraints | nindent 2 }}
{{- else }}
{{ include "flotilla.spread" . }}
{{- end }}
{{- with $v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* A component's own environment (extraEnv) after the shared one: (dict "root" $ "component" "api"). */}}
{{- define "flotilla.componentEnv" -}}
{{- include "flotilla.commonEnv" .root }}
{{- with (index .root.Values .component).extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "flotilla.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "flotilla.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The URL users reach Flotilla at: publicUrl, else the ingress host. Empty when neither is
known (the api then falls back to its own default).
*/}}
{{- define "flotilla.publicUrl" -}}
{{- if .Values.publicUrl }}
{{- .Values.publicUrl }}
{{- else if and .Values.ingress.enabled .Values.ingress.host }}
{{- printf "%s://%s/" (ternary "https" "http" .Values.ingress.tls.enabled) .Values.ingress.host }}
{{- end }}
{{- end }}

{{/* Where each Secret lives: the chart's own, or the one named by existingSecret. */}}
{{- define "flotilla.databaseSecretName" -}}
{{- default (printf "%s-database" (include "flotilla.fullname" .)) .Values.database.existingSecret }}
{{- end }}
{{- define "flotilla.redisSecretName" -}}
{{- default (printf "%s-redis" (include "flotilla.fullname" .)) .Values.redis.existingSecret }}
{{- end }}
{{- define "flotilla.sessionSecretName" -}}
{{- default (printf "%s-session" (include "flotilla.fullname" .)) .Values.session.existingSecret }}
{{- end }}
{{- define "flotilla.workerSecretName" -}}
{{- default (printf "%s-worker-passwords" (include "flotilla.fullname" .)) .Values.worker.existingSecret }}
{{- end }}
{{- define "flotilla.workerTlsSecretName" -}}
{{- default (printf "%s-worker-tls" (include "flotilla.fullname" .)) .Values.workerTls.secretName }}
{{- end }}
{{- define "flotilla.usersSecretName" -}}
{{- default (printf "%s-users" (include "flotilla.fullname" .)) .Values.auth.existingSecret }}
{{- end }}
{{/* Users are mounted only when some exist (in values or in an existing Secret). */}}
{{- define "flotilla.hasUsers" -}}
{{- if or .Values.auth.users .Values.auth.existingSecret }}true{{ end }}
{{- end }}

{{/*
The worker names, as a JSON list: the worker StatefulSet's pod names, so each pod knows
its own name (metadata.name) and the masters know all of them.
*/}}
{{- define "flotilla.workerNames" -}}
{{- $names := list }}
{{- range $i := until (int .Values.worker.replicas) }}
{{- $name := printf "%s-worker-%d" (include "flotilla.fullname" $) $i }}
{{- if gt (len $name) 50 }}
{{- fail (printf "worker name %q is longer than the 50 characters Buildbot allows: shorten the release name or set fullnameOverride" $name) }}
{{- end }}
{{- $names = append $names $name }}
{{- end }}
{{- toJson $names }}
{{- end }}

{{/* Paths inside the containers. */}}
{{- define "flotilla.configPath" -}}/etc/flotilla/config/master.yaml{{- end }}
{{- define "flotilla.usersDir" -}}/etc/flotilla/users{{- end }}
{{- define "flotilla.workerPasswordsDir" -}}/etc/flotilla/worker-passwords{{- end }}

{{/*
The master configuration: config from values, plus the generated worker list (each
password read from the mounted worker Secret) and the users file (a mounted Secret).
Secrets reach it only as file paths, never as values.
*/}}
{{- define "flotilla.masterConfig" -}}
{{- $cfg := deepCopy .Values.config }}
{{- $names := include "flotilla.workerNames" . | fromJsonArray }}
{{- $workers := list }}
{{- range $name := $names }}
{{- $workers = append $workers (dict "name" $name "password_file" (printf "%s/%s" (include "flotilla.workerPasswordsDir" $) $name) "max_builds" (int $.Values.worker.maxBuilds)) }}
{{- end }}
{{- $_ := set $cfg "workers" $workers }}
{{- $builders := list }}
{{- range $b := $cfg.builders }}
{{- if not (hasKey $b "workers") }}
{{- $b = merge (dict "workers" $names) $b }}
{{- end }}
{{- $builders = append $builders $b }}
{{- end }}
{{- $_ := set $cfg "builders" $builders }}
{{- /* API pods keep finished logs' downloads on a volume of their own (api-deployment.yaml). */}}
{{- $www := default (dict) $cfg.www }}
{{- $rawLogs := default (dict) $www.raw_log_cache }}
{{- if not (hasKey $rawLogs "dir") }}
{{- $_ := set $rawLogs "dir" (include "flotilla.rawLogCacheDir" .) }}
{{- end }}
{{- $_ := set $www "raw_log_cache" $rawLogs }}
{{- $_ := set $cfg "www" $www }}
{{- if include "flotilla.hasUsers" . }}
{{- $auth := default (dict) $cfg.auth }}
{{- $_ := set $auth "users_file" (printf "%s/%s" (include "flotilla.usersDir" .) .Values.auth.existingSecretKey) }}
{{- $_ := set $cfg "auth" $auth }}
{{- end }}
{{- /* objectStore: the store's section, its key pair from the environment (flotilla.objectStoreEnv). */}}
{{- with .Values.objectStore }}
{{- if and .endpoint (not (hasKey $cfg "object_store")) }}
{{- $_ := set $cfg "object_store" (dict "endpoint" .endpoint "bucket" (required "objectStore.bucket is needed with objectStore.endpoint" .bucket) "region" .region "prefix" .prefix "path_style" .pathStyle "access_key_id_env" "FLOTILLA_OBJECT_STORE_ACCESS_KEY_ID" "secret_access_key_env" "FLOTILLA_OBJECT_STORE_SECRET_ACCESS_KEY") }}
{{- end }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/* Where API pods keep finished logs' downloads (an emptyDir of the pod's). */}}
{{- define "flotilla.rawLogCacheDir" -}}
/var/cache/flotilla/raw-logs
{{- end }}

{{/* The size of that emptyDir, in MiB: the cache's max_mb (default 256) and room for files being written. */}}
{{- define "flotilla.rawLogCacheVolumeMiB" -}}
{{- $www := default (dict) .Values.config.www }}
{{- $rawLogs := default (dict) $www.raw_log_cache }}
{{- add (default 256 $rawLogs.max_mb) 64 }}
{{- end }}

{{/* Pod-level security: never root; files in volumes belong to the pod's group. */}}
{{- define "flotilla.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
fsGroup: {{ .Values.securityContext.fsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* Container-level security: no root, no new privileges, no capabilities, no writes to the image. */}}
{{- define "flotilla.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* An env var read from a Secret: (dict "name" "DATABASE_URL" "secret" "x" "key" "y"). */}}
{{- define "flotilla.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key }}
{{- end }}

{{/* Environment every Flotilla container shares. */}}
{{- define "flotilla.commonEnv" -}}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: HOST
  value: "0.0.0.0"
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The database and Redis addresses, for api and master. */}}
{{/*
The object store's key pair, from objectStore.existingSecret, for masters and API pods.
*/}}
{{- define "flotilla.objectStoreEnv" -}}
{{- with .Values.objectStore }}
{{- if .endpoint }}
{{- include "flotilla.secretEnv" (dict "name" "FLOTILLA_OBJECT_STORE_ACCESS_KEY_ID" "secret" (required "objectStore.existingSecret is needed with objectStore.endpoint" .existingSecret) "key" .accessKeyIdKey) }}
{{ include "flotilla.secretEnv" (dict "name" "FLOTILLA_OBJECT_STORE_SECRET_ACCESS_KEY" "secret" .existingSecret "key" .secretAccessKeyKey) }}
{{- end }}
{{- end }}
{{- end }}

{{- define "flotilla.storeEnv" -}}
{{ include "flotilla.secretEnv" (dict "name" "DATABASE_URL" "secret" (include "flotilla.databaseSecretName" .) "key" .Values.database.existingSecretKey) }}
{{- with .Values.redis.sentinel }}
{{- if .hosts }}
- name: REDIS_SENTINELS
  value: {{ join "," .hosts | quote }}
- name: REDIS_SENTINEL_NAME
  value: {{ .masterName | quote }}
{{- /* optional: a deployment without AUTH has no such key in its Secret. */}}
{{- range $name, $key := dict "REDIS_PASSWORD" .passwordKey "REDIS_SENTINEL_PASSWORD" .sentinelPasswordKey }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "flotilla.redisSecretName" $ }}
      key: {{ $key }}
      optional: true
{{- end }}
{{- end }}
{{- end }}
{{- if not .Values.redis.sentinel.hosts }}
{{ include "flotilla.secretEnv" (dict "name" "REDIS_URL" "secret" (include "flotilla.redisSecretName" .) "key" .Values.redis.existingSecretKey) }}
{{- end }}
{{- end }}

{{/*
The replicas API pods read from: from the chart's database Secret when readUrls are given,
or from existingSecret's readUrlsKey when it has one (optional: a Secret without it means
no replicas). Nothing at all otherwise.
*/}}
{{- define "flotilla.readReplicaEnv" -}}
{{- if or .Values.database.readUrls .Values.database.existingSecret }}
- name: DATABASE_READ_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "flotilla.databaseSecretName" . }}
      key: {{ .Values.database.readUrlsKey }}
      {{- if .Values.database.existingSecret }}
      optional: true
      {{- end }}
- name: DATABASE_READ_WAIT_SECONDS
  value: {{ .Values.database.readWaitSeconds | quote }}
- name: DATABASE_READ_MAX_LAG_SECONDS
  value: {{ .Values.database.readMaxLagSeconds | quote }}
{{- end }}
{{- end }}

{{/* The configuration (and users) volumes of api and master. */}}
{{- define "flotilla.configVolumes" -}}
- name: config
  configMap:
    name: {{ include "flotilla.fullname" . }}-config
{{- if include "flotilla.hasUsers" . }}
- name: users
  secret:
    secretName: {{ include "flotilla.usersSecretName" . }}
    defaultMode: 0440
    items:
      - key: {{ .Values.auth.existingSecretKey }}
        path: {{ .Values.auth.existingSecretKey }}
{{- end }}
- name: tmp
  emptyDir:
    sizeLimit: 256Mi
{{- end }}

{{- define "flotilla.configMounts" -}}
- name: config
  mountPath: /etc/flotilla/config
  readOnly: true
{{- if include "flotilla.hasUsers" . }}
- name: users
  mountPath: {{ include "flotilla.usersDir" . }}
  readOnly: true
{{- end }}
- name: tmp
  mountPath: /tmp
{{- end }}

{{/* Spread a component's pods across nodes when the scheduler can: (dict "root" $ "component" "api"). */}}
{{- define "flotilla.spread" -}}
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "flotilla.selectorLabels" . | nindent 8 }}
{{- end }}

{{/* The checks that stop a release with missing essentials before anything is applied. */}}
{{- define "flotilla.validate" -}}
{{- if not (or .Values.database.url .Values.database.existingSecret) }}
{{- fail "database.url or database.existingSecret is required: PostgreSQL is external" }}
{{- end }}
{{- if and .Values.database.readUrls .Values.database.existingSecret }}
{{- fail (printf "database.readUrls and database.existingSecret: put the replicas' URLs in the existing Secret, comma-separated, under %s" .Values.database.readUrlsKey) }}
{{- end }}
{{- if has .Values.database.url .Values.database.readUrls }}
{{- fail "database.readUrls: name only replicas, not database.url itself" }}
{{- end }}
{{- if .Values.redis.sentinel.hosts }}
{{- if not .Values.redis.sentinel.masterName }}
{{- fail "redis.sentinel.masterName is required with redis.sentinel.hosts: the name the sentinels monitor the primary under" }}
{{- end }}
{{- if .Values.redis.url }}
{{- fail "redis.url and redis.sentinel.hosts: set one, not both" }}
{{- end }}
{{- else if not (or .Values.redis.url .Values.redis.existingSecret) }}
{{- fail "redis.url or redis.existingSecret is required: Redis is external" }}
{{- end }}
{{- if and .Values.ingress.enabled .Values.ingress.tls.enabled (not .Values.ingress.tls.secretName) }}
{{- fail "ingress.tls.secretName is required when ingress.tls.enabled is true" }}
{{- end }}
{{- if lt (int .Values.api.terminationGracePeriodSeconds) (add (int .Values.api.preStopSeconds) 25 | int) }}
{{- fail (printf "api.terminationGracePeriodSeconds (%d) must cover api.preStopSeconds (%d) and the API's 25 s graceful close" (int .Values.api.terminationGracePeriodSeconds) (int .Values.api.preStopSeconds)) }}
{{- end }}
{{- if and .Values.workerTls.certManager.enabled (not .Values.workerTls.certManager.issuerRef.name) }}
{{- fail "workerTls.certManager.issuerRef.name is required when workerTls.certManager.enabled is true" }}
{{- end }}
{{- if and .Values.ingress.enabled .Values.ingress.tls.enabled (not .Values.ingress.host) }}
{{- fail "ingress.host is required when ingress.tls.enabled is true (a certificate names a host)" }}
{{- end }}
{{- end }}

{{/* The port buildbot-workers connect to (config.protocols.msgpack_experimental_v7), or nothing. */}}
{{- define "flotilla.msgpackPort" -}}
{{- with (.Values.config.protocols | default dict).msgpack_experimental_v7 }}{{ .port }}{{ end }}
{{- end }}

{{/* The port PB buildbot-workers connect to (config.protocols.pb), or nothing. */}}
{{- define "flotilla.pbPort" -}}
{{- with (.Values.config.protocols | default dict).pb }}{{ .port }}{{ end }}
{{- end }}
