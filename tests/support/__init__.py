"""Test-only simulation code: servers and fakes that no product command uses."""
