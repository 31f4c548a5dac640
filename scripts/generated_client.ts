// Drive `harnez serve` with a TypeScript client generated from the UHP OpenAPI file (openapi-typescript
// types + openapi-fetch), every answer checked at run time against what the OpenAPI operation declares:
// its statuses, required headers, content types and body schemas, formats included (ajv 2020 +
// ajv-formats: `format: uri` too, which Harnez's JSON Schema tests leave unchecked). Streams are read
// with fetch and each event checked against `Event`, numbered 0, 1, 2, ... The Python twin and how to
// start the server: scripts/generated_clients.py. It needs npm, so it is no test:
//
//   mkdir -p /tmp/uhpgen/ts && cd /tmp/uhpgen/ts && npm init -y
//   npm install openapi-fetch openapi-typescript typescript@5 tsx ajv ajv-formats yaml @types/node
//   npx openapi-typescript "$SPEC" -o uhp.d.ts --default-non-nullable false
//   cp "$HARNEZ/scripts/generated_client.ts" . && SPEC="$SPEC" npx tsx generated_client.ts http://127.0.0.1:8792 tok
//
// ($SPEC: shared/reference/uhp-2026-08-11/uhp-2026-08-11.openapi.yaml.) It prints what it ran and then
// each answer that does not match the document; 0 problems is the expected end.
import createClient, { type Middleware } from "openapi-fetch";
import type { paths, components } from "./uhp";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import { readFileSync } from "node:fs";

const [URL_, TOKEN] = process.argv.slice(2);
const spec = parse(readFileSync(process.env.SPEC ?? "uhp-2026-08-11.openapi.yaml", "utf8"));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: "uhp", components: spec.components });
const fix = (s: any): any => JSON.parse(JSON.stringify(s).replaceAll('"#/components/', '"uhp#/components/'));
const problems: string[] = [];
let checked = 0;

function operation(path: string, method: string): any {
  for (const [template, item] of Object.entries<any>(spec.paths)) {
    const re = new RegExp("^" + template.replace(/\{[^}]+\}/g, "[^/]+") + "/?$");
    if (re.test(path) && item[method]) return item[method];
  }
}
function resolve(r: any): any { return r?.$ref ? r.$ref.split("/").slice(1).reduce((o: any, k: string) => o[k], spec) : r; }

const check: Middleware = {
  async onResponse({ request, response }) {
    const path = new URL(request.url).pathname, method = request.method.toLowerCase();
    const where = `${request.method} ${path} ${response.status}`;
    checked++;
    const op = operation(path, method);
    if (!op) { problems.push(`${where}: no operation`); return; }
    const declared = resolve(op.responses[String(response.status)]);
    if (!declared) { problems.push(`${where}: status not declared by the operation`); return; }
    if (!response.headers.get("uhp-version") && declared.headers?.["UHP-Version"]) problems.push(`${where}: no UHP-Version`);
    for (const [name, h] of Object.entries<any>(declared.headers ?? {})) {
      const header = resolve(h);
      if (header.required && response.headers.get(name) === null) problems.push(`${where}: required header ${name} missing`);
    }
    const type = (response.headers.get("content-type") ?? "").split(";")[0].trim();
    const contents = declared.content ?? {};
    const media = contents[type] ?? contents["*/*"];
    if (!media) { problems.push(`${where}: content type ${type} not among ${Object.keys(contents)}`); return; }
    if (type === "application/json") {
      const body = await response.clone().json();
      const ok = ajv.validate(fix(media.schema), body);
      if (!ok) problems.push(`${where}: ${ajv.errorsText(ajv.errors)} :: ${JSON.stringify(body).slice(0, 300)}`);
    }
  },
};

const c = createClient<paths>({ baseUrl: URL_, headers: { Authorization: `Bearer ${TOKEN}` } });
c.use(check);
const bad = createClient<paths>({ baseUrl: URL_, headers: { Authorization: "Bearer wrong" } });
bad.use(check);
type Resp = components["schemas"]["Response"];

async function stream(body: any) {
  const r = await fetch(`${URL_}/v1/responses`, { method: "POST", body: JSON.stringify({ ...body, stream: true }),
    headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" } });
  const ct = r.headers.get("content-type") ?? "";
  if (!ct.startsWith("text/event-stream")) problems.push(`stream: content type ${ct}`);
  const text = await r.text();
  const events = text.split("\n").filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)));
  const event = fix({ $ref: "#/components/schemas/Event" });
  events.forEach((e, i) => {
    if (!ajv.validate(event, e)) problems.push(`stream event ${i} ${e.type}: ${ajv.errorsText(ajv.errors)}`);
    if (e.sequence_number !== i) problems.push(`stream event ${i}: sequence ${e.sequence_number}`);
  });
  return events;
}

async function main() {
  await c.GET("/v1/uhp");
  await c.GET("/v1/harnesses");
  const h = await c.POST("/v1/harnesses", { body: { base: "harnez", name: "ts", system_prompt: "Be brief.",
    skills: [{ name: "s1", files: [{ path: "SKILL.md", content: "# s1\n" }] }],
    mcp_servers: [{ name: "m", url: "http://127.0.0.1:9/mcp", enabled: false, auth: "env:NOPE" }], max_step: 5 } });
  const hid = h.data!.id;
  await c.GET("/v1/harnesses/{harness_id}", { params: { path: { harness_id: hid } } });
  await c.PUT("/v1/harnesses/{harness_id}", { params: { path: { harness_id: hid } }, body: { base: "harnez", name: "ts2" } });
  await c.GET("/v1/harnesses/{harness_id}/models", { params: { path: { harness_id: hid } } });
  await c.GET("/v1/models");
  const r = await c.POST("/v1/responses", { body: { input: "Reply with exactly: ok", metadata: { harness_id: hid } } });
  const resp = r.data as Resp;
  const rid = resp.id, sid = resp.metadata!.session_id!;
  await c.GET("/v1/responses/{response_id}", { params: { path: { response_id: rid } } });
  await c.GET("/v1/responses/{response_id}/input_items", { params: { path: { response_id: rid } } });
  await c.POST("/v1/responses/{response_id}/cancel", { params: { path: { response_id: rid } } });
  await c.POST("/v1/responses", { body: { input: "Reply with exactly: two", previous_response_id: rid } });
  await c.GET("/v1/sessions", { params: { query: { limit: 1 } } });
  await c.GET("/v1/sessions", { params: { query: { harness: hid } } });
  await c.GET("/v1/sessions/{session_id}", { params: { path: { session_id: sid } } });
  await c.GET("/v1/sessions/{session_id}/turns", { params: { path: { session_id: sid } } });
  await c.POST("/v1/sessions/{session_id}/cancel", { params: { path: { session_id: sid } } });
  const ev = await stream({ input: "Reply with exactly: ok" });
  console.log("events", ev.length, ev.at(-1)?.type);
  const bg = await c.POST("/v1/responses", { body: { input: "Count slowly", background: true } });
  await new Promise((s) => setTimeout(s, 500));
  await c.POST("/v1/responses/{response_id}/cancel", { params: { path: { response_id: (bg.data as Resp).id } } });
  await new Promise((s) => setTimeout(s, 1000));
  const g = await c.GET("/v1/responses/{response_id}", { params: { path: { response_id: (bg.data as Resp).id } } });
  console.log("cancelled:", g.data?.status);
  const form = new FormData();
  form.append("file", new Blob(["hello file\n"], { type: "text/plain" }), "in.txt");
  const up = await c.POST("/v1/files", { body: form as any, bodySerializer: (b: any) => b });
  const w = await c.POST("/v1/responses", { body: { input: [{ role: "user", content: [
    { type: "input_text", text: "Create a file named uhp-conformance.txt" }, { type: "input_file", file_id: up.data!.id }] }] } });
  const wsid = (w.data as Resp).metadata!.session_id!;
  const files = await c.GET("/v1/sessions/{session_id}/files", { params: { path: { session_id: wsid } } });
  const f = files.data!.files[0];
  await c.GET("/v1/containers/{container_id}/files/{file_id}/content", { params: { path: { container_id: f.container_id!, file_id: f.id } }, parseAs: "text" });
  await c.GET("/v1/containers/{container_id}/files/{file_id}/pdf", { params: { path: { container_id: f.container_id!, file_id: f.id } } });
  await c.GET("/v1/sessions/{session_id}/files/archive", { params: { path: { session_id: wsid } }, parseAs: "arrayBuffer" });
  const failed = await c.POST("/v1/responses", { body: { input: "Reply with exactly: ok", model: "dead/x" } });
  console.log("failed:", (failed.data as Resp)?.status, JSON.stringify((failed.data as Resp)?.error));
  const fs = await stream({ input: "Reply with exactly: ok", model: "dead/x" });
  console.log("failed stream:", fs.at(-1)?.type);
  const inc = await c.POST("/v1/responses", { body: { input: "Create a file named uhp-conformance.txt", max_step: 1 } });
  console.log("max_step:", (inc.data as Resp)?.status, JSON.stringify((inc.data as Resp)?.incomplete_details));
  const tmo = await c.POST("/v1/responses", { body: { input: "Count slowly", timeout_seconds: 1 } });
  console.log("timeout:", (tmo.data as Resp)?.status);
  const ts = await stream({ input: "Create a file named uhp-conformance.txt" });
  console.log("tool stream:", ts.map((e) => e.type).filter((t) => t.includes("item")).join(","));
  const fb = await c.POST("/v1/responses", { body: { input: "Reply with exactly: ok", model: "nope/nope" } });
  console.log("fallback:", JSON.stringify((fb.data as Resp)?.metadata));
  // errors
  await bad.GET("/v1/harnesses");
  await c.GET("/v1/responses/{response_id}", { params: { path: { response_id: "resp_nope" } } });
  await c.GET("/v1/sessions/{session_id}", { params: { path: { session_id: "nope" } } });
  await c.GET("/v1/harnesses/{harness_id}", { params: { path: { harness_id: "chrn_nope" } } });
  await c.POST("/v1/harnesses", { body: { base: "codex" } });
  await c.POST("/v1/responses", { body: { input: "x", model: "nope/nope" }, params: { header: { "UHP-Version": "2026-08-11" } } });
  await c.POST("/v1/responses", { body: { input: "x", previous_response_id: "resp_nope" } });
  await c.DELETE("/v1/responses/{response_id}", { params: { path: { response_id: rid } } });
  await c.DELETE("/v1/harnesses/{harness_id}", { params: { path: { harness_id: hid } } });
  console.log("checked", checked, "PROBLEMS:", problems.length);
  for (const p of problems) console.log(" -", p);
}
main().then(() => process.exit(problems.length ? 1 : 0));
