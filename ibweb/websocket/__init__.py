"""The server's side of a websocket: flow control of a client that stops reading, per-message deflate, and the
live-feed sockets' metrics."""
