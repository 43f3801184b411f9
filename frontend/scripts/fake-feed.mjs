#!/usr/bin/env node
// Dev tool: serves dist/ under /static/ibweb/, a page like the Django fabric page (dashboard/base.html) at /, and a
// synthetic live feed at /ws/fabrics/<slug>/live/ (snapshot, then one frame per tick). Loopback only.
//   node scripts/fake-feed.mjs [--port 8765] [--pods 1] [--leaves 8] [--spines 4] [--hosts 8] [--cores 0]
//                              [--dragonfly] [--tick 1] [--ticks N (stop after N frames)]
import {createHash} from "node:crypto";
import {readFile} from "node:fs/promises";
import {createServer} from "node:http";
import {extname, join} from "node:path";
import {parseArgs} from "node:util";
import {synthetic, syntheticFrame, syntheticSnapshot} from "./synthetic.mjs";

const {values: args} = parseArgs({
  options: Object.fromEntries([
    ...["port", "pods", "leaves", "spines", "hosts", "cores", "tick", "ticks"].map((k) => [k, {type: "string"}]),
    ["dragonfly", {type: "boolean", default: false}],
  ]),
});
const number = (key, fallback) => (args[key] === undefined ? fallback : Number(args[key]));
const fab = synthetic({pods: number("pods", 1), leavesPerPod: number("leaves", 8), spinesPerPod: number("spines", 4),
  hostsPerLeaf: number("hosts", 8), cores: number("cores", 0), dragonfly: args.dragonfly});
const tickMs = number("tick", 1) * 1000;
const ticks = number("ticks", Infinity);
const dist = new URL("../dist/", import.meta.url).pathname;
const types = {".js": "text/javascript", ".css": "text/css", ".map": "application/json"};
const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ibweb dev</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'self'; connect-src 'self' ws: wss:; style-src 'self'">
<link rel="stylesheet" href="/static/ibweb/ibweb.css"></head>
<body><header class="site"><a class="brand" href="/">ibweb</a><nav aria-label="Account"><a href="/">Log in</a></nav></header>
<main id="ibweb" data-fabric="demo" data-feed="/ws/fabrics/demo/live/" data-api="/api/"></main>
<script type="module" src="/static/ibweb/ibweb.js"></script></body></html>`;

const server = createServer(async (req, res) => {
  if (req.url === "/") return res.writeHead(200, {"content-type": "text/html"}).end(page);
  if (req.url === "/favicon.ico") return res.writeHead(204).end();
  const name = req.url.startsWith("/static/ibweb/") && req.url.slice("/static/ibweb/".length);
  if (!name || name.includes("..")) return res.writeHead(404).end();
  try {
    res.writeHead(200, {"content-type": types[extname(name)] ?? "application/octet-stream"}).end(await readFile(join(dist, name)));
  } catch {
    res.writeHead(404).end();
  }
});

function send(socket, text) {
  const body = Buffer.from(text);
  const n = body.length;
  const head = n < 126 ? Buffer.from([0x81, n]) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (n >= 126 && n < 65536) head.writeUInt8(0x81, 0), head.writeUInt8(126, 1), head.writeUInt16BE(n, 2);
  if (n >= 65536) head.writeUInt8(0x81, 0), head.writeUInt8(127, 1), head.writeBigUInt64BE(BigInt(n), 2);
  socket.write(Buffer.concat([head, body]));
}

server.on("upgrade", (req, socket) => {
  if (!/^\/ws\/fabrics\/[\w-]+\/live\/$/.test(req.url)) return socket.end("HTTP/1.1 404 Not Found\r\n\r\n");
  const accept = createHash("sha1").update(req.headers["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  let seq = 1;
  send(socket, JSON.stringify(syntheticSnapshot(fab, seq)));
  const timer = setInterval(() => (seq <= ticks ? send(socket, JSON.stringify(syntheticFrame(fab, ++seq))) : socket.end()), tickMs);
  const stop = () => clearInterval(timer);
  socket.on("data", (data) => (data[0] & 0x0f) === 0x8 && socket.end());
  socket.on("close", stop).on("error", stop);
});

server.listen(number("port", 8765), "127.0.0.1", () => {
  const {nodes, links} = fab.topology;
  console.log(`ibweb fake feed: http://127.0.0.1:${server.address().port}/ (${nodes.kind.length} nodes, ${links.a_node.length} cables)`);
});
