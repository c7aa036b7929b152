"""The repository-detection rules as they stood before issue 33, frozen for the benchmark."""
