// Copies the published schemas `llamux generate kube`'s documents are tested against into
// test/fixtures/kube-schemas/, from checkouts of their projects (see SOURCES.md there for what, which
// release and which commit). Kubernetes' own OpenAPI v3 documents are cut down to the definitions a
// Deployment and a Service reach; CRDs give their served version's openAPIV3Schema. Descriptions are
// dropped (they validate nothing); every other keyword is kept as published.
//   bun scripts/kube-schemas/vendor.ts KUBECTL_VALIDATE GIE LLM_D_ROUTER GATEWAY_API KEDA PROMETHEUS_OPERATOR
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [kubectlValidate, gie, llmdRouter, gatewayApi, keda, prometheusOperator] = process.argv.slice(2) as Array<string | undefined>;
if (!kubectlValidate || !gie || !llmdRouter || !gatewayApi || !keda || !prometheusOperator) throw new Error("usage: vendor.ts KUBECTL_VALIDATE GIE LLM_D_ROUTER GATEWAY_API KEDA PROMETHEUS_OPERATOR (checkouts at the releases in SOURCES.md)");
const out = join(import.meta.dir, "..", "..", "test", "fixtures", "kube-schemas");
const KUBERNETES = "1.35";

type Json = Record<string, unknown>;

function withoutDescriptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDescriptions);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== "description").map(([key, item]) => [key, withoutDescriptions(item)]));
}

/** The definitions `root` reaches through $refs, from an OpenAPI v3 document. */
function reachable(document: Json, root: string): Json {
  const schemas = (document.components as Json).schemas as Record<string, Json>;
  const found: Json = {};
  const visit = (name: string) => {
    if (found[name]) return;
    const schema = schemas[name];
    if (!schema) throw new Error(`no schema ${name}`);
    found[name] = schema;
    for (const match of JSON.stringify(schema).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) visit(match[1]!);
  };
  visit(root);
  return { $ref: `#/components/schemas/${root}`, components: { schemas: withoutDescriptions(found) } };
}

function builtin(group: string, root: string, file: string): void {
  const document = JSON.parse(readFileSync(join(kubectlValidate!, "pkg/openapiclient/builtins", KUBERNETES, group), "utf8")) as Json;
  writeFileSync(join(out, file), `${JSON.stringify(reachable(document, root))}\n`);
}

function crd(path: string, version: string, file: string): void {
  const definition = Bun.YAML.parse(readFileSync(path, "utf8")) as { spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: Json } }> } };
  const served = definition.spec.versions.find((v) => v.name === version);
  if (!served) throw new Error(`${path} has no version ${version}`);
  writeFileSync(join(out, file), `${JSON.stringify(withoutDescriptions(served.schema.openAPIV3Schema))}\n`);
}

builtin("apis/apps/v1.json", "io.k8s.api.apps.v1.Deployment", "deployment-apps-v1.json");
builtin("api/v1.json", "io.k8s.api.core.v1.Service", "service-v1.json");
crd(join(gie, "config/crd/bases/inference.networking.k8s.io_inferencepools.yaml"), "v1", "inferencepool-inference.networking.k8s.io-v1.json");
crd(join(llmdRouter, "config/crd/bases/llm-d.ai_inferenceobjectives.yaml"), "v1alpha2", "inferenceobjective-llm-d.ai-v1alpha2.json");
crd(join(gatewayApi, "config/crd/standard/gateway.networking.k8s.io_httproutes.yaml"), "v1", "httproute-gateway.networking.k8s.io-v1.json");
crd(join(keda, "config/crd/bases/keda.sh_scaledobjects.yaml"), "v1alpha1", "scaledobject-keda.sh-v1alpha1.json");
crd(join(prometheusOperator, "example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml"), "v1", "podmonitor-monitoring.coreos.com-v1.json");
