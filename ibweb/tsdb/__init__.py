"""Per-port history for 90 days behind one interface (issue 40): :class:`~.store.TimeSeriesStore`.

Two backends: :class:`~.embedded.EmbeddedStore` (SQLite file under the var dir, downsampling tiers, bounded in
size; the default) and :class:`~.victoria.VictoriaStore` (VictoriaMetrics, written with the Prometheus
remote-write protocol, read with MetricsQL). :func:`~.open.open_store` picks one from the settings
``IBWEB_TSDB_URL`` and ``IBWEB_TSDB_RETENTION_DAYS``. Ports are named by identity, (node GUID, port number),
so a port keeps its history across re-cabling. Nothing here decides access: callers filter what a view reads.
"""
