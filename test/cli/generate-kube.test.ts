// `llamux generate kube` as a user runs it: every document it writes, for each set of flags, validates
// against the schema its project publishes (test/fixtures/kube-schemas, SOURCES.md says which release),
// made strict as kubectl --validate=strict is: an unknown field fails. The Deployment running for real
// under podman is test/container/kube-play.test.ts.
import { describe, expect, test } from "bun:test";
import Ajv, { type ValidateFunction } from "ajv";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..", "..");
const schemaDir = join(root, "test", "fixtures", "kube-schemas");

/** Objects that list their properties accept no others (unless the schema keeps unknown fields on purpose). */
function strict(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strict);
  if (typeof schema !== "object" || schema === null) return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === "enum" || key === "default" ? value : strict(value)]));
  if (copy.properties && copy.additionalProperties === undefined && !copy["x-kubernetes-preserve-unknown-fields"]) copy.additionalProperties = false;
  return copy;
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const validators = new Map<string, ValidateFunction>();
for (const [kind, file] of [
  ["apps/v1 Deployment", "deployment-apps-v1.json"],
  ["v1 Service", "service-v1.json"],
  ["monitoring.coreos.com/v1 PodMonitor", "podmonitor-monitoring.coreos.com-v1.json"],
  ["keda.sh/v1alpha1 ScaledObject", "scaledobject-keda.sh-v1alpha1.json"],
  ["inference.networking.k8s.io/v1 InferencePool", "inferencepool-inference.networking.k8s.io-v1.json"],
  ["llm-d.ai/v1alpha2 InferenceObjective", "inferenceobjective-llm-d.ai-v1alpha2.json"],
  ["gateway.networking.k8s.io/v1 HTTPRoute", "httproute-gateway.networking.k8s.io-v1.json"],
] as const) {
  validators.set(kind, ajv.compile(strict(JSON.parse(readFileSync(join(schemaDir, file), "utf8"))) as object));
}

function generate(args: string[]): { code: number; stdout: string; stderr: string } {
  const result = Bun.spawnSync([process.execPath, join(root, "src", "main.ts"), "generate", "kube", ...args], { stdout: "pipe", stderr: "pipe" });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

type Document = { apiVersion: string; kind: string; metadata: { name: string }; spec: Record<string, any> };

function documents(args: string[]): Document[] {
  const run = generate(args);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  return Bun.YAML.parse(run.stdout) as Document[];
}

function expectValid(document: Document): void {
  const validate = validators.get(`${document.apiVersion} ${document.kind}`);
  expect(validate, `a schema for ${document.apiVersion} ${document.kind}`).toBeDefined();
  const valid: boolean = validate!(document);
  expect(valid ? [] : validate!.errors!.map((e) => `${document.kind}${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`)).toEqual([]);
}

const ALL_KINDS = ["Deployment", "Service", "PodMonitor", "ScaledObject", "InferencePool", "InferenceObjective", "HTTPRoute"];

describe("llamux generate kube", () => {
  test("the strict schemas reject an unknown field and a wrong type (so the checks below can fail)", () => {
    const [deployment] = documents(["--model", "LiquidAI/LFM2-1.2B"]);
    const validate = validators.get("apps/v1 Deployment")!;
    expect(validate(deployment)).toBe(true);
    const typo = structuredClone(deployment!);
    typo.spec.template.spec.containers[0].readinesProbe = typo.spec.template.spec.containers[0].readinessProbe;
    expect(validate(typo)).toBe(false);
    const wrongType = structuredClone(deployment!);
    wrongType.spec.replicas = "two";
    expect(validate(wrongType)).toBe(false);
  });

  test("a hub model: every document validates, and the pod pulls the model before serving it", () => {
    const all = documents(["--model", "LiquidAI/LFM2-1.2B", "--replicas", "3"]);
    expect(all.map((d) => d.kind)).toEqual(ALL_KINDS);
    for (const document of all) expectValid(document);
    const [deployment, service, podMonitor, scaledObject, pool, objective, route] = all as Document[];
    const pod = deployment!.spec.template.spec;
    expect(deployment!.spec.replicas).toBe(3);
    expect(pod.initContainers[0].args).toEqual(["pull", "--hub", "LiquidAI/LFM2-1.2B"]);
    const server = pod.containers[0];
    expect(server.image).toBe("llamux:0.1.0");
    expect(server.args).toEqual(["--model", "LiquidAI/LFM2-1.2B"]);
    for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) expect(server[probe].exec.command.join(" ")).toContain("health --url http://127.0.0.1:8000/health");
    expect(server.resources.requests).toEqual({ cpu: "2", memory: "8Gi" });
    // everything finds the pods by the same labels
    const labels = deployment!.spec.selector.matchLabels;
    expect(pod).toBeDefined();
    expect(deployment!.spec.template.metadata.labels).toEqual(labels);
    expect(service!.spec.selector).toEqual(labels);
    expect(podMonitor!.spec.selector.matchLabels).toEqual(labels);
    expect(podMonitor!.spec.podMetricsEndpoints).toEqual([{ port: "http", path: "/metrics", interval: "15s" }]);
    expect(pool!.spec.selector.matchLabels).toEqual(labels);
    expect(pool!.spec.targetPorts).toEqual([{ number: 8000 }]);
    expect(objective!.spec.poolRef.name).toBe(pool!.metadata.name);
    expect(route!.spec.rules[0].backendRefs[0]).toMatchObject({ kind: "InferencePool", name: pool!.metadata.name });
    expect(scaledObject!.spec.scaleTargetRef.name).toBe(deployment!.metadata.name);
    expect(scaledObject!.spec.minReplicaCount).toBe(3);
    expect(scaledObject!.spec.triggers[0]).toMatchObject({ type: "prometheus", metadata: { threshold: "5" } });
    expect(scaledObject!.spec.triggers[0].metadata.query).toContain("vllm:num_requests_waiting");
  });

  test("a model on a volume, an NVIDIA GPU, no gateway and no autoscaler", () => {
    const all = documents(["--model", "/models/qwen/model-Q4_K_M.gguf", "--gpu", "nvidia", "--no-gateway", "--no-autoscale", "--name", "qwen"]);
    expect(all.map((d) => d.kind)).toEqual(["Deployment", "Service", "PodMonitor"]);
    for (const document of all) expectValid(document);
    const pod = all[0]!.spec.template.spec;
    expect(pod.initContainers).toBeUndefined();
    expect(pod.containers[0].image).toBe("llamux:0.1.0-cuda");
    expect(pod.containers[0].resources.limits).toEqual({ "nvidia.com/gpu": "1" });
    expect(pod.containers[0].volumeMounts).toContainEqual({ name: "models", mountPath: "/models/qwen", readOnly: true });
    expect(pod.volumes).toContainEqual({ name: "models", persistentVolumeClaim: { claimName: "qwen-models", readOnly: true } });
    expect(all.every((d) => d.metadata.name === "qwen")).toBe(true);
  });

  test("-o DIR writes one file per document", () => {
    const dir = mkdtempSync(join(tmpdir(), "llamux-kube-"));
    try {
      const run = generate(["--model", "org/model", "--image", "registry.example/llamux:test", "-o", dir]);
      expect(run.code).toBe(0);
      expect(readdirSync(dir).sort()).toEqual(ALL_KINDS.map((kind) => `${kind.toLowerCase()}.yaml`).sort());
      const deployment = Bun.YAML.parse(readFileSync(join(dir, "deployment.yaml"), "utf8")) as Document;
      expectValid(deployment);
      expect(deployment.spec.template.spec.containers[0].image).toBe("registry.example/llamux:test");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("bad flags are usage errors that say what is wrong", () => {
    for (const [args, message] of [
      [[], /needs --model/],
      [["--model", "just-a-name"], /Hugging Face id \(ORG\/NAME\) or an absolute path/],
      [["--model", "org/model", "--replicas", "0"], /--replicas must be a whole number from 1/],
      [["--model", "org/model", "--gpu", "amd"], /--gpu must be nvidia/],
      [["--model", "org/model", "--name", "Bad_Name"], /--name must be lower-case/],
    ] as const) {
      const run = generate([...args]);
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(message);
    }
  });
});
