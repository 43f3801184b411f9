import assert from "node:assert/strict";
import {test} from "node:test";
import {bottleneckText, checkpointLog, checkpointRows, etaSeconds, serverRows, storageJobRows, tenantRows}
  from "../src/storage-rows.js";
import {storageSection} from "../scripts/sections.mjs";

test("server rows measure throughput against the smaller of backend and network, with the bottleneck", () => {
  const rows = serverRows(storageSection());
  assert.deepEqual(rows.map((r) => [r.id, r.name, r.read, r.write]),
    [["561", "stor001", 265, 160], ["562", "stor002", 320, 0], ["563", "stor003", 90, 40]]);
  assert.deepEqual(rows.map((r) => [r.readCap, r.writeCap]), [[320, 160], [320, 160], [100, 100]]);
  assert.deepEqual(rows.map((r) => [r.readFraction, r.writeFraction]), [[265 / 320, 1], [1, 0], [0.9, 0.4]]);
  assert.deepEqual(rows.map(bottleneckText), ["write: backend", "read: backend", "read: network"]);
  assert.equal(bottleneckText({readBottleneck: "network", writeBottleneck: "backend"}), "read: network, write: backend");
  assert.deepEqual(serverRows(null), []);
});

test("tenant and job rows keep the engine's order; jobs take their phase from the frame", () => {
  assert.deepEqual(tenantRows(storageSection()), [{id: "acme", read: 500, write: 1280}, {id: "background", read: 200, write: 0}]);
  const jobs = storageJobRows(storageSection(), [{id: "llama-70b", phase: "checkpoint"}, {id: "vit-huge", phase: "comm"}]);
  assert.deepEqual(jobs.map((j) => [j.id, j.read, j.write, j.phase, j.checkpoint]),
    [["llama-70b", 0, 1280, "checkpoint", "writing"], ["vit-huge", 800, 0, "comm", ""], ["gpt-13b", 10, 0, null, "idle"]]);
});

test("the ETA is the engine's, else the average rate so far; idle has none", () => {
  const writing = storageSection().jobs[0].checkpoint;
  assert.equal(etaSeconds(writing), 3.1);
  assert.equal(etaSeconds({...writing, eta_s: null, progress: 0.25, elapsed_s: 2}), 6);
  assert.equal(etaSeconds({...writing, eta_s: null, progress: 0, elapsed_s: 2}), null);
  assert.equal(etaSeconds(storageSection().jobs[2].checkpoint), null);
  assert.equal(etaSeconds(null), null);
});

test("checkpoint rows: progress and bytes while writing, the next iteration while idle", () => {
  const rows = checkpointRows(storageSection(), [{id: "gpt-13b", iterations: 41}]);
  assert.deepEqual(rows.map((r) => r.id), ["llama-70b", "gpt-13b"], "jobs without checkpoints are left out");
  const [llama, gpt] = rows;
  assert.deepEqual([llama.writing, llama.progress, llama.bytesNow, llama.size, llama.eta, llama.lastGpuS],
    [true, 0.49, 0.49 * 9.8e11, 9.8e11, 3.1, 784]);
  assert.equal(llama.bytesWritten, 4.8e11, "the engine's count over all checkpoints");
  assert.deepEqual([gpt.writing, gpt.progress, gpt.bytesNow, gpt.eta, gpt.nextIteration, gpt.iterations, gpt.lastS],
    [false, 0, 0, null, 50, 41, null]);
});

test("the checkpoint log adds each finished checkpoint once, newest first, and keeps the newest", () => {
  const section = storageSection();
  let log = checkpointLog([], section);
  assert.deepEqual(log, [{key: "llama-70b#1", job: "llama-70b", count: 1, s: 6.125, gpuS: 784}]);
  assert.equal(checkpointLog(log, section), log, "nothing new: the same log");
  section.jobs[0].checkpoint = {...section.jobs[0].checkpoint, count: 2, last_s: 5.5, last_gpu_s: 704};
  log = checkpointLog(log, section);
  assert.deepEqual(log.map((e) => [e.key, e.s]), [["llama-70b#2", 5.5], ["llama-70b#1", 6.125]]);
  section.jobs[0].checkpoint.count = 3;
  assert.deepEqual(checkpointLog(log, section, 2).map((e) => e.key), ["llama-70b#3", "llama-70b#2"]);
  assert.deepEqual(checkpointLog([], null), []);
});
