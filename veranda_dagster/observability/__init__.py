"""Operations: Prometheus metrics, the health/metrics HTTP port, the observability MCP server."""
