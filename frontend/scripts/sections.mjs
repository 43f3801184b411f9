// Frame sections `sharp` and `storage` shaped like docs/feed-protocol.md (values from the demo fabric), for tests.

export function sharpSection() {
  return {
    enabled: true, generation: "quantum2", label: "Quantum-2 (NDR, SHARPv3)", efficiency: 0.95, trees: 511,
    llt_trees: 511, per_switch: 2, per_port: 1, allowed_tenants: ["acme", "globex"], trees_in_use: 2,
    switches: [
      {node: 0, name: "leaf01", tier: 1, trees: 1, ports: 33, limit: 2, jobs: ["llama-70b"]},
      {node: 7, name: "leaf08", tier: 1, trees: 2, ports: 11, limit: 2, jobs: ["bert-ft", "llama-70b"]},
      {node: 17, name: "spine01", tier: 2, trees: 1, ports: 4, limit: 2, jobs: ["llama-70b"]},
    ],
    jobs: [
      {id: "llama-70b", tenant: "acme", requested: true, allowed: true, on: true, reason: null,
        tree: {root: 17, root_name: "spine01", switches: [0, 7, 17], edges: [[0, 17], [7, 17]], levels: 2},
        bytes_aggregated: 4.6e13, bytes_kept_off_wire: 9.1e13, allreduce_s_sharp: 0.3368, allreduce_s_without: 0.635},
      {id: "diffusion-xl", tenant: "initech", requested: true, allowed: false, on: false,
        reason: "tenant initech is not allowed to use SHARP", tree: null, bytes_aggregated: 0,
        bytes_kept_off_wire: 0, allreduce_s_sharp: 0.1053, allreduce_s_without: 0.35},
      {id: "bert-ft", tenant: "globex", requested: true, allowed: true, on: true, reason: null,
        tree: {root: 7, root_name: "leaf08", switches: [7], edges: [], levels: 1},
        bytes_aggregated: 2.7e11, bytes_kept_off_wire: 5.1e11, allreduce_s_sharp: null, allreduce_s_without: 0.0775},
    ],
    bytes_aggregated: 4.627e13, bytes_kept_off_wire: 9.151e13, kept_off_wire_gbps: 31044.1,
    events: [
      {t: 0.0, kind: "allocated", job: "llama-70b", root: "spine01", switches: 3},
      {t: 0.0, kind: "fallback", job: "diffusion-xl", reason: "tenant initech is not allowed to use SHARP"},
      {t: 12.0, kind: "released", job: "llama-70b"},
      {t: 12.0, kind: "allocated", job: "llama-70b", root: "spine01", switches: 1},
      {t: 12.0, kind: "allocated", job: "llama-70b", root: "spine01", switches: 1},
    ],
  };
}

export function storageSection() {
  const server = (node, name, read, write, rb, wb) => ({node, name, ports: 2, read_gbps: read, write_gbps: write,
    backend_read_gbps: 320, backend_write_gbps: 160, network_gbps: 800, read_bottleneck: rb, write_bottleneck: wb});
  return {
    servers: [server(561, "stor001", 265, 160, null, "backend"), server(562, "stor002", 320, 0, "backend", null),
      {...server(563, "stor003", 90, 40, "network", null), network_gbps: 100}],
    jobs: [
      {id: "llama-70b", tenant: "acme", read_gbps: 0, write_gbps: 1280, checkpoint: {size_bytes: 9.8e11, every: 20,
        state: "writing", progress: 0.49, elapsed_s: 3.0, eta_s: 3.1, next_iteration: 20, count: 1, last_s: 6.125,
        last_gpu_s: 784, gpu_s_total: 784, bytes_written: 4.8e11}},
      {id: "vit-huge", tenant: "globex", read_gbps: 800, write_gbps: 0, checkpoint: null},
      {id: "gpt-13b", tenant: "initech", read_gbps: 10, write_gbps: 0, checkpoint: {size_bytes: 1.8e11, every: 50,
        state: "idle", progress: null, elapsed_s: null, eta_s: null, next_iteration: 50, count: 0, last_s: null,
        last_gpu_s: null, gpu_s_total: 0, bytes_written: 0}},
    ],
    tenants: [{tenant: "acme", read_gbps: 500, write_gbps: 1280}, {tenant: "background", read_gbps: 200, write_gbps: 0}],
    totals: {read_gbps: 1700, write_gbps: 1280, backend_read_gbps: 2560, backend_write_gbps: 1280},
    layout: {stripe_count: 1, stripe_size: 1048576},
  };
}
