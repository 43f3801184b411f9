"""The small cluster the engine's and the web's cluster tests share: two 16-host planes and a storage fabric.

Copy before changing it (``copy.deepcopy(SPEC)``).
"""

PLANE = {"generator": "fat_tree", "hosts": 16, "radix": 8, "host_prefix": "dgx"}
SPEC = {
    "name": "pod", "planes": 2, "plane": PLANE,
    "storage": {"generator": "fat_tree", "radix": 8, "storage_servers": 2},
    "jobs": [
        {"name": "llm", "tenant": "acme", "hosts": 6, "placement": "packed", "buffer_gb": 8, "compute_s": 1.0,
         "read_gbps": 100, "checkpoint": {"params": 1e9, "every": 5}},
        {"name": "moe", "tenant": "globex", "hosts": 4, "placement": "scattered", "pattern": "all_to_all",
         "buffer_gb": 2, "compute_s": 0.5},
    ],
    "storage_model": {"read_gbps": 100, "write_gbps": 50},
    "seed": 3,
}
