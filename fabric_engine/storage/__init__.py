"""Storage servers and their traffic: backends as virtual links, Lustre-like striping, data loading,
checkpoint bursts and background reads, and what they report.

See ``docs/sharp-and-storage.md`` for the model and its sources.
"""

from .checkpoint import BYTES_PER_PARAM, Checkpoint
from .model import StorageConfig, StorageModel
from .striping import LUSTRE_STRIPE_COUNT, LUSTRE_STRIPE_SIZE, stripe_bytes, stripe_servers
from .traffic import ROLE_BACKGROUND, ROLE_CHECKPOINT, ROLE_LOAD, StorageFlows, storage_flows

__all__ = ["Checkpoint", "BYTES_PER_PARAM", "StorageConfig", "StorageModel", "stripe_bytes",
           "stripe_servers", "LUSTRE_STRIPE_SIZE", "LUSTRE_STRIPE_COUNT", "StorageFlows", "storage_flows",
           "ROLE_LOAD", "ROLE_CHECKPOINT", "ROLE_BACKGROUND"]
