"""One module per vendor CLI, each declaring ``PLUGIN``; the core never imports a vendor by name."""
