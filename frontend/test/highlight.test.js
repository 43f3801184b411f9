import assert from "node:assert/strict";
import {test} from "node:test";
import {decodeSnapshot} from "../src/decode.js";
import {jobHighlight, jobsByLink, makeHighlight, tenantPartitions, tenantUnion} from "../src/highlight.js";
import {synthetic, syntheticSnapshot} from "../scripts/synthetic.mjs";

const fabric = decodeSnapshot(syntheticSnapshot(synthetic({leavesPerPod: 2, spinesPerPod: 2, hostsPerLeaf: 2}), 1));
const {L} = fabric;

test("a highlight folds directed links onto cables and ignores indices out of range", () => {
  const h = makeHighlight(fabric, {kind: "path", label: "p", links: [1, 1 + L, 3, 2 * L, -1, 2.5], nodes: [0, 99]});
  assert.deepEqual([...h.cables], [1, 3]);
  assert.deepEqual([...h.links], [1, 1 + L, 3]);
  assert.deepEqual([...h.nodes], [0]);
  assert.equal(h.cableMask[1], 1);
  assert.equal(h.cableMask[2], 0);
});

const jobs = [
  {id: "a", tenant: "acme", hosts: [4, 5], links: [0, 1, L]},
  {id: "b", tenant: "globex", hosts: [6], links: [1, 2]},
  {id: "c", tenant: "acme", hosts: [5, 7], links: [3]},
];

test("a tenant's union covers the hosts and links of all its jobs", () => {
  assert.deepEqual(tenantUnion(jobs, "acme"), {jobs: ["a", "c"], hosts: [4, 5, 7], links: [0, 1, 3, L]});
  assert.deepEqual(tenantUnion(jobs, "nobody"), {jobs: [], hosts: [], links: []});
});

test("jobs by link lists every job crossing a directed link", () => {
  const m = jobsByLink(jobs);
  assert.deepEqual(m.get(1), ["a", "b"]);
  assert.equal(m.get(L + 1), undefined);
});

test("a job's highlight comes from the catalog, else from the frame's limiting links", () => {
  const catalog = [{id: "a", hosts: [0, 1], links: [2, 2 + L]}];
  const live = [{id: "a", limiting_links: [5]}, {id: "b", limiting_links: [4, 6]}];
  const a = jobHighlight(fabric, catalog, live, "a");
  assert.equal(a.kind, "job");
  assert.equal(a.label, "a");
  assert.deepEqual([...a.cables], [2]);
  assert.deepEqual([...a.nodes], [0, 1]);
  const b = jobHighlight(fabric, catalog, live, "b");
  assert.deepEqual([...b.cables], [4, 6]);
  assert.deepEqual([...b.nodes], []);
  assert.deepEqual([...jobHighlight(fabric, catalog, live, "unknown").cables], []);
});

test("a tenant's partitions and their member nodes come from the P_Key API answer", () => {
  const pkeys = {
    "0x7fff": {partition: "Default", tenant: null, guids: []},
    "0x0101": {partition: "acme-jobs", tenant: "acme", guids: [{guid: "0x1", node: 9}, {guid: "0x2", node: 4}]},
    "0x0105": {partition: "acme-io", tenant: "acme", guids: [{guid: "0x3", node: 4}, {guid: "0x9", node: null}]},
    "0x0102": {partition: "globex-jobs", tenant: "globex", guids: [{guid: "0x4", node: 7}]},
  };
  assert.deepEqual(tenantPartitions(pkeys, "acme"), {partitions: ["acme-io 0x0105", "acme-jobs 0x0101"], nodes: [4, 9]});
  assert.deepEqual(tenantPartitions(pkeys, "initech"), {partitions: [], nodes: []});
  assert.deepEqual(tenantPartitions(undefined, "acme"), {partitions: [], nodes: []});
});
