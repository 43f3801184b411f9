"""Database helpers shared by the background writers."""
