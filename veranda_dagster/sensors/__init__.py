"""Sensors: Linear tickets, Slack mentions, PR feedback. Each adds partitions, never state."""
