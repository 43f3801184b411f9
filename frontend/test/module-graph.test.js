// The modules under src/: no two share a file name (each name says what it holds) and no import cycle.
// The import graph is esbuild's own parse of the import and export statements (dynamic imports included).
import assert from "node:assert/strict";
import {mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {basename, join, relative} from "node:path";
import {test} from "node:test";
import {build} from "esbuild";

const SRC = new URL("../src/", import.meta.url).pathname;

/** Every .js module under `dir`, as paths relative to it. */
function modules(dir) {
  return readdirSync(dir, {recursive: true}).filter((f) => f.endsWith(".js")).sort();
}

/** Module file names used by more than one module: {name: [paths]}. */
function sharedNames(files) {
  const byName = new Map();
  for (const f of files) byName.set(basename(f), [...(byName.get(basename(f)) ?? []), f]);
  return Object.fromEntries([...byName].filter(([, paths]) => paths.length > 1));
}

/** The import graph of the modules under `dir`: {module: [modules it imports]}, packages left out. */
async function importGraph(dir) {
  const result = await build({entryPoints: modules(dir).map((f) => join(dir, f)), bundle: true, write: false,
    metafile: true, packages: "external", format: "esm", outdir: join(tmpdir(), "ibweb-module-graph"), logLevel: "silent"});
  const graph = {};
  for (const [input, {imports}] of Object.entries(result.metafile.inputs)) {
    graph[relative(dir, input)] = imports.filter((i) => !i.external).map((i) => relative(dir, i.path));
  }
  return graph;
}

/** One import cycle of `graph` as [a, b, ..., a], or null. */
function findCycle(graph) {
  const state = new Map(); // module -> "open" while on the path, "done" after
  const path = [];
  function visit(node) {
    state.set(node, "open");
    path.push(node);
    for (const next of graph[node] ?? []) {
      if (state.get(next) === "open") return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next)) {
        const cycle = visit(next);
        if (cycle) return cycle;
      }
    }
    path.pop();
    state.set(node, "done");
    return null;
  }
  for (const node of Object.keys(graph).sort()) {
    if (state.has(node)) continue;
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

test("no two modules under src share a file name", () => {
  assert.deepEqual(sharedNames(modules(SRC)), {});
});

test("the modules under src import one another without a cycle", async () => {
  const graph = await importGraph(SRC);
  assert.ok(Object.keys(graph).length >= modules(SRC).length, "every module is in the graph");
  assert.ok(graph["index.js"].includes("charts/sharp.js"), "imports are followed into folders");
  assert.equal(findCycle(graph), null);
});

test("a shared file name and an import cycle are found", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ibweb-modules-"));
  try {
    mkdirSync(join(dir, "charts"));
    writeFileSync(join(dir, "a.js"), 'import {b} from "./b.js";\nexport const a = () => b;\n');
    writeFileSync(join(dir, "b.js"), '// import {x} from "./x.js";\nexport {c as b} from "./charts/c.js";\n');
    writeFileSync(join(dir, "charts", "c.js"), 'export const c = () => import("../a.js");\n');
    writeFileSync(join(dir, "charts", "a.js"), 'import {select} from "d3";\nexport const a = select;\n');
    assert.deepEqual(sharedNames(modules(dir)), {"a.js": ["a.js", join("charts", "a.js")]});
    const graph = await importGraph(dir);
    assert.deepEqual(graph["charts/a.js"], []);
    assert.deepEqual(findCycle(graph), ["a.js", "b.js", "charts/c.js", "a.js"]);
    writeFileSync(join(dir, "charts", "c.js"), "export const c = 1;\n");
    assert.equal(findCycle(await importGraph(dir)), null);
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
});
