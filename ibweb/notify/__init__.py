"""Notifications (issue 39): channels, rules, silences and the delivery queue of stored events."""
