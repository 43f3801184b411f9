import assert from "node:assert/strict";
import {test} from "node:test";
import {apiCall, collectParams, duration, errorContext, previewFacts, shellQuote, warningLines} from "../src/pages/fabric-form.js";

const FAT = {params: [
  {name: "hosts", kind: "int", default: 512, required: true},
  {name: "radix", kind: "int", default: 64, required: false},
  {name: "oversubscription", kind: "float", default: 1.0, required: false},
  {name: "cores", kind: "int", default: null, required: false},
  {name: "speed", kind: "str", default: "NDR", required: false},
]};

test("collectParams types values, leaves out defaults and empties, flags missing and bad numbers", () => {
  const values = {hosts: "2048", radix: "64", oversubscription: "2", cores: "", speed: "HDR"};
  assert.deepEqual(collectParams(FAT, (n) => values[n]), {params: {hosts: 2048, oversubscription: 2, speed: "HDR"},
    missing: [], invalid: []});
  assert.deepEqual(collectParams(FAT, (n) => ({hosts: "", radix: "6.5"})[n]).missing, ["hosts"]);
  assert.deepEqual(collectParams(FAT, (n) => ({hosts: "8", radix: "6.5"})[n]).invalid, ["radix"]);
  assert.deepEqual(collectParams(FAT, (n) => ({hosts: "512"})[n]).params, {hosts: 512}, "a required default stays");
});

test("apiCall writes a curl command a shell runs unchanged, JSON or multipart", () => {
  const json = apiCall("https://ib.example", {name: "O'Neil lab", slug: "lab", routing_engine: "ftree", tick_s: 1},
    {topology: {generator: "fat_tree", hosts: 64}}, {fraction: 0.25, gbps: 20});
  assert.deepEqual(json.body, {name: "O'Neil lab", slug: "lab", routing_engine: "ftree", tick_s: 1,
    spec: {topology: {generator: "fat_tree", hosts: 64}, jobs: [], background: {fraction: 0.25, gbps: 20}}});
  assert.match(json.command, /^curl -X POST 'https:\/\/ib\.example\/api\/fabrics\/fabrics\/' -H "Authorization: Token \$IBWEB_TOKEN"/);
  assert.ok(json.command.includes(shellQuote(JSON.stringify(json.body))));
  assert.equal(shellQuote("O'Neil"), "'O'\\''Neil'");
  const file = apiCall("http://h", {name: "Lab", slug: "", tick_s: 1}, {file: "fabric.txt"}, {});
  assert.equal(file.body, null);
  assert.ok(file.command.includes("-F 'name=Lab'") && file.command.endsWith("-F 'topology_file=@fabric.txt'"));
  assert.ok(!file.command.includes("slug"), "empty fields are left out");
});

test("previewFacts reads the preview answer", () => {
  const f = previewFacts({hosts: 520, host_roles: {gpu: 512, storage: 8}, switches: 49, switch_tiers: {leaf: 17, spine: 32},
    cables: 1072, cables_by_rate: {"4xNDR": {links: 1072, gbps_each: 400}}, lids: 577, lids_max: 49151,
    bisection_gbps: 104000, oversubscription: {leaf: 0.971},
    routing: {engine: "minhop", estimate: {seconds: 0.0015, low: 0.0013, high: 0.0017}}});
  assert.equal(f.hosts, "520 (512 gpu, 8 storage)");
  assert.equal(f.switches, "49 (17 leaf, 32 spine)");
  assert.equal(f.cables, "1,072 (1,072 × 4xNDR 400 Gb/s)");
  assert.equal(f.lids, "577 of 49,151 (1.2%)");
  assert.equal(f.bisection, "104.0 Tb/s");
  assert.equal(f.oversubscription, "leaf 0.97:1");
  assert.equal(f.routing, "minhop: about 1.5 ms (1.3 ms to 1.7 ms)");
  assert.match(previewFacts({routing: {engine: "x", estimate: null}}).routing, /no estimate/);
});

test("duration and errorContext", () => {
  assert.equal(duration(0.0123), "12.3 ms");
  assert.equal(duration(42), "42.0 s");
  assert.equal(duration(250), "4 min 10 s");
  assert.deepEqual(errorContext("a\nb\nc\nd\ne\nf", 4), {first: 2, lines: ["b", "c", "d", "e", "f"]});
  assert.deepEqual(errorContext("a\nb", 1), {first: 1, lines: ["a", "b"]});
});

test("previewFacts says what a capture held beyond the graph, and warningLines names each line", () => {
  const base = {hosts: 7, switches: 3, cables: 13, lids: 20, lids_max: 49151, bisection_gbps: 1000};
  assert.equal(previewFacts(base).read, "");
  const f = previewFacts({...base, sharp: {aggregation_nodes: 3, switches: 3}, host_systems: 5,
    chassis: [{guid: "0x0002c90300c0ffee", switches: ["a", "b", "c"]}], loopbacks: [["spine01", 10, 11, "4xNDR"]]});
  assert.equal(f.read, "3 SHARP Aggregation Nodes on 3 switches (not hosts); 5 host systems; "
    + "chassis 0x0002c90300c0ffee: 3 ASICs; 1 loopback cables (not routed)");
  const pm = previewFacts({...base, topology: {counters: {ports: 20, with_errors: 3, file: "ibdiagnet2.db_csv",
    errors: {SymbolErrorCounter: 2, PortRcvErrors: 1, LinkDownedCounter: 1, VL15Dropped: 3}}}});
  assert.equal(pm.read, "port counters of 20 ports, 3 with errors (VL15Dropped on 3, SymbolErrorCounter on 2, PortRcvErrors on 1)");
  assert.equal(previewFacts({...base, topology: {counters: {ports: 0, with_errors: 0, errors: {}}}}).read,
    "port counters of 0 ports, 0 with errors");
  assert.deepEqual(warningLines([{line: 1, text: "[root@ufm01 ~]# ibnetdiscover", reason: "shell prompt skipped"},
    {line: 1, text: "", reason: "UTF-8 byte-order mark removed"}]),
  ["line 1: shell prompt skipped: [root@ufm01 ~]# ibnetdiscover", "line 1: UTF-8 byte-order mark removed"]);
  assert.deepEqual(warningLines(undefined), []);
});
