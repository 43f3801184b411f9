import assert from "node:assert/strict";
import {test} from "node:test";
import {ApiError, api} from "../src/api.js";

function fakeFetch(status, body) {
  const calls = [];
  const fetch = async (url) => {
    calls.push(url);
    return {ok: status < 400, status, json: async () => body};
  };
  return {fetch, calls};
}

test("requests go to the fabric's live endpoints with their query", async () => {
  const {fetch, calls} = fakeFetch(200, {t: []});
  const client = api().base("/api").fabric("my fab").fetch(fetch);
  await client.linkHistory(7, 60);
  await client.linkRollups(-1);
  await client.path("gpu 1", "gpu2");
  await client.jobs();
  assert.deepEqual(calls, ["/api/fabrics/fabrics/my%20fab/links/7/history/?seconds=60",
    "/api/fabrics/fabrics/my%20fab/links/-1/rollups/?minutes=60", "/api/fabrics/fabrics/my%20fab/path/?src=gpu+1&dst=gpu2",
    "/api/fabrics/fabrics/my%20fab/jobs/"]);
});

test("an error answer becomes an ApiError with the server's message", async () => {
  const {fetch} = fakeFetch(400, {src: ["no node 'x' in fabric demo"]});
  await assert.rejects(api().fabric("demo").fetch(fetch).path("x", "y"),
    (error) => error instanceof ApiError && error.status === 400 && error.message === "src: no node 'x' in fabric demo");
});
