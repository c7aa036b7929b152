"""One module per vendor CLI. Each registers itself; the core never imports a vendor by name."""
