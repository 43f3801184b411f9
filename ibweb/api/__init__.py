"""What the REST API of every app shares: its error handler, its FilterSets' fields and its OpenAPI schema's
authentication extensions."""
