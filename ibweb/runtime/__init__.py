"""What the engine of a fabric publishes for every process to read (the Django cache: Redis at scale).

Plain modules on the cache and ``fabric_engine``, no models and no app: the fabric runner
(:mod:`ibweb.live.engine.runner`) writes; web processes, tasks and the other apps read.
"""
