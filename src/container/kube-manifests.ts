// The Kubernetes documents `llamux generate kube` writes: N replicas of the profile-b image behind a
// Service, scraped by a PodMonitor, scaled by KEDA on vllm:num_requests_waiting, and routed by the
// Gateway API Inference Extension (an InferencePool with its InferenceObjective, and an HTTPRoute).
// Plain data, so tests can check every document against the published schemas.
import { dirname } from "node:path";

export interface KubeOptions {
  /** Object names and the app label. */
  name: string;
  /** A hub id (ORG/NAME, pulled by an init container into each pod) or an absolute GGUF path on a volume. */
  model: string;
  image: string;
  replicas: number;
  gpu?: "nvidia";
  gateway: boolean;
  autoscale: boolean;
}

export interface KubeDocument {
  kind: string;
  body: Record<string, unknown>;
}

const PORT = 8000;
/** Where the image keeps its model cache (vLLM's hub cache path), and where a path model's volume goes. */
const CACHE_DIR = "/root/.cache/huggingface";
const LLAMUX = "/usr/local/bin/llamux";
/** KEDA's threshold in vLLM's production-stack: add a replica per 5 waiting requests. */
const WAITING_PER_REPLICA = 5;
/** Probes ask /health through the executable (the image has no curl): 503, so not ready, until the model has loaded. */
const healthCheck = { exec: { command: [LLAMUX, "health", "--url", `http://127.0.0.1:${PORT}/health`, "--timeout", "4"] } };

/** Whether `model` is a path on a volume rather than a hub id to pull. */
export function isModelPath(model: string): boolean {
  return model.startsWith("/");
}

export function kubeManifests(options: KubeOptions): KubeDocument[] {
  const documents = [deployment(options), service(options), podMonitor(options)];
  if (options.autoscale) documents.push(scaledObject(options));
  if (options.gateway) documents.push(inferencePool(options), inferenceObjective(options), httpRoute(options));
  return documents;
}

const labels = (options: KubeOptions) => ({ "app.kubernetes.io/name": options.name, "app.kubernetes.io/component": "model-server" });

/** One object, named and labelled after the pool. */
function object(options: KubeOptions, apiVersion: string, kind: string, spec: Record<string, unknown>): KubeDocument {
  return { kind, body: { apiVersion, kind, metadata: { name: options.name, labels: labels(options) }, spec } };
}

function deployment(options: KubeOptions): KubeDocument {
  const fromVolume = isModelPath(options.model);
  const cache = { name: "model-cache", mountPath: CACHE_DIR };
  const models = { name: "models", mountPath: dirname(options.model), readOnly: true };
  const resources = {
    requests: { cpu: "2", memory: "8Gi", ...(options.gpu ? { "nvidia.com/gpu": "1" } : {}) },
    limits: options.gpu ? { "nvidia.com/gpu": "1" } : {},
  };
  const hfToken = { name: "HF_TOKEN", valueFrom: { secretKeyRef: { name: "hf-token", key: "token", optional: true } } };
  const server = {
    name: "llamux",
    image: options.image,
    args: ["--model", options.model],
    env: fromVolume ? [] : [hfToken],
    ports: [{ name: "http", containerPort: PORT, protocol: "TCP" }],
    resources,
    volumeMounts: fromVolume ? [cache, models] : [cache],
    // A pull or a load may take long: liveness waits for the first success; readiness follows /health after.
    startupProbe: { ...healthCheck, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 180 },
    readinessProbe: { ...healthCheck, periodSeconds: 5, timeoutSeconds: 5, failureThreshold: 2 },
    livenessProbe: { ...healthCheck, periodSeconds: 15, timeoutSeconds: 5, failureThreshold: 4 },
  };
  const pull = {
    name: "pull-model",
    image: options.image,
    command: [LLAMUX],
    args: ["pull", "--hub", options.model],
    env: [hfToken, { name: "LLAMUX_MODELS", value: CACHE_DIR }],
    volumeMounts: [cache],
  };
  const volumes: unknown[] = [{ name: "model-cache", emptyDir: {} }];
  if (fromVolume) volumes.push({ name: "models", persistentVolumeClaim: { claimName: `${options.name}-models`, readOnly: true } });
  return object(options, "apps/v1", "Deployment", {
    replicas: options.replicas,
    selector: { matchLabels: labels(options) },
    template: {
      metadata: { labels: labels(options) },
      spec: {
        ...(fromVolume ? {} : { initContainers: [pull] }),
        containers: [server],
        volumes,
        // the server ends its requests and engines on SIGTERM
        terminationGracePeriodSeconds: 30,
      },
    },
  });
}

function service(options: KubeOptions): KubeDocument {
  return object(options, "v1", "Service", { selector: labels(options), ports: [{ name: "http", port: PORT, targetPort: "http", protocol: "TCP" }] });
}

function podMonitor(options: KubeOptions): KubeDocument {
  return object(options, "monitoring.coreos.com/v1", "PodMonitor", {
    selector: { matchLabels: labels(options) }, podMetricsEndpoints: [{ port: "http", path: "/metrics", interval: "15s" }],
  });
}

function scaledObject(options: KubeOptions): KubeDocument {
  return object(options, "keda.sh/v1alpha1", "ScaledObject", {
    scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: options.name },
    minReplicaCount: options.replicas,
    maxReplicaCount: Math.max(4, options.replicas * 4),
    pollingInterval: 15,
    cooldownPeriod: 300,
    triggers: [{
      type: "prometheus",
      metadata: {
        // prometheus-operator's default service; change it to your Prometheus
        serverAddress: "http://prometheus-operated.monitoring.svc:9090",
        query: `sum(vllm:num_requests_waiting{pod=~"${options.name}-.*"})`,
        threshold: String(WAITING_PER_REPLICA),
      },
    }],
  });
}

function inferencePool(options: KubeOptions): KubeDocument {
  return object(options, "inference.networking.k8s.io/v1", "InferencePool", {
    selector: { matchLabels: labels(options) },
    targetPorts: [{ number: PORT }],
    // the endpoint picker (llm-d-router's EPP, or GIE's lightweight one) is deployed beside the pool
    endpointPickerRef: { name: `${options.name}-epp`, port: { number: 9002 }, failureMode: "FailOpen" },
  });
}

function inferenceObjective(options: KubeOptions): KubeDocument {
  return object(options, "llm-d.ai/v1alpha2", "InferenceObjective", {
    priority: 0, poolRef: { group: "inference.networking.k8s.io", kind: "InferencePool", name: options.name },
  });
}

function httpRoute(options: KubeOptions): KubeDocument {
  return object(options, "gateway.networking.k8s.io/v1", "HTTPRoute", {
    parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "inference-gateway" }],
    rules: [{
      matches: [{ path: { type: "PathPrefix", value: "/" } }],
      backendRefs: [{ group: "inference.networking.k8s.io", kind: "InferencePool", name: options.name }],
      // generation outlasts a gateway's default request timeout
      timeouts: { request: "300s" },
    }],
  });
}
