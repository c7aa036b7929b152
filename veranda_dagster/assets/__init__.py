"""One module per phase. Each asset calls one domain function and records its value."""
