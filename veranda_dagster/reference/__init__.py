"""Reference pages generated from the code (``veranda reference-docs``): the settings the
package reads, the secrets the registries declare, the vendor table. ``docs/reference/`` holds
the committed output; a test fails when it drifts from what the code generates."""
